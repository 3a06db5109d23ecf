"""The trade vocabulary: its file format, the files the service reads, the build from the published
lists (NUCC, NAICS, CSLB), and people's words for a trade finding that trade through the API."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import SHARED_DATA
from tests.factories import Factory
from vpx.contacts.search import vocabulary_build
from vpx.contacts.search.plan import ROLE_WORDS
from vpx.contacts.search.vocabulary import BUILT_IN, Vocabulary, VocabularyError, built_in, load

# --- the file format -------------------------------------------------------------------------------


def test_equivalent_and_one_way_rules_with_comments() -> None:
    vocabulary = Vocabulary()
    vocabulary.add_rules(
        "# a comment line\n"
        "\n"
        "attorney, lawyer, law firm   # equivalent\n"
        "realtor, real estate agent => real estate, realty\n",
        source="test.txt",
    )
    assert vocabulary.rules == 2
    lawyers = {("attorney",), ("lawyer",), ("law", "firm")}
    assert vocabulary.finds(("lawyer",)) == vocabulary.finds(("law", "firm")) == lawyers
    assert vocabulary.finds(("realtors",)) == {("real", "estate"), ("realty",)}  # a plural meets its singular
    assert vocabulary.finds(("real", "estate")) == frozenset()  # one way: the right finds nothing more
    assert vocabulary.finds(("realtor", "x")) == frozenset()


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("a, b\nplumber => plumbing => pipes\n", 2, "at most one '=>'"),
        ("\n\nplumber\n", 3, "at least two terms"),
        ("# fine\nplumber, , pipefitter\n", 2, "an empty term"),
        ("plumber =>\n", 1, "an empty term in right of '=>'"),
        ("a, b\nplumber => ***\n", 2, "no letters or digits"),
        ("one two three four five six seven => x\n", 1, "more than 6 words"),
    ],
)
def test_a_bad_line_is_an_error_naming_the_file_and_line(text: str, line: int, message: str) -> None:
    with pytest.raises(VocabularyError) as raised:
        Vocabulary().add_rules(text, source="synonyms.txt")
    assert str(raised.value).startswith(f"synonyms.txt, line {line}: ")
    assert message in str(raised.value)


def test_an_operators_file_adds_to_the_built_in_rules(tmp_path: Path) -> None:
    extra = tmp_path / "synonyms.txt"
    extra.write_text("# ours\nsparky => electrical\nrealtor => homes\n", encoding="utf-8")
    vocabulary = load(extra)
    assert vocabulary.finds(("sparky",)) == {("electrical",)}
    assert ("homes",) in vocabulary.finds(("realtors",)) and ("real", "estate") in vocabulary.finds(("realtor",))
    assert vocabulary.rules == built_in().rules + 2

    extra.write_text("sparky => electrical\nsparky\n", encoding="utf-8")
    with pytest.raises(VocabularyError, match=rf"^{extra}, line 2: "):
        load(extra)
    with pytest.raises(VocabularyError, match="cannot be read"):
        load(tmp_path / "missing.txt")


def test_the_built_in_files_load_and_every_built_rule_names_its_source() -> None:
    vocabulary = built_in()
    assert vocabulary.rules > 300
    assert ("plumbing",) in vocabulary.finds(("plumbers",))
    assert ("real", "estate") in vocabulary.finds(("realtors",))
    trades = Path(vocabulary_build.__file__).parent / BUILT_IN[0]
    rules = [line for line in trades.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    targets = [rule.split("=>")[1].split("#")[0].strip() for rule in rules]
    assert targets == sorted(set(targets))  # one line a target, in order: a rebuild's diff reads well
    for rule in rules:
        assert "=>" in rule and any(
            f"# {source} " in rule or f"; {source} " in rule for source in ("NUCC", "NAICS", "CSLB")
        )


def test_a_typo_of_a_word_people_use_is_read_as_that_word() -> None:
    vocabulary = built_in()
    assert vocabulary.knows("plumbers") and not vocabulary.knows("plumbrs")
    assert vocabulary.nearest("plumbrs", 1) == ("plumber",)
    assert vocabulary.nearest("rofers", 1) == ("roofer",)
    # A word that is a term on its own wins over a word of a longer term ("physical therapist").
    assert vocabulary.nearest("physicans", 2) == ("physician",)
    assert vocabulary.nearest("agnets", 1, also=ROLE_WORDS) == ("agent",)
    assert vocabulary.nearest("zzzzzz", 1) == ()


# --- building trades.txt from the published lists ---------------------------------------------------


@pytest.mark.parametrize(
    ("field", "person"),
    [
        ("plumbing", "plumber"),
        ("roofing", "roofer"),
        ("dentistry", "dentist"),
        ("orthodontics", "orthodontist"),
        ("pediatrics", "pediatrician"),
        ("cardiology", "cardiologist"),
        ("psychiatry", "psychiatrist"),
        ("accounting", "accountant"),
        ("photography", "photographer"),
        ("veterinary", "veterinarian"),
        ("pharmacy", "pharmacist"),
        ("electrical", "electrician"),
        ("physical", None),  # no physician
        ("heating", None),  # no heater
        ("towing", None),  # no tower
    ],
)
def test_the_agent_noun_of_a_field(field: str, person: str | None) -> None:
    assert vocabulary_build.agent(field) == person


def test_an_ing_word_names_its_doer_only_in_a_trades_title() -> None:
    assert vocabulary_build.agent("anodizing", trade=False) is None
    assert vocabulary_build.Title("Anodizing", "NAICS 332813").trade is False
    assert vocabulary_build.Title("Roofing Contractors", "NAICS 238160").trade is True


@pytest.mark.parametrize(
    ("title", "items"),
    [
        (
            "Plumbing, Heating, and Air-Conditioning Contractors",
            [["plumbing", "contractors"], ["heating", "contractors"], ["air", "conditioning", "contractors"]],
        ),
        ("Offices of Real Estate Agents and Brokers", [["real", "estate", "agents"], ["real", "estate", "brokers"]]),
        ("Pharmacies and Drug Retailers", [["pharmacies"], ["drug", "retailers"]]),
        ("Offices of Physicians (except Mental Health Specialists)", [["physicians"]]),
        ("Services for the Elderly and Persons with Disabilities", [["services"]]),
    ],
)
def test_a_title_is_cut_into_items(title: str, items: list[list[str]]) -> None:
    assert vocabulary_build.items(title) == items


def test_rules_from_titles() -> None:
    titles = [
        vocabulary_build.Title("Roofing Contractors", "NAICS 238160"),
        vocabulary_build.Title("Offices of Real Estate Agents and Brokers", "NAICS 531210"),
        vocabulary_build.Title("Offices of Dentists", "NAICS 621210"),
        vocabulary_build.Title("Pediatric Dentistry", "NUCC 1223P0221X"),
        vocabulary_build.Title("Physical Therapist", "NUCC 225100000X"),
    ]
    text = vocabulary_build.render(vocabulary_build.derive(titles))
    rules = [line for line in text.splitlines() if not line.startswith("#")]
    assert rules == [
        "dentist => dentistry  # NUCC 1223P0221X; NAICS 621210",
        "real estate agent, real estate broker => real estate  # NAICS 531210",
        "roofer, roofing contractor => roofing  # NAICS 238160",
        "therapist => therapy  # NUCC 225100000X",
    ]
    # What the tool writes, the service reads.
    Vocabulary().add_rules(text, source="trades.txt")


def test_both_nucc_layouts_and_the_naics_layout_are_read(tmp_path: Path) -> None:
    old = tmp_path / "nucc_taxonomy_150.csv"
    old.write_bytes(
        b"Code,Type,Classification,Specialization,Definition,Notes\r\n"
        b'1223P0221X,Dental Providers,Dentist,Pediatric Dentistry,"A dentist\x92s, for children",\r\n'
    )
    new = tmp_path / "nucc_taxonomy_250.csv"
    new.write_bytes(
        b"Code,Grouping,Classification,Specialization,Definition,Notes,Display Name,Section\r\n"
        b"1223P0221X,Dental Providers,Dentist,Pediatric Dentistry,,,Pediatric Dentist,Individual\r\n"
    )
    assert [t.text for t in vocabulary_build.read_nucc(old)] == ["Dentist", "Pediatric Dentistry"]
    assert [t.text for t in vocabulary_build.read_nucc(new)] == ["Dentist", "Pediatric Dentistry", "Pediatric Dentist"]
    naics = tmp_path / "naics.csv"
    rows = [
        ["Table 1"],
        ["2022 NAICS Structure", "", "", "", "", ""],
        ["Change Indicator", "2022 NAICS Code", "2022 NAICS Title", "", "", ""],
        ["", "238", "Specialty Trade ContractorsT", "", "", ""],
        ["", "23816", "Roofing Contractors ", "", "", ""],
        ["", "238160", "Roofing Contractors", "", "", ""],
        ["", "", "", "", "", ""],
        ["", "92212", "Police Protection ", "", "", ""],
    ]
    buffer = io.StringIO()
    csv.writer(buffer).writerows(rows)
    naics.write_text(buffer.getvalue(), encoding="utf-8")
    titles = vocabulary_build.read_naics(naics)
    assert [(t.text, t.source) for t in titles] == [
        ("Specialty Trade Contractors", "NAICS 238"),
        ("Roofing Contractors", "NAICS 23816"),
        ("Roofing Contractors", "NAICS 238160"),
    ]
    with pytest.raises(SystemExit, match="not a NUCC taxonomy file"):
        vocabulary_build.read_nucc(naics)


def test_the_committed_trades_file_is_what_the_published_lists_give(tmp_path: Path) -> None:
    nucc = SHARED_DATA / "nppes" / "nucc_taxonomy_150.csv"
    naics = SHARED_DATA / "naics" / "2022_NAICS_Structure.csv"
    if not (nucc.is_file() and naics.is_file()):
        pytest.skip(f"the NUCC and NAICS files are not under {SHARED_DATA}: cannot rebuild trades.txt to compare")
    output = tmp_path / "trades.txt"
    assert vocabulary_build.main(["--nucc", str(nucc), "--naics", str(naics), "--output", str(output)]) == 0
    committed = Path(vocabulary_build.__file__).parent / "data" / "trades.txt"
    assert output.read_bytes() == committed.read_bytes(), (
        "data/trades.txt is not what vocabulary_build makes of the published lists: rebuild it"
    )


# --- people's words through the API -----------------------------------------------------------------


async def test_peoples_words_for_a_trade_find_that_trade(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    headers = account.headers("ro")
    await factory.demo(600)

    async def ids(**params: str) -> set[str]:
        response = await client.get("/api/v1/contacts/search", params={**params, "limit": "100"}, headers=headers)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        assert body["total"] <= 100  # one page holds every match
        return {contact["id"] for contact in body["contacts"]}

    # question -> a specialty of its trade (what a contact of that trade holds, in other words)
    questions = {
        "realtors": "Residential Sales",
        "attorneys": "Business Law",
        "insurance agents": "Property and Casualty",
        "pool builders": "Pool Service",
        "hvac contractors": "HVAC",
        "cpa": "Audit and Assurance",
        "dds": "Orthodontics",
        "bookkeepers": "Bookkeeping",
        "pediatricians": "Pediatrics",
        "veterinarians": "Equine Medicine",
        "plumbrs": "Plumbing",  # a typo of the people-word
        "exterminators": "Pest Control",
    }
    for question, specialty in questions.items():
        of_trade = await ids(specialty=specialty)
        assert of_trade, specialty  # the demo catalogue holds the trade
        assert of_trade <= await ids(q=question), question


async def test_a_business_named_with_the_word_comes_first(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    headers = account.headers("ro")
    await factory.demo(300)
    await factory.contact(
        business_name="Lone Star Realtors",
        industry="consulting",
        specialty="Management Consulting",
        license_type="Business License",
        phone="+15125550123",
        email="office@lonestar.example",
        website="https://lonestar.example",
    )
    await factory.contact(
        business_name="Wells Dental Care",
        industry="dental",
        specialty="General Practice Dentistry",
        license_type="Dentist (DDS)",
        phone="+15125550124",
        email="office@wellsdental.example",
        website="https://wellsdental.example",
    )
    realtors = (await client.get("/api/v1/contacts/search", params={"q": "realtors"}, headers=headers)).json()
    assert realtors["contacts"][0]["business_name"] == "Lone Star Realtors"
    assert realtors["total"] > 1  # and the real estate businesses after it
    # A family name is not read as another word: "Wells" finds the business named so, not wells.
    wells = (await client.get("/api/v1/contacts/search", params={"q": "wells"}, headers=headers)).json()
    assert [c["business_name"] for c in wells["contacts"]] == ["Wells Dental Care"]


def test_a_bad_operator_vocabulary_stops_the_service_at_start_naming_the_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """VPX_SEARCH_SYNONYMS is read with the settings: one line naming the file and the line, no
    traceback, before anything serves."""
    from vpx.config import InvalidSettings, get_settings

    rules = tmp_path / "synonyms.txt"
    rules.write_text("tinsmith, sheet metal\n# a comment\nbroken line without a comma\n", encoding="utf-8")
    for name in [n for n in os.environ if n.startswith("VPX_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("VPX_SEARCH_SYNONYMS", str(rules))
    get_settings.cache_clear()
    try:
        with pytest.raises(InvalidSettings) as raised:
            get_settings()
        assert str(raised.value) == (
            f"VPX_SEARCH_SYNONYMS: {rules}, line 3: a rule without '=>' names at least two terms, separated by commas"
        )
        rules.write_text("tinsmith, sheet metal\n", encoding="utf-8")
        get_settings.cache_clear()
        assert get_settings().search_synonyms == rules
    finally:
        get_settings.cache_clear()
