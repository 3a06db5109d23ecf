"""A session's spending: what it has spent and the cap no tool call may pass, one spending call at a
time (a price checked and then paid by one call is never raced by another of the same session)."""

from __future__ import annotations

import asyncio
from decimal import Decimal

from vpx.money import credits_header as _credits


class SessionBudget:
    def __init__(self, cap: Decimal) -> None:
        self.cap = cap  # 0: no cap of the session's own, each tool's max_credits only
        self.spent = Decimal(0)
        self.lock = asyncio.Lock()

    def refusal(self, *, price: Decimal, max_credits: Decimal, what: str) -> str | None:
        """Why a spend of ``price`` must be refused, in words; None when it may go ahead."""
        if price > max_credits:
            return (
                f"{what} costs {_credits(price)} credits, more than max_credits {_credits(max_credits)}: "
                "nothing was charged. Call again with a max_credits of at least the price to go ahead."
            )
        if self.cap > 0 and self.spent + price > self.cap:
            left = max(self.cap - self.spent, Decimal(0))
            return (
                f"{what} costs {_credits(price)} credits; this session may spend {_credits(left)} more "
                f"(its cap is {_credits(self.cap)}, {_credits(self.spent)} spent): nothing was charged."
            )
        return None
