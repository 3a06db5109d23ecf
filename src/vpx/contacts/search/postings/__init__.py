"""The postings: for each term (vpx.contacts.search.terms), the ids of the active contacts that have
it, as Roaring bitmaps (pyroaring) in ``search_postings``, one row per term and chunk of 2**18
contact ids. A search reads the rows of its terms and works out the answer here, with set operations
whose cost follows the size of the bitmaps, never the number of contacts read from a table: a common
word's 200,000 matches are one bitmap of a few hundred kilobytes, counted exactly in microseconds.
Both databases keep the same rows and the same code answers on both.

How the postings follow the catalogue. Triggers on ``contacts`` (migration 20261128_search_postings)
write a row to ``search_changes`` for every insert, every change of a searched field or of the
status, and every delete, with the searched fields as they were. Writers therefore need do nothing,
whatever path they write by. Then:
- a search applies the pending changes to what it read (``View``): its answer is exact at once;
- the worker folds them into the postings (``merge``) and advances ``search_state.generation``,
  which tells each process that what it remembers of the postings is out of date.
Bulk loads set the trigger aside with the other indexes and build the postings of what they loaded
in one pass (``rebuild``).

The package's parts: ``reading`` (the terms of a contact, reading bitmaps), ``view`` (the generation
and the changes waiting, as a search sees them), ``merging`` (folding the changes in, building from
the contacts table).
"""

from __future__ import annotations

from vpx.contacts.search.postings.merging import (
    _ADVANCE,
    _CONTACTS_FROM,
    VACUUM_AFTER,
    Edits,
    add_words,
    apply_edits,
    build_chunks,
    fold_backlog,
    fold_changes,
    merge,
    posting_rows,
    rebuild,
)
from vpx.contacts.search.postings.reading import (
    CHUNK_BITS,
    CONTACT_FIELDS,
    EMAIL_STATUS,
    MERGE_BATCH,
    MOST_ID,
    PENDING_APPLIED,
    Postings,
    Read,
    Reader,
    chunk_of,
    pg_array,
    read_postings,
    read_prefixed,
    read_terms,
    terms_of,
)
from vpx.contacts.search.postings.view import _VIEW, View, _carry_index, _view_of, read_view

# The statements and steps a check and the tests reach for are named here too (their parts' own).
__all__ = [
    "CHUNK_BITS",
    "CONTACT_FIELDS",
    "EMAIL_STATUS",
    "MERGE_BATCH",
    "MOST_ID",
    "PENDING_APPLIED",
    "VACUUM_AFTER",
    "_ADVANCE",
    "_CONTACTS_FROM",
    "_VIEW",
    "Edits",
    "Postings",
    "Read",
    "Reader",
    "View",
    "_carry_index",
    "_view_of",
    "add_words",
    "apply_edits",
    "build_chunks",
    "chunk_of",
    "fold_backlog",
    "fold_changes",
    "merge",
    "pg_array",
    "posting_rows",
    "read_postings",
    "read_prefixed",
    "read_terms",
    "read_view",
    "rebuild",
    "terms_of",
]
