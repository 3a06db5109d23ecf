"""The production topology (deploy/compose.yaml) from local processes: Debian's nginx in front of 3
`vpx serve --no-worker` API processes on PostgreSQL and Redis, and 2 `vpx worker` processes.

    .venv/bin/python -m bench.cluster up [--api 3] [--workers 2] [--port 8080]  # a fresh database, until Ctrl-C
    .venv/bin/python -m bench.cluster test-env      # the same with the settings tests/cluster runs it with
    .venv/bin/python -m bench.cluster bench [--rounds 2] [--duration 15]  # 1 API process vs 3 through nginx, wrk
    .venv/bin/python -m bench.cluster bench --replica [--catalogue 100000]  # search without and with a replica
    .venv/bin/python -m bench.cluster check-deploy  # deploy/ checked as far as this machine can

nginx runs deploy/nginx.conf itself, rewritten only where a container differs from this machine (listen
address, upstream servers, file paths), from a temp dir as a child process on a free port: never the
system service. It is installed with apt-get when missing (as root). Its connections to the API processes
leave from 127.0.0.2, the one address the processes trust for X-Forwarded-For (D6).
PostgreSQL: VPX_BENCH_POSTGRES_URL (bench/common.py); Redis: VPX_CLUSTER_REDIS_URL.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx
from cryptography.fernet import Fernet
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from bench.common import POSTGRES_ADMIN, ROOT, fresh_database

VPX = str(Path(sys.executable).with_name("vpx"))
DEPLOY = ROOT / "deploy"
REDIS_URL = os.environ.get("VPX_CLUSTER_REDIS_URL", "redis://127.0.0.1:6379/0")
# nginx connects to the API processes from this address; they trust it, and nothing else, as a proxy.
PROXY_SOURCE = "127.0.0.2"
STARTUP_LIMIT_S = 60.0
# Connections per process: a pool of this size, as many again under load, and one LISTEN. 3 API
# processes and 2 workers stay within PostgreSQL's default 100 with room for other clients
# (3 × 17 + 2 × 9 = 69).
API_POOL_SIZE, WORKER_POOL_SIZE = 8, 4
# What tests/cluster runs the cluster with (and `test-env` starts): private webhook targets, short
# leases so that a killed worker's claims come back within seconds, a per-key budget the tests can spend.
TEST_SETTINGS = {
    "rate_limit": "240/hour",  # an hour: no window ends while a test spends it
    "webhook_allow_private": "1",
    "webhook_retry_schedule": "0.2,0.2,0.2",
    "webhook_retry_jitter": "0",
    "worker_lease_seconds": "2",
    "worker_poll_seconds": "0.1",
    "worker_batch_size": "10",
    "stream_keepalive_seconds": "1",
    # Small pools: the test suite runs other files' tests on the same PostgreSQL meanwhile.
    "pool_size": "5",
}
TEST_WORKER_IN_FLIGHT = 20


class ClusterUnavailable(RuntimeError):
    """What the cluster needs is missing (PostgreSQL, Redis or nginx); the message says which."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _nginx_path() -> str | None:
    return shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)


def ensure_nginx() -> str:
    """nginx's path; Debian's nginx-light (else nginx) installed first when missing and we are root."""
    found = _nginx_path()
    if found:
        return found
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise ClusterUnavailable("nginx is not installed (as root: apt-get install nginx-light)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for step in ("install", "update", "install"):  # the package lists may be missing or stale
        for package in ("nginx-light", "nginx") if step == "install" else ("",):
            command = ["apt-get", "-qq", step] + (["-y", "--no-install-recommends", package] if package else [])
            subprocess.run(command, env=env, capture_output=True, timeout=600, check=False)
            found = _nginx_path()
            if found:
                return found
    raise ClusterUnavailable("nginx is not installed, and apt-get could install neither nginx-light nor nginx")


def services_missing(redis_url: str = REDIS_URL) -> str | None:
    """Why PostgreSQL or Redis cannot be used, or None."""

    async def postgres() -> str | None:
        engine = create_async_engine(POSTGRES_ADMIN, isolation_level="AUTOCOMMIT")
        try:
            async with engine.connect() as conn:
                await conn.execute(text("SELECT 1"))
            return None
        except Exception as exc:  # any failure: the cluster cannot run, say why
            return f"PostgreSQL not reachable at {POSTGRES_ADMIN}: {type(exc).__name__}: {exc}"[:300]
        finally:
            await engine.dispose()

    reason = asyncio.run(postgres())
    if reason:
        return reason
    import redis

    try:
        redis.Redis.from_url(redis_url, socket_timeout=2).ping()
    except redis.RedisError as exc:
        return f"Redis not reachable at {redis_url}: {exc}"
    return None


def fresh_cluster_database() -> str:
    """A new PostgreSQL database, migrated once here: API processes that start together on an empty
    database race in their own start-up migrations."""
    return fresh_database("postgresql", f"vpx_cluster_{uuid.uuid4().hex[:10]}")


def drop_database(url: str) -> None:
    async def drop() -> None:
        engine = create_async_engine(POSTGRES_ADMIN, isolation_level="AUTOCOMMIT")
        async with engine.connect() as conn:
            await conn.execute(text(f'DROP DATABASE IF EXISTS "{url.rsplit("/", 1)[1]}" WITH (FORCE)'))
        await engine.dispose()

    asyncio.run(drop())


def nginx_conf(template: str, *, port: int, upstreams: list[int], workdir: Path, upstream_header: bool) -> str:
    """deploy/nginx.conf for this machine: listening on 127.0.0.1:port, the given API ports as the
    upstream, its files in ``workdir``, no Docker DNS; every directive that shapes requests as shipped."""
    servers = "\n        ".join(f"server 127.0.0.1:{p};" for p in upstreams)
    local = [f"proxy_bind {PROXY_SOURCE};"]
    if upstream_header:  # which API process answered, for the tests
        local.append("add_header X-Vpx-Upstream $upstream_addr always;")
    kinds = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    temp = "".join(f"    {kind}_temp_path {workdir}/{kind};\n" for kind in kinds)
    replacements = [
        (r"(?m)^user .*;\n", ""),
        (r"(?m)^worker_processes .*;", "worker_processes 1;"),
        (r"(?m)^pid .*;", f"pid {workdir}/nginx.pid;"),
        (r"(?m)^error_log .*;", f"error_log {workdir}/nginx-error.log warn;"),
        (r"(?m)^([ \t]*)access_log .*;", r"\1access_log off;"),
        (r"(?m)^[ \t]*resolver .*;\n", ""),
        (r"server api:8000[^;]*;", servers),
        (r"(?m)^([ \t]*)listen 8080;", rf"\1listen 127.0.0.1:{port} backlog=4096;"),
        (r"(?m)^([ \t]*)# -- per-server settings --", "".join(rf"\1{line}\n" for line in local).rstrip("\n")),
        (r"(?m)^http \{\n", "http {\n" + temp),
    ]
    conf = template
    for pattern, replacement in replacements:
        conf, count = re.subn(pattern, replacement, conf)
        if count != 1:
            raise ValueError(f"deploy/nginx.conf: {count} lines match {pattern!r}, expected one")
    return conf


class Cluster:
    """nginx, ``api`` API processes and ``workers`` worker processes on one database. A context
    manager: everything is stopped at the end (and the database dropped when ``drop`` is set)."""

    def __init__(
        self,
        database_url: str,
        *,
        api: int = 3,
        workers: int = 2,
        settings: Mapping[str, str] | None = None,
        worker_in_flight: int = 200,
        port: int | None = None,
        redis_url: str = REDIS_URL,
        upstream_header: bool = False,
        drop: bool = False,
        keep_logs: bool = False,
    ) -> None:
        self.database_url = database_url
        self.admin_token = secrets.token_urlsafe(24)
        self.workdir = Path(tempfile.mkdtemp(prefix="vpx-cluster-"))
        self.workdir.chmod(0o755)  # nginx's workers (nobody, when root starts it) write its temp dirs
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.api_ports = [free_port() for _ in range(api)]
        self.api_urls = [f"http://127.0.0.1:{p}" for p in self.api_ports]
        self.worker_count = workers
        self.worker_in_flight = worker_in_flight
        self.upstream_header = upstream_header
        self.drop = drop
        self.keep_logs = keep_logs
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("VPX_", "PROMETHEUS_"))}
        self.env.update(
            VPX_DATABASE_URL=database_url,
            VPX_REDIS_URL=redis_url,
            VPX_SECRET_KEYS=Fernet.generate_key().decode(),  # the same keys in every process
            VPX_ADMIN_TOKEN=self.admin_token,
            VPX_TRUSTED_PROXIES=f"{PROXY_SOURCE}/32",
            VPX_DATA_DIR=str(self.workdir / "data"),
            VPX_WORKER_IN_PROCESS="false",
            VPX_LOG_LEVEL="WARNING",
            VPX_POOL_SIZE=str(API_POOL_SIZE),
        )
        self.env.update({f"VPX_{name.upper()}": value for name, value in (settings or {}).items()})
        self.replica_urls = [u for u in self.env.get("VPX_DATABASE_REPLICA_URLS", "").split(",") if u.strip()]
        self.api: list[subprocess.Popen[bytes]] = []
        self.workers: list[subprocess.Popen[bytes] | None] = [None] * workers
        self.worker_ids = [""] * workers
        self.nginx: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Cluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    def _spawn(self, name: str, args: list[str], env: Mapping[str, str]) -> subprocess.Popen[bytes]:
        with (self.workdir / f"{name}.log").open("ab") as log:
            command = [VPX, *args, "--json"]
            return subprocess.Popen(command, env=dict(env), stdout=log, stderr=log, start_new_session=True)

    def log(self, name: str) -> str:
        """The end of a process's output (``api-0``, ``worker-1``, ``nginx-error``…)."""
        path = self.workdir / f"{name}.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def start(self) -> None:
        nginx = ensure_nginx()
        for n, port in enumerate(self.api_ports):
            self.api.append(self._spawn(f"api-{n}", ["serve", "--no-worker", "--port", str(port)], self.env))
        for n in range(self.worker_count):
            self.start_worker(n)
        for n, url in enumerate(self.api_urls):
            self._wait(f"{url}/healthz", self.api[n], f"api-{n}")
        conf = self.workdir / "nginx.conf"
        conf.write_text(
            nginx_conf(
                (DEPLOY / "nginx.conf").read_text(), port=self.port, upstreams=self.api_ports,
                workdir=self.workdir, upstream_header=self.upstream_header,
            )
        )  # fmt: skip
        with (self.workdir / "nginx.log").open("ab") as log:
            command = [nginx, "-p", str(self.workdir), "-c", str(conf), "-g", "daemon off;"]
            self.nginx = subprocess.Popen(command, stdout=log, stderr=log, start_new_session=True)
        self._wait(f"{self.url}/healthz", self.nginx, "nginx-error")
        deadline = time.monotonic() + STARTUP_LIMIT_S
        while self.live_workers() < self.worker_count:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the workers did not beat within {STARTUP_LIMIT_S} s: {self.log('worker-0')}")
            time.sleep(0.2)

    def _wait(self, url: str, process: subprocess.Popen[bytes], name: str) -> None:
        deadline = time.monotonic() + STARTUP_LIMIT_S
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"{name} exited with {process.returncode}: {self.log(name)}")
            try:
                if httpx.get(url, timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url} did not answer within {STARTUP_LIMIT_S} s: {self.log(name)}")
            time.sleep(0.1)

    def live_workers(self) -> int:
        """Workers that beat in the last 30 s, as /readyz counts them."""
        try:
            body = httpx.get(f"{self.api_urls[0]}/readyz", timeout=5).json()
        except (httpx.HTTPError, ValueError):
            return 0
        return int(body.get("live_workers", 0))

    def start_worker(self, n: int) -> str:
        """(Re)starts worker ``n`` under a new id; returns the id (as in leases and heartbeats)."""
        worker_id = f"cluster-worker-{n}-{uuid.uuid4().hex[:6]}"
        env = {**self.env, "VPX_POOL_SIZE": str(WORKER_POOL_SIZE)}
        args = ["worker", "--id", worker_id, "--in-flight", str(self.worker_in_flight)]
        self.workers[n] = self._spawn(f"worker-{n}", args, env)
        self.worker_ids[n] = worker_id
        return worker_id

    def kill_worker(self, n: int) -> None:
        """SIGKILL: no shutdown; the worker's leases stay until they expire."""
        process = self.workers[n]
        assert process is not None, f"worker {n} is not running"
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        self.workers[n] = None

    def stop(self) -> None:
        """nginx first (no new requests), then the API processes, then the workers (each finishes the
        round in hand); SIGKILL for any still running 20 s after SIGTERM."""
        if self.nginx is not None and self.nginx.poll() is None:
            self.nginx.send_signal(signal.SIGQUIT)  # nginx's graceful stop
            _wait_or_kill(self.nginx)
        self.nginx = None
        running = [p for p in [*self.api, *self.workers] if p is not None and p.poll() is None]
        for process in running:
            process.terminate()
        for process in running:
            _wait_or_kill(process)
        self.api, self.workers = [], [None] * self.worker_count
        if self.drop:
            self.drop = False
            drop_database(self.database_url)
        if not self.keep_logs:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def describe(self) -> dict[str, object]:
        return {
            "proxy": self.url,
            "api": self.api_urls,
            "workers": self.worker_ids,
            "database_url": self.database_url,
            "admin_token": self.admin_token,
            "logs": str(self.workdir),
            "settings": {k: v for k, v in sorted(self.env.items()) if k.startswith("VPX_") and "SECRET" not in k},
        }


def _wait_or_kill(process: subprocess.Popen[bytes]) -> None:
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def start_test_cluster() -> Cluster:
    """A started cluster as tests/cluster runs it: a fresh database (dropped at stop), the tests'
    settings, and nginx naming the API process that answered in ``X-Vpx-Upstream``."""
    cluster = Cluster(
        fresh_cluster_database(),
        settings=TEST_SETTINGS,
        worker_in_flight=TEST_WORKER_IN_FLIGHT,
        upstream_header=True,
        drop=True,
    )
    return cluster.__enter__()


# --- deploy/ as far as this machine can check it (no Docker engine here) ---------------------------


def deploy_problems() -> tuple[list[str], list[str], list[str]]:
    """(problems, what was checked, what could not be) for deploy/: the compose file's shape, the
    Dockerfile's required parts, and `nginx -t` on deploy/nginx.conf as this module runs it."""
    import yaml  # type: ignore[import-untyped]

    problems, checked, unchecked = [], [], ["docker build, docker compose up: no Docker engine on this machine"]
    raw = (DEPLOY / "compose.yaml").read_text()
    services = yaml.safe_load(raw).get("services", {})  # YAML merge keys (<<: *vpx) resolved
    checked.append("compose.yaml parses as YAML")
    for name in ("postgres", "postgres-replica", "redis", "migrate", "api", "worker", "proxy"):
        if name not in services:
            problems.append(f"compose.yaml: no service {name!r}")
    api, worker = services.get("api", {}), services.get("worker", {})
    if "--no-worker" not in api.get("command", []) or worker.get("command", [None])[0] != "worker":
        problems.append("compose.yaml: the api service must run `vpx serve --no-worker`, the worker `vpx worker`")
    for name, service in services.items():
        if name not in ("migrate", "api") and "healthcheck" not in service:  # api: the image's HEALTHCHECK
            problems.append(f"compose.yaml: service {name!r} has no healthcheck")
    subnets = [c["subnet"] for c in yaml.safe_load(raw)["networks"]["front"]["ipam"]["config"]]
    for name in ("api", "worker"):
        env = services.get(name, {}).get("environment", {})
        if not env.get("VPX_REDIS_URL") or env.get("VPX_TRUSTED_PROXIES") not in subnets:
            problems.append(f"compose.yaml: {name} needs VPX_REDIS_URL and VPX_TRUSTED_PROXIES = the proxy's network")
    for variable in ("VPX_SECRET_KEYS", "VPX_ADMIN_TOKEN"):
        if not re.search(rf"\${{{variable}:\?", raw):
            problems.append(f"compose.yaml: {variable} must be required from the environment (${{{variable}:?…}})")
    checked.append("compose.yaml: services and commands, health checks, Redis, trusted proxies, required secrets")
    problems += _replica_problems(services)
    checked.append("compose.yaml: the streaming replica (pg_basebackup -R, max_connections, pg_hba, the API's URLs)")
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    for pattern, what in [
        (r"(?mi)^FROM .+ AS builder$", "a builder stage"),
        (r"(?mi)^USER (?!root)\S+", "a non-root USER"),
        (r"(?mi)^HEALTHCHECK (?:.*\\\n)*.*/readyz", "a HEALTHCHECK on /readyz"),
        (r'(?mi)^ENTRYPOINT \["vpx"\]', 'ENTRYPOINT ["vpx"]'),
        (r"(?mi)^CMD .*serve.*0\.0\.0\.0", "CMD serve --host 0.0.0.0"),
    ]:
        if not re.search(pattern, dockerfile):
            problems.append(f"Dockerfile: no {what}")
    checked.append("Dockerfile: builder stage, non-root user, HEALTHCHECK on /readyz, entrypoint")
    nginx = _nginx_path()
    if nginx is None:
        unchecked.append("deploy/nginx.conf: nginx is not installed")
        return problems, checked, unchecked
    with tempfile.TemporaryDirectory() as workdir:
        conf = Path(workdir) / "nginx.conf"
        template = (DEPLOY / "nginx.conf").read_text()
        local = nginx_conf(
            template, port=free_port(), upstreams=[free_port()], workdir=conf.parent, upstream_header=False
        )
        conf.write_text(local)
        done = subprocess.run([nginx, "-t", "-p", workdir, "-c", str(conf)], capture_output=True, text=True)
        if done.returncode != 0:
            problems.append(f"nginx -t: {done.stderr.strip()}")
        version = subprocess.run([nginx, "-v"], capture_output=True, text=True).stderr.strip()
    checked.append(f"nginx -t on deploy/nginx.conf as run locally ({version})")
    unchecked.append("nginx.conf's `resolve` (nginx 1.27.3+) and Docker's DNS: left out locally")
    return problems, checked, unchecked


def _replica_problems(services: dict[str, Any]) -> list[str]:
    """The read replica of compose.yaml: copied from the primary as a standby, allowed to by the
    primary's pg_hba.conf, at least the primary's max_connections, and named by the API's settings."""
    from vpx.config import Settings

    problems = []
    primary = " ".join(str(part) for part in services.get("postgres", {}).get("command", []))
    replica = " ".join(str(part) for part in services.get("postgres-replica", {}).get("command", []))
    if not re.search(r"pg_basebackup\b.*-h postgres\b.*-R\b", replica):
        problems.append("compose.yaml: postgres-replica must copy the primary with pg_basebackup -h postgres … -R")
    limits = [re.findall(r"max_connections=(\S+)", command) for command in (primary, replica)]
    if not limits[0] or limits[0] != limits[1]:
        problems.append("compose.yaml: postgres-replica needs the primary's max_connections (else it stops)")
    hba = re.search(r"hba_file=(\S+)", primary)
    mounts = [str(volume) for volume in services.get("postgres", {}).get("volumes", [])]
    mounted = next((m.split(":")[0] for m in mounts if hba and f":{hba.group(1)}" in m), None)
    rules = (DEPLOY / mounted).read_text() if mounted and (DEPLOY / mounted).is_file() else ""
    if not re.search(r"(?m)^host\s+replication\s", rules):
        problems.append("compose.yaml: the primary's pg_hba.conf (hba_file, mounted) must allow host replication")
    configured = str(services.get("api", {}).get("environment", {}).get("VPX_DATABASE_REPLICA_URLS", ""))
    urls = re.sub(r"\$\{[^}]*\}", "secret", configured)  # compose's variables, as a password would be
    try:
        found = Settings(database_url="postgresql+asyncpg://vpx@postgres/vpx", database_replica_urls=urls)
    except ValueError:
        found = None
    if found is None or not found.database_replica_urls:
        problems.append("compose.yaml: api needs VPX_DATABASE_REPLICA_URLS, postgresql+asyncpg:// URLs")
    elif not all("@postgres-replica:" in url for url in found.database_replica_urls):
        problems.append("compose.yaml: VPX_DATABASE_REPLICA_URLS must name the postgres-replica service(s)")
    return problems


def check_deploy() -> int:
    problems, checked, unchecked = deploy_problems()
    for label, lines in (("checked", checked), ("not checked", unchecked), ("PROBLEM", problems)):
        for line in lines:
            print(f"{label}: {line}")
    return 1 if problems else 0


# --- the load: 1 API process vs 3, through the same nginx ------------------------------------------

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
SCENARIOS = {  # name: (wrk script in bench/wrk, what it measures)
    "ceiling": ("ceiling.lua", "GET /healthz through nginx"),
    "search": ("search.lua", "bench/http_load.py's 40 searches × 11 state choices, warm"),
    "reveal": ("reveal.lua", "reveals of random contacts over the bench accounts"),
}


def _cpu_ticks(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0
    return int(fields[11]) + int(fields[12])  # utime, stime


def _nginx_pids(cluster: Cluster) -> list[int]:
    """nginx's master and its worker (whose parent is the master)."""
    master = cluster.nginx.pid if cluster.nginx else -1
    found = [master]
    for entry in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(entry.read_text().rsplit(")", 1)[1].split()[1]) == master:
                found.append(int(entry.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def _backends(database_url: str) -> list[int]:
    """The PostgreSQL server processes serving the cluster's database (its connections)."""

    async def query() -> list[int]:
        engine = create_async_engine(database_url, poolclass=NullPool)
        async with engine.connect() as conn:
            sql = "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
            pids = list((await conn.scalars(text(sql))).all())
        await engine.dispose()
        return [int(p) for p in pids]

    return asyncio.run(query())


def cpu_snapshot(cluster: Cluster) -> dict[str, dict[int, int]]:
    """CPU ticks so far per process of each part: the API processes, the workers, nginx, the
    database's PostgreSQL backends, the finished children (wrk), and the machine (busy)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return {
        "api": {p.pid: _cpu_ticks(p.pid) for p in cluster.api},
        "workers": {p.pid: _cpu_ticks(p.pid) for p in cluster.workers if p is not None},
        "nginx": {p: _cpu_ticks(p) for p in _nginx_pids(cluster)},
        "pg": {p: _cpu_ticks(p) for p in _backends(cluster.database_url)},
        "pg_replica": {p: _cpu_ticks(p) for url in cluster.replica_urls for p in _backends(url)},
        "wrk": {0: round((children.ru_utime + children.ru_stime) * CLOCK_TICKS)},
        "machine": {0: sum(cpu) - cpu[3] - cpu[4]},  # all but idle and iowait
    }


def measure(
    cluster: Cluster, port: int, scenario: str, args: argparse.Namespace, env: dict[str, str]
) -> dict[str, float]:
    """One wrk run, with the cores each part used meanwhile (a process that ended during the run is
    left out: pooled connections keep the backends alive)."""
    from bench.http_load import run_wrk

    before, started = cpu_snapshot(cluster), time.monotonic()
    figures = run_wrk(port, SCENARIOS[scenario][0], args.duration, args.connections, env)
    elapsed = time.monotonic() - started
    after = cpu_snapshot(cluster)
    for part, ticks in after.items():
        used = sum(t - before[part].get(pid, 0) for pid, t in ticks.items()) / CLOCK_TICKS
        figures[f"cores_{part}"] = used / elapsed
    # What the service costs a request (API processes, their PostgreSQL backends, nginx), in CPU ms.
    served = figures["cores_api"] + figures["cores_pg"] + figures["cores_pg_replica"] + figures["cores_nginx"]
    figures["cpu_ms"] = served / figures["rps"] * 1000 if figures["rps"] else float("nan")
    return figures


def bench_catalogue(count: int) -> str:
    """bench/catalogue_build.py's PostgreSQL catalogue, built first when it does not exist yet."""
    from bench.catalogue_build import NAME, build
    from bench.common import postgres_url

    async def exists() -> bool:
        engine = create_async_engine(POSTGRES_ADMIN, isolation_level="AUTOCOMMIT")
        async with engine.connect() as conn:
            found = await conn.scalar(text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": NAME})
        await engine.dispose()
        return bool(found)

    if not asyncio.run(exists()):
        print(f"building the {count:,}-contact catalogue {NAME} first (bench/catalogue_build.py)", flush=True)
        asyncio.run(build(fresh_database("postgresql", NAME), count, 42))
    return postgres_url(NAME)


def add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--duration", type=int, default=15, help="seconds per scenario")
    parser.add_argument("--warmup", type=int, default=30, help="seconds of searches before the search run")
    parser.add_argument("--rounds", type=int, default=1, help="repeat the comparison, alternating")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--processes", default="1,3", help="API process counts to compare")
    parser.add_argument("--accounts", type=int, default=16, help="accounts the reveals are spread over")
    parser.add_argument("--catalogue", type=int, default=1_000_000, help="contacts, when the catalogue is built")
    parser.add_argument(
        "--replica",
        action="store_true",
        help="search only, on a primary of its own without and with a streaming replica (bench/replica.py), "
        "the last --processes count of API processes",
    )


def run_bench(args: argparse.Namespace) -> None:
    from bench.http_load import ledger_is_exact, prepare, run_wrk, vacuum

    if shutil.which("wrk") is None:
        sys.exit("wrk is needed: apt-get install wrk")
    url = bench_catalogue(args.catalogue)
    account_ids, keys, max_id = asyncio.run(prepare(url, args.accounts))
    asyncio.run(vacuum(url))
    env = {"VPX_BENCH_KEY": keys[0], "VPX_BENCH_KEYS": ",".join(keys), "VPX_BENCH_MAX_ID": str(max_id)}
    settings = {"rate_limit": "100000000/minute", "pool_size": str(args.connections)}  # never short of one
    load = Path("/proc/loadavg").read_text().split()[:3]
    rows: list[tuple[int, int, str, dict[str, float]]] = []
    proxy_errors: list[str] = []
    for round_ in range(1, args.rounds + 1):  # rounds alternate, so that other load falls on both
        for api in [int(n) for n in args.processes.split(",")]:
            with Cluster(url, api=api, workers=2, settings=settings) as cluster:
                for scenario in SCENARIOS:
                    if scenario == "search" and args.warmup:  # every process answers every search once
                        run_wrk(cluster.port, "search.lua", args.warmup, args.connections, env)
                    rows.append((round_, api, scenario, measure(cluster, cluster.port, scenario, args, env)))
                if api == 1:  # what the proxy costs: the same process without nginx
                    figures = measure(cluster, cluster.api_ports[0], "ceiling", args, env)
                    rows.append((round_, api, "ceiling-direct", figures))
                errors = (cluster.workdir / "nginx-error.log").read_text(errors="replace").splitlines()
                proxy_errors += [f"{api} API: {line}" for line in errors if "[error]" in line]
    exact, reveals = asyncio.run(ledger_is_exact(url, account_ids))
    print(
        f"cluster load: wrk {args.connections} connections, {args.duration} s a scenario ({args.warmup} s of "
        f"searches first), nginx with 1 worker process, 2 idle `vpx worker` processes; {os.cpu_count()} cores; "
        f"load average before {' '.join(load)}"
    )
    for name, (_, what) in SCENARIOS.items():
        print(f"  {name:<15}{what}")
    print("  ceiling-direct GET /healthz on the API process itself, no proxy")
    print("  CPU ms/req: the API processes', their PostgreSQL backends' and nginx's CPU time per request")
    print("  cores: used during the run by each part; others = the rest of the machine (other users)")
    print(
        f"{'round':<6}{'API':<4}{'scenario':<16}{'req/s':>7}{'p50 ms':>8}{'p99 ms':>8}{'non-2xx':>8}"
        f"{'CPU ms/req':>11}  cores:   api    pg nginx   wrk  workers  others"
    )
    for round_, api, name, f in rows:
        ours = sum(f[f"cores_{part}"] for part in ("api", "pg", "pg_replica", "nginx", "wrk", "workers"))
        print(
            f"{round_:<6}{api:<4}{name:<16}{f['rps']:>7.0f}{f['p50']:>8.1f}{f['p99']:>8.1f}{f['non_2xx']:>8.0f}"
            f"{f['cpu_ms']:>11.2f}{'':>9}{f['cores_api']:>5.2f} {f['cores_pg']:>5.2f} {f['cores_nginx']:>5.2f} "
            f"{f['cores_wrk']:>5.2f} {f['cores_workers']:>8.2f} {f['cores_machine'] - ours:>7.2f}"
        )
    counts = sorted({api for _, api, _, _ in rows})
    for round_ in range(1, args.rounds + 1):
        by = {(api, name): f["rps"] for r, api, name, f in rows if r == round_}
        if len(counts) > 1:
            low, high = counts[0], counts[-1]
            factors = ", ".join(f"{n} ×{by[(high, n)] / by[(low, n)]:.2f}" for n in SCENARIOS)
            print(f"round {round_}: scaling {low} → {high} API processes: {factors}")
    print(f"ledger exact={exact} reveals={reveals}")
    print(f"nginx errors: {len(proxy_errors)}", *proxy_errors[:10], sep="\n  ")


def replica_reads(cluster: Cluster) -> dict[str, float]:
    """The replica-safe reads each server answered, summed over the API processes' /metrics."""
    served: dict[str, float] = {}
    for url in cluster.api_urls:
        text_ = httpx.get(f"{url}/metrics", timeout=5).text
        for server, count in re.findall(r'^vpx_replica_reads_total\{server="([^"]+)"\} ([\d.e+]+)$', text_, re.M):
            served[server] = served.get(server, 0.0) + float(count)
    return served


def run_replica_bench(args: argparse.Namespace) -> None:
    """The search scenario through nginx on a local primary, its API processes reading from the
    primary alone, then from a streaming replica of it (VPX_DATABASE_REPLICA_URLS); both figures."""
    from bench.catalogue_build import build
    from bench.http_load import prepare, run_wrk, vacuum
    from bench.replica import PairUnavailable, StreamingPair
    from vpx.config import Settings
    from vpx.migrations import upgrade

    if shutil.which("wrk") is None:
        sys.exit("wrk is needed: apt-get install wrk")
    api = int(args.processes.split(",")[-1])
    load = Path("/proc/loadavg").read_text().split()[:3]
    try:
        pair = StreamingPair.start(databases=("vpx_bench",))
    except PairUnavailable as exc:
        sys.exit(f"no streaming replica here: {exc}")
    rows: list[tuple[int, str, dict[str, float], dict[str, float]]] = []
    with pair:
        url, replica_url = pair.primary_url("vpx_bench"), pair.replica_url("vpx_bench")
        upgrade(Settings(database_url=url))
        print(f"building a {args.catalogue:,}-contact catalogue on the local primary", flush=True)
        asyncio.run(build(url, args.catalogue, 42))
        _, keys, max_id = asyncio.run(prepare(url, 1))
        asyncio.run(vacuum(url))
        pair.wait_caught_up(limit_s=600)
        env = {"VPX_BENCH_KEY": keys[0], "VPX_BENCH_KEYS": keys[0], "VPX_BENCH_MAX_ID": str(max_id)}
        settings = {"rate_limit": "100000000/minute", "pool_size": str(args.connections)}
        for round_ in range(1, args.rounds + 1):  # alternating, so that other load falls on both
            for mode in ("primary", "replica"):
                extra = {"database_replica_urls": replica_url} if mode == "replica" else {}
                # Search only, so no worker: on the freshly built catalogue its background jobs (every
                # email's first check) would write on the primary, and through it the replica, all run.
                with Cluster(url, api=api, workers=0, settings={**settings, **extra}) as cluster:
                    if args.warmup:
                        run_wrk(cluster.port, "search.lua", args.warmup, args.connections, env)
                    before = replica_reads(cluster)
                    figures = measure(cluster, cluster.port, "search", args, env)
                    after = replica_reads(cluster)
                    rows.append((round_, mode, figures, {k: v - before.get(k, 0.0) for k, v in after.items()}))
    print(
        f"search with and without a read replica: {api} API processes behind nginx, wrk {args.connections} "
        f"connections, {args.duration} s ({args.warmup} s of searches first), {args.catalogue:,} contacts; primary "
        f"and replica are local PostgreSQL servers on the same {os.cpu_count()} cores; load average before "
        f"{' '.join(load)}"
    )
    print("  reads: the replica-safe reads of the run, by the server that answered (from /metrics)")
    print(
        f"{'round':<6}{'reads from':<12}{'req/s':>7}{'p50 ms':>8}{'p99 ms':>8}{'non-2xx':>8}{'CPU ms/req':>11}"
        f"  cores:   api primary replica nginx   wrk  others  reads"
    )
    for round_, mode, f, reads in rows:
        ours = sum(f[f"cores_{part}"] for part in ("api", "pg", "pg_replica", "nginx", "wrk", "workers"))
        shown = ", ".join(f"{'replica' if k != 'primary' else k} {v:,.0f}" for k, v in sorted(reads.items()))
        shown = shown or "all on the primary"
        print(
            f"{round_:<6}{mode:<12}{f['rps']:>7.0f}{f['p50']:>8.1f}{f['p99']:>8.1f}{f['non_2xx']:>8.0f}"
            f"{f['cpu_ms']:>11.2f}{'':>9}{f['cores_api']:>5.2f} {f['cores_pg']:>7.2f} {f['cores_pg_replica']:>7.2f} "
            f"{f['cores_nginx']:>5.2f} {f['cores_wrk']:>5.2f} {f['cores_machine'] - ours:>7.2f}  {shown}"
        )


def _run_until_stopped(cluster: Cluster) -> None:
    print(json.dumps(cluster.describe(), indent=2), flush=True)
    stopping = False

    def on_signal(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    while not stopping:
        time.sleep(0.2)
    cluster.stop()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.cluster")
    commands = parser.add_subparsers(dest="command", required=True)
    up = commands.add_parser("up", help="start the cluster on a fresh database, until Ctrl-C")
    up.add_argument("--api", type=int, default=3)
    up.add_argument("--workers", type=int, default=2)
    up.add_argument("--port", type=int, default=None)
    up.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="a setting: rate_limit=60/minute")
    up.add_argument("--keep", action="store_true", help="keep the database after stopping")
    commands.add_parser("test-env", help="start the cluster as tests/cluster runs it, until Ctrl-C")
    add_bench_arguments(commands.add_parser("bench", help="search and reveal load: 1 API process vs 3"))
    commands.add_parser("check-deploy", help="check deploy/ as far as this machine can")
    args = parser.parse_args()
    if args.command == "check-deploy":
        sys.exit(check_deploy())
    missing = services_missing()
    if missing:
        sys.exit(missing)
    try:
        ensure_nginx()
    except ClusterUnavailable as exc:
        sys.exit(str(exc))
    if args.command == "bench" and args.replica:
        run_replica_bench(args)
    elif args.command == "bench":
        run_bench(args)
    elif args.command == "test-env":
        _run_until_stopped(start_test_cluster())
    else:
        settings = dict(item.split("=", 1) for item in args.set)
        cluster = Cluster(
            fresh_cluster_database(), api=args.api, workers=args.workers, port=args.port, settings=settings,
            drop=not args.keep,
        )  # fmt: skip
        _run_until_stopped(cluster.__enter__())


if __name__ == "__main__":
    main()
