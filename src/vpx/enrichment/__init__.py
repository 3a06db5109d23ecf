"""Enrichment with the customer's own provider keys (D32): a per-field waterfall with provenance."""

from __future__ import annotations

import os
from datetime import timedelta

import httpx

from vpx.auth.ratelimit import RateLimits
from vpx.config import Settings
from vpx.db import Database
from vpx.enrichment.calls import ProviderCalls
from vpx.enrichment.providers import registered
from vpx.enrichment.waterfall import Waterfall
from vpx.outbound.transport import CheckedTransport


def base_urls(settings: Settings) -> dict[str, str]:
    """Each provider's API root, as the operator set it (VPX_<PROVIDER>_BASE_URL), else its public one.
    Accounts never choose where their keys are sent."""
    urls: dict[str, str] = {}
    for name, provider in registered().items():
        configured = getattr(settings, f"{name}_base_url", None) or os.environ.get(f"VPX_{name.upper()}_BASE_URL")
        urls[name] = str(configured or provider.default_base_url).rstrip("/")
    return urls


def build_waterfall(database: Database, settings: Settings, rate_limits: RateLimits) -> Waterfall:
    """The process's waterfall, with its HTTP client (closed by ``close_waterfall``). The API roots are
    the operator's: the outbound guard admits their network, as it does for their own SMTP server."""
    http = httpx.AsyncClient(
        timeout=httpx.Timeout(settings.enrichment_timeout_seconds),
        trust_env=False,
        follow_redirects=False,
        headers={"User-Agent": "vpx-enrichment"},
        transport=CheckedTransport(httpx.AsyncHTTPTransport(trust_env=False), allow_private=True),
    )
    return Waterfall(
        database,
        providers=registered(),
        base_urls=base_urls(settings),
        http=http,
        calls=ProviderCalls(rate_limits, settings.enrichment_rate_limit),
        cache_ttl=timedelta(hours=settings.enrichment_cache_hours),
        miss_ttl=timedelta(hours=settings.enrichment_miss_cache_hours),
    )


async def close_waterfall(waterfall: Waterfall) -> None:
    await waterfall.http.aclose()
