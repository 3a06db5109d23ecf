"""`client.account`: the account and its balances, the credit ledger, API keys, provider keys."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from vpx_client import _policy
from vpx_client._async._pages import by_cursor
from vpx_client._async._transport import AUTO, AsyncTransport
from vpx_client._meta import ResponseMeta, attach
from vpx_client._policy import UNSET, Unset
from vpx_client._policy import segment as seg
from vpx_client.models import (
    AccountView,
    BalanceView,
    KeyCreated,
    KeyList,
    KeyView,
    LedgerEntryView,
    LedgerPage,
    ProviderKeyList,
    ProviderKeyView,
    TestBalanceReset,
)


class AsyncAccount:
    def __init__(self, transport: AsyncTransport) -> None:
        self._t = transport

    async def get(self) -> AccountView:
        """The plan, balances, next free-credit reset and key counts."""
        return await self._t.call("GET", "/account", AccountView)

    async def balances(self) -> BalanceView:
        """The balance: ``total``, ``free`` (spent first) and ``paid``."""
        account = await self.get()
        balance = account.balance
        attach(balance, account.meta)
        return balance

    async def ledger(self, *, limit: int | None = None, cursor: str | None = None) -> LedgerPage:
        """One page of balance changes, newest first, each with the balance after it (D11)."""
        params = _policy.query(limit=limit, cursor=cursor)
        return await self._t.call("GET", "/account/ledger", LedgerPage, params=params)

    def iterate_ledger(self, *, page_size: int = 100) -> AsyncIterator[LedgerEntryView]:
        async def page(at: str | None) -> LedgerPage:
            return await self.ledger(limit=page_size, cursor=at)

        return by_cursor(page, lambda p: p.next_cursor, lambda p: p.entries)

    async def reset_test_balance(self) -> TestBalanceReset:
        """Test mode: sets the test balance back to its start (never the real balance); any key of Standard
        or Full Access, of either mode."""
        return await self._t.call("POST", "/account/test-balance/reset", TestBalanceReset)

    # --- API keys (D28), Full Access ---

    async def keys(self, *, status: str | None = None, limit: int | None = None, cursor: str | None = None) -> KeyList:
        """One page of the account's keys, active and revoked (``status`` picks one); the default page
        holds them all (``max_keys``), ``next_cursor`` leads to the next."""
        params = _policy.query(status=status, limit=limit, cursor=cursor)
        return await self._t.call("GET", "/keys", KeyList, params=params)

    def iterate_keys(self, *, status: str | None = None, page_size: int = 100) -> AsyncIterator[KeyView]:
        async def page(at: str | None) -> KeyList:
            return await self.keys(status=status, limit=page_size, cursor=at)

        return by_cursor(page, lambda p: p.next_cursor, lambda p: p.keys)

    async def create_key(
        self,
        key_type: str,
        *,
        name: str | None = None,
        ip_allowlist: Sequence[str] | None = None,
        mode: str | None = None,
        idempotency_key: str | None = None,
    ) -> KeyCreated:
        """A new key of ``key_type`` (`ro`, `live` or `full`); its ``secret`` is in this answer only.
        ``mode="test"`` makes a test key (`vpx_test_…`), which sees the sandbox and spends a test balance."""
        body = _policy.body_of(
            None,
            {
                "type": key_type,
                "mode": mode,
                "name": name,
                "ip_allowlist": list(ip_allowlist) if ip_allowlist is not None else None,
            },
        )
        return await self._t.call("POST", "/keys", KeyCreated, body=body, idempotency_key=idempotency_key or AUTO)

    async def get_key(self, key_id: str) -> KeyView:
        return await self._t.call("GET", f"/keys/{seg(key_id)}", KeyView)

    async def update_key(
        self, key_id: str, *, name: str | Unset = UNSET, ip_allowlist: Sequence[str] | Unset = UNSET
    ) -> KeyView:
        body = _policy.changes(name=name, ip_allowlist=ip_allowlist)
        return await self._t.call("PATCH", f"/keys/{seg(key_id)}", KeyView, body=body)

    async def revoke_key(self, key_id: str) -> KeyView:
        return await self._t.call("DELETE", f"/keys/{seg(key_id)}", KeyView)

    # --- Enrichment provider keys (D32), Full Access: stored encrypted, never shown again ---

    async def provider_keys(self) -> ProviderKeyList:
        return await self._t.call("GET", "/enrichment/keys", ProviderKeyList)

    async def set_provider_key(
        self, provider: str, api_key: str, *, monthly_limit: int | None = None
    ) -> ProviderKeyView:
        body = _policy.body_of(None, {"api_key": api_key, "monthly_limit": monthly_limit})
        return await self._t.call("PUT", f"/enrichment/keys/{seg(provider)}", ProviderKeyView, body=body)

    async def delete_provider_key(self, provider: str) -> ResponseMeta:
        return await self._t.call_empty("DELETE", f"/enrichment/keys/{seg(provider)}")
