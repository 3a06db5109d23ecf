"""The auto-buy rules page (D24): the account's rules with what they spent today and in total, a form
to add one, pause, resume and delete. Categories and intent levels can be narrowed here or through
the API."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Path, Request, Response
from fastapi.responses import RedirectResponse
from pydantic import ValidationError

from vpx.autobuy import service as rule_service
from vpx.autobuy.schemas import RuleCreate
from vpx.dashboard.pages import Page, dashboard_router, field_errors
from vpx.dashboard.sessions import SignedIn, UserForm
from vpx.dashboard.web import render
from vpx.db import ReadSession, WriteSession
from vpx.deps import AppSettings, Now
from vpx.errors import Conflict, NotFound
from vpx.verticals import VERTICALS
from vpx.webhooks.filters import CATEGORIES

router = dashboard_router()

RuleId = Annotated[str, Path(max_length=40)]
FIELDS = ("name", "states", "min_confidence", "budget_credits", "daily_cap")
EMPTY: dict[str, Any] = {"industries": [], "categories": [], "intent_levels": [], "min_confidence": "0.5"} | {
    name: "" for name in ("name", "states", "budget_credits", "daily_cap")
}


async def _page(
    request: Request,
    session: Any,
    user: SignedIn,
    now: Any,
    *,
    values: dict[str, Any] | None = None,
    errors: dict[str, str] | None = None,
    notice: str = "",
    status: int = 200,
) -> Response:
    rules = await rule_service.list_rules(session, account_id=user.account_id)
    return render(
        request,
        "rules.html",
        {
            "title": "Auto-buy rules",
            "section": "rules",
            "rules": [rule_service.view(r, now=now) for r in rules],
            "verticals": VERTICALS,
            "categories": CATEGORIES,
            "values": values or EMPTY,
            "errors": errors or {},
            "notice": notice,
        },
        status=status,
    )


@router.get("/rules")
async def rules_page(request: Request, user: Page, session: ReadSession, now: Now) -> Response:
    done = request.query_params.get("done", "")
    notice = {
        "paused": "The rule is paused.",
        "resumed": "The rule is active again.",
        "deleted": "The rule was deleted; its purchases stay in your ledger.",
    }.get(done, "")
    return await _page(request, session, user, now, notice=notice)


def _body(values: dict[str, Any]) -> dict[str, Any]:
    """Form text to the API's rule fields: empty optional fields left out, numbers as numbers."""
    body: dict[str, Any] = {
        "name": values["name"],
        "industries": values["industries"],
        "states": [s.strip() for s in values["states"].replace(";", ",").split(",") if s.strip()],
    }
    for name, kind in (("min_confidence", float), ("budget_credits", float), ("daily_cap", int)):
        text = values[name].strip()
        if text:
            try:
                body[name] = kind(text)
            except ValueError:
                body[name] = text  # the schema says what is wrong with it
    for name in ("categories", "intent_levels"):
        if values[name]:
            body[name] = values[name]
    return body


@router.post("/rules")
async def create_rule(request: Request, user: Page, form: UserForm, session: WriteSession, now: Now) -> Response:
    values: dict[str, Any] = {name: str(form.get(name) or "").strip() for name in FIELDS}
    for name in ("industries", "categories", "intent_levels"):
        values[name] = [str(v) for v in form.getlist(name)]
    try:
        body = RuleCreate(**_body(values))
    except ValidationError as exc:
        return await _page(request, session, user, now, values=values, errors=field_errors(exc), status=422)
    await rule_service.create_rule(session, account_id=user.account_id, body=body, now=now)
    return await _page(request, session, user, now, notice="The rule is active.", status=201)


@router.post("/rules/{rule_id}/{action}")
async def change_rule(
    request: Request,
    rule_id: RuleId,
    action: Annotated[str, Path(max_length=10)],
    user: Page,
    form: UserForm,
    session: WriteSession,
    settings: AppSettings,
    now: Now,
) -> Response:
    if action == "pause":
        await rule_service.pause_rule(session, account_id=user.account_id, rule_id=rule_id, now=now)
        done = "paused"
    elif action == "resume":
        try:
            await rule_service.resume_rule(
                session, account_id=user.account_id, rule_id=rule_id, now=now, settings=settings
            )
        except Conflict as exc:
            return await _page(request, session, user, now, errors={"form": exc.detail}, status=409)
        done = "resumed"
    elif action == "delete":
        await rule_service.delete_rule(session, account_id=user.account_id, rule_id=rule_id, now=now)
        done = "deleted"
    else:
        raise NotFound("No such page.")
    return RedirectResponse(f"/dashboard/rules?done={done}", status_code=303)
