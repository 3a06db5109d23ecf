"""Decision-makers of a contact (D31): names and titles are free to every buying key; a person's
direct phone follows the reveal rules, so it shows only to an account that revealed the contact."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.contacts import service as contact_service
from vpx.ids import public_number_id
from vpx.models import DecisionMaker
from vpx.registries.schemas import DecisionMakerList, DecisionMakerSource, DecisionMakerView

ROLE_ORDER = {"authorized_official": 0, "owner": 1, "partner": 2, "officer": 3, "qualifier": 4}


async def list_decision_makers(session: AsyncSession, *, account_id: str, contact_id: str) -> DecisionMakerList:
    """The people a registry names at this contact, surest authority first. NotFound for an unknown
    or deactivated contact. Charges nothing."""
    contact = await contact_service.load_contact(session, contact_id)
    revealed = await contact_service.find_reveal(session, account_id=account_id, contact_id=contact.id) is not None
    people = list(await session.scalars(select(DecisionMaker).where(DecisionMaker.contact_id == contact.id)))
    people.sort(key=lambda p: (ROLE_ORDER.get(p.role, 9), p.name, p.id))
    return DecisionMakerList(
        contact_id=contact_service.contact_public_id(contact.id),
        revealed=revealed,
        decision_makers=[
            DecisionMakerView(
                id=public_number_id("dm", person.id),
                name=person.name,
                title=person.title,
                role=person.role,
                source=DecisionMakerSource(registry=person.registry_name, record_id=person.record_id),
                phone=person.phone if revealed else None,
                phone_available=person.phone is not None,
            )
            for person in people
        ],
    )
