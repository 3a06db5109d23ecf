"""Sources as configuration: adding one (every value checked, secret options sealed), listing, pausing,
resuming, removing, asking for a run; and how each is shown, with its freshness."""

from __future__ import annotations

import json
import logging
import re
import shutil
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx import metrics
from vpx.errors import Conflict, NotFound
from vpx.models import DataSource
from vpx.secrets import SecretBox
from vpx.sources import limits
from vpx.sources.job import SourceConfig
from vpx.sources.kinds import InvalidSource, all_kinds
from vpx.webhooks.outbox import wake_workers_on_commit

log = logging.getLogger("vpx.sources")
NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,62}")
EVERY = re.compile(r"(\d{1,6})([smhdw])")
UNITS = {"w": 7 * 86_400, "d": 86_400, "h": 3_600, "m": 60, "s": 1}
MIN_EVERY = 60
MAX_EVERY = 366 * 86_400
MAX_URL = 2000
MAX_MAPPING = 64 * 1024
MAX_OPTION = 2000
SECRET_SHOWN = "(secret)"


def parse_every(text: str) -> int:
    """``30m``, ``6h``, ``1d``, ``1w`` … as seconds; InvalidSource for anything else or under a minute."""
    found = EVERY.fullmatch(text.strip().lower())
    if found is None:
        raise InvalidSource("every", f"{text!r} is not an interval such as 30m, 6h, 1d or 1w")
    seconds = int(found.group(1)) * UNITS[found.group(2)]
    if seconds < MIN_EVERY:
        raise InvalidSource("every", "must be at least 1m (a minute)")
    if seconds > MAX_EVERY:
        raise InvalidSource("every", "must be at most 366d")
    return seconds


def format_every(seconds: int) -> str:
    """The interval in its largest whole unit: 86400 -> ``1d``, 5400 -> ``90m``."""
    for unit, size in UNITS.items():
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


@dataclass(frozen=True)
class NewSource:
    """A source checked and ready to store: ``options`` in clear, ``secrets`` to seal."""

    name: str
    kind: str
    url: str
    every_seconds: int
    options: dict[str, str]
    secrets: dict[str, str]
    mapping: str | None
    mapping_name: str | None


def parse_options(pairs: list[str]) -> dict[str, str]:
    """``key=value`` pairs (``--option``) as a dict; InvalidSource for a pair without ``=``."""
    options: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InvalidSource("option", f"{pair!r} is not key=value")
        if key.strip() in options:
            raise InvalidSource(f"options.{key.strip()}", "is given twice")
        options[key.strip()] = value
    return options


def check_new(
    *,
    name: str,
    kind: str,
    url: str,
    every: str | None,
    mapping: str | None,
    mapping_name: str | None,
    options: dict[str, str],
) -> NewSource:
    """Every value of a new source checked (its kind's own checks included); InvalidSource names the
    first that is wrong and why."""
    kinds = all_kinds()
    name = name.strip()
    if not NAME.fullmatch(name):
        raise InvalidSource("name", "use 1-63 lower-case letters, digits, - or _, starting with a letter or digit")
    if kind not in kinds:
        raise InvalidSource("kind", f"{kind!r} is not a kind of source; kinds: {', '.join(kinds)}")
    chosen = kinds[kind]()
    url = url.strip()
    if not url or len(url) > MAX_URL or any(ch.isspace() or ord(ch) < 32 for ch in url):
        raise InvalidSource("url", f"must be a URL of at most {MAX_URL} characters, without spaces")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (reading it checks it)
    except ValueError:
        raise InvalidSource("url", f"is not a URL that can be read (its host or port): {chosen.url_help}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidSource("url", f"must be an http:// or https:// URL: {chosen.url_help}")
    every_seconds = parse_every(every) if every is not None else chosen.default_every
    specs = {spec.name: spec for spec in (*chosen.options, *limits.OPTIONS)}
    kept: dict[str, str] = {}
    secrets: dict[str, str] = {}
    for key, value in options.items():
        spec = specs.get(key)
        if spec is None:
            known = ", ".join(specs) or "none"
            raise InvalidSource(f"options.{key}", f"{kind} takes no such option (its options: {known})")
        if len(value) > MAX_OPTION or any(ord(ch) < 32 for ch in value):
            raise InvalidSource(f"options.{key}", f"must be one line of at most {MAX_OPTION} characters")
        if spec.check is not None:
            try:
                value = spec.check(value)
            except ValueError as exc:
                raise InvalidSource(f"options.{key}", str(exc)) from None
        (secrets if spec.secret else kept)[key] = value
    for spec in chosen.options:
        if spec.required and spec.name not in options:
            raise InvalidSource(f"options.{spec.name}", f"is required for {kind}: {spec.help}")
    if chosen.takes_mapping:
        if not mapping or not mapping.strip():
            raise InvalidSource("mapping", f"{kind} needs a mapping (--mapping FILE): see docs/signal-sources.md")
        if len(mapping) > MAX_MAPPING:
            raise InvalidSource("mapping", f"must be at most {MAX_MAPPING // 1024} KB")
    elif mapping is not None:
        raise InvalidSource("mapping", f"{kind} takes no mapping")
    config = SourceConfig(
        id=0,
        name=name,
        kind=kind,
        url=url,
        every_seconds=every_seconds,
        options={**kept, **secrets},
        mapping=mapping,
        mapping_name=mapping_name if chosen.takes_mapping else None,
    )
    chosen.check(config)
    return NewSource(name, kind, url, every_seconds, kept, secrets, config.mapping, config.mapping_name)


async def add_source(session: AsyncSession, new: NewSource, *, box: SecretBox, now: datetime) -> DataSource:
    """Stores a checked source, due at once. Conflict when the name is taken."""
    if await session.scalar(select(DataSource.id).where(DataSource.name == new.name)) is not None:
        raise Conflict(f"A source named {new.name} exists already; remove it first to add it again.")
    source = DataSource(
        name=new.name,
        kind=new.kind,
        url=new.url,
        every_seconds=new.every_seconds,
        # Secret options are listed by name only (their values sealed beside).
        options={**new.options, **dict.fromkeys(new.secrets)},
        options_sealed=box.seal(json.dumps(new.secrets)) if new.secrets else None,
        mapping=new.mapping,
        mapping_name=new.mapping_name,
        paused=False,
        run_requested=False,
        next_run_at=now,
        watermark={},
        consecutive_failures=0,
        stale_warned=False,
        runs_ok=0,
        runs_not_modified=0,
        runs_failed=0,
        rows_created=0,
        rows_updated=0,
        rows_deactivated=0,
        created_at=now,
        updated_at=now,
    )
    session.add(source)
    await session.flush()
    await wake_workers_on_commit(session)
    return source


def config_of(source: DataSource, box: SecretBox | None) -> SourceConfig:
    """The source as its kind runs it: sealed options opened (``box`` None: left out)."""
    options = {k: v for k, v in (source.options or {}).items() if v is not None}
    if source.options_sealed and box is not None:
        options.update(json.loads(box.open(source.options_sealed)))
    return SourceConfig(
        id=source.id,
        name=source.name,
        kind=source.kind,
        url=source.url,
        every_seconds=source.every_seconds,
        options=options,
        mapping=source.mapping,
        mapping_name=source.mapping_name,
    )


async def list_sources(session: AsyncSession) -> list[DataSource]:
    return list(await session.scalars(select(DataSource).order_by(DataSource.name)))


async def get_source(session: AsyncSession, name: str) -> DataSource:
    found = await session.scalar(select(DataSource).where(DataSource.name == name))
    if found is None:
        raise NotFound(f"There is no source named {name}.")
    return found


async def pause_source(session: AsyncSession, name: str, *, now: datetime) -> DataSource:
    """The worker leaves it alone until resumed (a run in progress finishes). Pausing twice is not an error."""
    source = await get_source(session, name)
    source.paused = True
    source.updated_at = now
    await session.flush()
    return source


async def resume_source(session: AsyncSession, name: str, *, now: datetime) -> DataSource:
    """Scheduled again; due at once if its time came while it was paused."""
    source = await get_source(session, name)
    source.paused = False
    source.updated_at = now
    await session.flush()
    await wake_workers_on_commit(session)
    return source


async def request_run(session: AsyncSession, name: str, *, now: datetime) -> DataSource:
    """Asks the worker to run it as soon as it can (paused or not)."""
    source = await get_source(session, name)
    source.run_requested = True
    source.updated_at = now
    await session.flush()
    await wake_workers_on_commit(session)
    return source


async def remove_source(session: AsyncSession, name: str, *, data_dir: Path) -> DataSource:
    """Deletes the source and the files it keeps under the data directory (partial downloads); the
    data it imported stays in the catalogue."""
    source = await get_source(session, name)
    await session.delete(source)
    await session.flush()
    shutil.rmtree(Path(data_dir) / "sources" / source.name, ignore_errors=True)
    return source


def state_of(source: DataSource) -> str:
    if source.paused:
        return "paused"
    return "failing" if source.consecutive_failures > 0 else "active"


def age_seconds(source: DataSource, now: datetime) -> float | None:
    """Seconds since the last success; None before the first."""
    if source.last_success_at is None:
        return None
    return round((now - source.last_success_at).total_seconds(), 1)


def is_stale(source: DataSource, now: datetime) -> bool:
    """Older than twice its interval (since the last success, or since it was added)."""
    since = source.last_success_at or source.created_at
    return now - since > timedelta(seconds=2 * source.every_seconds)


def running(source: DataSource, now: datetime) -> bool:
    return source.lease_until is not None and source.lease_until > now


def shown_url(url: str) -> str:
    """The URL with any password in it hidden."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def view(source: DataSource, now: datetime) -> dict[str, Any]:
    """A source as `vpx sources show --json` and the admin API show it."""
    return {
        "name": source.name,
        "kind": source.kind,
        "url": shown_url(source.url),
        "every": format_every(source.every_seconds),
        "state": state_of(source),
        "stale": is_stale(source, now),
        "running": running(source, now),
        "run_requested": source.run_requested,
        "last_success_at": source.last_success_at,
        "age_seconds": age_seconds(source, now),
        "newest_record_at": source.newest_record_at,
        "next_run_at": None if source.paused and not source.run_requested else source.next_run_at,
        "last_run": source.last_run,
        "last_error": source.last_error,
        "consecutive_failures": source.consecutive_failures,
        "options": {k: (SECRET_SHOWN if v is None else v) for k, v in sorted((source.options or {}).items())},
        "mapping": source.mapping_name,
        "totals": {
            "runs_ok": source.runs_ok,
            "runs_not_modified": source.runs_not_modified,
            "runs_failed": source.runs_failed,
            "rows_created": source.rows_created,
            "rows_updated": source.rows_updated,
            "rows_deactivated": source.rows_deactivated,
        },
        "created_at": source.created_at,
    }


def freshness(source: DataSource, now: datetime) -> dict[str, Any]:
    """The short form `vpx status --json` lists."""
    return {
        "name": source.name,
        "kind": source.kind,
        "state": state_of(source),
        "stale": is_stale(source, now),
        "last_success_at": source.last_success_at,
        "age_seconds": age_seconds(source, now),
        "newest_record_at": source.newest_record_at,
        "next_run_at": None if source.paused and not source.run_requested else source.next_run_at,
        "last_error": source.last_error,
    }


async def figures(session: AsyncSession, now: datetime) -> list[metrics.SourceFigures]:
    """Every source's figures for Prometheus."""
    return [
        metrics.SourceFigures(
            name=s.name,
            age_seconds=age_seconds(s, now),
            failing=s.consecutive_failures > 0,
            stale=is_stale(s, now),
            runs={"ok": s.runs_ok, "not_modified": s.runs_not_modified, "failed": s.runs_failed},
            rows={"created": s.rows_created, "updated": s.rows_updated, "deactivated": s.rows_deactivated},
        )
        for s in await list_sources(session)
    ]
