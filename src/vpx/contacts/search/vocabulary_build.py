"""Builds ``data/trades.txt``, the trade vocabulary of the published lists:

    python -m vpx.contacts.search.vocabulary_build --nucc nucc_taxonomy_150.csv \\
        --naics 2022_NAICS_Structure.csv [--output src/vpx/contacts/search/data/trades.txt]

- The NUCC Health Care Provider Taxonomy (nucc.org; Windows-1252; ``Code,Type,…`` or, in newer
  releases, ``Code,Grouping,…,Display Name,…``): its classifications, specializations and display names.
- The NAICS 2022 structure (census.gov ``2022_NAICS_Structure.xlsx`` saved as CSV: the header on its
  third line, titles of the upper levels ending in a stray "T", trailing spaces).
- The CSLB's contractor classifications (``vpx.registries.cslb.CLASSIFICATIONS``, the names the CSLB
  publishes at https://www.cslb.ca.gov/About_Us/Library/Licensing_Classifications/ and the names our
  CSLB import gives licences, so that the vocabulary speaks of exactly those).

Each title is cut into items ("Plumbing, Heating, and Air-Conditioning Contractors": plumbing
contractors, heating contractors, air conditioning contractors), and each item gives rules, one way
from what people call the trade to the words the title (and so a catalogue using it) calls it:

- the agent noun of its field word: ``roofer => roofing``, ``pediatrician => pediatrics``,
  ``dentist => dentistry`` (AGENT_ENDINGS, AGENT_WORDS; NOT_AGENTS lists the derivations refused);
- the item without its role word: ``roofing contractor => roofing``, ``real estate agent, real estate
  broker => real estate``.

A phrase whose words each have a rule of their own ("pediatric dentist": pediatric, and dentist =>
dentistry) needs none: search plans a question word by word. The output is sorted, each rule with a
comment naming its sources, so the same lists always give the same file (a test checks the committed
file against the lists in ../shared/data).
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from vpx.contacts.normalise import words
from vpx.contacts.search.language import stem
from vpx.contacts.search.plan import ROLE_WORDS
from vpx.registries.cslb import CLASSIFICATIONS

DEFAULT_OUTPUT = Path(__file__).resolve().parent / "data" / "trades.txt"

# Field word ending → agent noun ending, the first that applies: the learned words of the health
# professions, where an ending names the person in every title that has it.
AGENT_ENDINGS: tuple[tuple[str, str], ...] = (
    ("dontics", "dontist"),  # orthodontics → orthodontist
    ("iatrics", "iatrician"),  # pediatrics → pediatrician, geriatrics → geriatrician
    ("etrics", "etrician"),  # obstetrics → obstetrician
    ("ology", "ologist"),  # cardiology → cardiologist
    ("iatry", "iatrist"),  # psychiatry → psychiatrist, podiatry → podiatrist
    ("metry", "metrist"),  # optometry → optometrist
    ("istry", "ist"),  # dentistry → dentist
    ("therapy", "therapist"),
    ("graphy", "grapher"),  # photography → photographer
    ("macy", "macist"),  # pharmacy → pharmacist
)
# An activity's "-ing" names its doer with "-er" (plumbing → plumber, roofing → roofer), in the
# titles of trades: the NUCC's and the CSLB's, and these NAICS sectors (farming, construction,
# transport, finance, real estate, professional and support services, education, health, leisure,
# food, repair and personal services). In manufacturing the "-ing" words are processes (anodizing).
TRADE_SECTORS = ("11", "23", "48", "49", "52", "53", "54", "56", "61", "62", "71", "72", "81")
# Field words whose agent noun no ending gives, or gives wrong (reviewed one by one).
AGENT_WORDS: dict[str, str] = {
    "accounting": "accountant",
    "allergy": "allergist",
    "architectural": "architect",
    "bakery": "baker",
    "brewery": "brewer",
    "carpentry": "carpenter",
    "chiropractic": "chiropractor",
    "confectionery": "confectioner",
    "consulting": "consultant",
    "counseling": "counselor",
    "decorating": "decorator",
    "dietetics": "dietitian",
    "distillery": "distiller",
    "electrical": "electrician",
    "embroidery": "embroiderer",
    "engineering": "engineer",
    "excavation": "excavator",
    "exterminating": "exterminator",
    "fabrication": "fabricator",
    "genetics": "geneticist",
    "glazing": "glazier",
    "grocery": "grocer",
    "inspection": "inspector",
    "insurance": "insurer",
    "interpretation": "interpreter",
    "investigation": "investigator",
    "janitorial": "janitor",
    "machining": "machinist",
    "masonry": "mason",
    "midwifery": "midwife",
    "nursing": "nurse",
    "optical": "optician",
    "orthotics": "orthotist",
    "prosthetics": "prosthetist",
    "remediation": "remediator",
    "surgery": "surgeon",
    "surveying": "surveyor",
    "therapy": "therapist",
    "translation": "translator",
    "tutoring": "tutor",
    "upholstery": "upholsterer",
    "veterinary": "veterinarian",
}
# Derivations the endings would make that are wrong: another word (an air conditioner is a machine,
# a heater too, a tower no tow truck, a fencer a swordsman) or no word at all ("sider"). There is no
# "-ical" → "-ician" ending for the same reason: a physical therapist is no physician.
NOT_AGENTS = frozenset(
    {
        "activating", "answering", "awning", "balancing", "bearing", "birthing", "blasting", "boarding",
        "bowling", "ceiling", "conditioning", "continuing", "covering", "crating", "cultivating", "decking",
        "dispensing", "drinking", "dwelling", "eating", "feeding", "fencing", "financing", "flooring",
        "freestanding", "gambling", "gathering", "giving", "hearing", "heating", "housing", "imaging",
        "issuing", "lathing", "leasing", "living", "lodging", "mapping", "neuroimaging", "parking", "planting",
        "polling", "processing", "reducing", "reinforcing", "ridesharing", "rooming", "saving", "scaffolding",
        "siding", "skiing", "spraying", "swallowing", "swimming", "technology", "towing", "trenching",
        "ventilating", "warehousing", "wiring",
    }
)  # fmt: skip
# Role words: what kind of business, not which trade ("Roofing Contractors" is about roofing).
ROLES = frozenset(
    {
        "agency",
        "agent",
        "broker",
        "brokerage",
        "company",
        "contractor",
        "dealer",
        "firm",
        "office",
        "provider",
        "service",
        "shop",
        "store",
    }
)
# Roles that name a person: "Real Estate Agents and Brokers" are about real estate.
PERSON_ROLES = frozenset({"agent", "broker"})
# Words before which a title stops meaning a trade ("… Services for the Elderly", "… in Biotechnology").
_CUT = re.compile(r"\b(?:for|with|without|in|on|from|to|by|except|including|of)\b.*$", re.IGNORECASE)
_LEADING = ("offices of ", "all other ", "other ", "miscellaneous ", "lessors of ")
_SPLIT = re.compile(r",|;|/|&|\band\b|\bor\b", re.IGNORECASE)
# NAICS sectors left out: public administration (courts, police, legislatures) names no trade.
NAICS_SKIPPED_SECTORS = ("92",)


@dataclass(frozen=True)
class Title:
    text: str
    source: str  # "NAICS 238160", "NUCC 1223P0221X", "CSLB C-39"

    @property
    def trade(self) -> bool:
        """Whether the title names a trade whose "-ing" words are activities (TRADE_SECTORS)."""
        name, code = self.source.split(" ", 1)
        return name != "NAICS" or code.startswith(TRADE_SECTORS)


def read_nucc(path: Path) -> list[Title]:
    """Classifications, specializations and display names of the NUCC taxonomy CSV (Windows-1252;
    ``Type`` or ``Grouping``; ``Display Name`` when the release has one)."""
    text = path.read_bytes().decode("cp1252")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    fields = {name.strip().lower(): name for name in reader.fieldnames or ()}
    for needed in ("code", "classification", "specialization"):
        if needed not in fields:
            raise SystemExit(f"{path}: not a NUCC taxonomy file (no {needed!r} column)")
    display = fields.get("display name")
    titles = []
    for row in reader:
        code = (row[fields["code"]] or "").strip()
        if not code:
            continue
        source = f"NUCC {code}"
        for column in (fields["classification"], fields["specialization"], display):
            value = " ".join((row.get(column) or "").split()) if column else ""
            if value:
                titles.append(Title(value, source))
    return titles


def read_naics(path: Path) -> list[Title]:
    """Every level's titles of the NAICS 2022 structure CSV (header on the line that names the code
    column; the upper levels' stray "T" and trailing spaces removed)."""
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig"), newline="")))
    header = next((i for i, row in enumerate(rows) if _naics_columns(row) is not None), None)
    if header is None:
        raise SystemExit(f"{path}: not a NAICS structure file (no 'NAICS Code' and 'NAICS Title' header)")
    code_at, title_at = _naics_columns(rows[header]) or (0, 0)
    titles = []
    for row in rows[header + 1 :]:
        if len(row) <= max(code_at, title_at):
            continue
        code, title = row[code_at].strip(), row[title_at].strip()
        if not code or not title or code.startswith(NAICS_SKIPPED_SECTORS):
            continue
        if len(code) < 6 and title.endswith("T") and (title[-2].islower() or title[-2] == ")"):
            title = title[:-1].rstrip()  # "Crop ProductionT": a flattened superscript
        titles.append(Title(title, f"NAICS {code}"))
    return titles


def _naics_columns(row: list[str]) -> tuple[int, int] | None:
    cells = [cell.strip().lower() for cell in row]
    code = next((i for i, cell in enumerate(cells) if "naics code" in cell), None)
    title = next((i for i, cell in enumerate(cells) if "naics title" in cell), None)
    return None if code is None or title is None else (code, title)


def cslb_titles() -> list[Title]:
    """The CSLB's classifications as our CSLB import names licences ("C-39 Roofing Contractor")."""
    titles = []
    for code, (name, _) in CLASSIFICATIONS.items():
        if code in ("C-61", "ASB", "HAZ") or name.lower().startswith("non-"):
            continue  # "Limited Specialty", certifications: no trade of their own
        titles.append(Title(name + (" Contractor" if code[0] in "ABC" else ""), f"CSLB {code}"))
    return titles


def items(title: str) -> list[list[str]]:
    """A title's items, each as folded words as the title writes them: "Plumbing, Heating, and
    Air-Conditioning Contractors" → [plumbing, contractors], [heating, contractors], [air,
    conditioning, contractors]; "Insurance Agencies and Brokerages" → [insurance, agencies],
    [insurance, brokerages]."""
    text = re.sub(r"\([^)]*\)", " ", title).replace("-and-", " and ").strip()
    while leading := next((w for w in _LEADING if text.lower().startswith(w)), None):
        text = text[len(leading) :].strip()
    text = _CUT.sub("", text)
    parts = [[word for word in words(part) if word not in ("other", "all")] for part in _SPLIT.split(text)]
    parts = [part for part in parts if part]
    if not parts:
        return []
    # The last part's head word belongs to the bare words before it ("Plumbing, Heating, and
    # Air-Conditioning Contractors"), unless the title wrote them as plurals: "Pharmacies and Drug
    # Stores" are two businesses. A bare role after a phrase takes the phrase's other words.
    last = parts[-1]
    head = last[-1] if len(last) > 1 else None
    shaped = []
    for index, part in enumerate(parts):
        if head is not None and index < len(parts) - 1 and len(part) == 1 and _singular(part[0]) == part[0]:
            part = [*part, head]
        elif len(part) == 1 and stem(part[0]) in ROLES and index > 0 and len(parts[index - 1]) > 1:
            part = [*parts[index - 1][:-1], part[0]]
        shaped.append(part)
    return shaped


def _singular(word: str) -> str:
    # Names of disciplines ("pediatrics", "orthodontics") are not plurals.
    return word if word.endswith("ics") else stem(word)


def agent(word: str, *, trade: bool = True) -> str | None:
    """The agent noun of a field word (plumbing → plumber), None when there is none to give; an
    "-ing" word gives one only in a trade's title (``trade``)."""
    if word in AGENT_WORDS:
        return AGENT_WORDS[word]
    if word in NOT_AGENTS:
        return None
    for ending, replacement in AGENT_ENDINGS:
        if word.endswith(ending) and len(word) > len(ending) + 1:
            return word[: -len(ending)] + replacement
    root = word[:-3]
    if (
        trade
        and word.endswith("ing")
        and len(root) >= 3
        and any(v in root for v in "aeiouy")
        and not root.endswith("e")
    ):
        return root + "er"
    return None


@dataclass
class Rules:
    """Target phrase → the phrases that find it, and where each rule came from."""

    finds: dict[str, set[str]]
    sources: dict[str, set[str]]

    @classmethod
    def empty(cls) -> Rules:
        return cls(defaultdict(set), defaultdict(set))

    def add(self, sources: Iterable[str], target: str, source: str) -> None:
        for phrase in sources:
            if phrase != target:
                self.finds[target].add(phrase)
                self.sources[target].add(source)


def derive(titles: list[Title]) -> Rules:
    rules = Rules.empty()
    shaped = [(title, item) for title in titles for item in items(title.text)]
    # An agent noun a title uses as such ("Offices of Dentists") finds the field word another title
    # uses ("Pediatric Dentistry"): agent nouns known from every title's field words.
    fields_of: dict[str, set[str]] = defaultdict(set)
    for title, item in shaped:
        for word in item:
            person = _agent_of(word, title)
            if person is not None:
                fields_of[person].add(_singular(word))
    for field, person in AGENT_WORDS.items():
        fields_of[person].add(field)
    for title, item in shaped:
        role = stem(item[-1]) if len(item) > 1 and stem(item[-1]) in ROLES else None
        core = item[:-1] if role is not None else item
        field = _singular(core[-1])
        person = _agent_of(core[-1], title)
        for word in core:  # "Marketing Consulting Services": marketer => marketing, consultant => consulting
            doer = _agent_of(word, title)
            if doer is not None:
                rules.add([doer], _singular(word), title.source)
        for known in sorted(fields_of.get(field, ())):
            rules.add([field], known, title.source)
        # "Roofing Contractors": roofing contractor => roofing, where the role says more than search's
        # own role words do (vpx.contacts.search.plan.ROLE_WORDS), names a person, or goes with an
        # agent noun; not for a list of goods ("Parts Dealers").
        says_more = role is not None and (role not in ROLE_WORDS or role in PERSON_ROLES or person is not None)
        if role is not None and says_more and _singular(core[-1]) == core[-1]:
            target = field if len(core) == 1 else " ".join(core)
            said = " ".join([*core[:-1], field, role])
            rules.add([said] + ([person] if person is not None and len(core) == 1 else []), target, title.source)
    return rules


def _agent_of(word: str, title: Title) -> str | None:
    return agent(word, trade=title.trade) or agent(_singular(word), trade=title.trade)


def render(rules: Rules) -> str:
    lines = [
        "# Built by vpx.contacts.search.vocabulary_build from the published lists: the NUCC Health Care",
        "# Provider Taxonomy, the NAICS 2022 titles and the CSLB's contractor classifications. Do not edit:",
        "# rebuild (docs/search.md says how); people's words no list publishes are in everyday.txt.",
        "# Each rule: the words people use => the words the titles use; after '#', the titles it comes from.",
    ]
    for target in sorted(rules.finds):
        left = ", ".join(sorted(rules.finds[target]))
        lines.append(f"{left} => {target}  # {_cite(rules.sources[target])}")
    return "\n".join(lines) + "\n"


def _cite(sources: set[str]) -> str:
    by_list: dict[str, list[str]] = defaultdict(list)
    for source in sources:
        name, code = source.split(" ", 1)
        by_list[name].append(code)
    parts = []
    for name in ("NUCC", "NAICS", "CSLB"):
        codes = sorted(by_list.get(name, ()))
        if codes:
            shown = ", ".join(codes[:3]) + (f" and {len(codes) - 3} more" if len(codes) > 3 else "")
            parts.append(f"{name} {shown}")
    return "; ".join(parts)


def build(nucc: Path, naics: Path) -> str:
    return render(derive(read_nucc(nucc) + read_naics(naics) + cslb_titles()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m vpx.contacts.search.vocabulary_build",
        description="Builds the trade vocabulary (data/trades.txt) from the NUCC taxonomy and the NAICS titles.",
    )
    parser.add_argument("--nucc", type=Path, required=True, help="the NUCC taxonomy CSV (nucc_taxonomy_*.csv)")
    parser.add_argument("--naics", type=Path, required=True, help="the NAICS 2022 structure CSV")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="where to write (default: %(default)s)")
    args = parser.parse_args(argv)
    text = build(args.nucc, args.naics)
    args.output.write_text(text, encoding="utf-8")
    print(f"{args.output}: {text.count(chr(10)) - 4} rules", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
