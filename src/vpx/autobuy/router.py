"""/api/v1/buyer/auto-buy: rules and their purchases (D24). Full Access only (D4)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from vpx.auth.dependencies import ManageCaller
from vpx.autobuy import service as rule_service
from vpx.autobuy.schemas import PurchasePage, RuleCreate, RuleList, RuleUpdate, RuleView
from vpx.db import ReadSession, WriteSession
from vpx.deps import AppSettings, Now
from vpx.errors import problem_responses
from vpx.fields import JsonInt

router = APIRouter(prefix="/api/v1/buyer/auto-buy", tags=["auto-buy"])

RuleId = Annotated[str, Path(max_length=40, examples=["abr_3kTz9aQ1xYb2LmN0"])]
READ_ERRORS = problem_responses(401, 403, 404, 422, 429)
WRITE_ERRORS = problem_responses(400, 401, 403, 404, 413, 422, 429)
CREATE_ERRORS = problem_responses(400, 401, 403, 409, 413, 422, 429)


class PurchaseQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rule_id: str | None = Field(
        default=None, max_length=40, pattern=r"^[0-9A-Za-z_]+$", description="Only this rule's purchases."
    )
    limit: JsonInt = Field(default=25, ge=1, le=100, description="Page size, 1–100.")
    cursor: str | None = Field(default=None, max_length=200, description="`next_cursor` of the previous page.")


@router.post("/rules", status_code=201, response_model=RuleView, responses=CREATE_ERRORS, summary="Create a rule")
async def create_rule(body: RuleCreate, caller: ManageCaller, session: WriteSession, now: Now) -> Response:
    """From now on, every newly ingested available signal in one of the rule's verticals and states that
    passes its other filters buys the signal's contact at the price of its intent level, within the
    budget, the daily cap (UTC day) and the balance. An account has at most 100 rules (paused ones
    count, deleted ones do not): 409 past that."""
    rule = await rule_service.create_rule(session, account_id=caller.account_id, body=body, now=now)
    created = rule_service.view(rule, now=now)
    return JSONResponse(
        created.model_dump(mode="json"), status_code=201, headers={"Location": f"{router.prefix}/rules/{rule.id}"}
    )


class RuleQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    limit: JsonInt = Field(
        default=rule_service.MAX_RULES_PER_ACCOUNT,
        ge=1,
        le=rule_service.MAX_RULES_PER_ACCOUNT,
        description=f"Page size, 1–{rule_service.MAX_RULES_PER_ACCOUNT}; the default page holds every rule an "
        "account may have.",
    )
    cursor: str | None = Field(default=None, max_length=200, description="`next_cursor` of the previous page.")


@router.get("/rules", response_model=RuleList, responses=problem_responses(401, 403, 422, 429), summary="List rules")
async def list_rules(
    params: Annotated[RuleQuery, Query()], caller: ManageCaller, session: ReadSession, now: Now
) -> RuleList:
    """The account's rules, oldest first, paused ones included; `next_cursor` gives the next page."""
    rules, next_cursor = await rule_service.page_rules(
        session, account_id=caller.account_id, limit=params.limit, cursor=params.cursor
    )
    return RuleList(rules=[rule_service.view(r, now=now) for r in rules], limit=params.limit, next_cursor=next_cursor)


@router.get("/rules/{rule_id}", response_model=RuleView, responses=READ_ERRORS, summary="Get a rule")
async def get_rule(rule_id: RuleId, caller: ManageCaller, session: ReadSession, now: Now) -> RuleView:
    rule = await rule_service.get_rule(session, account_id=caller.account_id, rule_id=rule_id)
    return rule_service.view(rule, now=now)


@router.patch("/rules/{rule_id}", response_model=RuleView, responses=WRITE_ERRORS, summary="Update a rule")
async def update_rule(
    rule_id: RuleId, body: RuleUpdate, caller: ManageCaller, session: WriteSession, settings: AppSettings, now: Now
) -> RuleView:
    """Only the fields given change; `budget_credits` or `daily_cap` set to null removes that limit.
    A budget lowered below what the rule has spent pauses it."""
    rule = await rule_service.update_rule(
        session, account_id=caller.account_id, rule_id=rule_id, body=body, now=now, settings=settings
    )
    return rule_service.view(rule, now=now)


@router.delete(
    "/rules/{rule_id}", status_code=204, responses=problem_responses(401, 403, 404, 422, 429), summary="Delete a rule"
)
async def delete_rule(rule_id: RuleId, caller: ManageCaller, session: WriteSession, now: Now) -> Response:
    """Stops the rule for good; its purchases stay listed."""
    await rule_service.delete_rule(session, account_id=caller.account_id, rule_id=rule_id, now=now)
    return Response(status_code=204)


@router.post(
    "/rules/{rule_id}/pause",
    response_model=RuleView,
    responses=problem_responses(401, 403, 404, 422, 429),
    summary="Pause a rule",
)
async def pause_rule(rule_id: RuleId, caller: ManageCaller, session: WriteSession, now: Now) -> RuleView:
    rule = await rule_service.pause_rule(session, account_id=caller.account_id, rule_id=rule_id, now=now)
    return rule_service.view(rule, now=now)


@router.post(
    "/rules/{rule_id}/resume",
    response_model=RuleView,
    responses=problem_responses(401, 403, 404, 409, 422, 429),
    summary="Resume a rule",
)
async def resume_rule(
    rule_id: RuleId, caller: ManageCaller, session: WriteSession, settings: AppSettings, now: Now
) -> RuleView:
    """409 when the rule's budget is spent: raise or remove `budget_credits` first."""
    rule = await rule_service.resume_rule(
        session, account_id=caller.account_id, rule_id=rule_id, now=now, settings=settings
    )
    return rule_service.view(rule, now=now)


@router.get(
    "/purchases",
    response_model=PurchasePage,
    responses=problem_responses(401, 403, 422, 429),
    summary="List auto-buy purchases",
)
async def list_purchases(
    params: Annotated[PurchaseQuery, Query()], caller: ManageCaller, session: ReadSession, settings: AppSettings
) -> PurchasePage:
    """Newest first, with the signal that set each purchase off; filter by `rule_id`."""
    return await rule_service.list_purchases(
        session,
        account_id=caller.account_id,
        rule_id=params.rule_id,
        limit=params.limit,
        cursor=params.cursor,
        settings=settings,
    )
