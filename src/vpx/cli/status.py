"""`vpx status`: the workers, what waits for them, the sources' freshness, the search index and the
compliance deadlines; exits 1 when work waits and no worker is alive."""

from __future__ import annotations

import typer

from vpx.cli.output import JsonOption, emit, run_with_database
from vpx.clock import Clock
from vpx.config import Settings
from vpx.db import Database


def register(app: typer.Typer) -> None:
    app.command("status")(status)


def status(as_json: bool = JsonOption) -> None:
    """Workers and their last heartbeat, what waits for them and for how long: the same as /readyz;
    and each source's freshness (stale: older than twice its interval).
    Exits 1 when work waits and no worker is alive."""
    from vpx.compliance.overview import overview
    from vpx.contacts.search import checks as search_checks
    from vpx.sources import service as source_service
    from vpx.worker import status as worker_status

    async def work(database: Database, settings: Settings) -> dict[str, object]:
        now = Clock().now()
        async with database.read_sessions() as session:
            found = await worker_status.report(session, now)
            sources = [source_service.freshness(s, now) for s in await source_service.list_sources(session)]
            index = await search_checks.status(session)
            compliance = await overview(session, settings, now=now)
            return {**found, "sources": sources, "search_index": index, "compliance": compliance}

    found = run_with_database(work, as_json=as_json)
    if as_json:
        emit(found, as_json=True)
    else:
        from vpx.cli.output import cell, emit_rows

        waiting, workers = found["waiting"], found["workers"]
        assert isinstance(waiting, dict) and isinstance(workers, list)
        summary = {
            "ready": cell(found["ready"]),
            "live workers": found["live_workers"],
            "waiting webhook deliveries": waiting["webhook_deliveries"],
            "waiting batch reveals": waiting["batch_reveals"],
            "oldest waiting (s)": found["oldest_waiting_seconds"],
        }
        index = found["search_index"]
        assert isinstance(index, dict)
        checked = index["last_check"] or {}
        summary["search changes waiting"] = index["waiting_changes"]
        summary["search index checked"] = checked.get("checked_at", "never")
        summary["search index wrong terms"] = checked.get("mismatched_terms", "")
        compliance = found["compliance"]
        assert isinstance(compliance, dict)
        batch = compliance["drop"]["open_batch"]
        summary["DROP next deadline"] = compliance["drop"]["next_deadline"] or ""
        summary["DROP open batch"] = f"{batch['decided']} of {batch['items']} decided" if batch else ""
        summary["privacy requests open"] = compliance["privacy_requests"]["open"]
        emit(summary, as_json=False, title="status")
        columns = (
            ("worker_id", "worker"),
            ("host", "host"),
            ("pid", "pid"),
            ("in_server", "in server"),
            ("started_at", "started"),
            ("last_beat_at", "last beat"),
            ("seconds_since_beat", "seconds since"),
            ("alive", "alive"),
        )
        emit_rows(workers, columns, title="workers", noun="worker")
        sources = found["sources"]
        assert isinstance(sources, list)
        if sources:
            shown = [{**s, "state": s["state"] + (", stale" if s["stale"] else "")} for s in sources]
            source_columns = (
                ("name", "source"),
                ("state", "state"),
                ("last_success_at", "last success"),
                ("age_seconds", "age (s)"),
                ("newest_record_at", "newest record"),
                ("next_run_at", "next run"),
                ("last_error", "last error"),
            )
            emit_rows(shown, source_columns, title="sources", noun="source")
    if not found["ready"]:
        raise typer.Exit(1)
