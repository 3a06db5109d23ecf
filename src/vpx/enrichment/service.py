"""Enrichment with the customer's own provider keys (D32): keys stored sealed, a contact enriched
through the waterfall, what the account holds shown with its provenance.

Results belong to the account that paid its providers for them: stored per account, never shown to
another, never merged into the shared catalogue. Enriching a contact does not reveal it: an
unrevealed contact is described to providers by its preview only, and a suppressed or FCRA-blocked
contact is refused (451) before any provider is called.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.contacts import service as contact_service
from vpx.contacts.identifiers import registrable_domain
from vpx.contacts.normalise import name_key
from vpx.db import Database
from vpx.enrichment import store
from vpx.enrichment.providers import registered
from vpx.enrichment.providers.base import ALL_FIELDS, BUSINESS_FIELDS, DECISION_MAKER_PREFIX, BusinessQuery
from vpx.enrichment.schemas import (
    Attempt,
    DecisionMakerFields,
    EnrichmentView,
    EnrichResult,
    FieldValue,
    PreviousValue,
    ProviderKeyView,
)
from vpx.enrichment.waterfall import Job, Person, Waterfall
from vpx.errors import InvalidParameters, NotFound, Suppressed
from vpx.models import Contact, DecisionMaker, EnrichmentKey
from vpx.registries.service import ROLE_ORDER
from vpx.secrets import SecretBox
from vpx.suppression import service as suppression_service


def check_provider(name: str) -> str:
    if name not in registered():
        known = ", ".join(sorted(registered()))
        raise InvalidParameters.field("provider", f"{name!r} is not a provider vpx knows; known providers: {known}")
    return name


def key_view(key: EnrichmentKey, used: dict[str, int]) -> ProviderKeyView:
    return ProviderKeyView(
        provider=key.provider,
        last4=key.last4,
        monthly_limit=key.monthly_limit,
        requests_this_month=used.get(key.provider, 0),
        created_at=key.created_at,
        updated_at=key.updated_at,
    )


async def key_views(session: AsyncSession, *, account_id: str, now: datetime) -> list[ProviderKeyView]:
    used = await store.used_this_month(session, account_id=account_id, now=now)
    return [key_view(k, used) for k in await store.keys_of(session, account_id)]


async def _people(session: AsyncSession, contact_id: int) -> list[DecisionMaker]:
    people = list(await session.scalars(select(DecisionMaker).where(DecisionMaker.contact_id == contact_id)))
    people.sort(key=lambda p: (ROLE_ORDER.get(p.role, 9), p.name, p.id))
    unique: dict[str, DecisionMaker] = {}
    for person in people:
        unique.setdefault(name_key(person.name), person)
    return list(unique.values())


def _field_value(value: store.HeldValue) -> FieldValue:
    return FieldValue(
        value=value.value,
        provider=value.provider,
        provider_record_id=value.provider_record_id,
        fetched_at=value.fetched_at,
        confidence=value.confidence,
        previous=PreviousValue.model_validate(value.previous) if value.previous else None,
    )


def view(contact: Contact, people: list[DecisionMaker], held: Iterable[store.HeldValue]) -> EnrichmentView:
    """What the account holds for the contact, the business's fields and each decision-maker's."""
    by_person: dict[str, dict[str, FieldValue]] = {}
    names: dict[str, str] = {}
    for value in held:
        by_person.setdefault(value.person_key, {})[value.field] = _field_value(value)
        if value.person_name:
            names[value.person_key] = value.person_name
    listed = [
        DecisionMakerFields(name=p.name, title=p.title, fields=by_person.get(name_key(p.name), {})) for p in people
    ]
    known = {name_key(p.name) for p in people}
    # A person the registry no longer names keeps the values the account paid for.
    listed += [
        DecisionMakerFields(name=names.get(key, key), title=None, fields=fields)
        for key, fields in by_person.items()
        if key and key not in known
    ]
    return EnrichmentView(
        contact_id=contact_service.contact_public_id(contact.id),
        fields=by_person.get("", {}),
        decision_makers=listed,
    )


async def enrichment_of(session: AsyncSession, *, account_id: str, public_id: str) -> EnrichmentView:
    contact = await contact_service.load_contact(session, public_id)
    held = await store.values_of(session, account_id=account_id, contact_id=contact.id)
    return view(contact, await _people(session, contact.id), held)


async def enrich_contact(
    database: Database,
    waterfall: Waterfall,
    box: SecretBox,
    *,
    account_id: str,
    public_id: str,
    providers: list[str] | None,
    fields: Sequence[str] | None,
    refresh: bool,
    dry_run: bool,
    now: datetime,
) -> EnrichResult:
    """Runs the waterfall for one contact and answers everything the account holds for it."""
    for name in providers or []:
        check_provider(name)
    wanted = set(fields or ALL_FIELDS)
    async with database.read_sessions() as session:
        contact = await contact_service.load_contact(session, public_id)
        suppression = await suppression_service.find_suppression(session, contact)
        revealed = await contact_service.find_reveal(session, account_id=account_id, contact_id=contact.id) is not None
        people = await _people(session, contact.id)
        held = await store.values_of(session, account_id=account_id, contact_id=contact.id)
        keys = await store.keys_of(session, account_id)
    if suppression is not None:
        async with database.write_sessions() as session, session.begin():
            await suppression_service.record_hit(
                session, account_id=account_id, contact_id=contact.id, suppression_id=suppression.id, now=now
            )
        raise Suppressed(
            suppression_service.refusal(
                public_id, suppression.reason, revealed=revealed, outcome="no provider was called"
            )
        )
    job = Job(
        account_id=account_id,
        contact_id=contact.id,
        business=_business_query(contact, revealed, held),
        # Refresh: what the account holds is asked for again (the registry's own fields still count).
        missing=_missing_business(contact, revealed, [] if refresh else held, wanted),
        people=[_person(p, revealed, [] if refresh else held, wanted) for p in people],
        keys={k.provider: (box.open(k.key_sealed), k.monthly_limit) for k in keys},
        order=providers if providers is not None else [k.provider for k in keys if k.provider in registered()],
        refresh=refresh,
        dry_run=dry_run,
    )
    try:
        await waterfall.run(job, now=now)
    finally:
        # The answers received are kept even when the run broke off, with the values they gave.
        if job.found or job.answers:
            async with database.write_sessions() as session, session.begin():
                await store.remember(session, account_id=account_id, answers=job.answers, now=now)
                keep = store.replace_values if refresh else store.add_values
                await keep(session, account_id=account_id, contact_id=contact.id, values=job.found)
                if job.found:
                    held = await store.values_of(session, account_id=account_id, contact_id=contact.id)
    shown = view(contact, people, held)
    return EnrichResult(
        **shown.model_dump(),
        attempts=[Attempt.model_validate(a) for a in job.attempts],
        dry_run=dry_run,
    )


def _business_query(contact: Contact, revealed: bool, held: list[store.HeldValue]) -> BusinessQuery:
    """The business as providers may be told of it: its preview (name, city, state), and what only a
    revealed record or the account's own enrichment shows (domain, phone)."""
    website = contact.website if revealed else None
    website = website or next((v.value for v in held if not v.person_key and v.field == "website"), None)
    return BusinessQuery(
        name=contact.business_name,
        city=contact.city,
        state=contact.state,
        domain=registrable_domain(website),
        phone=contact.phone if revealed else None,
    )


def _missing_business(contact: Contact, revealed: bool, held: list[store.HeldValue], wanted: set[str]) -> set[str]:
    visible = {f for f in BUSINESS_FIELDS if revealed and getattr(contact, f, None)}
    visible |= {v.field for v in held if not v.person_key}
    return {f for f in BUSINESS_FIELDS if f in wanted and f not in visible}


def _person(person: DecisionMaker, revealed: bool, held: list[store.HeldValue], wanted: set[str]) -> Person:
    key = name_key(person.name)
    visible = {v.field for v in held if v.person_key == key}
    if person.title:
        visible.add("title")  # names and titles are free (D31)
    if revealed and person.phone:
        visible.add("phone")
    wanted_here = {f.removeprefix(DECISION_MAKER_PREFIX) for f in wanted if f.startswith(DECISION_MAKER_PREFIX)}
    return Person(key=key, name=person.name, title=person.title, missing=wanted_here - visible)


async def keys_for_account(session: AsyncSession, *, account_id: str, provider: str) -> EnrichmentKey:
    found = await session.scalar(
        select(EnrichmentKey).where(EnrichmentKey.account_id == account_id, EnrichmentKey.provider == provider)
    )
    if found is None:
        raise NotFound(f"No {provider} key stored for this account.")
    return found
