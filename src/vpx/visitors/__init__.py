"""Visitor identification (D33): sites, collection, resolution of a visit to a business, alerts."""

from __future__ import annotations

from vpx.config import Settings
from vpx.db import Database
from vpx.visitors.dns import ReverseDns, parse_servers
from vpx.visitors.index import RangeStore
from vpx.visitors.resolution import VisitorResolver


def build_resolver(database: Database, settings: Settings) -> VisitorResolver:
    """This process's resolver: the imported ranges (loaded on first use) and reverse DNS through
    VPX_DNS_SERVERS, or the system's resolver."""
    servers = parse_servers(settings.dns_servers) if settings.dns_servers.strip() else None
    return VisitorResolver(RangeStore(database), ReverseDns(servers, timeout=settings.dns_timeout_seconds))
