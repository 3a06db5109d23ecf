"""Evidence events (D36) about demo businesses, as a source would send them: one JSON object each, of
a category and an intent level that its evidence makes it (D20), some carrying FCRA-regulated
attributes that make them ``fcra_blocked`` at ingestion (D21). The pipeline classifies them; nothing
here decides a level or a status, it only writes evidence that reads as one."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime
from typing import Any

# (category, intent level its evidence makes, weight): every category, and every level D20 allows it —
# a bant_qualified event has a timeline, so it is never cold; a permit has a date, so neither is it.
DECK: tuple[tuple[str, str, int], ...] = (
    ("switching_intent", "hot", 2), ("switching_intent", "warm", 4), ("switching_intent", "cold", 4),
    ("bant_qualified", "hot", 2), ("bant_qualified", "warm", 3),
    ("funding_ma", "hot", 1), ("funding_ma", "warm", 3), ("funding_ma", "cold", 2),
    ("topic_surge", "warm", 2), ("topic_surge", "cold", 6),
    ("permit_filed", "hot", 1), ("permit_filed", "warm", 4),
    ("tech_install", "hot", 1), ("tech_install", "warm", 3), ("tech_install", "cold", 4),
)  # fmt: skip
CONFIDENCE = {"hot": (0.85, 0.97), "warm": (0.65, 0.85), "cold": (0.4, 0.6)}

# What a vertical's businesses buy and from whom; other verticals buy CRM software.
SOFTWARE: dict[str, tuple[str, tuple[str, ...]]] = {
    "home-services": ("field service software", ("ServiceTitan", "Housecall Pro", "Jobber")),
    "construction": ("construction management software", ("Procore", "Buildertrend", "Fieldwire")),
    "dental": ("dental practice management software", ("Dentrix", "Open Dental", "Eaglesoft")),
    "healthcare": ("electronic health records", ("athenahealth", "eClinicalWorks", "NextGen")),
    "legal": ("legal practice management software", ("Clio", "MyCase", "PracticePanther")),
    "restaurants": ("restaurant point of sale", ("Toast", "Square", "Clover")),
    "retail": ("retail point of sale", ("Lightspeed", "Square", "Clover")),
    "accounting": ("tax practice software", ("Karbon", "Canopy", "TaxDome")),
    "real-estate": ("real estate CRM", ("Follow Up Boss", "kvCORE", "Lofty")),
    "veterinary": ("veterinary practice software", ("ezyVet", "Cornerstone", "Shepherd")),
    "ecommerce": ("ecommerce platform", ("Shopify", "BigCommerce", "WooCommerce")),
    "fitness-wellness": ("studio booking software", ("Mindbody", "Glofox", "Zen Planner")),
    "beauty-personal-care": ("salon booking software", ("Vagaro", "Boulevard", "Fresha")),
    "automotive": ("auto repair shop software", ("Tekmetric", "Shopmonkey", "Mitchell 1")),
    "hospitality": ("hotel property management system", ("Cloudbeds", "Mews", "Oracle OPERA")),
    "logistics-transportation": ("fleet telematics", ("Samsara", "Motive", "Verizon Connect")),
    "senior-care": ("home care software", ("WellSky", "AlayaCare", "AxisCare")),
    "mental-health": ("therapy practice software", ("SimplePractice", "TherapyNotes", "TheraNest")),
    "solar": ("solar design software", ("Aurora Solar", "OpenSolar", "Enerflo")),
    "insurance": ("agency management system", ("Applied Epic", "HawkSoft", "EZLynx")),
    "hr-staffing": ("applicant tracking system", ("Bullhorn", "JobAdder", "Greenhouse")),
    "nonprofit": ("donor management software", ("Bloomerang", "Blackbaud", "Neon CRM")),
    "manufacturing": ("manufacturing ERP", ("Epicor", "NetSuite", "Katana")),
    "wholesale-distribution": ("distribution ERP", ("NetSuite", "Acumatica", "Epicor")),
}
DEFAULT_SOFTWARE = ("CRM software", ("Salesforce", "HubSpot", "Zoho CRM"))
# What any business researches, and from whom it buys it.
COMMON_TOPICS: dict[str, tuple[str, ...]] = {
    "payroll services": ("ADP", "Gusto", "Paychex"),
    "business insurance": ("The Hartford", "Next Insurance", "Hiscox"),
    "VoIP phone system": ("RingCentral", "Nextiva", "Dialpad"),
    "cloud backup": ("Backblaze", "Carbonite", "Acronis"),
    "equipment financing": ("Balboa Capital", "Crest Capital", "National Funding"),
    "website redesign": ("Squarespace", "Wix", "WordPress"),
    "accounting software": ("QuickBooks", "Xero", "FreshBooks"),
    "commercial lease": ("LoopNet", "Crexi", "CommercialCafe"),
    "fleet vehicles": ("Ford Pro", "Enterprise Fleet Management", "Element Fleet"),
    "cybersecurity training": ("KnowBe4", "Proofpoint", "Hoxhunt"),
}
# Trades that file building permits: the permit's kind and the work (the contractor files it).
PERMIT_WORK: dict[str, tuple[str, str]] = {
    "Plumbing": ("Plumbing", "water heater replacement and repipe"),
    "HVAC": ("Mechanical", "rooftop unit replacement"),
    "Electrical": ("Electrical", "service upgrade to 400 A"),
    "Roofing": ("Roofing", "tear-off and re-roof, 32 squares"),
    "Pool Service": ("Pool", "new in-ground pool and spa"),
    "General Building": ("Building", "single-family addition"),
    "Commercial Construction": ("Building", "tenant improvement, 6,000 sq ft"),
    "Concrete": ("Building", "foundation and slab for a warehouse"),
    "Framing": ("Building", "framing for a four-unit townhome"),
    "Residential Solar Installation": ("Solar", "rooftop PV system, 9.6 kW"),
    "Commercial Solar": ("Solar", "carport PV system, 250 kW"),
    "Battery Storage": ("Electrical", "battery storage, 27 kWh"),
    "Fiber Installation": ("Right-of-way", "underground fiber conduit"),
    "Cable Installation": ("Low-voltage", "structured cabling for an office"),
    "Asbestos Abatement": ("Demolition", "asbestos removal before demolition"),
}


def _indefinite(word: str) -> str:
    """The word with its indefinite article: "an electrical", "a plumbing" (the permit kinds above
    begin with a vowel sound exactly when they begin with a vowel)."""
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


# Evidence that contains or derives from consumer-report data: such a signal is fcra_blocked (D21).
FCRA_EVIDENCE: tuple[dict[str, Any], ...] = (
    {"credit_score": 612},
    {"derived_from": ["tenant_screening"]},
    {"employment_history": "owner's last three employers"},
    {"data_sources": ["consumer_report"]},
    {"eviction_history": "two filings"},
)


@dataclass(frozen=True, slots=True)
class DemoBusiness:
    """A demo contact, as much of it as an event about it needs."""

    contact_id: str
    name: str
    industry: str
    specialty: str | None
    state: str
    city: str

    @property
    def files_permits(self) -> bool:
        return self.specialty in PERMIT_WORK


def _money(rng: random.Random, low: int, high: int) -> str:
    return f"${rng.randrange(low, high, 500):,}"


def evidence_event(
    rng: random.Random,
    business: DemoBusiness,
    category: str,
    level: str,
    *,
    observed_at: datetime,
    record_id: str,
    fcra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One D36 evidence event about ``business`` whose evidence reads as ``level`` (D20); ``fcra``
    adds regulated attributes (D21)."""
    topic, vendors = SOFTWARE.get(business.industry, DEFAULT_SOFTWARE)
    current, *others = rng.sample(vendors, len(vendors))
    day = observed_at.date().isoformat()
    name = business.name
    evidence: dict[str, Any]
    confidence = round(rng.uniform(*CONFIDENCE[level]), 2)
    if category == "switching_intent":
        evidence = {"interest": f"alternatives to {current}"}
        summary = f"{name} is reading about alternatives to {current}"
        if level in ("warm", "hot"):
            evidence = {"vendor_named": current, "need": f"replace {current}: support and pricing complaints"}
            summary = f"{name} wants to replace {current}"
        if level == "hot":
            evidence |= {
                "budget": _money(rng, 6_000, 40_000) + " a year",
                "timeline": "switch within 60 days",
                "vendor_evaluation": f"demos booked with {' and '.join(others)}",
            }
            summary = f"{name} is replacing {current}: demos booked with {' and '.join(others)}"
    elif category == "bant_qualified":
        evidence = {
            "budget": _money(rng, 10_000, 120_000),
            "authority": rng.choice(("owner", "managing partner", "operations director")),
            "need": topic,
            "timeline": rng.choice(("this quarter", "within 90 days", "before year end")),
        }
        summary = f"{name}: budget, authority, need and timeline confirmed for {topic}"
        if level == "hot":
            evidence["vendor_evaluation"] = f"shortlist: {', '.join(vendors)}"
    elif category == "funding_ma":
        topic = rng.choice(("growth capital", "acquisition", "expansion financing"))
        evidence = {"interest": f"exploring {topic}"}
        summary = f"{name} is exploring {topic}"
        if level in ("warm", "hot"):
            amount = _money(rng, 500_000, 8_000_000)
            evidence = {"budget": f"{amount} {topic} closed", "timeline": f"closed {day}"}
            summary = f"{name} closed {amount} of {topic}"
        if level == "hot":
            evidence |= {"need": f"{topic} for new locations", "vendor_evaluation": f"RFP out for {topic} partners"}
    elif category == "topic_surge":
        # The vertical's own software or what any business researches; a vendor named is one of that topic's.
        topic, vendors = rng.choice(((topic, vendors), *COMMON_TOPICS.items()))
        current = rng.choice(vendors)
        score = rng.randrange(60, 95)
        baseline = rng.randrange(2, 6)
        week = round((baseline + 1) / (1 - score / 100)) - 1  # the score the surge source would give
        evidence = {"interest": topic, "surge_score": score, "activity_this_week": week, "weekly_baseline": baseline}
        summary = f"{name} is researching {topic} far more than usual"
        confidence = score / 100  # as the surge source gives it
        if level == "warm":
            evidence["vendor_named"] = current
            summary = f"{name} is researching {topic}, most of all {current}"
    elif category == "permit_filed":
        kind, work = PERMIT_WORK.get(business.specialty or "", ("Building", "commercial remodel"))
        topic = f"{kind.lower()} permit"
        evidence = {
            "need": f"{kind} permit: {work}",
            "timeline": f"permit issued {day}",
            "vendor_named": name,
            "budget": _money(rng, 8_000, 400_000) + " estimated cost",
            "permit_number": f"{kind[:1]}{observed_at.year}-{rng.randrange(10_000, 100_000)}",
        }
        summary = f"{name} pulled {_indefinite(kind.lower())} permit: {work}"
        if level == "hot":
            evidence["vendor_evaluation"] = "supplier and subcontractor bids requested"
    else:  # tech_install
        evidence = {"technology": current, "interest": topic}
        summary = f"{name} started using {current}"
        if level in ("warm", "hot"):
            evidence = {"technology": current, "timeline": f"installed {day}"}
            summary = f"{name} installed {current} on {day}"
        if level == "hot":
            evidence |= {"budget": _money(rng, 3_000, 30_000), "vendor_evaluation": f"integrations with {others[0]}"}
    return {
        "category": category,
        "industry": business.industry,
        "observed_at": observed_at.isoformat(),
        "confidence": confidence,
        "topic": topic,
        "summary": summary,
        "contact_id": business.contact_id,
        "evidence": evidence | (fcra or {}),
        "source_record_id": record_id,
    }
