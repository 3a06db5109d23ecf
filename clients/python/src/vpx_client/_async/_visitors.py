"""`client.visitors`: sites, server-side identification, visits and companies (D33)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime

from vpx_client import _policy
from vpx_client._async._pages import by_cursor
from vpx_client._async._transport import AsyncTransport
from vpx_client._meta import ResponseMeta
from vpx_client._policy import segment as seg
from vpx_client.models import CompanyList, Identification, SiteList, SiteView, VisitPage, VisitView


class AsyncVisitors:
    def __init__(self, transport: AsyncTransport) -> None:
        self._t = transport

    async def create_site(self, domain: str, *, name: str | None = None, topic: str | None = None) -> SiteView:
        """A site, with its public site key and tracking snippet."""
        body = _policy.body_of(None, {"domain": domain, "name": name, "topic": topic})
        return await self._t.call("POST", "/visitors/sites", SiteView, body=body)

    async def sites(self, *, limit: int | None = None, cursor: str | None = None) -> SiteList:
        """One page of the sites; the default page holds every site an account may have."""
        params = _policy.query(limit=limit, cursor=cursor)
        return await self._t.call("GET", "/visitors/sites", SiteList, params=params)

    def iterate_sites(self, *, page_size: int = 100) -> AsyncIterator[SiteView]:
        async def page(at: str | None) -> SiteList:
            return await self.sites(limit=page_size, cursor=at)

        return by_cursor(page, lambda p: p.next_cursor, lambda p: p.sites)

    async def get_site(self, site_id: str) -> SiteView:
        return await self._t.call("GET", f"/visitors/sites/{seg(site_id)}", SiteView)

    async def delete_site(self, site_id: str) -> ResponseMeta:
        return await self._t.call_empty("DELETE", f"/visitors/sites/{seg(site_id)}")

    async def identify(
        self,
        site_id: str,
        ip: str,
        url: str,
        *,
        user_agent: str | None = None,
        referrer: str | None = None,
        occurred_at: datetime | None = None,
    ) -> Identification:
        """A page view reported from your server; the answer says whether a business was named."""
        body = _policy.body_of(
            None,
            {"site_id": site_id, "ip": ip, "url": url, "user_agent": user_agent, "referrer": referrer,
             "occurred_at": occurred_at},
        )  # fmt: skip
        return await self._t.call("POST", "/visitors/identify", Identification, body=body)

    async def visits(
        self,
        *,
        site_id: str | None = None,
        identified: bool | None = None,
        since: datetime | str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> VisitPage:
        params = _policy.query(site_id=site_id, identified=identified, since=since, limit=limit, cursor=cursor)
        return await self._t.call("GET", "/visitors/visits", VisitPage, params=params)

    def iterate_visits(
        self,
        *,
        site_id: str | None = None,
        identified: bool | None = None,
        since: datetime | str | None = None,
        page_size: int = 100,
    ) -> AsyncIterator[VisitView]:
        async def page(at: str | None) -> VisitPage:
            return await self.visits(site_id=site_id, identified=identified, since=since, limit=page_size, cursor=at)

        return by_cursor(page, lambda p: p.next_cursor, lambda p: p.visits)

    async def companies(
        self, *, site_id: str | None = None, since: datetime | str | None = None, limit: int | None = None
    ) -> CompanyList:
        """The businesses identified among the visitors, most active first."""
        params = _policy.query(site_id=site_id, since=since, limit=limit)
        return await self._t.call("GET", "/visitors/companies", CompanyList, params=params)
