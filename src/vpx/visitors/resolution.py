"""From a visitor's address to a business of the catalogue, with the method and a confidence (D33).

In order, the first that answers wins:

1. opted out (``Sec-GPC: 1`` or ``DNT: 1``): nothing resolved; a crawler's user agent: ``bot``; an
   address no business visits from (RFC 1918, loopback, link-local, carrier-grade NAT, unique local):
   ``private_address``;
2. a range the operator mapped to a business (by contact id or by domain): ``ip_range``, 0.95 by
   contact id, 0.9 by domain;
3. reverse DNS: the address's PTR name, forward-confirmed (the name resolves back to the address), not
   an ISP's customer-line name, whose registrable domain is a business's website: ``reverse_dns``, 0.8;
   0.6 inside an ISP's range (a small business on a static line), 0.5 inside a hosting or cloud
   provider's (its VPN or gateway, most likely);
4. otherwise unidentified: ``isp`` or ``hosting`` when the address is in such a provider's range,
   else ``unknown``. Only the big access, mobile and cloud networks are negatives: every other network
   stays ``unknown``, never a wrong "no".

A domain several active businesses share (a chain's locations) names the oldest of them, 0.15 less sure.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.auth.network import IPAddress
from vpx.contacts.identifiers import registrable_domain
from vpx.models import Contact
from vpx.visitors.addresses import network_of, not_routed
from vpx.visitors.bots import is_bot
from vpx.visitors.dns import ReverseDns, isp_style
from vpx.visitors.index import RangeStore

CONFIDENCE = {
    "range_contact": 0.95,
    "range_domain": 0.9,
    "dns": 0.8,
    "dns_isp": 0.6,
    "dns_hosting": 0.5,
}
SHARED_DOMAIN_PENALTY = 0.15


@dataclass(frozen=True)
class Resolution:
    identified: bool
    contact: Contact | None = None
    method: str | None = None
    confidence: float | None = None
    reason: str | None = None
    network: str | None = None  # the /24 or /48 kept for the visit


class VisitorResolver:
    def __init__(self, ranges: RangeStore, dns: ReverseDns) -> None:
        self.ranges = ranges
        self.dns = dns

    async def resolve(
        self, session: AsyncSession, address: IPAddress | None, *, user_agent: str | None, opted_out: bool
    ) -> Resolution:
        if opted_out:
            return Resolution(False, reason="opted_out")
        if is_bot(user_agent):
            return Resolution(False, reason="bot")
        if address is None:
            return Resolution(False, reason="unknown")
        if not_routed(address):
            return Resolution(False, reason="private_address")
        kept = network_of(address)
        network = (await self.ranges.index()).lookup(address)
        kind = network.kind if network is not None else "unknown"
        if network is not None and kind == "business":
            if network.contact_id is not None:
                contact = await _active(session, network.contact_id)
                if contact is not None:
                    return Resolution(True, contact, "ip_range", CONFIDENCE["range_contact"], network=kept)
            if network.domain:
                contact, shared = await _by_domain(session, network.domain)
                if contact is not None:
                    confidence = _less_if_shared(CONFIDENCE["range_domain"], shared)
                    return Resolution(True, contact, "ip_range", confidence, network=kept)
        name = await self.dns.confirmed_name(address)
        if name and not isp_style(name):
            domain = registrable_domain(name)
            contact, shared = await _by_domain(session, domain) if domain else (None, False)
            if contact is not None:
                base = {"isp": "dns_isp", "hosting": "dns_hosting"}.get(kind, "dns")
                confidence = _less_if_shared(CONFIDENCE[base], shared)
                return Resolution(True, contact, "reverse_dns", confidence, network=kept)
        reason = kind if kind in ("isp", "hosting") else "unknown"
        return Resolution(False, reason=reason, network=kept)


def _less_if_shared(confidence: float, shared: bool) -> float:
    return round(confidence - SHARED_DOMAIN_PENALTY, 2) if shared else confidence


async def _active(session: AsyncSession, contact_id: int) -> Contact | None:
    contact = await session.get(Contact, contact_id)
    return contact if contact is not None and contact.status == "active" and not contact.suppressed else None


async def _by_domain(session: AsyncSession, domain: str) -> tuple[Contact | None, bool]:
    """The oldest active business whose website has the registrable domain, and whether others share it."""
    found = list(
        await session.scalars(
            select(Contact)
            .where(Contact.website_domain == domain, Contact.status == "active", Contact.suppressed.is_(False))
            .order_by(Contact.id)
            .limit(2)
        )
    )
    return (found[0] if found else None), len(found) > 1
