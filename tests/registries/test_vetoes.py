"""Conflicting strong evidence never merges two businesses: the vetoes of entity resolution, in every
matching path (evidence and signals, contributions, registry imports: see also test_resolution and
test_contribute), and the possible duplicates an operator merges or dismisses with
`vpx registries duplicates`."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select

from tests.conftest import SHARED_DATA
from tests.factories import Factory
from tests.signals.support import event, ingest
from tests.test_cli import vpx
from vpx.contacts.catalogue import add_contacts, contact_row
from vpx.contacts.identifiers import aka_token, joined, licence_token, registrable_domain
from vpx.models import Contact, ContactSource, PossibleDuplicate, Reveal, Signal
from vpx.registries import evaluation
from vpx.registries.matching import NAME_THRESHOLD, MatchKeys, best_match, conflict, decide, match_rule
from vpx.registries.resolution import resolve_keys
from vpx.signals.events import BusinessRef


def keys(name: str = "acme hot software", **fields: object) -> MatchKeys:
    values: dict[str, object] = {"name_key": name, "state": "CO", "city_key": "denver", "block": name.split()[0]}
    values.update(fields)
    return MatchKeys(**values)  # type: ignore[arg-type]


# --- The decisions, record against record ---


def test_two_different_phones_veto_whatever_the_names() -> None:
    a, b = keys(phone="+13035550100"), keys(phone="+13035550199")
    assert conflict(a, b) == "phone" and match_rule(a, b) is None
    decision = decide(a, b)
    assert decision is not None and decision.rule is None and decision.possible_duplicate


def test_a_record_listing_both_phones_agrees_with_either() -> None:
    both = keys(phone="+13035550100", identifiers=frozenset({"tel:+13035550199"}))
    assert conflict(both, keys(phone="+13035550199")) is None
    assert match_rule(both, keys(phone="+13035550199")) == ("name_address", 100.0)


def test_one_phone_missing_is_no_conflict() -> None:
    assert match_rule(keys(phone="+13035550100"), keys()) == ("name_address", 100.0)


def test_different_registrable_domains_veto_but_subdomains_agree() -> None:
    assert registrable_domain("https://shop.acme.co.uk/about") == "acme.co.uk"
    assert registrable_domain("www.acme.example") == "acme.example"  # a reserved TLD: last two labels
    assert registrable_domain("https://acme.github.io") == "acme.github.io"  # a private suffix
    a = keys(website=registrable_domain("https://www.acme.example"))
    assert conflict(a, keys(website=registrable_domain("http://shop.acme.example/x"))) is None
    assert conflict(a, keys(website=registrable_domain("https://acme-hot.example"))) == "website"


def test_different_house_numbers_on_one_street_veto_even_with_one_phone() -> None:
    a = keys(street_key="100 main st", phone="+13035550100")
    b = keys(street_key="102 main st", phone="+13035550100")
    assert conflict(a, b) == "house_number" and match_rule(a, b) is None
    assert conflict(a, keys(street_key="100 main st")) is None  # the same number with a suite cut off
    assert conflict(a, keys(street_key="500 oak ave")) is None  # another street: not this veto


def test_licences_of_one_scheme_and_state_must_agree() -> None:
    first = keys(identifiers=frozenset({licence_token("CA", "contractor", "1088001") or ""}))
    second = keys(identifiers=frozenset({licence_token("CA", "contractor", "1088002") or ""}))
    other_state = keys(identifiers=frozenset({licence_token("NV", "contractor", "77") or ""}))
    assert conflict(first, second) == "licence"
    assert conflict(first, other_state) is None  # another state's licence is another register


@pytest.mark.parametrize("kind", ["npi", "ein", "cik"])
def test_registry_identifiers_must_agree(kind: str) -> None:
    a = keys(identifiers=frozenset({f"{kind}:1234567890"}))
    b = keys(identifiers=frozenset({f"{kind}:1234567891"}))
    assert conflict(a, b) == kind and match_rule(a, b) is None


def test_a_toll_free_line_is_no_evidence_of_one_location() -> None:
    a = keys("acme services", phone="+18005550199", street_key="1 main st")
    b = keys("acme services west", phone="+18005550199", street_key="900 oak ave")
    assert match_rule(a, b) is None
    local = keys("acme services west", phone="+13035550100", street_key="900 oak ave")
    assert match_rule(keys("acme services", phone="+13035550100", street_key="1 main st"), local) is not None


def test_a_dba_name_joins_the_legal_name() -> None:
    legal = keys("cumberland county hospital system", phone="+19106096700",
                 identifiers=frozenset({aka_token("Cape Fear Valley Home Health and Hospice") or ""}))  # fmt: skip
    assert match_rule(legal, keys("cape fear valley home health hospice", phone="+19106096700")) is not None


# --- Every path, on both databases ---


async def _contacts(app: FastAPI) -> list[tuple[int, str, str | None]]:
    async with app.state.database.read_sessions() as session:
        rows = await session.execute(select(Contact.id, Contact.business_name, Contact.phone).order_by(Contact.id))
        return [(int(r[0]), r[1], r[2]) for r in rows]


async def _pairs(app: FastAPI) -> list[tuple[int, int, str]]:
    async with app.state.database.read_sessions() as session:
        rows = await session.execute(
            select(PossibleDuplicate.contact_id, PossibleDuplicate.other_contact_id, PossibleDuplicate.reason)
        )
        return sorted((int(r[0]), int(r[1]), r[2]) for r in rows)


async def test_evidence_for_near_names_with_different_phones_makes_two_contacts(app: FastAPI) -> None:
    # The case reported: one word apart, the same city, no street, different phones.
    hot = BusinessRef(name="Acme Hot Software Inc", city="Denver", state="CO", phone="+13035550100")
    warm = BusinessRef(name="Acme Warm Software Inc", city="Denver", state="CO", phone="+13035550199")
    # And names the fuzzy rule alone would join (94 alike): the phones keep them apart too.
    hat = BusinessRef(name="Acme Hat Software Inc", city="Denver", state="CO", phone="+13035550142")
    report = await ingest(app, [event(business=hot), event(business=warm)])
    assert (report.contacts_created, report.contacts_linked) == (2, 0)
    later = await ingest(app, [event(business=hat, evidence={"interest": "erp"})])
    assert (later.contacts_created, later.contacts_linked) == (1, 0)
    contacts = await _contacts(app)
    assert [(name, phone) for _, name, phone in contacts] == [
        ("Acme Hot Software Inc", "+13035550100"),
        ("Acme Warm Software Inc", "+13035550199"),
        ("Acme Hat Software Inc", "+13035550142"),
    ]
    async with app.state.database.read_sessions() as session:
        linked = dict(
            (await session.execute(select(Signal.contact_id, func.count()).group_by(Signal.contact_id))).all()
        )
    assert sorted(linked.values()) == [1, 1, 1]  # each signal points at its own business
    ids = [c[0] for c in contacts]
    assert await _pairs(app) == [(ids[0], ids[2], "phone")]  # 94 alike: for an operator to review

    # Without a phone the business is the one of that name (no conflict): linked, not created.
    plain = await ingest(app, [event(business=BusinessRef(name="Acme Hot Software", city="Denver", state="CO"))])
    assert (plain.contacts_created, plain.contacts_linked) == (0, 1)


async def test_evidence_in_one_batch_keeps_conflicting_records_apart(app: FastAPI) -> None:
    first = BusinessRef(name="Summit Dental Group", city="Boulder", state="CO", website="https://summitdental.example")
    second = BusinessRef(name="Summit Dental Group", city="Boulder", state="CO", website="https://summit-dg.example")
    report = await ingest(app, [event(business=first), event(business=second, evidence={"interest": "imaging"})])
    assert report.contacts_created == 2
    [(_, _, reason)] = await _pairs(app)
    assert reason == "website"


async def test_operator_merges_and_dismisses_possible_duplicates(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, database_url: str
) -> None:
    near = [
        BusinessRef(name="Peak Roofing LLC", city="Aurora", state="CO", phone="+13035550122"),
        BusinessRef(name="Peak Roofing", city="Aurora", state="CO", phone="+13035550133"),
        BusinessRef(name="Zenith Electric", city="Aurora", state="CO", phone="+13035550144"),
        BusinessRef(name="Zenith Electric Co", city="Aurora", state="CO", phone="+13035550155"),
    ]
    await ingest(app, [event(business=b, source_record_id=f"r{i}", source="crm") for i, b in enumerate(near)])
    listed = vpx(database_url, "registries", "duplicates")
    assert [(d["reason"], d["status"]) for d in listed["duplicates"]] == [("phone", "open"), ("phone", "open")]
    assert listed["counts"] == {"open": 2, "merged": 0, "dismissed": 0}
    roofing, electric = listed["duplicates"]
    assert [c["business_name"] for c in roofing["contacts"]] == ["Peak Roofing LLC", "Peak Roofing"]
    assert roofing["found_by"] == "signals:crm" and roofing["name_score"] == 100

    # A buyer revealed the newer one: after the merge the reveal is of the kept contact, for free.
    buyer = await factory.account(credits=10)
    newer = roofing["contacts"][1]["id"]
    kept = roofing["contacts"][0]["id"]
    assert (await client.post(f"/api/v1/contacts/{newer}/reveal", headers=buyer.headers())).status_code == 200

    merged = vpx(database_url, "registries", "duplicates", "merge", roofing["id"])
    assert (merged["status"], merged["kept"], merged["merged"]) == ("merged", kept, newer)
    assert merged["resolved_by"].startswith("cli")
    again = vpx(database_url, "registries", "duplicates", "merge", roofing["id"])  # running it twice is no error
    assert again["status"] == "merged"
    kept_id, newer_id = (int(c.removeprefix("ct_")) for c in (kept, newer))
    async with app.state.database.read_sessions() as session:
        gone = await session.get(Contact, newer_id)
        assert gone is not None and gone.status == "merged"
        kept_contact = await session.get(Contact, kept_id)
        assert kept_contact is not None and "tel:+13035550133" in (kept_contact.identifiers or "")
        assert await session.scalar(select(func.count()).where(Signal.contact_id == kept_id)) == 2
        assert await session.scalar(select(func.count()).where(ContactSource.contact_id == kept_id)) == 2
        assert list(await session.scalars(select(Reveal.contact_id))) == [kept_id]
    again_reveal = await client.post(f"/api/v1/contacts/{kept}/reveal", headers=buyer.headers())
    assert again_reveal.json()["credits_charged"] == 0  # D10: bought already, as the other contact
    search = await client.get("/api/v1/contacts/search", params={"q": "Peak Roofing"}, headers=buyer.headers())
    assert [c["id"] for c in search.json()["contacts"]] == [kept]

    # Evidence with either phone now finds the kept contact.
    later = await ingest(app, [event(business=near[1], evidence={"interest": "gutters"})])
    assert (later.contacts_created, later.contacts_linked) == (0, 1)

    dismissed = vpx(database_url, "registries", "duplicates", "dismiss", electric["id"])
    assert dismissed["status"] == "dismissed"
    assert vpx(database_url, "registries", "duplicates")["duplicates"] == []
    every = vpx(database_url, "registries", "duplicates", "--status", "all")
    assert [d["status"] for d in every["duplicates"]] == ["merged", "dismissed"]
    refused = vpx(database_url, "registries", "duplicates", "merge", electric["id"], check=False)
    assert refused["error"]["code"] == "invalid_parameters"
    unknown = vpx(database_url, "registries", "duplicates", "dismiss", "pd_999999", check=False)
    assert unknown["error"]["code"] == "not_found"


def _fields(record: evaluation.LabelledRecord) -> dict[str, object]:
    keys = record.keys
    return {
        "business_name": record.name,
        "street": record.street,
        "city": keys.city_key,
        "state": keys.state,
        "phone": keys.phone,
        "website": f"https://{keys.website}" if keys.website else None,
        "identifiers": joined(keys.identifiers),
        "industry": "healthcare",
    }


async def test_the_labelled_pairs_decide_alike_in_the_database(app: FastAPI) -> None:
    """The hard negatives stay apart through the database lookup too (candidates come from the
    indexes with their phones, domains and identifiers), a record joins no other contact than the
    rules would choose among every stored one, and the positives are found (blocking on the name's
    first word misses a misspelt or moved first word on a record without a phone: docs/registries.md)."""
    if not (SHARED_DATA / "nppes" / "npidata_pfile_sample_k0bl.csv").is_file():
        pytest.skip(f"shared samples not found under {SHARED_DATA}")
    pairs = evaluation.all_pairs(evaluation.sample_records(SHARED_DATA))
    chosen = [p for p in pairs if p.category in evaluation.HARD_NEGATIVE or p.same]
    stored = {p.a.key: p.a for p in chosen}
    now = app.state.clock.now()
    async with app.state.database.write_sessions() as session, session.begin():
        rows = [contact_row(_fields(r), origin="registry", now=now) for r in stored.values()]
        ids = await add_contacts(session, rows, search=app.state.search, now=now)
    contact_of = dict(zip(stored, ids, strict=True))
    everyone = [(contact_of[key], record.keys) for key, record in stored.items()]
    async with app.state.database.read_sessions() as session:
        targets = await resolve_keys(session, [p.b.keys for p in chosen], threshold=NAME_THRESHOLD)
    joined_negatives = []
    for pair, target in zip(chosen, targets, strict=True):
        if target.contact_id is not None:
            assert (target.contact_id, target.rule) == best_match(pair.b.keys, everyone), pair.b.key
        if not pair.same and target.contact_id == contact_of[pair.a.key]:
            joined_negatives.append(pair.b.key)
    assert len(joined_negatives) <= 1, joined_negatives  # the one with no phone on one side (docs)
    found = sum(t.contact_id == contact_of[p.a.key] for p, t in zip(chosen, targets, strict=True) if p.same)
    assert found >= 0.85 * sum(p.same for p in chosen)  # 657 of 755 (0.87) on 2026-11-26
