"""One search interface, two backends (D13): SQLite FTS5 and PostgreSQL full text with pg_trgm.

Typo tolerance works on the catalogue's vocabulary, not on whole names: each query word that no
catalogue word starts with is corrected to the nearest vocabulary words (edit distance 1, or 2 for
long words), found through a trigram index, and the query becomes an ordinary full-text query
``(word* OR correction …) AND …``. See docs/search.md for the measurements behind this.
"""

from __future__ import annotations

from vpx.contacts.search.engine import Reader, SearchBackend, SearchPage, SearchQuery, backend_for

__all__ = ["Reader", "SearchBackend", "SearchPage", "SearchQuery", "backend_for"]
