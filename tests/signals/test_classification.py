"""D20 (intent level), D21 and D36 (FCRA status), table-driven from the decisions' own words."""

from __future__ import annotations

from typing import Any

import pytest

from vpx.signals import classification
from vpx.signals.classification import intent_level, missing_for_category, source_status

HOT = {"budget": "$50k", "timeline": "Q1 2027", "vendor_evaluation": ["Acme", "Globex"]}


@pytest.mark.parametrize(
    ("evidence", "level"),
    [
        # D20: hot = budget, timeline and vendor evaluation all present.
        (HOT, "hot"),
        ({**HOT, "authority": "CFO", "need": "replace CRM"}, "hot"),
        # One of the three missing: no longer hot; a timeline alone is warm.
        ({"budget": "$50k", "timeline": "Q1 2027"}, "warm"),
        ({"timeline": "Q1 2027", "vendor_evaluation": ["Acme"]}, "warm"),
        # Budget and vendor evaluation without a timeline or named vendor: cold.
        ({"budget": "$50k", "vendor_evaluation": ["Acme"]}, "cold"),
        # D20: warm = a timeline or a named vendor.
        ({"timeline": "next quarter"}, "warm"),
        ({"vendor_named": "Salesforce"}, "warm"),
        ({"vendor_named": "Salesforce", "interest": "crm"}, "warm"),
        # D20: cold = an interest indicator only.
        ({"interest": "crm"}, "cold"),
        ({"technology": "kubernetes"}, "cold"),
        ({}, "cold"),
        # Empty values say nothing.
        ({"budget": "", "timeline": None, "vendor_evaluation": []}, "cold"),
        ({"timeline": "  ", "vendor_named": False}, "cold"),
        ({"budget": 0, "timeline": "Q1", "vendor_evaluation": True}, "hot"),  # a zero budget is still stated
    ],
)
def test_intent_level(evidence: dict[str, Any], level: str) -> None:
    assert intent_level(evidence) == level


@pytest.mark.parametrize(
    ("evidence", "missing"),
    [
        ({"budget": 1, "authority": "CEO", "need": "crm", "timeline": "Q1"}, []),
        ({"budget": 1, "authority": "CEO", "need": "crm"}, ["timeline"]),
        ({"timeline": "Q1"}, ["budget", "authority", "need"]),
        ({}, ["budget", "authority", "need", "timeline"]),
    ],
)
def test_bant_qualified_needs_budget_authority_need_and_timeline(evidence: dict[str, Any], missing: list[str]) -> None:
    assert missing_for_category("bant_qualified", evidence) == missing
    assert missing_for_category("switching_intent", evidence) == []


@pytest.mark.parametrize(
    "key",
    [
        # D36's list, word for word.
        "credit_score",
        "credit_history",
        "employment_history",
        "income_verification",
        "rental_history",
        "eviction_history",
        "criminal_record",
        # "and the like" (D21: credit, employment, rental/eviction history), however spelled.
        "Credit Score",
        "creditScore",
        "credit-report",
        "tenant_screening",
        "background_check",
        "bankruptcy",
        "eviction_filings",
        "employment_verification",
        "consumer_report",
        "fico",
    ],
)
def test_fcra_attributes_block_the_signal(key: str) -> None:
    assert source_status({"timeline": "Q1", key: "anything"}) == "fcra_blocked"


@pytest.mark.parametrize(
    "evidence",
    [
        {"nested": {"applicant": {"rental_history": "late"}}},
        {"people": [{"name": "x", "criminal_record": "none"}]},
        {"derived_from": ["credit_report"]},
        {"data_sources": "tenant screening"},
    ],
)
def test_evidence_that_derives_from_fcra_data_is_blocked(evidence: dict[str, Any]) -> None:
    assert source_status(evidence) == "fcra_blocked"


@pytest.mark.parametrize(
    "evidence",
    [
        HOT,
        {"technology": "quickbooks", "interest": "payroll software"},  # a topic, not a person's data
        {"tax_credit": "solar ITC"},  # "credit" alone is not a consumer report
        {"employees": 40, "hiring": "3 roles"},
        {"derived_from": ["website visits"]},
        {"unknown_attribute": "kept as given"},
    ],
)
def test_ordinary_evidence_is_available(evidence: dict[str, Any]) -> None:
    assert source_status(evidence) == "available"


def test_higher_level_orders_tiers() -> None:
    assert classification.higher_level(None, "cold") == "cold"
    assert classification.higher_level("hot", "warm") == "hot"
    assert classification.higher_level("cold", "warm") == "warm"
