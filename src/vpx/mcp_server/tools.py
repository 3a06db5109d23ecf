"""The tools: each a call of the API, its input schema generated from the API's own request model.

Read tools (search_contacts, get_contact, list_signals, account_balance) are offered to every key;
tools that need a Standard or Full Access key (reveal_contact, purchase_signal, report_wrong_data)
are not offered to a Read Only key at all.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from vpx.auth.keys import KeyType
from vpx.auth.permissions import Capability, allows
from vpx.contacts.schemas import RevealRequest, SearchBody
from vpx.mcp_server.api import ApiAnswer, ApiCaller
from vpx.mcp_server.spending import SessionBudget
from vpx.quality.schemas import ReportRequest
from vpx.signals.schemas import SignalQueryParams


class ToolRefused(Exception):
    """A spending tool that did not spend: the words say why (the price, the cap)."""


MAX_CREDITS_WORDS = (
    "The most this call may spend, in credits. A price above it is refused (the answer says the price) and "
    "nothing is charged; 0 spends nothing (a contact already revealed costs 0)."
)
MaxCredits = Annotated[
    Decimal,
    Field(ge=0, strict=False, description=MAX_CREDITS_WORDS),
    WithJsonSchema({"type": "number", "minimum": 0, "description": MAX_CREDITS_WORDS}),
]


class ContactRef(BaseModel):
    model_config = ConfigDict(extra="forbid")
    contact_id: str = RevealRequest.model_fields["contact_id"]  # type: ignore[assignment]


class RevealArguments(RevealRequest):
    max_credits: MaxCredits


class SignalRef(BaseModel):
    model_config = ConfigDict(extra="forbid")
    signal_id: str = Field(max_length=40, examples=["sg_4Fq9zK2mX7bT1cYw"], description="`sg_…`")


class PurchaseArguments(SignalRef):
    max_credits: MaxCredits


class ReportArguments(ReportRequest):
    contact_id: str = RevealRequest.model_fields["contact_id"]  # type: ignore[assignment]


class NoArguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


Handler = Callable[[ApiCaller, SessionBudget, dict[str, Any]], Awaitable[ApiAnswer]]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    arguments: type[BaseModel]
    capability: Capability
    handler: Handler

    def input_schema(self) -> dict[str, Any]:
        """The arguments' JSON schema, as pydantic generates it from the API's model (references inlined)."""
        schema = self.arguments.model_json_schema()
        return _inlined(schema)

    def offered_to(self, key_type: KeyType) -> bool:
        return allows(key_type, self.capability)


def _inlined(schema: dict[str, Any]) -> dict[str, Any]:
    defs = schema.pop("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return walk(copy.deepcopy(defs[ref.removeprefix("#/$defs/")]))
            return {key: walk(value) for key, value in node.items()}
        if isinstance(node, list):
            return [walk(item) for item in node]
        return node

    inlined: dict[str, Any] = walk(schema)
    return inlined


async def _search(api: ApiCaller, budget: SessionBudget, args: dict[str, Any]) -> ApiAnswer:
    return await api.call("POST", "/api/v1/contacts/search", json_body=args)


async def _get_contact(api: ApiCaller, budget: SessionBudget, args: dict[str, Any]) -> ApiAnswer:
    return await api.call("GET", f"/api/v1/contacts/{args['contact_id']}")


async def _list_signals(api: ApiCaller, budget: SessionBudget, args: dict[str, Any]) -> ApiAnswer:
    return await api.call("GET", "/api/v1/signals", params=args)


async def _balance(api: ApiCaller, budget: SessionBudget, args: dict[str, Any]) -> ApiAnswer:
    return await api.call("GET", "/api/v1/account")


async def _report(api: ApiCaller, budget: SessionBudget, args: dict[str, Any]) -> ApiAnswer:
    body = {k: v for k, v in args.items() if k != "contact_id"}
    return await api.call("POST", f"/api/v1/contacts/{args['contact_id']}/report", json_body=body)


async def _contact_price(api: ApiCaller, contact_id: str) -> tuple[ApiAnswer, Decimal]:
    """The contact as the account sees it and what revealing it costs now (0 when already revealed)."""
    seen = await api.call("GET", f"/api/v1/contacts/{contact_id}")
    if not seen.ok:
        return seen, Decimal(0)
    if seen.body.get("preview") is False:
        return seen, Decimal(0)
    return seen, Decimal(str(seen.body.get("reveal_cost") or 0))


async def _reveal(api: ApiCaller, budget: SessionBudget, args: dict[str, Any]) -> ApiAnswer:
    contact_id, max_credits = str(args["contact_id"]), Decimal(str(args["max_credits"]))
    async with budget.lock:
        seen, price = await _contact_price(api, contact_id)
        if not seen.ok:
            return seen
        refused = budget.refusal(price=price, max_credits=max_credits, what=f"Revealing {contact_id}")
        if refused:
            raise ToolRefused(refused)
        answer = await api.call("POST", "/api/v1/contacts/reveal", json_body={"contact_id": contact_id})
        budget.spent += answer.charged
        return answer


async def _purchase(api: ApiCaller, budget: SessionBudget, args: dict[str, Any]) -> ApiAnswer:
    signal_id, max_credits = str(args["signal_id"]), Decimal(str(args["max_credits"]))
    async with budget.lock:
        signal = await api.call("GET", f"/api/v1/signals/{signal_id}")
        if not signal.ok:
            return signal
        price = Decimal(str(signal.body.get("reveal_cost") or 0))
        contact = signal.body.get("contact") or {}
        if contact.get("id"):
            seen, price_now = await _contact_price(api, str(contact["id"]))
            if seen.ok and seen.body.get("preview") is False:
                price = price_now  # its contact was revealed before: a purchase costs nothing
        refused = budget.refusal(price=price, max_credits=max_credits, what=f"Purchasing {signal_id}")
        if refused:
            raise ToolRefused(refused)
        answer = await api.call("POST", f"/api/v1/signals/{signal_id}/purchase")
        budget.spent += answer.charged
        return answer


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "search_contacts",
        "Search the catalogue of businesses (free previews: no credits spent). Full text with typo tolerance; "
        "filters by state, city, industry, specialty, licence type. The answer says how the question was read "
        "(`interpreted`) and each preview's `reveal_cost`.",
        SearchBody,
        Capability.read,
        _search,
    ),
    ToolSpec(
        "get_contact",
        "One contact: the full record if this account revealed it, else its free preview with `reveal_cost`.",
        ContactRef,
        Capability.read,
        _get_contact,
    ),
    ToolSpec(
        "reveal_contact",
        "Reveal a contact's phone, email, website and address, spending credits. Requires `max_credits`: a "
        "price above it is refused, saying the price, and nothing is charged. A contact already revealed "
        "costs 0.",
        RevealArguments,
        Capability.buy,
        _reveal,
    ),
    ToolSpec(
        "list_signals",
        "Buyer-intent signals, newest first, filtered by category, industry, intent level, state and time.",
        SignalQueryParams,
        Capability.read,
        _list_signals,
    ),
    ToolSpec(
        "purchase_signal",
        "Buy a signal: its contact revealed at the signal's price. Requires `max_credits`: a price above it "
        "is refused, saying the price, and nothing is charged.",
        PurchaseArguments,
        Capability.buy,
        _purchase,
    ),
    ToolSpec(
        "account_balance",
        "The account: its plan and credit balance (the test balance with a test key), free credits' reset.",
        NoArguments,
        Capability.read,
        _balance,
    ),
    ToolSpec(
        "report_wrong_data",
        "Report a wrong phone, email, website or address of a contact this account revealed; a report the "
        "rules confirm refunds the credits it cost.",
        ReportArguments,
        Capability.buy,
        _report,
    ),
)
BY_NAME = {tool.name: tool for tool in TOOLS}
