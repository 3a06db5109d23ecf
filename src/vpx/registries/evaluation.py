"""Measuring entity resolution: a labelled set of record pairs built from real registry samples, and
the precision and recall of the matching rules on it (bench/registries_matching.py prints them;
docs/registries.md records them).

A contact is a business at a location, so the labels are:
- **same**: a record and a variant of it as another registry (or a later file) would write it —
  legal form, punctuation, abbreviations, one typo, word order, case, street spelling, suite, a
  missing or different phone; plus the real duplicate in the NPPES sample (LabCorp under two NPIs
  at one address and phone);
- **different**: every pair of distinct real records in one city and state (doctors of one practice
  sharing a phone, two locations of one hospital system), each variant against the other records
  of its city, and — so that names alone are put to the test, as in a big city's catalogue — every
  pair of distinct businesses anywhere in the samples whose names are at least 50 alike, moved into
  one city with the second one's street and phone removed.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import combinations
from pathlib import Path

from vpx.contacts.catalogue import contact_row
from vpx.registries.matching import MatchKeys, match_rule, name_similarity
from vpx.registries.resolution import keys_of

# NPIs of the one natural duplicate in the NPPES sample: the same laboratory company at one address.
KNOWN_SAME = {("nppes:1104829159", "nppes:1902809940")}

_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
_SUFFIXES = ["INC", "INC.", ", INC", "INCORPORATED", "LLC", "L.L.C.", "CORP", "CORPORATION", "CO", ""]
_ABBREVIATIONS = {
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


@dataclass(frozen=True)
class Pair:
    a: LabelledRecord
    b: LabelledRecord
    same: bool


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
                    records.append(_labelled(f"{source.registry}:{item.record_id}", item.kind, item.contact))
        finally:
            opened.close()
    return records


def _labelled(key: str, kind: str, fields: dict[str, object]) -> LabelledRecord:
    row = contact_row({**fields}, origin="registry", now=_EPOCH)
    return LabelledRecord(
        key=key, kind=kind, name=str(fields["business_name"]), street=row["street"], keys=keys_of(row)
    )


def _typo(word: str, rng: random.Random) -> str:
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
            spots = [i for i, w in enumerate(words) if w in _ABBREVIATIONS]
            if spots:
                i = rng.choice(spots)
                words[i : i + 1] = _ABBREVIATIONS[words[i]].split()
        elif change == "typo":
            spots = [i for i, w in enumerate(words) if len(w) >= 6 and w.isalpha()]
            if spots:
                i = rng.choice(spots)
                words[i] = _typo(words[i], rng)
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


def variant_of(record: LabelledRecord, fields: dict[str, object], rng: random.Random) -> LabelledRecord:
    roll = rng.random()
    phone = fields.get("phone") if roll < 0.5 else (None if roll < 0.75 else f"+1555{rng.randint(1000000, 9999999)}")
    changed = {
        **fields,
        "business_name": variant_name(record.name, rng),
        "street": variant_street(record.street, rng),
        "phone": phone,
    }
    return _labelled(record.key + "~variant", record.kind, changed)


def labelled_pairs(records: list[LabelledRecord], *, seed: int = 20261122) -> list[Pair]:
    rng = random.Random(seed)
    by_city: dict[tuple[str, str], list[LabelledRecord]] = defaultdict(list)
    for record in records:
        by_city[(record.keys.state, record.keys.city_key)].append(record)
    pairs: list[Pair] = []
    for group in by_city.values():
        for a, b in combinations(group, 2):
            same = (a.key, b.key) in KNOWN_SAME or (b.key, a.key) in KNOWN_SAME
            pairs.append(Pair(a, b, same))
    for record in records:
        if record.kind != "organization":
            continue  # another registry would not list an individual provider as a business
        fields: dict[str, object] = {
            "business_name": record.name,
            "street": record.street,
            "city": record.keys.city_key.upper(),
            "state": record.keys.state,
            "phone": record.keys.phone,
            "industry": "healthcare",
        }
        variant = variant_of(record, fields, rng)
        pairs.append(Pair(record, variant, True))
        for other in by_city[(record.keys.state, record.keys.city_key)]:
            if other.key != record.key:
                known = (record.key, other.key) in KNOWN_SAME or (other.key, record.key) in KNOWN_SAME
                pairs.append(Pair(variant, other, known))
    organisations = [r for r in records if r.kind == "organization"]
    for a, b in combinations(organisations, 2):
        if (a.key, b.key) in KNOWN_SAME or (b.key, a.key) in KNOWN_SAME:
            continue
        if (a.keys.state, a.keys.city_key) == (b.keys.state, b.keys.city_key):
            continue  # already paired above
        if name_similarity(a.keys.name_key, b.keys.name_key) < 50:
            continue
        moved = LabelledRecord(
            key=b.key + "~moved",
            kind=b.kind,
            name=b.name,
            street=None,
            keys=MatchKeys(b.keys.name_key, a.keys.state, a.keys.city_key, None, None),
        )
        pairs.append(Pair(a, moved, False))
    return pairs


@dataclass(frozen=True)
class Score:
    threshold: float
    true_positive: int
    false_positive: int
    false_negative: int

    @property
    def precision(self) -> float:
        found = self.true_positive + self.false_positive
        return self.true_positive / found if found else 1.0

    @property
    def recall(self) -> float:
        wanted = self.true_positive + self.false_negative
        return self.true_positive / wanted if wanted else 1.0


def score(pairs: Iterable[Pair], *, threshold: float) -> Score:
    tp = fp = fn = 0
    for pair in pairs:
        predicted = match_rule(pair.a.keys, pair.b.keys, threshold=threshold) is not None
        tp += predicted and pair.same
        fp += predicted and not pair.same
        fn += (not predicted) and pair.same
    return Score(threshold, tp, fp, fn)


def phone_only_score(pairs: Iterable[Pair]) -> Score:
    """The naive rule "same phone, same business", for comparison."""
    tp = fp = fn = 0
    for pair in pairs:
        predicted = bool(pair.a.keys.phone) and pair.a.keys.phone == pair.b.keys.phone
        tp += predicted and pair.same
        fp += predicted and not pair.same
        fn += (not predicted) and pair.same
    return Score(0.0, tp, fp, fn)
