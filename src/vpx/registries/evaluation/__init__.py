"""Measuring entity resolution: labelled record pairs built from the real registry samples, and the
precision and recall of the matching rules on them (bench/registries_matching.py prints them;
docs/registries.md records them).

- ``pairs``: the records of the samples and the ordinary pairs (variants of a record as another
  source would write it; distinct records of one city; name collisions);
- ``hard``: the hard cases — near names with another phone, domain, house number or licence,
  chain locations, one doctor at two practices; abbreviations, suites, typos, DBA names; and
  ``all_pairs``, the ordinary and the hard ones together;
- ``scores``: pairwise precision, recall and F1, overall, per category and per rule.
"""

from vpx.registries.evaluation.hard import all_pairs, hard_pairs
from vpx.registries.evaluation.pairs import (
    HARD_NEGATIVE,
    OTHER_NEGATIVE,
    POSITIVE,
    LabelledRecord,
    Pair,
    labelled_pairs,
    sample_records,
)
from vpx.registries.evaluation.scores import (
    Score,
    by_category,
    by_rule,
    phone_only_score,
    score,
    score_with,
)

__all__ = [
    "HARD_NEGATIVE",
    "OTHER_NEGATIVE",
    "POSITIVE",
    "LabelledRecord",
    "Pair",
    "Score",
    "all_pairs",
    "by_category",
    "by_rule",
    "hard_pairs",
    "labelled_pairs",
    "phone_only_score",
    "sample_records",
    "score",
    "score_with",
]
