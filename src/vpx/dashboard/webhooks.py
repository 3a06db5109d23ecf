"""The webhooks page (D25, D26, D29): subscriptions with their deliveries, created with the secret
shown once, a test event, delete. Signal filters and secret rotation stay with the API."""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import Path, Request, Response
from fastapi.responses import RedirectResponse
from pydantic import BaseModel, Field, ValidationError

from vpx.dashboard.pages import Page, dashboard_router, field_errors
from vpx.dashboard.sessions import SignedIn, UserForm
from vpx.dashboard.web import render
from vpx.db import ReadSession, WriteSession
from vpx.deps import AppSettings, Now
from vpx.errors import Conflict, InvalidParameters, NotFound
from vpx.fields import SingleLine
from vpx.webhooks import service as webhook_service
from vpx.webhooks.events import SUBSCRIBABLE
from vpx.webhooks.schemas import EventType

router = dashboard_router()

WebhookId = Annotated[str, Path(max_length=40)]
WEBHOOK_ID = re.compile(r"^wh_[0-9A-Za-z]{1,32}$")
RECENT_DELIVERIES = 25
# What each event the form offers means (every one of them has a line: a test checks).
EVENT_HINTS = {
    "contact.revealed": "a reveal charged credits (single, batch or any other channel)",
    "batch_reveal.completed": "a batch reveal has finished",
    "signal.created": "a new signal (filters can be set through the API)",
    "auto_buy.purchased": "an auto-buy rule bought a contact",
    "enrichment.completed": "a batch enrichment with your provider keys has finished",
    "visitor.identified": "a visitor of your site was identified",
    "sequence.step_sent": "a sequence step was sent",
    "sequence.replied": "a contact replied to a sequence",
    "sequence.bounced": "a sequence email bounced; that contact's enrollment stops",
    "sequence.unsubscribed": "a recipient unsubscribed; their enrollments stop",
    "sequence.finished": "an enrollment ran its last step",
    "contact.suppressed": "a contact you revealed opted out or may no longer be contacted; purge your copies",
    "contact.corrected": "a field of a contact you revealed was found wrong or replaced; fetch the contact again",
}


class WebhookForm(BaseModel):
    url: str = Field(min_length=1, max_length=2048)
    events: list[EventType] = Field(min_length=1, max_length=len(SUBSCRIBABLE))
    description: SingleLine = Field(default="", max_length=200)


def _checked_id(webhook_id: str) -> str:
    # Never hand the database an id this service could not have issued (a NUL byte upsets PostgreSQL).
    if not WEBHOOK_ID.match(webhook_id):
        raise NotFound("No such webhook.")
    return webhook_id


async def _list_page(
    request: Request,
    session: Any,
    user: SignedIn,
    *,
    values: dict[str, Any] | None = None,
    errors: dict[str, str] | None = None,
    notice: str = "",
    status: int = 200,
) -> Response:
    endpoints = await webhook_service.list_endpoints(session, account_id=user.account_id)
    return render(
        request,
        "webhooks.html",
        {
            "title": "Webhooks",
            "section": "webhooks",
            "endpoints": endpoints,
            "event_types": [(e, EVENT_HINTS.get(e, "")) for e in SUBSCRIBABLE],
            "values": values or {"url": "", "events": [], "description": ""},
            "errors": errors or {},
            "notice": notice,
            "limit": webhook_service.MAX_ENDPOINTS_PER_ACCOUNT,
        },
        status=status,
    )


@router.get("/webhooks")
async def webhooks_page(request: Request, user: Page, session: ReadSession) -> Response:
    done = request.query_params.get("done", "")
    notice = {"deleted": "The webhook was deleted.", "tested": "A test event is on its way."}.get(done, "")
    return await _list_page(request, session, user, notice=notice)


@router.post("/webhooks")
async def create_webhook(
    request: Request, user: Page, form: UserForm, session: WriteSession, settings: AppSettings, now: Now
) -> Response:
    values = {
        "url": str(form.get("url") or "").strip(),
        "events": [str(e) for e in form.getlist("events")],
        "description": str(form.get("description") or "").strip(),
    }
    try:
        data = WebhookForm(**values)
    except ValidationError as exc:
        return await _list_page(request, session, user, values=values, errors=field_errors(exc), status=422)
    try:
        endpoint, secret = await webhook_service.create_endpoint(
            session,
            account_id=user.account_id,
            url=data.url,
            event_types=list(dict.fromkeys(data.events)),
            signal_filter=None,
            description=data.description,
            now=now,
            settings=settings,
            resolver=request.app.state.webhook_resolver,
            box=request.app.state.secrets,
        )
    except (InvalidParameters, Conflict) as exc:
        # Both are raised before anything is written: the URL check, then the count.
        field = "url" if isinstance(exc, InvalidParameters) else "form"
        message = exc.detail.removeprefix("url: ")
        return await _list_page(request, session, user, values=values, errors={field: message}, status=exc.status)
    # D25: the signing secret is shown in this response only.
    return render(
        request,
        "webhook_created.html",
        {"title": "Your new webhook", "section": "webhooks", "endpoint": endpoint, "secret": secret},
        status=201,
    )


@router.get("/webhooks/{webhook_id}")
async def webhook_page(request: Request, webhook_id: WebhookId, user: Page, session: ReadSession) -> Response:
    """One subscription and its most recent deliveries with their attempts."""
    endpoint = await webhook_service.get_endpoint(
        session, account_id=user.account_id, endpoint_id=_checked_id(webhook_id)
    )
    deliveries = await webhook_service.list_deliveries(
        session,
        account_id=user.account_id,
        endpoint_id=endpoint.id,
        status=None,
        limit=RECENT_DELIVERIES,
        before_id=None,
    )
    attempts = await webhook_service.attempts_of(session, [d.id for d in deliveries])
    rows = [
        {
            "delivery": d,
            "public_id": webhook_service.delivery_public_id(d.id),
            "last": attempts[d.id][-1] if attempts.get(d.id) else None,
        }
        for d in deliveries
    ]
    return render(
        request,
        "webhook.html",
        {"title": "Webhook", "section": "webhooks", "endpoint": endpoint, "rows": rows},
    )


@router.post("/webhooks/{webhook_id}/test")
async def test_webhook(
    request: Request, webhook_id: WebhookId, user: Page, form: UserForm, session: WriteSession, now: Now
) -> Response:
    await webhook_service.send_test(session, account_id=user.account_id, endpoint_id=_checked_id(webhook_id), now=now)
    return RedirectResponse(f"/dashboard/webhooks/{webhook_id}?done=tested", status_code=303)


@router.post("/webhooks/{webhook_id}/delete")
async def delete_webhook(
    request: Request, webhook_id: WebhookId, user: Page, form: UserForm, session: WriteSession
) -> Response:
    await webhook_service.delete_endpoint(session, account_id=user.account_id, endpoint_id=_checked_id(webhook_id))
    return RedirectResponse("/dashboard/webhooks?done=deleted", status_code=303)
