"""`client.autobuy`: rules that buy the contacts of new matching signals (D24), and their purchases."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from decimal import Decimal

from vpx_client import _policy
from vpx_client._async._pages import by_cursor
from vpx_client._async._transport import AsyncTransport
from vpx_client._meta import ResponseMeta
from vpx_client._policy import UNSET, Unset
from vpx_client._policy import segment as seg
from vpx_client.models import PurchasePage, PurchaseView, RuleCreate, RuleList, RuleView

Credits = Decimal | int | float


class AsyncAutoBuy:
    def __init__(self, transport: AsyncTransport) -> None:
        self._t = transport

    async def create_rule(
        self,
        rule: RuleCreate | None = None,
        *,
        industries: Sequence[str] | None = None,
        states: Sequence[str] | None = None,
        min_confidence: Credits | None = None,
        categories: Sequence[str] | None = None,
        intent_levels: Sequence[str] | None = None,
        budget_credits: Credits | None = None,
        daily_cap: int | None = None,
        name: str | None = None,
    ) -> RuleView:
        """A rule from a ``RuleCreate`` or keyword fields (``industries``, ``states`` and
        ``min_confidence`` are required by the service)."""
        body = _policy.body_of(
            rule,
            {
                "industries": industries, "states": states, "min_confidence": min_confidence,
                "categories": categories, "intent_levels": intent_levels, "budget_credits": budget_credits,
                "daily_cap": daily_cap, "name": name,
            },
        )  # fmt: skip
        return await self._t.call("POST", "/buyer/auto-buy/rules", RuleView, body=body)

    async def list_rules(self, *, limit: int | None = None, cursor: str | None = None) -> RuleList:
        """One page of the rules, oldest first; the default page holds every rule an account may have."""
        params = _policy.query(limit=limit, cursor=cursor)
        return await self._t.call("GET", "/buyer/auto-buy/rules", RuleList, params=params)

    def iterate_rules(self, *, page_size: int = 100) -> AsyncIterator[RuleView]:
        async def page(at: str | None) -> RuleList:
            return await self.list_rules(limit=page_size, cursor=at)

        return by_cursor(page, lambda p: p.next_cursor, lambda p: p.rules)

    async def get_rule(self, rule_id: str) -> RuleView:
        return await self._t.call("GET", f"/buyer/auto-buy/rules/{seg(rule_id)}", RuleView)

    async def update_rule(
        self,
        rule_id: str,
        *,
        industries: Sequence[str] | Unset = UNSET,
        states: Sequence[str] | Unset = UNSET,
        min_confidence: Credits | Unset = UNSET,
        categories: Sequence[str] | Unset | None = UNSET,
        intent_levels: Sequence[str] | Unset | None = UNSET,
        budget_credits: Credits | Unset | None = UNSET,
        daily_cap: int | Unset | None = UNSET,
        name: str | Unset = UNSET,
    ) -> RuleView:
        """Changes the fields given; ``budget_credits=None`` or ``daily_cap=None`` removes that limit."""
        body = _policy.changes(
            industries=industries, states=states, min_confidence=min_confidence, categories=categories,
            intent_levels=intent_levels, budget_credits=budget_credits, daily_cap=daily_cap, name=name,
        )  # fmt: skip
        return await self._t.call("PATCH", f"/buyer/auto-buy/rules/{seg(rule_id)}", RuleView, body=body)

    async def delete_rule(self, rule_id: str) -> ResponseMeta:
        return await self._t.call_empty("DELETE", f"/buyer/auto-buy/rules/{seg(rule_id)}")

    async def pause_rule(self, rule_id: str) -> RuleView:
        return await self._t.call("POST", f"/buyer/auto-buy/rules/{seg(rule_id)}/pause", RuleView)

    async def resume_rule(self, rule_id: str) -> RuleView:
        return await self._t.call("POST", f"/buyer/auto-buy/rules/{seg(rule_id)}/resume", RuleView)

    async def purchases(
        self, *, rule_id: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> PurchasePage:
        """One page of what the rules bought, newest first."""
        params = _policy.query(rule_id=rule_id, limit=limit, cursor=cursor)
        return await self._t.call("GET", "/buyer/auto-buy/purchases", PurchasePage, params=params)

    def iterate_purchases(self, *, rule_id: str | None = None, page_size: int = 100) -> AsyncIterator[PurchaseView]:
        async def page(at: str | None) -> PurchasePage:
            return await self.purchases(rule_id=rule_id, limit=page_size, cursor=at)

        return by_cursor(page, lambda p: p.next_cursor, lambda p: p.purchases)
