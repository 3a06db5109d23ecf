"""The demo's evidence events are about one thing at a time: each vendor an event names sells what the
event says the business is researching, using or replacing (a surge in "accounting software" names an
accounting package, never a CRM; "VoIP phone system" a phone provider, never an EHR)."""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime

from vpx.demo.evidence import (
    COMMON_TOPICS,
    DECK,
    DEFAULT_SOFTWARE,
    PERMIT_WORK,
    SOFTWARE,
    DemoBusiness,
    evidence_event,
)
from vpx.verticals import VERTICALS

OBSERVED = datetime(2026, 11, 14, 9, 30, tzinfo=UTC)


def _vendors_named(event: dict[str, object]) -> list[str]:
    evidence = event["evidence"]
    assert isinstance(evidence, dict)
    named = [evidence[key] for key in ("vendor_named", "technology") if key in evidence]
    found = re.search(r", most of all (.+)$", str(event["summary"]))
    return named + ([found.group(1)] if found else [])


def test_every_vendor_an_event_names_sells_what_it_is_about() -> None:
    sellers = {topic: set(vendors) for topic, vendors in (*SOFTWARE.values(), DEFAULT_SOFTWARE)}
    sellers |= {topic: set(vendors) for topic, vendors in COMMON_TOPICS.items()}
    rng = random.Random(5)
    surges: set[str] = set()
    for industry in VERTICALS:
        business = DemoBusiness("ct_1", "Smith Consulting", industry, None, "CO", "Denver")
        for category, level, _ in DECK:
            if category == "permit_filed":
                continue  # the permit's vendor_named is the contractor itself
            for number in range(12):
                event = evidence_event(rng, business, category, level, observed_at=OBSERVED, record_id=f"t:{number}")
                for vendor in _vendors_named(event):
                    assert vendor in sellers.get(str(event["topic"]), ()), event["summary"]
                if category == "topic_surge" and level == "warm":
                    surges.add(str(event["topic"]))
    # Warm surges are about the vertical's own software and the topics any business researches alike.
    assert surges >= set(COMMON_TOPICS) and "field service software" in surges


def test_a_permit_summary_reads_as_english() -> None:
    """Issue 39: "pulled a electrical permit" read wrong; the article follows the permit's kind."""
    rng = random.Random(3)
    said = {}
    for specialty in PERMIT_WORK:
        business = DemoBusiness("ct_1", "Smith Trades", "construction", specialty, "CO", "Denver")
        event = evidence_event(rng, business, "permit_filed", "warm", observed_at=OBSERVED, record_id="t:1")
        said[specialty] = str(event["summary"]).split(" permit:", 1)[0].removeprefix("Smith Trades pulled ")
    assert said["Electrical"] == "an electrical" and said["Plumbing"] == "a plumbing"
    assert said["Concrete"] == "a building" and said["Cable Installation"] == "a low-voltage"
    assert all(not re.match(r"a [aeiou]", text) and not re.match(r"an [^aeiou]", text) for text in said.values())
