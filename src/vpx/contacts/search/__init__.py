"""One search engine on both databases (D13): the postings of every term as Roaring bitmaps, a
question planned with the trade vocabulary, typo corrections from the catalogue's vocabulary.

Typo tolerance works on the catalogue's vocabulary, not on whole names: each query word that no
catalogue word starts with is corrected to the nearest vocabulary words (edit distance 1, or 2 for
long words), found through a trigram index. See docs/search.md.
"""

from __future__ import annotations

from vpx.contacts.search.backends import backend_for
from vpx.contacts.search.engine import Reader, SearchBackend, SearchPage, SearchQuery

__all__ = ["Reader", "SearchBackend", "SearchPage", "SearchQuery", "backend_for"]
