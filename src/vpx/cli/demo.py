"""`vpx demo`: the demo catalogue, a month of its signals and the demo account's keys; with --live, a
few demo signals a minute until interrupted."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated

import typer

from vpx.cli.database import migrate
from vpx.cli.output import JsonOption, emit, fail, run_with_database
from vpx.clock import Clock
from vpx.config import Settings, get_settings
from vpx.contacts.search import backend_for
from vpx.db import Database


def register(app: typer.Typer) -> None:
    app.command()(demo)


def demo(
    count: Annotated[int, typer.Option(min=1000, help="Demo contacts to load.")] = 12_000,
    signals: Annotated[
        int | None,
        typer.Option(min=0, help="Demo signals over the last 30 days; default: one per ten contacts, at least 200."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Generator seed.")] = 42,
    grant: Annotated[int, typer.Option(min=0, help="Credits granted to the demo account.")] = 500,
    live: Annotated[
        bool,
        typer.Option(
            "--live",
            help="Then keep adding a few demo signals a minute, next to a running server, until interrupted. "
            "(VPX_DEMO_FEED=1 makes `vpx serve` do it itself.)",
        ),
    ] = False,
    as_json: bool = JsonOption,
) -> None:
    """Load the demo catalogue and a month of its intent signals (once), and print a key of each type
    for the demo account: the same ones on every run, kept in the data directory's demo-keys.json."""
    from vpx.demo import account as demo_account
    from vpx.demo import service as demo_service
    from vpx.demo import signals as demo_signals

    settings = get_settings()
    migrate(settings)
    now = Clock().now()

    async def work(database: Database, settings: Settings) -> dict[str, object]:
        added = await demo_service.load_demo_catalogue(
            database, count=count, seed=seed, search=backend_for(database.dialect), now=now
        )
        contacts = await demo_service.demo_catalogue_size(database)
        wanted = signals if signals is not None else demo_signals.default_signal_count(contacts)
        # Through the ingestion pipeline, as evidence events (D36): classified, linked, priced.
        report = await demo_signals.load_demo_signals(database, count=wanted, seed=seed, now=now, settings=settings)
        # The keys the last run printed, kept while they are still the demo account's (vpx.demo.account).
        issued = await demo_service.issue_demo_account(
            database, now=now, settings=settings, grant=Decimal(grant), saved=demo_account.read_saved_keys(saved)
        )
        return {
            "contacts_added": added,
            "contacts": contacts,
            "signals_added": report.ingested,
            "signals": await demo_signals.demo_signal_count(database),
            "account_id": issued.account.id,
            "keys": issued.secrets,
            "keys_file": str(saved),
            "earlier_keys_revoked": issued.revoked,
        }

    saved = demo_account.keys_file(settings)
    result = run_with_database(work, as_json=as_json, settings=settings)
    keys_made = result["keys"]
    assert isinstance(keys_made, dict)
    try:
        demo_account.save_keys(saved, account_id=str(result["account_id"]), keys=keys_made)
    except OSError as exc:
        fail(
            f"the demo's keys could not be saved in {saved} ({exc.strerror or exc}); they are "
            f"{', '.join(f'{kind} {secret}' for kind, secret in keys_made.items())}",
            as_json=as_json,
            code="demo_keys_not_saved",
        )
    if as_json:
        emit(result, as_json=True)
    else:
        keys = result.pop("keys")
        assert isinstance(keys, dict)
        labels = {"ro": "Read Only key", "live": "Standard key", "full": "Full Access key"}
        revoked = result.pop("earlier_keys_revoked")
        result.pop("keys_file")
        shown = {**result, **{labels[kind]: secret for kind, secret in keys.items()}}
        shown["keys_file"] = f"{saved} (the same keys next time)"
        if revoked:
            shown["earlier_keys"] = f"{revoked} revoked (not in {saved})"
        emit(shown, as_json=False, title="vpx demo")
    if not live:
        return
    # --live: the live demo feed in the foreground, a line on stderr per round, until Ctrl-C.
    from contextlib import suppress

    from vpx.demo.feed import DemoFeed
    from vpx.signals.pipeline import IngestReport

    def fed(report: IngestReport) -> None:
        typer.echo(f"demo feed: {report.ingested} new signals {' '.join(report.signal_ids)}".rstrip(), err=True)

    async def feed(database: Database, settings: Settings) -> None:
        await DemoFeed(database, settings, clock=Clock(), seed=seed).run(on_round=fed)

    typer.echo("demo feed: a few demo signals a minute; Ctrl-C stops it", err=True)
    with suppress(KeyboardInterrupt):
        run_with_database(feed, as_json=as_json, settings=settings)
