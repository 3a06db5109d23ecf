"""/api/v1/enrichment/keys and /api/v1/contacts/{id}/enrich…: enrichment with the customer's own
provider keys (D32). Full Access keys only (D4)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request, Response
from fastapi.responses import JSONResponse

from vpx.auth.dependencies import ManageCaller
from vpx.db import ReadSession, WriteSession, get_database
from vpx.deps import AppSettings, Now, mode_part
from vpx.enrichment import batch as batch_service
from vpx.enrichment import service, store
from vpx.enrichment.providers import provider_names
from vpx.enrichment.schemas import (
    BatchEnrichAccepted,
    BatchEnrichProgress,
    BatchEnrichRequest,
    EnrichmentView,
    EnrichRequest,
    EnrichResult,
    ProviderKeyBody,
    ProviderKeyList,
    ProviderKeyView,
)
from vpx.enrichment.waterfall import Waterfall
from vpx.errors import NotFound, problem_responses
from vpx.idempotency.service import run_idempotent
from vpx.secrets import SecretBox

keys_router = APIRouter(prefix="/api/v1/enrichment/keys", tags=["enrichment"])
router = APIRouter(prefix="/api/v1/contacts", tags=["enrichment"])

ProviderName = Annotated[
    str, Path(max_length=32, description="hunter, pdl or apollo.", json_schema_extra={"enum": provider_names()})
]
ContactId = Annotated[str, Path(max_length=40, examples=["ct_1042"])]


def _box(request: Request) -> SecretBox:
    box: SecretBox = request.app.state.secrets
    return box


def _waterfall(request: Request) -> Waterfall:
    waterfall: Waterfall = mode_part(request, "enrichment")
    return waterfall


@keys_router.put(
    "/{provider}",
    response_model=ProviderKeyView,
    responses=problem_responses(400, 401, 403, 413, 422, 429),
    summary="Store or replace a provider key",
)
async def put_key(
    provider: ProviderName,
    body: ProviderKeyBody,
    request: Request,
    caller: ManageCaller,
    session: WriteSession,
    now: Now,
) -> ProviderKeyView:
    """Stores the account's key for `hunter`, `pdl` or `apollo` (sealed at rest; only its last four
    characters are ever shown again), or replaces it; a replaced key keeps its place in the default
    waterfall order. `monthly_limit` caps the requests vpx sends with it each calendar month."""
    service.check_provider(provider)
    key = await store.store_key(
        session,
        account_id=caller.account_id,
        provider=provider,
        api_key=body.api_key,
        monthly_limit=body.monthly_limit,
        box=_box(request),
        now=now,
    )
    used = await store.used_this_month(session, account_id=caller.account_id, now=now)
    return service.key_view(key, used)


@keys_router.get("", response_model=ProviderKeyList, responses=problem_responses(401, 403, 429), summary="List keys")
async def list_keys(caller: ManageCaller, session: ReadSession, now: Now) -> ProviderKeyList:
    """The account's provider keys in waterfall order, with this month's request counts (never the keys)."""
    return ProviderKeyList(keys=await service.key_views(session, account_id=caller.account_id, now=now))


@keys_router.delete(
    "/{provider}", status_code=204, responses=problem_responses(401, 403, 404, 422, 429), summary="Delete a key"
)
async def delete_key(provider: ProviderName, caller: ManageCaller, session: WriteSession) -> Response:
    """Deletes the account's key for a provider; what it enriched stays the account's."""
    service.check_provider(provider)
    if not await store.delete_key(session, account_id=caller.account_id, provider=provider):
        raise NotFound(f"No {provider} key stored for this account.")
    return Response(status_code=204)


@router.post(
    "/{contact_id}/enrich",
    response_model=EnrichResult,
    responses=problem_responses(400, 401, 403, 404, 413, 422, 429, 451),
    summary="Enrich a contact through your providers",
)
async def enrich(
    contact_id: ContactId, body: EnrichRequest, request: Request, caller: ManageCaller, now: Now
) -> EnrichResult:
    """Asks the account's providers, in waterfall order (`providers`, default: every provider with a
    key, in the order the keys were stored), for the `fields` still missing, each provider only for
    what it can give; the first value found for a field wins. Answers everything the account holds
    for the contact, each value with its provider and time, and one attempt per provider. Charges no
    credits; does not reveal the contact; a suppressed contact is 451 and no provider is called."""
    return await service.enrich_contact(
        get_database(request),
        _waterfall(request),
        _box(request),
        account_id=caller.account_id,
        public_id=contact_id,
        providers=body.providers,
        fields=body.fields,
        refresh=body.refresh,
        dry_run=body.dry_run,
        now=now,
    )


@router.get(
    "/{contact_id}/enrichment",
    response_model=EnrichmentView,
    responses=problem_responses(401, 403, 404, 422, 429),
    summary="What the account has enriched for a contact",
)
async def enrichment(contact_id: ContactId, caller: ManageCaller, session: ReadSession) -> EnrichmentView:
    return await service.enrichment_of(session, account_id=caller.account_id, public_id=contact_id)


batch_router = APIRouter(prefix="/api/v1/contacts/batch-enrich", tags=["enrichment"])
BatchId = Annotated[str, Path(max_length=40, examples=["ben_3kTz9aQ1xYb2LmN0"])]


@batch_router.post(
    "",
    status_code=202,
    response_model=BatchEnrichAccepted,
    responses=problem_responses(400, 401, 403, 409, 413, 422, 429),
    summary="Enrich up to 100 contacts",
)
async def batch_enrich(
    body: BatchEnrichRequest,
    request: Request,
    caller: ManageCaller,
    session: WriteSession,
    settings: AppSettings,
    now: Now,
) -> Response:
    """1–100 contact ids (duplicates collapsed), each enriched by the worker through the same waterfall
    as `POST /contacts/{id}/enrich`; progress at `status_url`. When done, `enrichment.completed` goes
    to `webhook_url` (signed with `webhook_secret`, shown once) and to the account's subscriptions.
    Accepts `Idempotency-Key`: a repeat with the same key and body within 24 hours returns the first
    response."""

    async def handler() -> Response:
        batch, secret = await batch_service.start_batch(
            session,
            account_id=caller.account_id,
            contact_ids=body.contact_ids,
            providers=body.providers,
            fields=body.fields,
            webhook_url=body.webhook_url,
            box=_box(request),
            settings=settings,
            resolver=request.app.state.webhook_resolver,
            now=now,
        )
        accepted = BatchEnrichAccepted(
            batch_id=batch.id,
            status="processing",
            total=batch.total,
            status_url=f"{batch_router.prefix}/{batch.id}",
            webhook_secret=secret,
        )
        return JSONResponse(
            accepted.model_dump(mode="json"), status_code=202, headers={"Location": accepted.status_url}
        )

    # With a webhook_url the 202 shows the batch's signing secret: what is kept for a repeat is sealed.
    return await run_idempotent(
        request, session, account_id=caller.account_id, handler=handler, seal_stored=body.webhook_url is not None
    )


@batch_router.get(
    "/{batch_id}",
    response_model=BatchEnrichProgress,
    responses=problem_responses(401, 403, 404, 422, 429),
    summary="A batch enrichment's progress",
)
async def batch_progress(batch_id: BatchId, caller: ManageCaller, session: ReadSession) -> BatchEnrichProgress:
    return await batch_service.progress(session, account_id=caller.account_id, batch_id=batch_id)
