"""The records of the real samples, and the ordinary labelled pairs.

A contact is a business at a location, so the labels are:
- **same** (``variant``): a record and a variant of it as another registry (or a later file) would
  write it — legal form, punctuation, abbreviations, one typo, word order, case, street spelling,
  suite, the same or no phone (a *different* phone is conflicting evidence: vetoed by design, see
  vpx.registries.matching); plus the real duplicate in the NPPES sample (``known_same``: LabCorp
  under two NPIs at one address and a toll-free line);
- **different**: every pair of distinct real records in one city and state (``same_city``: doctors
  of one practice sharing a phone, two locations of one hospital system), each variant against the
  other records of its city (``variant_vs_other``), and — so that names alone are put to the test,
  as in a big city's catalogue — every pair of distinct businesses anywhere in the samples whose
  names are at least 50 alike, moved into one city with the second one's street, phone and
  identifiers removed (``name_collision``: nothing but the name to go on).
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import combinations
from pathlib import Path

from vpx.contacts.catalogue import contact_row
from vpx.registries.matching import MatchKeys, name_similarity
from vpx.registries.resolution import keys_of

# NPIs of the one natural duplicate in the NPPES sample: the same laboratory company at one address.
KNOWN_SAME = {("nppes:1104829159", "nppes:1902809940")}

_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
_SUFFIXES = ["INC", "INC.", ", INC", "INCORPORATED", "LLC", "L.L.C.", "CORP", "CORPORATION", "CO", ""]
ABBREVIATIONS = {
    "CONSTRUCTION": "CONSTR",
    "SERVICES": "SVCS",
    "SERVICE": "SVC",
    "CENTER": "CTR",
    "COMPANY": "CO",
    "ASSOCIATES": "ASSOC",
    "MEDICAL": "MED",
    "HEALTHCARE": "HEALTH CARE",
    "AND": "&",
    "&": "AND",
    "MANAGEMENT": "MGMT",
    "INTERNATIONAL": "INTL",
}
_STREETS = {"STREET": "ST", "ST": "STREET", "AVENUE": "AVE", "AVE": "AVENUE", "DRIVE": "DR", "DR": "DRIVE",
            "ROAD": "RD", "RD": "ROAD", "BOULEVARD": "BLVD", "BLVD": "BOULEVARD"}  # fmt: skip


@dataclass(frozen=True)
class LabelledRecord:
    key: str  # registry:record_id, or …~variant
    kind: str
    name: str
    street: str | None
    keys: MatchKeys


POSITIVE = ("variant", "known_same", "abbreviation", "suite", "typo", "dba")
HARD_NEGATIVE = (
    "other_phone",
    "other_domain",
    "other_house_number",
    "other_licence",
    "chain_location",
    "doctor_two_practices",
)
OTHER_NEGATIVE = ("same_city", "variant_vs_other", "name_collision")


@dataclass(frozen=True)
class Pair:
    a: LabelledRecord
    b: LabelledRecord
    same: bool
    category: str = ""


def sample_records(shared_data: Path) -> list[LabelledRecord]:
    """Active NPPES and CSLB records of the shared samples, as the importers read them."""
    from vpx.registries.cslb import Cslb
    from vpx.registries.nppes import Nppes
    from vpx.registries.reader import open_text
    from vpx.registries.records import SourceRecord

    records: list[LabelledRecord] = []
    for source, path in (
        (Nppes(), shared_data / "nppes" / "npidata_pfile_sample_k0bl.csv"),
        (Cslb(), shared_data / "licenses" / "ca_cslb_MasterLicenseData_noheader.csv"),
    ):
        opened = open_text(path)
        try:
            from vpx.registries.sources import ImportContext

            ctx = ImportContext.__new__(ImportContext)
            ctx.lookups = {"taxonomy": {}}
            for item in source.read(opened, ctx):
                if isinstance(item, SourceRecord) and item.active and item.contact is not None:
                    records.append(labelled(f"{source.registry}:{item.record_id}", item.kind, item.contact))
        finally:
            opened.close()
    return records


def labelled(key: str, kind: str, fields: dict[str, object]) -> LabelledRecord:
    """A record as entity resolution sees it, from contact fields (``identifiers`` included when given)."""
    row = contact_row({**fields}, origin="registry", now=_EPOCH)
    return LabelledRecord(
        key=key, kind=kind, name=str(fields["business_name"]), street=row["street"], keys=keys_of(row)
    )


def typo(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word) - 1)
    kind = rng.choice(("drop", "swap", "replace"))
    if kind == "drop":
        return word[:i] + word[i + 1 :]
    if kind == "swap":
        return word[: i - 1] + word[i] + word[i - 1] + word[i + 1 :]
    return word[:i] + rng.choice("AEIOURSTN") + word[i + 1 :]


def variant_name(name: str, rng: random.Random) -> str:
    """The same business name as another publisher might write it (one to three changes)."""
    words = name.upper().replace(",", " ,").split()
    for _ in range(rng.randint(1, 3)):
        change = rng.choice(("suffix", "abbreviate", "typo", "punctuation", "case", "order", "the"))
        if change == "suffix":
            while words and words[-1].strip(",.") in {"INC", "LLC", "CORP", "CO", "PC", "PA", "PLLC", "LTD"}:
                words.pop()
            suffix = rng.choice(_SUFFIXES)
            if suffix:
                words += suffix.replace(",", " ,").split()
        elif change == "abbreviate":
            spots = [i for i, w in enumerate(words) if w in ABBREVIATIONS]
            if spots:
                i = rng.choice(spots)
                words[i : i + 1] = ABBREVIATIONS[words[i]].split()
        elif change == "typo":
            spots = [i for i, w in enumerate(words) if len(w) >= 6 and w.isalpha()]
            if spots:
                i = rng.choice(spots)
                words[i] = typo(words[i], rng)
        elif change == "punctuation":
            words = [w.replace(".", "").replace("'", "").replace("-", " ") for w in words if w != ","]
        elif change == "case":
            words = [w.capitalize() for w in words]
        elif change == "order" and len(words) >= 2 and len(words) <= 3:
            words = words[1:] + words[:1]
        elif change == "the" and words and words[0] != "THE":
            words = ["THE", *words]
    text = " ".join(words).replace(" ,", ",")
    return text or name


def variant_street(street: str | None, rng: random.Random) -> str | None:
    if not street or rng.random() < 0.15:
        return None if rng.random() < 0.5 else street
    words = street.upper().split()
    roll = rng.random()
    if roll < 0.4:
        words = [_STREETS.get(w, w) for w in words]
    elif roll < 0.7:
        words += ["STE", str(rng.randint(100, 400))]
    return " ".join(words)


def fields_of(record: LabelledRecord) -> dict[str, object]:
    """The contact fields of a sample record as another source would give them (no identifiers)."""
    return {
        "business_name": record.name,
        "street": record.street,
        "city": record.keys.city_key.upper(),
        "state": record.keys.state,
        "phone": record.keys.phone,
        "industry": "healthcare",
    }


def variant_of(record: LabelledRecord, rng: random.Random) -> LabelledRecord:
    fields = fields_of(record)
    changed = {
        **fields,
        "business_name": variant_name(record.name, rng),
        "street": variant_street(record.street, rng),
        "phone": fields["phone"] if rng.random() < 0.5 else None,
    }
    return labelled(record.key + "~variant", record.kind, changed)


def _known(a: LabelledRecord, b: LabelledRecord) -> bool:
    return (a.key, b.key) in KNOWN_SAME or (b.key, a.key) in KNOWN_SAME


def labelled_pairs(records: list[LabelledRecord], *, seed: int = 20261122) -> list[Pair]:
    """The ordinary pairs: variants (same), distinct records of one city, variants against the other
    records of their city, and name collisions (different)."""
    rng = random.Random(seed)
    by_city: dict[tuple[str, str], list[LabelledRecord]] = defaultdict(list)
    for record in records:
        by_city[(record.keys.state, record.keys.city_key)].append(record)
    pairs: list[Pair] = []
    for group in by_city.values():
        for a, b in combinations(group, 2):
            known = _known(a, b)
            pairs.append(Pair(a, b, known, "known_same" if known else "same_city"))
    for record in records:
        if record.kind != "organization":
            continue  # another registry would not list an individual provider as a business
        variant = variant_of(record, rng)
        pairs.append(Pair(record, variant, True, "variant"))
        for other in by_city[(record.keys.state, record.keys.city_key)]:
            if other.key != record.key:
                known = _known(record, other)
                pairs.append(Pair(variant, other, known, "variant" if known else "variant_vs_other"))
    organisations = [r for r in records if r.kind == "organization"]
    for a, b in combinations(organisations, 2):
        if _known(a, b) or (a.keys.state, a.keys.city_key) == (b.keys.state, b.keys.city_key):
            continue  # paired above
        if name_similarity(a.keys.name_key, b.keys.name_key) < 50:
            continue
        moved = LabelledRecord(
            key=b.key + "~moved",
            kind=b.kind,
            name=b.name,
            street=None,
            keys=MatchKeys(b.keys.name_key, a.keys.state, a.keys.city_key, None, None),
        )
        pairs.append(Pair(a, moved, False, "name_collision"))
    return pairs
