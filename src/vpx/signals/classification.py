"""Classification at ingestion: the intent level (D20) and the FCRA status (D21).

Both are pure functions of the event's category and evidence, so they are table-tested straight from
the decisions (tests/signals/test_classification.py) and documented in docs/signals.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# D36's known evidence attributes. Others are kept as given.
KNOWN_EVIDENCE = (
    "budget",
    "authority",
    "need",
    "timeline",
    "vendor_named",
    "vendor_evaluation",
    "interest",
    "technology",
    "topic",
)
# D20: what makes a signal hot, and what makes it warm.
HOT_REQUIRES = ("budget", "timeline", "vendor_evaluation")
WARM_ANY = ("timeline", "vendor_named")
# D20: bant_qualified needs all four.
BANT_REQUIRES = ("budget", "authority", "need", "timeline")

# D21 and D36: attributes that are, or derive from, consumer-report data under the FCRA. A key is
# regulated when its normalised name is one of these or contains one of the stems; values of the
# provenance keys (`derived_from`, `data_sources`…) are read the same way.
FCRA_KEYS = frozenset(
    {
        "credit_score",
        "credit_history",
        "credit_report",
        "credit_rating",
        "credit_check",
        "fico",
        "employment_history",
        "employment_verification",
        "employment_status",
        "income_verification",
        "salary_history",
        "rental_history",
        "eviction_history",
        "criminal_record",
        "criminal_history",
        "background_check",
        "tenant_screening",
        "consumer_report",
        "bankruptcy",
        "bankruptcy_history",
        "debt_collection",
    }
)
FCRA_STEMS = (
    "credit_score",
    "credit_histor",
    "credit_report",
    "credit_rating",
    "employment_histor",
    "employment_verif",
    "income_verif",
    "rental_histor",
    "eviction",
    "criminal",
    "background_check",
    "tenant_screen",
    "consumer_report",
    "bankruptc",
)
PROVENANCE_KEYS = frozenset({"derived_from", "data_sources", "data_source", "source_data", "inputs"})

_NON_WORD = re.compile(r"[^a-z0-9]+")


def normalised_key(key: str) -> str:
    """``Credit Score`` / ``creditScore`` / ``credit-score`` → ``credit_score``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", key)
    return _NON_WORD.sub("_", spaced.lower()).strip("_")


def _regulated_name(name: str) -> bool:
    key = normalised_key(name)
    return key in FCRA_KEYS or any(stem in key for stem in FCRA_STEMS)


def _regulated(evidence: Mapping[str, Any], depth: int = 0) -> bool:
    if depth > 8:
        return True  # absurdly deep evidence is not something we can vouch for
    for key, value in evidence.items():
        if _regulated_name(str(key)):
            return True
        if normalised_key(str(key)) in PROVENANCE_KEYS:
            values = value if isinstance(value, list) else [value]
            if any(isinstance(v, str) and _regulated_name(v) for v in values):
                return True
        if isinstance(value, Mapping) and _regulated(value, depth + 1):
            return True
        if isinstance(value, list) and any(isinstance(v, Mapping) and _regulated(v, depth + 1) for v in value):
            return True
    return False


def source_status(evidence: Mapping[str, Any]) -> str:
    """D21: ``fcra_blocked`` when the evidence contains or derives from an FCRA-regulated attribute,
    else ``available``. Decided once, at ingestion; there is no way back."""
    return "fcra_blocked" if _regulated(evidence) else "available"


def present(value: Any) -> bool:
    """An evidence attribute counts when it says something: not null, false, blank or empty."""
    if value is None or value is False:
        return False
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, list | dict | tuple):
        return bool(value)
    return True


def intent_level(evidence: Mapping[str, Any]) -> str:
    """D20: hot = budget, timeline and vendor evaluation all present; warm = a timeline or a named
    vendor; cold = an interest indicator only (or nothing more)."""
    if all(present(evidence.get(name)) for name in HOT_REQUIRES):
        return "hot"
    if any(present(evidence.get(name)) for name in WARM_ANY):
        return "warm"
    return "cold"


def missing_for_category(category: str, evidence: Mapping[str, Any]) -> list[str]:
    """The evidence attributes a category needs and this event lacks (D20: bant_qualified needs
    budget, authority, need and timeline)."""
    if category == "bant_qualified":
        return [name for name in BANT_REQUIRES if not present(evidence.get(name))]
    return []


LEVEL_RANK = {"cold": 1, "warm": 2, "hot": 3}
DEFAULT_CONFIDENCE = {"hot": 0.9, "warm": 0.75, "cold": 0.5}


def higher_level(a: str | None, b: str | None) -> str | None:
    """The higher of two intent levels (None is below cold)."""
    return max((a, b), key=lambda level: LEVEL_RANK.get(level or "", 0))
