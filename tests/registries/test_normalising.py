"""Normalisation of registry values and the matching rules, without a database."""

from __future__ import annotations

import phonenumbers
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vpx.contacts.normalise import (
    display_name,
    display_street,
    fast_phone_e164,
    name_key,
    person_display_name,
    person_name_and_key,
    phone_e164,
    postal_code,
    street_key,
)
from vpx.registries.cslb import classification_code, classifications_vertical, licence_label, named_person
from vpx.registries.matching import MatchKeys, match_name, match_rule
from vpx.registries.nppes import is_deactivated
from vpx.registries.nucc import taxonomy_specialty, taxonomy_vertical


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("CUMBERLAND COUNTY HOSPITAL SYSTEM, INC", "Cumberland County Hospital System, Inc"),
        ("C B S CONSTRUCTION CLEAN UP INC", "C B S Construction Clean Up Inc"),
        ("CRESPO'S LANDSCAPING MAINTENANCE", "Crespo's Landscaping Maintenance"),
        ("AZAR/FILIPOV MD PA", "Azar/Filipov MD PA"),
        ("LABORATORY CORPORATION OF AMERICA", "Laboratory Corporation of America"),
        ("222  2ND AVE N", "222 2nd Ave N"),
        ("MCDONALD HVAC LLC", "McDonald HVAC LLC"),
        ("Acme plumbing", "Acme plumbing"),  # mixed case is the publisher's spelling: kept
    ],
)
def test_names_in_capitals_are_shown_in_title_case_keeping_legal_forms(raw: str, shown: str) -> None:
    assert display_name(raw) == shown


def test_person_names_read_first_middle_last_with_the_credential() -> None:
    assert person_display_name("DAVID", "A", "WIEBE", credential="M.D.") == "David A Wiebe, M.D."
    assert person_display_name("KELLY", "", "SLEETER") == "Kelly Sleeter"


def test_addresses_and_zips() -> None:
    assert street_key("2770 CAPITAL MEDICAL BLVD STE 200") == street_key("2770 Capital Medical Boulevard")
    assert street_key("8812 W PICO BLVD #211") == "8812 w pico blvd"
    assert postal_code("688482168") == "68848-2168"
    assert postal_code("60616-") == "60616"
    assert postal_code("1234") is None


@pytest.mark.parametrize(
    ("raw", "e164"),
    [("3088652512", "+13088652512"), ("(805) 338 3191", "+18053383191"), ("(312)986-8000 x", "+13129868000"),
     ("0000000000", None), ("", None), ("555", None)],
)  # fmt: skip
def test_registry_phones_become_e164(raw: str, e164: str | None) -> None:
    assert fast_phone_e164(raw) == e164


@settings(max_examples=400, deadline=None)
@given(st.from_regex(r"\A[2-9]\d{9}\Z"))
def test_the_fast_phone_path_agrees_with_phonenumbers(digits: str) -> None:
    expected = None
    number = phonenumbers.parse(digits, "US")
    if phonenumbers.is_valid_number(number):
        expected = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
    assert fast_phone_e164(digits) == expected == phone_e164(digits)


# Words as registries write them, and what trips up casing and word cutting: accents, letters whose
# capitals are longer (ß, ﬀ) or context-dependent (Σ), odd whitespace, punctuation, legal forms.
_ODD_WORDS = st.sampled_from(
    ["222", "2ND", "N", "MAIN", "ST", "STE", "#200", "MC", "MCDONALD", "O'BRIEN", "DE", "LA", "THE", "AND", "&",
     "LLC", "INC", "MD", "M.D.", "PA-C", "DDS,", "HVAC", "CBS", "Acme", "plumbing", "É", "é", "ß", "ΣΑΣ", "σ",
     "ﬀ", "İ", "ǅ", "Ⅻ", "١٢٣", "X/Y", "A.B.", "-", ",", "'", ""]
)  # fmt: skip
_SPACES = st.sampled_from([" ", "  ", "\t", "\u00a0", "\u2003", ""])


@st.composite
def _odd_text(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.one_of(_ODD_WORDS, st.text(max_size=4)), max_size=5))
    return "".join(draw(_SPACES) + part for part in parts) + draw(_SPACES)


@settings(max_examples=600, deadline=None)
@given(_odd_text(), _odd_text())
def test_a_street_is_shown_as_display_name_shows_its_line(line1: str, line2: str) -> None:
    assert display_street(line1, line2) == display_name(line1 + " " + line2)


@settings(max_examples=600, deadline=None)
@given(_odd_text(), _odd_text(), _odd_text(), _odd_text(), _odd_text())
def test_a_person_s_name_and_key_are_those_of_the_whole_name(
    first: str, middle: str, last: str, suffix: str, credential: str
) -> None:
    name = person_display_name(first, middle, last, suffix=suffix, credential=credential)
    assert person_name_and_key(first, middle, last, suffix, credential) == (name, name_key(name))


def test_nucc_codes_map_to_specialties_and_verticals() -> None:
    assert (
        taxonomy_specialty("Internal Medicine", "Cardiovascular Disease") == "Internal Medicine, Cardiovascular Disease"
    )
    assert taxonomy_vertical("Dental Providers", "Dentist", "Orthodontics and Dentofacial Orthopedics") == "dental"
    assert taxonomy_vertical("Behavioral Health & Social Service Providers", "Psychologist", "") == "mental-health"
    assert (
        taxonomy_vertical("Allopathic & Osteopathic Physicians", "Psychiatry & Neurology", "Psychiatry")
        == "mental-health"
    )
    assert (
        taxonomy_vertical("Allopathic & Osteopathic Physicians", "Psychiatry & Neurology", "Neurology") == "healthcare"
    )
    assert taxonomy_vertical("Nursing & Custodial Care Facilities", "Assisted Living Facility", "") == "senior-care"
    assert taxonomy_vertical("Agencies", "Home Health", "") == "senior-care"
    assert taxonomy_vertical("Other Service Providers", "Veterinarian", "Medical Research") == "veterinary"
    assert taxonomy_vertical("Allopathic & Osteopathic Physicians", "Family Medicine", "") == "healthcare"


def test_cslb_classifications_map_to_licence_types_and_verticals() -> None:
    assert [classification_code(c) for c in ("C-7", "C10", "C07", "D35", "A", "HAZ")] == [
        "C-7", "C-10", "C-7", "D-35", "A", "HAZ",
    ]  # fmt: skip
    assert licence_label("C-10") == "C-10 Electrical Contractor"
    assert licence_label("D-49") == "D-49 Tree Service"
    assert classifications_vertical(["B", "C-46"]) == "solar"
    assert classifications_vertical(["C-36"]) == "home-services"
    assert classifications_vertical(["A", "C-27"]) == "construction"


def test_a_sole_owner_is_read_from_the_two_spellings_of_the_name() -> None:
    assert named_person("CLARK GORDON CONSTRUCTION", "GORDON CLARK CONSTRUCTION") == "Gordon Clark"
    assert named_person("STOKES JOHN R", "JOHN R STOKES") == "John R Stokes"
    assert named_person("VELA ROBERT JR", "ROBERT VELA JR") == "Robert Vela Jr"
    assert named_person("EL - HAWAT MICHEL", "MICHEL EL - HAWAT") == "Michel El - Hawat"
    assert named_person("INSTABUILT CONSTRUCTION INC", "") is None
    assert named_person("BAYSIDE ELECTRIC", "M TABBERT INC DBA BAYSIDE ELECTRIC") is None


def test_an_npi_is_deactivated_unless_reactivated_later() -> None:
    assert is_deactivated("", "", "")
    assert is_deactivated("1", "03/15/2006", "")
    assert not is_deactivated("1", "03/15/2006", "03/20/2006")
    assert not is_deactivated("2", "", "")


def _keys(name: str, street: str | None = "1 Main St", phone: str | None = None, city: str = "houston") -> MatchKeys:
    from vpx.contacts.normalise import name_key

    return MatchKeys(match_name(name_key(name)), "TX", city, street_key(street), phone)


def test_doctors_sharing_a_practice_phone_are_not_one_business() -> None:
    a = _keys("Laurent Gressot, M.D.", "17323 Red Oak Dr", "+12814405006")
    b = _keys("Charles Yen, MD", "17323 Red Oak Dr", "+12814405006")
    assert match_rule(a, b) is None


def test_the_same_business_spelt_two_ways_is_one() -> None:
    a = _keys("Medfund LLC", "1975 Veterans Pkwy", "+17066538303")
    assert match_rule(a, _keys("THE MEDFUND, L.L.C.", "1975 VETERANS PARKWAY STE 2", None)) == ("name_address", 100.0)
    found = match_rule(a, _keys("MEDFUND SVCS LLC", None, "+17066538303"))
    assert found is not None and found[0] == "phone"
    assert match_rule(_keys("Snyder Craft Construction"), _keys("SNYDER CRAFT CONSTR"))


def test_two_locations_of_one_chain_stay_apart() -> None:
    a = _keys("Cumberland County Hospital System, Inc", "3418 Village Dr", "+19106096740")
    b = _keys("Cumberland County Hospital System, Inc", "1638 Owen Dr", "+19106096440")
    assert match_rule(a, b) is None
    assert (
        match_rule(a, _keys("Cumberland County Hospital System, Inc", "3418 Village Dr", None, city="dallas")) is None
    )
