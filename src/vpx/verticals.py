"""The 46 industry verticals (D18). Unknown values are a 422 wherever a vertical is accepted."""

from __future__ import annotations

VERTICALS: tuple[str, ...] = (
    "accounting",
    "advertising-marketing",
    "agriculture",
    "automotive",
    "aviation-aerospace",
    "banking",
    "beauty-personal-care",
    "biotech-pharma",
    "construction",
    "consulting",
    "cybersecurity",
    "dental",
    "ecommerce",
    "education",
    "energy-utilities",
    "engineering",
    "entertainment-media",
    "environmental-services",
    "financial-services",
    "fitness-wellness",
    "food-beverage",
    "government",
    "healthcare",
    "home-services",
    "hospitality",
    "hr-staffing",
    "insurance",
    "it-services",
    "legal",
    "logistics-transportation",
    "manufacturing",
    "medical-devices",
    "mental-health",
    "nonprofit",
    "pet-services",
    "real-estate",
    "restaurants",
    "retail",
    "saas",
    "security-services",
    "senior-care",
    "solar",
    "telecommunications",
    "travel",
    "veterinary",
    "wholesale-distribution",
)

VERTICAL_SET = frozenset(VERTICALS)


def is_vertical(value: str) -> bool:
    return value in VERTICAL_SET
