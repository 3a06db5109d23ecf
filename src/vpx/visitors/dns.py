"""Reverse DNS for visitor identification (D33): an address's PTR name, forward-confirmed, and whether
that name is one an ISP gives its customer lines.

Anyone can publish any PTR name for their own addresses, so a name counts only when it resolves back
to the address (A for IPv4, AAAA for IPv6): "forward-confirmed reverse DNS". The look-up runs on the
visit's request path, so it has one time budget for all its queries, answers None rather than raise,
and remembers every answer, a failure included, so that a slow or broken resolver costs one budget
per address and cache period, not one per visit.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence

import dns.asyncresolver
import dns.exception
import dns.name
import dns.rdatatype
import dns.resolver
import dns.reversename

from vpx.auth.network import IPAddress
from vpx.contacts.identifiers import registrable_domain
from vpx.nameservers import Nameservers
from vpx.nameservers import parse_servers as parse_servers  # re-exported: the settings check with it

log = logging.getLogger("vpx.visitors")

MAX_NAMES = 3  # PTR names tried per address: each costs a query out of the one budget
_LABEL = r"[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?"  # the resolver has checked the lengths
_HOST_NAME = re.compile(rf"^{_LABEL}(?:\.{_LABEL})+$")
# What a look-up may fail with: the DNS's own errors, the network's, and a budget spent.
_FAILURES = (dns.exception.DNSException, OSError, EOFError, TimeoutError, ValueError)


class ReverseDns:
    """PTR → forward-confirmed host name, cached."""

    def __init__(
        self,
        servers: Sequence[tuple[str, int]] | None = None,
        *,
        timeout: float = 1.0,
        cache_size: int = 100_000,
        cache_seconds: float = 3600.0,
        negative_cache_seconds: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """servers: (address, port) pairs to ask (the operator's VPX_DNS_SERVERS); None: the system
        resolver, read from /etc/resolv.conf on first look-up. ValueError for an empty list or a pair
        that is no address and port."""
        self.timeout = timeout
        self.cache_size = cache_size
        self.cache_seconds = cache_seconds
        self.negative_cache_seconds = negative_cache_seconds
        self.clock = clock
        # address → (expires at, confirmed name or None), least recently used first
        self._cache: OrderedDict[IPAddress, tuple[float, str | None]] = OrderedDict()
        self._pending: dict[IPAddress, asyncio.Task[str | None]] = {}
        self._nameservers = Nameservers(servers, timeout=timeout, purpose="reverse DNS is off")

    async def confirmed_name(self, address: IPAddress) -> str | None:
        """The address's PTR name (lower case, no trailing dot) when one of the names it points to
        resolves back to the address; None when there is no PTR, none confirms, or the DNS fails or
        is slow (timeout is the whole look-up's budget). Never raises for DNS problems."""
        cached = self._cache.get(address)
        if cached is not None:
            if cached[0] > self.clock():
                self._cache.move_to_end(address)
                return cached[1]
            del self._cache[address]
        task = self._pending.get(address)
        if task is None or task.get_loop() is not asyncio.get_running_loop():
            task = asyncio.create_task(self._look_up(address))
            self._pending[address] = task
            task.add_done_callback(lambda done: self._forget_pending(address, done))
        # Shielded: a visit whose request is cancelled must not cancel the look-up others wait on,
        # and the answer is still cached for the next visit.
        return await asyncio.shield(task)

    def clear(self) -> None:
        """Forget every cached answer."""
        self._cache.clear()

    def _forget_pending(self, address: IPAddress, task: asyncio.Task[str | None]) -> None:
        if self._pending.get(address) is task:
            del self._pending[address]

    async def _look_up(self, address: IPAddress) -> str | None:
        resolver = self._nameservers.resolver()
        name, seconds = None, self.negative_cache_seconds
        if resolver is not None:
            try:
                async with asyncio.timeout(self.timeout):
                    name, seconds = await self._confirm(resolver, address)
            except _FAILURES as error:
                # Never the address: addresses are not logged whole (D33).
                log.debug("reverse DNS failed: %s", type(error).__name__)
        self._remember(address, name, seconds)
        return name

    async def _confirm(self, resolver: dns.asyncresolver.Resolver, address: IPAddress) -> tuple[str | None, float]:
        """The first (by name) of at most MAX_NAMES PTR names that resolves back to the address, and
        how long the answer may be kept."""
        try:
            pointers = await resolver.resolve(dns.reversename.from_address(str(address)), dns.rdatatype.PTR)
        except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer):
            return None, self.negative_cache_seconds
        # Sorted: servers rotate a record set's order, and one address should always give one name.
        names = sorted({n for n in (_host(r.target) for r in pointers) if n is not None})[:MAX_NAMES]
        rdtype = dns.rdatatype.A if address.version == 4 else dns.rdatatype.AAAA
        kept = await asyncio.gather(*(_resolves_to(resolver, n, rdtype, address) for n in names))
        for name, seconds in zip(names, kept, strict=True):
            if seconds is not None:
                return name, min(self.cache_seconds, pointers.chaining_result.minimum_ttl, seconds)
        return None, self.negative_cache_seconds

    def _remember(self, address: IPAddress, name: str | None, seconds: float) -> None:
        if seconds <= 0 or self.cache_size <= 0:
            return
        self._cache[address] = (self.clock() + seconds, name)
        self._cache.move_to_end(address)
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)


async def _resolves_to(
    resolver: dns.asyncresolver.Resolver, name: str, rdtype: dns.rdatatype.RdataType, address: IPAddress
) -> float | None:
    """How long the name's answer may be kept when it includes the address (CNAMEs followed);
    None when it does not, or the name does not resolve."""
    try:
        answer = await resolver.resolve(f"{name}.", rdtype)
    except dns.exception.DNSException:
        return None  # another name may still confirm: one failing is no reason to give up on all
    if any(ipaddress.ip_address(r.address) == address for r in answer):
        return float(answer.chaining_result.minimum_ttl)
    return None


def _host(target: dns.name.Name) -> str | None:
    """A PTR target as a host name, or None for one that cannot be a host's (the root, spaces…)."""
    name = target.to_text(omit_final_dot=True).lower()
    return name if _HOST_NAME.match(name) else None


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# ISP customer-line names. STRONG words name such a line wherever they stand left of the registrable
# domain; WEAK ones are also ordinary host names of a business (static.acme.example serves its
# images) and count only beside a numbered label (static-88, host86-1-2-3).
_STRONG = _words(
    "pool dyn dynamic dynip dsl adsl vdsl xdsl sdsl hdsl cable cablemodem broadband ppp pppoe pppoa fios residential"
    " dhcp dialup dialin ftth fttp fttc fttb gpon cpe subscriber subscribers customer customers cust cgnat"
    " unassigned gprs umts hsd"
)
_WEAK = _words("static mobile res resi client clients home user users host ip dip nat rev ptr wifi lte cm cpc")
# Four octets in a row, as ISPs write an address into its name: 203-0-113-5, 5.113.0.203, ip_1_2_3_4.
_DOTTED = re.compile(r"(?<![0-9])(\d{1,3})[-._](\d{1,3})[-._](\d{1,3})[-._](\d{1,3})(?![0-9])")
_NUMBERED = re.compile(r"\d{2,}|\d\D+\d")
_LETTERS = re.compile(r"[a-z]+")


def isp_style(name: str, address: IPAddress | None = None) -> bool:
    """True for names ISPs give customer lines: pool, dyn/dynamic, dsl/adsl/vdsl, cable,
    customer/cust, static, dhcp, broadband, ppp, fios, res/residential, mobile, host-1-2-3-4 /
    1-2-3-4 / ip-1-2-3-4 / the address's digits embedded (given the address: also written as 12
    digits or 8 hex digits), ...; such names never match a business."""
    name = name.lower().rstrip(".")
    if any(all(int(octet) <= 255 for octet in found.groups()) for found in _DOTTED.finditer(name)):
        return True
    if address is not None and _embeds(name, address):
        return True
    domain = registrable_domain(name)
    labels = name.split(".")
    host = labels[: len(labels) - len(domain.split("."))] if domain else labels[:-2]
    words = {word for label in host for word in _LETTERS.findall(label)}
    if words & _STRONG:
        return True
    return bool(words & _WEAK) and any(_NUMBERED.search(label) for label in host)


def _embeds(name: str, address: IPAddress) -> bool:
    """Whether the name spells the address as 12 zero-padded digits or as its hex, as some ISPs do."""
    if address.version != 4:
        return False
    octets = address.packed
    return "".join(f"{o:03d}" for o in octets) in name or octets.hex() in name
