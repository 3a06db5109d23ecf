"""One domain's mail exchanger, asked of the operator's resolver (vpx.nameservers), at a bounded pace.

What an answer means (RFC 5321 section 5.1, RFC 7505):
- MX records → ``mx_found``, unless the only one is the null MX (``MX 0 .``): the domain says it
  takes no mail → ``no_mx``;
- the domain exists but has no MX → its own address is its mail exchanger (the "implicit MX"): an A
  or AAAA record → ``mx_found``, none → ``no_mx``;
- the domain does not exist (NXDOMAIN) → ``no_mx``;
- no answer in time, a server failure, no resolver → ``unknown`` (asked again later);
- a name reserved for documentation and tests (RFC 2606, RFC 6761: ``.example``, ``.test``,
  ``.invalid``, ``.localhost``, example.com/.net/.org) → ``no_mx`` without asking, unless the operator
  named DNS servers of their own (VPX_DNS_SERVERS), which may well serve such zones: no public domain
  of that kind takes mail, and the demo catalogue's thousands of ``.example`` addresses would
  otherwise be asked of the system's resolver.

Only the DNS is asked: no mail server is ever contacted.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

import dns.asyncresolver
import dns.exception
import dns.name
import dns.rdatatype
import dns.resolver

from vpx.nameservers import Nameservers

log = logging.getLogger("vpx.deliverability")

DomainStatus = Literal["mx_found", "no_mx", "unknown"]
# What a look-up may fail with: the DNS's own errors, the network's, and a budget spent.
_FAILURES = (dns.exception.DNSException, OSError, EOFError, TimeoutError, ValueError)


@dataclass(frozen=True)
class MxAnswer:
    """A domain's status and how long the DNS said it may be kept (None: the answer carried no
    record to take a TTL from, as a negative or failed one)."""

    status: DomainStatus
    ttl: float | None = None


class Pace:
    """At most ``per_second`` events a second, spaced evenly: ``take`` waits for the next free slot."""

    def __init__(
        self,
        per_second: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if per_second <= 0:
            raise ValueError("the pace must be positive")
        self.interval = 1.0 / per_second
        self.clock, self.sleep = clock, sleep
        self._next = 0.0
        self.taken = 0

    async def take(self) -> None:
        now = self.clock()
        slot = max(now, self._next)
        self._next = slot + self.interval
        self.taken += 1
        if slot > now:
            await self.sleep(slot - now)


RESERVED_TLDS = frozenset({"example", "test", "invalid", "localhost"})
RESERVED_DOMAINS = frozenset({"example.com", "example.net", "example.org"})


def reserved(domain: str) -> bool:
    """Whether the domain is reserved for documentation and tests (RFC 2606, RFC 6761)."""
    labels = domain.split(".")
    return labels[-1] in RESERVED_TLDS or ".".join(labels[-2:]) in RESERVED_DOMAINS


class MxLookups:
    """Looks domains up, each DNS query paced by ``pace`` (an MX query, and the A and AAAA queries
    of a domain without MX, each take a slot). ``queries`` counts the queries sent.
    ``ask_reserved``: whether reserved names are asked too (the operator's own servers)."""

    def __init__(self, nameservers: Nameservers, pace: Pace, *, ask_reserved: bool = True) -> None:
        self.nameservers = nameservers
        self.pace = pace
        self.ask_reserved = ask_reserved
        self.queries = 0

    async def look_up(self, domain: str) -> MxAnswer:
        """The domain's status (``domain`` in its ASCII form); never raises for DNS problems."""
        if not self.ask_reserved and reserved(domain):
            return MxAnswer("no_mx")
        resolver = self.nameservers.resolver()
        if resolver is None:
            return MxAnswer("unknown")
        try:
            return await self._look_up(resolver, domain)
        except _FAILURES as error:
            # The domain is not personal data, but one line per failure is plenty at debug level.
            log.debug("MX look-up of %s failed: %s", domain, type(error).__name__)
            return MxAnswer("unknown")

    async def _look_up(self, resolver: dns.asyncresolver.Resolver, domain: str) -> MxAnswer:
        name = dns.name.from_text(domain)
        try:
            answer = await self._ask(resolver, name, dns.rdatatype.MX)
        except dns.resolver.NXDOMAIN:
            return MxAnswer("no_mx")
        except dns.resolver.NoAnswer:
            return await self._implicit(resolver, name)
        ttl = float(answer.rrset.ttl) if answer.rrset is not None else None
        exchanges = [record.exchange for record in answer]
        # RFC 7505: a null MX ("MX 0 .") says the domain accepts no mail at all.
        if not exchanges or all(exchange == dns.name.root for exchange in exchanges):
            return MxAnswer("no_mx", ttl)
        return MxAnswer("mx_found", ttl)

    async def _implicit(self, resolver: dns.asyncresolver.Resolver, name: dns.name.Name) -> MxAnswer:
        """RFC 5321's implicit MX: a domain without MX records takes mail at its own address."""
        for rdtype in (dns.rdatatype.A, dns.rdatatype.AAAA):
            try:
                answer = await self._ask(resolver, name, rdtype)
            except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer):
                continue
            return MxAnswer("mx_found", float(answer.rrset.ttl) if answer.rrset is not None else None)
        return MxAnswer("no_mx")

    async def _ask(
        self, resolver: dns.asyncresolver.Resolver, name: dns.name.Name, rdtype: dns.rdatatype.RdataType
    ) -> dns.resolver.Answer:
        await self.pace.take()
        self.queries += 1
        return await resolver.resolve(name, rdtype, search=False)
