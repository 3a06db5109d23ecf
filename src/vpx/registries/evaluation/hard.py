"""The hard cases, built from each real record of the samples (seeded, so every run builds the same).

Hard negatives — another business that a name-only rule would take for this one:
- ``other_phone``: the same name, or the name with one word changed ("Acme Hot Software" and "Acme
  Warm Software"), in the same city with no street and another phone;
- ``other_domain``: the same or a near name with another registrable website domain;
- ``other_house_number``: the same name at another number of the same street (with the same
  phone half of the time: two locations of one business on one street);
- ``other_licence``: a CSLB licensee's name with another licence number;
- ``chain_location``: the same name at another street of the city, sharing a toll-free line half of
  the time (chains and franchises) and with its own number otherwise;
- ``doctor_two_practices``: an individual provider's name at another practice in the city, with the
  practice's own street and phone.

Hard positives — the same business written differently by another source:
- ``abbreviation``: every abbreviable word abbreviated (CONSTRUCTION → CONSTR, SERVICES → SVCS…);
- ``suite``: another legal form and the street with a suite number;
- ``typo``: one typo in the name's longest word, no phone;
- ``dba``: an NPPES organisation named by its other name (its DBA or former name, as the registry
  lists it) with the same phone and street.
"""

from __future__ import annotations

import random
from collections import defaultdict

from vpx.contacts.identifiers import licence_token, other_names
from vpx.registries.evaluation.pairs import (
    ABBREVIATIONS,
    LabelledRecord,
    Pair,
    fields_of,
    labelled,
    labelled_pairs,
    typo,
)

# Words a different business of a near name may have in place of one of this one's.
_OTHER_WORDS = ("North", "South", "Premier", "Family", "Valley", "Summit", "Metro", "Pacific", "Golden", "Eastside")
_TOLL_FREE = "+18005550199"
_LEGAL_FORMS = frozenset({"INC", "LLC", "CORP", "CO", "PC", "PA", "PLLC", "LTD"})


def _slug(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())[:30] or "site"


def near_name(name: str, rng: random.Random) -> str:
    """Another business's name that differs from ``name`` by one word (the first word kept, so that
    both fall in one block, as a real neighbour would)."""
    words = name.split()
    replacement = rng.choice(_OTHER_WORDS)
    if len(words) == 1:
        return f"{name} {replacement}"
    spot = rng.randrange(1, len(words))
    words[spot] = replacement if words[spot].lower() != replacement.lower() else "Central"
    return " ".join(words)


def _other_phone(rng: random.Random) -> str:
    return f"+1720555{rng.randint(0, 9999):04d}"


def _street_number_changed(street: str, rng: random.Random) -> str | None:
    head, _, rest = street.partition(" ")
    if not head.isdigit() or not rest:
        return None
    return f"{int(head) + rng.randint(2, 400)} {rest}"


def hard_pairs(records: list[LabelledRecord], *, seed: int = 20261122) -> list[Pair]:
    rng = random.Random(seed + 1)
    pairs: list[Pair] = []
    streets: dict[str, list[str]] = defaultdict(list)
    for record in records:
        if record.street:
            streets[record.keys.state].append(record.street)
    for record in records:
        base = fields_of(record)
        if record.kind == "person":
            pairs += _doctor(record, base, streets, rng)
            continue
        pairs += _negatives(record, base, streets, rng)
        pairs += _positives(record, base, rng)
    return pairs


def _doctor(
    record: LabelledRecord, base: dict[str, object], streets: dict[str, list[str]], rng: random.Random
) -> list[Pair]:
    elsewhere = [s for s in streets[record.keys.state] if s != record.street]
    if not elsewhere:
        return []
    other = labelled(
        record.key + "~practice",
        "organization",
        {**base, "street": rng.choice(elsewhere), "phone": _other_phone(rng)},
    )
    return [Pair(record, other, False, "doctor_two_practices")]


def _negatives(
    record: LabelledRecord, base: dict[str, object], streets: dict[str, list[str]], rng: random.Random
) -> list[Pair]:
    key, kind, name = record.key, record.kind, record.name
    pairs = [
        Pair(record, labelled(f"{key}~samename", kind, {**base, "street": None, "phone": _other_phone(rng)}),
             False, "other_phone"),
        Pair(record, labelled(f"{key}~nearname", kind,
                              {**base, "business_name": near_name(name, rng), "street": None,
                               "phone": _other_phone(rng)}), False, "other_phone"),
    ]  # fmt: skip
    site = labelled(f"{key}~site", kind, {**base, "website": f"https://www.{_slug(name)}.example"})
    other_name = near_name(name, rng) if rng.random() < 0.5 else name
    pairs.append(
        Pair(site, labelled(f"{key}~othersite", kind,
                            {**base, "business_name": other_name, "street": None, "phone": None,
                             "website": f"https://{_slug(other_name)}-{rng.randint(2, 99)}.example/"}),
             False, "other_domain")
    )  # fmt: skip
    moved = _street_number_changed(record.street, rng) if record.street else None
    if moved is not None:
        phone = record.keys.phone if rng.random() < 0.5 else None
        neighbour = labelled(f"{key}~number", kind, {**base, "street": moved, "phone": phone})
        pairs.append(Pair(record, neighbour, False, "other_house_number"))
    if record.key.startswith("cslb:"):
        number = str(int(record.key.split(":")[1]) + rng.randint(1, 5000))
        licensee = labelled(
            f"{key}~licence",
            kind,
            {**base, "business_name": near_name(name, rng) if rng.random() < 0.5 else name, "street": None,
             "phone": None, "identifiers": licence_token("CA", "contractor", number)},
        )  # fmt: skip
        pairs.append(Pair(record, licensee, False, "other_licence"))
    elsewhere = [s for s in streets[record.keys.state] if s != record.street]
    if elsewhere:
        shared_line = rng.random() < 0.5
        here = labelled(f"{key}~chain", kind, {**base, "phone": _TOLL_FREE}) if shared_line else record
        there = labelled(
            f"{key}~location",
            kind,
            {**base, "street": rng.choice(elsewhere), "phone": _TOLL_FREE if shared_line else _other_phone(rng)},
        )
        pairs.append(Pair(here, there, False, "chain_location"))
    return pairs


def _positives(record: LabelledRecord, base: dict[str, object], rng: random.Random) -> list[Pair]:
    key, kind, name = record.key, record.kind, record.name
    pairs: list[Pair] = []
    words = name.upper().split()
    if any(w.strip(",.") in ABBREVIATIONS for w in words):
        short = " ".join(ABBREVIATIONS.get(w.strip(",."), w) for w in words)
        pairs.append(
            Pair(record, labelled(f"{key}~abbr", kind, {**base, "business_name": short}), True, "abbreviation")
        )
    if record.street:
        bare = [w for w in words if w.strip(",.") not in _LEGAL_FORMS]
        other_form = " ".join(bare or words) + rng.choice([" LLC", " INC", ", INC.", " CORP", ""])
        suite = f"{record.street} {rng.choice(['Ste', 'Suite', '#', 'Unit'])} {rng.randint(2, 900)}"
        pairs.append(
            Pair(record, labelled(f"{key}~suite", kind, {**base, "business_name": other_form, "street": suite,
                                                          "phone": None}), True, "suite")
        )  # fmt: skip
    spots = [i for i, w in enumerate(words) if len(w) >= 6 and w.isalpha()]
    if spots:
        longest = max(spots, key=lambda i: len(words[i]))
        typed = [*words[:longest], typo(words[longest], rng), *words[longest + 1 :]]
        pairs.append(
            Pair(record, labelled(f"{key}~typo", kind, {**base, "business_name": " ".join(typed), "phone": None}),
                 True, "typo")
        )  # fmt: skip
    for other in other_names(record.keys.identifiers):
        dba = labelled(f"{key}~dba", kind, {**base, "business_name": other.upper()})
        pairs.append(Pair(record, dba, True, "dba"))
    return pairs


def all_pairs(records: list[LabelledRecord], *, seed: int = 20261122) -> list[Pair]:
    """The ordinary pairs (vpx.registries.evaluation.pairs) and the hard ones."""
    return labelled_pairs(records, seed=seed) + hard_pairs(records, seed=seed)
