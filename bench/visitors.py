"""Visitor identification (D33) over real HTTP: `POST /api/v1/visitors/identify` latency by method, and
the time from a snippet's beacon (`POST /v/collect`) to the `visitor.identified` webhook's arrival at a
local receiver. `vpx serve` runs in a subprocess on a fresh database (SQLite by default, or PostgreSQL)
with the worker in its process, a DNS server (dnslib, the tests' one) in another, and the ranges
imported with the real `vpx visitors import-ranges` first:

    .venv/bin/python -m bench.visitors [--database sqlite|postgresql] [--contacts 10000] [--ranges 100000]
        [--requests 2000] [--beacons 300] [--rate 10]

1. Identify, one request at a time, each followed by GET /healthz (the framework's ceiling on this
   machine), rotating through five kinds of visit: an address inside an imported business range
   (ip_range: the in-memory index); an address seen for the first time whose PTR names a business's
   host and whose A/AAAA confirms it (reverse_dns, cold: two DNS queries); the same again (reverse_dns,
   cached); an address with no PTR (unknown, cold: one NXDOMAIN); a crawler's user agent (bot).
   Goal: p99 <= 20 ms.
2. Beacons at --rate per second, each from a different business's range (the address in
   X-Forwarded-For from a trusted proxy, as behind a reverse proxy): the seconds from sending the
   beacon to the webhook's first arrival. Goal: p99 <= 1 s.

The business ranges are IPv6 /64s under 2001:db8::/32 (RFC 3849), so that a million fit in the
documentation space; reverse-DNS and unknown visitors use other /48s there. Memory per million
ranges is bench.visitors_lookup's figure (the index alone, measured with tracemalloc).
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from bench.common import fresh_database, percentile

DB_NAME = "vpx_bench_visitors"
CHROME = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
BOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
RANGES = ipaddress.IPv6Network("2001:db8:8000::/33")  # room for 2**31 /64s
REVERSE = ipaddress.IPv6Network("2001:db8:2::/48")
UNKNOWN = ipaddress.IPv6Network("2001:db8:3::/48")
KINDS = ("ip_range", "reverse_dns cold", "reverse_dns cached", "unknown cold", "bot")
VPX = str(Path(sys.executable).with_name("vpx"))


def range_network(n: int) -> ipaddress.IPv6Network:
    return ipaddress.IPv6Network((int(RANGES.network_address) + (n << 64), 64))


def nth(network: ipaddress.IPv6Network, n: int) -> str:
    return str(ipaddress.IPv6Address(int(network.network_address) + n + 1))


# --- The DNS server, in a process of its own so that it takes no GIL from the bench's client ---


def dns_main(records_path: str) -> None:
    from tests.visitors.dns_server import DnsServer

    server = DnsServer(ttl=3600).start()
    for address, host in json.loads(Path(records_path).read_text()):
        server.add_ptr(address, host)
        server.add_aaaa(host, address)
    print(server.port, flush=True)
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    server.stop()


def start_dns(records: list[tuple[str, str]], folder: Path) -> tuple[subprocess.Popen[str], int]:
    path = folder / "dns.json"
    path.write_text(json.dumps(records))
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.visitors", "--dns-records", str(path)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert process.stdout is not None
    return process, int(process.stdout.readline())


# --- The webhook receiver: notes when each beacon's URL first arrives ---


class Receiver:
    """HTTP/1.1 keep-alive on 127.0.0.1 in a thread of its own; answers 200 and notes the first arrival
    of each `data.url` (perf_counter)."""

    def __init__(self) -> None:
        self.first_seen: dict[str, float] = {}
        self.port = 0
        self.ready = threading.Event()
        self.loop: asyncio.AbstractEventLoop | None = None
        threading.Thread(target=self._run, daemon=True).start()
        self.ready.wait(10)

    def _run(self) -> None:
        self.loop = asyncio.new_event_loop()
        server = self.loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self.ready.set()
        self.loop.run_forever()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                body = await reader.readexactly(length) if length else b"{}"
                arrived = time.perf_counter()
                url = json.loads(body).get("data", {}).get("url")
                if url:
                    self.first_seen.setdefault(url, arrived)
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()


# --- Setting up ---


def cli(env: dict[str, str], *args: str) -> dict[str, Any]:
    done = subprocess.run([VPX, *args, "--json"], env={**os.environ, **env}, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"vpx {' '.join(args)} failed: {done.stdout}{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


async def domains(url: str, count: int) -> list[str]:
    from sqlalchemy import select

    from vpx.config import Settings
    from vpx.db import Database
    from vpx.models import Contact

    database = Database(Settings(database_url=url), pool=False)
    try:
        async with database.read_sessions() as session:
            found = await session.scalars(
                select(Contact.website_domain)
                .where(Contact.website_domain.is_not(None))
                .distinct()
                .order_by(Contact.website_domain)
                .limit(count)
            )
            return [d for d in found if d]
    finally:
        await database.dispose()


def serve(env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [VPX, "serve", "--port", str(port)],
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            pass
        if process.poll() is not None:
            break
        time.sleep(0.2)
    stop(process)
    raise SystemExit("vpx serve did not start")


def stop(process: subprocess.Popen[Any]) -> None:
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:  # not a group leader: the DNS server
            process.terminate()
    process.wait(timeout=30)


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- Measuring ---


def stats(values: list[float]) -> str:
    if not values:
        return "n=0"
    return (
        f"n={len(values)} p50={percentile(values, 50) * 1000:.2f} p95={percentile(values, 95) * 1000:.2f} "
        f"p99={percentile(values, 99) * 1000:.2f} max={max(values) * 1000:.2f} "
        f"mean={statistics.fmean(values) * 1000:.2f} ms"
    )


async def identify_part(
    client: httpx.AsyncClient, site_id: str, requests: int, businesses: int, warmup: int
) -> dict[str, list[float]]:
    timings: dict[str, list[float]] = {kind: [] for kind in (*KINDS, "all", "healthz")}
    expected = {
        "ip_range": (True, "ip_range"),
        "reverse_dns cold": (True, "reverse_dns"),
        "reverse_dns cached": (True, "reverse_dns"),
        "unknown cold": (False, "unknown"),
        "bot": (False, "bot"),
    }
    for n in range(requests + warmup * len(KINDS)):
        kind, round_ = KINDS[n % len(KINDS)], n // len(KINDS)
        agent = CHROME
        if kind == "ip_range":
            ip = nth(range_network(round_ % businesses), round_)
        elif kind == "reverse_dns cold":
            ip = nth(REVERSE, round_)
        elif kind == "reverse_dns cached":
            ip = nth(REVERSE, round_)  # the address the cold request just resolved
        elif kind == "unknown cold":
            ip = nth(UNKNOWN, round_)
        else:
            ip, agent = nth(UNKNOWN, 1_000_000 + round_), BOT
        body = {"site_id": site_id, "ip": ip, "url": f"https://seller.example/p/{n}", "user_agent": agent}
        started = time.perf_counter()
        response = await client.post("/api/v1/visitors/identify", json=body)
        elapsed = time.perf_counter() - started
        if response.status_code != 200:
            raise SystemExit(f"identify answered {response.status_code}: {response.text}")
        found = response.json()
        got = (found["identified"], found.get("method") or found.get("reason"))
        if got != expected[kind]:
            raise SystemExit(f"{kind}: expected {expected[kind]}, got {found}")
        started = time.perf_counter()
        health = await client.get("/healthz")
        health_elapsed = time.perf_counter() - started
        assert health.status_code == 200
        if round_ >= warmup:
            timings[kind].append(elapsed)
            timings["all"].append(elapsed)
            timings["healthz"].append(health_elapsed)
    return timings


async def beacon_part(
    port: int, site_key: str, receiver: Receiver, beacons: int, rate: float, first_business: int
) -> tuple[list[float], int]:
    """Beacons at a steady rate, each from a different business (so each may alert: D33's 30 minutes
    are per business and site); seconds from sending to the webhook's first arrival."""
    sent: dict[str, float] = {}
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
        started = time.monotonic()
        for n in range(beacons):
            await asyncio.sleep(max(0.0, started + n / rate - time.monotonic()))
            url = f"https://seller.example/beacon/{n}"
            address = nth(range_network(first_business + n), 7)
            body = json.dumps({"site_key": site_key, "url": url, "title": "Pricing"})
            headers = {"Content-Type": "text/plain;charset=UTF-8", "User-Agent": CHROME, "X-Forwarded-For": address}
            sent[url] = time.perf_counter()
            response = await client.post("/v/collect", content=body, headers=headers)
            if response.status_code != 204:
                raise SystemExit(f"collect answered {response.status_code}: {response.text}")
        deadline = time.monotonic() + 30
        while any(url not in receiver.first_seen for url in sent) and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
    latencies = [receiver.first_seen[url] - at for url, at in sent.items() if url in receiver.first_seen]
    missing = [url for url in sent if url not in receiver.first_seen]
    if missing:
        print(f"   not arrived: {', '.join(missing[:10])}")
    return latencies, len(missing)


async def run(args: argparse.Namespace, url: str) -> None:
    from vpx.secrets import generate_key

    folder = Path(tempfile.mkdtemp(prefix="vpx-bench-visitors-"))
    env = {
        "VPX_DATABASE_URL": url,
        "VPX_SECRET_KEYS": generate_key(),
        "VPX_LOG_LEVEL": "WARNING",
        "VPX_RATE_LIMIT": "100000000/minute",
        "VPX_WEBHOOK_ALLOW_PRIVATE": "1",
        "VPX_TRUSTED_PROXIES": "127.0.0.1",
        "VPX_WORKER_IN_PROCESS": "true",
        "VPX_VISITOR_SITE_RATE_LIMIT": "100000/minute",
    }
    demo = cli(env, "demo", "--count", str(args.contacts))
    key = demo["keys"]["full"]
    names = await domains(url, args.contacts)
    rounds = args.requests // len(KINDS) + args.warmup + 1
    if len(names) < 7 * rounds + args.beacons:
        raise SystemExit(f"--contacts {args.contacts} is too few for distinct businesses in both parts")
    print(f"catalogue: {demo['contacts']} contacts, {len(names)} distinct website domains; {args.database}")

    # Business ranges: /64s mapped by domain (businesses repeat when there are fewer domains than ranges).
    csv_path = folder / "offices.csv"
    with csv_path.open("w") as out:
        out.write("network,domain\n")
        for n in range(args.ranges):
            out.write(f"{range_network(n)},{names[n % len(names)]}\n")
        # The beacons' businesses come from the other end of the list: none of them was identified in
        # the first part, so each beacon may alert (at most one alert per business and site in 30 min).
        for n in range(args.beacons):
            out.write(f"{range_network(args.ranges + n)},{names[len(names) - 1 - n]}\n")
    started = time.perf_counter()
    imported = cli(env, "visitors", "import-ranges", str(csv_path), "--format", "csv")
    print(f"import-ranges: {imported['ranges']} ranges in {time.perf_counter() - started:.1f} s (the CLI, whole)")

    # Reverse DNS: a host under a business's domain for each address the identify part will use.
    records = [(nth(REVERSE, n), f"gw{n}.{names[(n * 7) % len(names)]}") for n in range(rounds)]
    dns, dns_port = start_dns(records, folder)
    env["VPX_DNS_SERVERS"] = f"127.0.0.1:{dns_port}"
    port = free_port()
    receiver = Receiver()
    server = serve(env, port)
    try:
        headers = {"X-API-Key": key}
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=30) as client:
            site = (await client.post("/api/v1/visitors/sites", json={"domain": "seller.example"})).json()
            hook = await client.post(
                "/api/v1/webhooks",
                json={"url": f"http://127.0.0.1:{receiver.port}/hook", "events": ["visitor.identified"]},
            )
            assert hook.status_code == 201, hook.text
            timings = await identify_part(client, site["id"], args.requests, args.ranges, args.warmup)
        print(f"\n1. POST /api/v1/visitors/identify, one at a time, {args.ranges:,} ranges imported (ms):")
        for kind in (*KINDS, "all", "healthz"):
            print(f"   {kind:<20} {stats(timings[kind])}")
        p99 = percentile(timings["all"], 99)
        print(f"   goal p99 <= 20 ms: {p99 * 1000:.2f} ms, {'met' if p99 <= 0.020 else 'not met'}")

        latencies, missing = await beacon_part(
            port, site["site_key"], receiver, args.beacons, args.rate, first_business=args.ranges
        )
        print(f"\n2. Beacon to visitor.identified webhook, {args.beacons} beacons at {args.rate:g}/s (ms):")
        print(f"   {stats(latencies)}; not arrived within 30 s: {missing}")
        p99 = percentile(latencies, 99) if latencies else float("inf")
        print(f"   goal p99 <= 1 s: {p99 * 1000:.0f} ms, {'met' if p99 <= 1.0 and not missing else 'not met'}")
    finally:
        stop(server)
        stop(dns)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--contacts", type=int, default=10_000)
    parser.add_argument("--ranges", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=2_000)
    parser.add_argument("--warmup", type=int, default=20, help="rounds of the five kinds not counted")
    parser.add_argument("--beacons", type=int, default=300)
    parser.add_argument("--rate", type=float, default=10.0)
    parser.add_argument("--dns-records", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.dns_records:
        dns_main(args.dns_records)
        return
    asyncio.run(run(args, fresh_database(args.database, DB_NAME)))


if __name__ == "__main__":
    main()
