"""A real DNS server on loopback for the tests: authoritative for whatever the test adds, over UDP and
TCP on one free port of 127.0.0.1, built on dnslib.

    with DnsServer() as server:
        server.add_ptr("192.0.2.10", "mail.acme.example")
        server.add_a("mail.acme.example", "192.0.2.10")
        ReverseDns([(server.host, server.port)])

It answers as an authoritative server does: a CNAME with the records of its target when it holds
them, NXDOMAIN for a name it has nothing for, an empty answer (NOERROR) for a name it has other
records for. ``delay`` makes it slow, ``refuse`` makes it answer SERVFAIL, and ``queries`` lists the
questions it was asked. Records carry the server's ``ttl``, or a name's own (``set_ttl``).
"""

from __future__ import annotations

import ipaddress
import threading
from types import TracebackType
from typing import Any

from dnslib import QTYPE, RCODE, RR  # type: ignore[import-untyped]
from dnslib.server import DNSLogger, DNSServer  # type: ignore[import-untyped]

TTL = 300


def _absolute(name: str) -> str:
    return name.lower().rstrip(".") + "."


class _Zone:
    """dnslib's resolver interface: resolve(request, handler) → reply, called on the server's threads."""

    def __init__(self, server: DnsServer) -> None:
        self.server = server

    def resolve(self, request: Any, handler: Any) -> Any:
        server = self.server
        qname, qtype = _absolute(str(request.q.qname)), QTYPE[request.q.qtype]
        with server.lock:
            server.queries.append((qname.rstrip("."), qtype))
            delay, refusing = server.delay_seconds, server.refusing
        if delay:
            server.stopping.wait(delay)  # wakes at once when the server stops
        reply = request.reply()
        if refusing:
            reply.header.rcode = RCODE.SERVFAIL
            return reply
        with server.lock:
            seen: set[str] = set()
            while qtype != "CNAME" and qname in server.cnames and qname not in seen:
                seen.add(qname)
                target = server.cnames[qname]
                reply.add_answer(RR.fromZone(f"{qname} {server.ttl} IN CNAME {target}")[0])
                qname = target
            records = server.records.get((qname, qtype), [])
            ttl = server.ttls.get(qname, server.ttl)
            for record in records:
                reply.add_answer(RR.fromZone(f"{qname} {ttl} IN {qtype} {record}")[0])
            if not records and not seen and not server.holds(qname):
                reply.header.rcode = RCODE.NXDOMAIN
        return reply


class DnsServer:
    """A small authoritative DNS server on 127.0.0.1 (UDP and TCP), started by ``start`` or ``with``."""

    def __init__(self, *, ttl: int = TTL) -> None:
        self.host = "127.0.0.1"
        self.port = 0
        self.ttl = ttl
        self.records: dict[tuple[str, str], list[str]] = {}
        self.cnames: dict[str, str] = {}
        self.ttls: dict[str, int] = {}
        self.queries: list[tuple[str, str]] = []
        self.delay_seconds = 0.0
        self.refusing = False
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self._servers: list[Any] = []

    def start(self) -> DnsServer:
        """Listens on a port free for both UDP and TCP, serving from background threads."""
        zone, quiet = _Zone(self), DNSLogger(log="-request,-reply,-truncated,-error")
        for _ in range(20):
            udp = DNSServer(zone, address=self.host, port=0, logger=quiet)
            port = udp.server.server_address[1]
            try:
                tcp = DNSServer(zone, address=self.host, port=port, tcp=True, logger=quiet)
            except OSError:  # taken for TCP: another port
                udp.server.server_close()
                continue
            self.port, self._servers = port, [udp, tcp]
            for server in self._servers:
                # Handler threads are daemons and not joined: a delayed answer must not hold up stop().
                server.server.daemon_threads = True
                server.server.block_on_close = False
                # A short poll, so that stop() returns in milliseconds rather than socketserver's 0.5 s.
                threading.Thread(target=server.server.serve_forever, args=(0.02,), daemon=True).start()
            return self
        raise OSError("no port free for both UDP and TCP on 127.0.0.1")

    def stop(self) -> None:
        self.stopping.set()
        for server in self._servers:
            server.server.shutdown()
            server.server.server_close()
        self._servers = []

    def __enter__(self) -> DnsServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()

    def add_ptr(self, address: str, name: str) -> None:
        """A PTR record for the address (its in-addr.arpa or ip6.arpa name) pointing at the name."""
        self._add(ipaddress.ip_address(address).reverse_pointer, "PTR", _absolute(name))

    def add_a(self, name: str, address: str) -> None:
        self._add(name, "A", str(ipaddress.IPv4Address(address)))

    def add_aaaa(self, name: str, address: str) -> None:
        self._add(name, "AAAA", str(ipaddress.IPv6Address(address)))

    def add_mx(self, name: str, preference: int, exchange: str) -> None:
        """An MX record; ``add_mx(name, 0, ".")`` is RFC 7505's null MX (the domain takes no mail)."""
        self._add(name, "MX", f"{preference} {_absolute(exchange) if exchange != '.' else '.'}")

    def add_txt(self, name: str, text: str) -> None:
        self._add(name, "TXT", '"' + text.replace('"', '\\"') + '"')

    def set_ttl(self, name: str, ttl: int) -> None:
        """The TTL of the name's records (else the server's)."""
        with self.lock:
            self.ttls[_absolute(name)] = ttl

    def add_cname(self, name: str, target: str) -> None:
        with self.lock:
            self.cnames[_absolute(name)] = _absolute(target)

    def delay(self, seconds: float) -> None:
        """Answer every question this many seconds late."""
        with self.lock:
            self.delay_seconds = seconds

    def refuse(self) -> None:
        """Answer every question SERVFAIL, as a resolver that cannot reach the authorities does."""
        with self.lock:
            self.refusing = True

    def holds(self, name: str) -> bool:
        """Whether the server has any record for the (absolute) name: NOERROR, not NXDOMAIN."""
        return name in self.cnames or any(owner == name for owner, _ in self.records)

    def _add(self, name: str, qtype: str, value: str) -> None:
        with self.lock:
            self.records.setdefault((_absolute(name), qtype), []).append(value)
