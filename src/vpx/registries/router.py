"""/api/v1/contacts/{contact_id}/decision-makers (D31)."""

from __future__ import annotations

from fastapi import APIRouter

from vpx.auth.dependencies import BuyCaller
from vpx.contacts.router import ContactId
from vpx.db import ReadSession
from vpx.errors import problem_responses
from vpx.registries import service as registry_service
from vpx.registries.schemas import DecisionMakerList

router = APIRouter(prefix="/api/v1/contacts", tags=["contacts"])


@router.get(
    "/{contact_id}/decision-makers",
    response_model=DecisionMakerList,
    responses=problem_responses(401, 403, 404, 422, 429),
    summary="List a contact's decision-makers",
)
async def decision_makers(contact_id: ContactId, caller: BuyCaller, session: ReadSession) -> DecisionMakerList:
    """The people with authority at the business, as the registries name them (an organisation's
    authorized official, a licence's owner or partners): names, titles, role and source are free;
    a person's phone is shown only once this account has revealed the contact. Needs a Standard
    or Full Access key; charges nothing."""
    return await registry_service.list_decision_makers(session, account_id=caller.account_id, contact_id=contact_id)
