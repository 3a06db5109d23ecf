"""A PostgreSQL primary and a streaming replica of its own, started from this machine's server
binaries in a temp dir: what tests/replicas and `python -m bench.cluster bench --replica` run on.

The machine's own server (127.0.0.1:5432) takes no replication connections and is left alone. Here
`initdb` makes a primary (wal_level=replica, replication from 127.0.0.1 trusted) on a free port,
`pg_basebackup -R` copies it into a replica that streams from it on another free port. As root the
servers run as the `postgres` system user (PostgreSQL refuses to run as root); as any other user, as
that user. Both are stopped and their files removed by ``close`` (a context manager does it).

    with StreamingPair.start() as pair:
        pair.primary_url("vpx"), pair.replica_url("vpx"), pair.wait_caught_up(), pair.stop_replica()
"""

from __future__ import annotations

import asyncio
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

BINARIES = ("initdb", "pg_ctl", "pg_basebackup", "postgres")
START_TIMEOUT_S = 60


class PairUnavailable(RuntimeError):
    """The pair cannot run here; the message says why (for a test's skip)."""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_bindir() -> Path:
    """The directory of PostgreSQL's server binaries (`pg_config --bindir`, else the newest
    /usr/lib/postgresql/N/bin); PairUnavailable when none has them all."""
    candidates: list[Path] = []
    if shutil.which("pg_config"):
        found = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=False)
        if found.returncode == 0 and found.stdout.strip():
            candidates.append(Path(found.stdout.strip()))
    installed = Path("/usr/lib/postgresql").glob("*/bin")
    candidates += sorted(installed, key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0, reverse=True)
    for directory in candidates:
        if all(os.access(directory / name, os.X_OK) for name in BINARIES):
            return directory
    raise PairUnavailable(f"PostgreSQL's server binaries ({', '.join(BINARIES)}) are not installed")


def _runner() -> tuple[list[str], int | None]:
    """The command prefix that runs a server binary, and the uid that must own its files (None: ours)."""
    if os.geteuid() != 0:
        return [], None
    try:
        uid = pwd.getpwnam("postgres").pw_uid
    except KeyError:
        raise PairUnavailable("running as root, and there is no `postgres` system user to run PostgreSQL as") from None
    runuser = shutil.which("runuser")
    if runuser is None:
        raise PairUnavailable("running as root, and runuser (util-linux) is missing to run PostgreSQL as `postgres`")
    return [runuser, "-u", "postgres", "--"], uid


class StreamingPair:
    """A primary and one replica streaming from it, on 127.0.0.1, superuser `postgres`, trust auth."""

    def __init__(self, bindir: Path, workdir: Path, prefix: list[str], owner: int | None) -> None:
        self.bindir, self.workdir, self.prefix, self.owner = bindir, workdir, prefix, owner
        self.primary_port, self.replica_port = _free_port(), _free_port()
        self.primary_dir, self.replica_dir = workdir / "primary", workdir / "replica"
        self.running: set[Path] = set()

    @classmethod
    def start(cls, *, databases: tuple[str, ...] = ("vpx",)) -> StreamingPair:
        """Both servers started, each database in ``databases`` created on the primary (and so on
        the replica), the replica caught up. PairUnavailable when this machine cannot run them."""
        bindir = server_bindir()
        prefix, owner = _runner()
        workdir = Path(tempfile.mkdtemp(prefix="vpx-replica-"))
        if owner is not None:
            os.chown(workdir, owner, -1)
        pair = cls(bindir, workdir, prefix, owner)
        try:
            pair._init_primary()
            pair.create_databases(databases)
            pair._init_replica()
            pair.wait_caught_up()
        except BaseException:
            pair.close()
            raise
        return pair

    def __enter__(self) -> StreamingPair:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    # --- the servers -----------------------------------------------------------------------------

    def _run(self, name: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [*self.prefix, str(self.bindir / name), *args]
        done = subprocess.run(command, cwd=self.workdir, capture_output=True, text=True, timeout=START_TIMEOUT_S)
        if check and done.returncode != 0:
            output = (done.stderr or done.stdout).strip()[-1500:]
            raise PairUnavailable(f"{name} failed ({done.returncode}): {output}")
        return done

    def _init_primary(self) -> None:
        # -N: no fsync while initialising (a throwaway cluster); the servers run with fsync off too.
        self._run("initdb", "-D", str(self.primary_dir), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                  "--locale=C", "-N")  # fmt: skip
        settings = {
            "port": self.primary_port,
            "listen_addresses": "'127.0.0.1'",
            "unix_socket_directories": f"'{self.workdir}'",
            "wal_level": "replica",
            "max_wal_senders": 4,
            "hot_standby": "on",
            "fsync": "off",
            "full_page_writes": "off",
            "max_connections": 300,
        }
        with (self.primary_dir / "postgresql.conf").open("a") as conf:
            conf.write("".join(f"{name} = {value}\n" for name, value in settings.items()))
        with (self.primary_dir / "pg_hba.conf").open("a") as hba:
            hba.write("host replication all 127.0.0.1/32 trust\nhost all all 127.0.0.1/32 trust\n")
        self._start(self.primary_dir)

    def _init_replica(self) -> None:
        self._run("pg_basebackup", "-h", "127.0.0.1", "-p", str(self.primary_port), "-U", "postgres",
                  "-D", str(self.replica_dir), "-R", "-X", "stream", "-c", "fast")  # fmt: skip
        with (self.replica_dir / "postgresql.conf").open("a") as conf:
            conf.write(f"port = {self.replica_port}\n")  # the copy's last line wins over the primary's
        self._start(self.replica_dir)

    def _start(self, data: Path) -> None:
        log = self.workdir / f"{data.name}.log"
        self._run("pg_ctl", "-D", str(data), "-l", str(log), "-w", "-t", str(START_TIMEOUT_S), "start")
        self.running.add(data)

    def _stop(self, data: Path, mode: str) -> None:
        if data in self.running:
            self._run("pg_ctl", "-D", str(data), "-m", mode, "-w", "stop", check=False)
            self.running.discard(data)

    def stop_replica(self) -> None:
        """The replica killed at once (`pg_ctl stop -m immediate`): its connections drop mid-stream."""
        self._stop(self.replica_dir, "immediate")

    def start_replica(self) -> None:
        self._start(self.replica_dir)

    def close(self) -> None:
        """Both servers stopped, their files removed (also after a failed start)."""
        self._stop(self.replica_dir, "immediate")
        self._stop(self.primary_dir, "immediate")
        shutil.rmtree(self.workdir, ignore_errors=True)

    def log(self, which: str = "replica") -> str:
        path = self.workdir / f"{which}.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    # --- addresses and state ---------------------------------------------------------------------

    def primary_url(self, database: str = "vpx") -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.primary_port}/{database}"

    def replica_url(self, database: str = "vpx") -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.replica_port}/{database}"

    def create_databases(self, names: tuple[str, ...]) -> None:
        async def create() -> None:
            engine = create_async_engine(self.primary_url("postgres"), isolation_level="AUTOCOMMIT", poolclass=NullPool)
            async with engine.connect() as conn:
                for name in names:
                    await conn.execute(text(f'CREATE DATABASE "{name}"'))
            await engine.dispose()

        asyncio.run(create())

    async def caught_up(self, limit_s: float = START_TIMEOUT_S, *, replayed: bool = True) -> None:
        """Returns once the replica has replayed (or, with ``replayed=False``, received) all the WAL
        the primary had written when called."""
        where = "pg_last_wal_replay_lsn()" if replayed else "pg_last_wal_receive_lsn()"
        primary = create_async_engine(self.primary_url("postgres"), poolclass=NullPool)
        replica = create_async_engine(self.replica_url("postgres"), poolclass=NullPool)
        try:
            async with primary.connect() as conn:
                written = str(await conn.scalar(text("SELECT CAST(pg_current_wal_lsn() AS text)")))
            deadline = time.monotonic() + limit_s
            async with replica.connect() as conn:
                behind = text(f"SELECT pg_wal_lsn_diff(CAST(CAST(:lsn AS text) AS pg_lsn), {where}) > 0")
                while await conn.scalar(behind, {"lsn": written}):
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"the replica did not catch up within {limit_s} s: {self.log()}")
                    await asyncio.sleep(0.02)
        finally:
            await primary.dispose()
            await replica.dispose()

    def wait_caught_up(self, limit_s: float = START_TIMEOUT_S) -> None:
        """``caught_up`` for callers without an event loop."""
        asyncio.run(self.caught_up(limit_s))
