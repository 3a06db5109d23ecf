"""The signal-filter rule shared with the signals domain (D19, D22)."""

from __future__ import annotations

import pytest

from vpx.webhooks.filters import SignalFilter, signal_matches


@pytest.mark.parametrize(
    ("wanted", "signal", "matches"),
    [
        ({}, {"industry": "dental", "source_status": "available"}, True),
        ({}, {"industry": "dental", "source_status": "fcra_blocked"}, False),
        ({"source_status": "available"}, {"source_status": "fcra_blocked"}, False),
        ({"source_status": "fcra_blocked"}, {"source_status": "fcra_blocked"}, True),
        ({"source_status": "fcra_blocked"}, {"source_status": "available"}, False),
        ({"category": "funding_ma", "state": "CA"}, {"category": "funding_ma", "state": "CA"}, True),
        ({"category": "funding_ma", "state": "CA"}, {"category": "funding_ma", "state": "NV"}, False),
        ({"intent_level": "warm"}, {"intent_level": "hot"}, False),
    ],
)
def test_signal_filter_matching(wanted: dict, signal: dict, matches: bool) -> None:  # type: ignore[type-arg]
    assert signal_matches(wanted, signal) is matches
    assert signal_matches(SignalFilter(**wanted), signal) is matches
