"""The `vpx` command: serve, migrate, and the operator's account, key, credit and suppression tools."""

from __future__ import annotations

import json
import os
import socket
import tempfile
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from vpx.accounts import lifecycle
from vpx.accounts import service as account_service
from vpx.auth import service as key_service
from vpx.auth.keys import KeyType
from vpx.cli import accounts as accounts_cli
from vpx.cli import dnc as dnc_cli
from vpx.cli import drop as drop_cli
from vpx.cli import mcp as mcp_cli
from vpx.cli import privacy as privacy_cli
from vpx.cli import quality as quality_cli
from vpx.cli import registries as registries_cli
from vpx.cli import search as search_cli
from vpx.cli import secrets as secrets_cli
from vpx.cli import signals as signals_cli
from vpx.cli import sources as sources_cli
from vpx.cli import visitors as visitors_cli
from vpx.cli.output import JsonOption, emit, fail, run_with_database
from vpx.cli.words import PlainWordsGroup
from vpx.cli.worker import worker
from vpx.clock import Clock
from vpx.compliance import audit
from vpx.config import Settings, get_settings
from vpx.contacts.search import backend_for
from vpx.credits import service as credit_service
from vpx.db import Database
from vpx.secrets import SecretsUnavailable, generate_key, load_box
from vpx.suppression import service as suppression_service
from vpx.suppression.service import SuppressionKind, SuppressionReason

if TYPE_CHECKING:
    import uvicorn

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="vpx: Contact and Intent Signal API.",
    cls=PlainWordsGroup,
)
db_app = typer.Typer(no_args_is_help=True, help="Database schema.")
accounts_app = typer.Typer(no_args_is_help=True, help="Customer accounts.")
keys_app = typer.Typer(no_args_is_help=True, help="API keys.")
credits_app = typer.Typer(no_args_is_help=True, help="Credits.")
suppress_app = typer.Typer(
    no_args_is_help=True,
    help="The suppression list: contacts, phones and emails no reveal may show (opt-outs, do-not-contact, "
    "FCRA-regulated records).",
)
app.add_typer(db_app, name="db")
app.add_typer(accounts_app, name="accounts")
app.add_typer(keys_app, name="keys")
app.add_typer(credits_app, name="credits")
app.add_typer(suppress_app, name="suppress")
app.command("worker")(worker)
accounts_cli.register(accounts_app)
mcp_cli.register(app)
dnc_cli.register(app)
drop_cli.register(app)
privacy_cli.register(app)
quality_cli.register(app)
search_cli.register(app)
registries_cli.register(app)
secrets_cli.register(app)
signals_cli.register(app)
sources_cli.register(app)
visitors_cli.register(app)


def _migrate(settings: Settings) -> list[str]:
    import asyncio

    from vpx.migrations import current_heads, upgrade
    from vpx.sandbox import location as sandbox_location

    upgrade(settings)
    # Test mode's sandbox, once a first test key has made it, is migrated with the main database.
    sandbox = sandbox_location.sandbox_settings(settings)
    if settings.test_mode and asyncio.run(sandbox_location.exists(sandbox)):
        upgrade(sandbox)
    return list(current_heads(settings))


@db_app.command("upgrade")
def db_upgrade(as_json: bool = JsonOption) -> None:
    """Bring the database schema up to date (safe to run repeatedly)."""
    settings = get_settings()
    heads = _migrate(settings)
    emit({"status": "ok", "database": _redacted(settings.database_url), "revisions": heads}, as_json=as_json)


def _redacted(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    workers: Annotated[int, typer.Option(min=1, help="Server processes.")] = 1,
    worker: Annotated[
        bool,
        typer.Option(
            "--worker/--no-worker",
            help="Run the background worker (webhook deliveries, batch reveals, sequences…) in each server "
            "process (the default, on every database), or leave it to separate `vpx worker` processes. "
            "The same as VPX_WORKER_IN_PROCESS.",
        ),
    ] = True,
    as_json: bool = JsonOption,
) -> None:
    """Migrate the database, then serve the API (with the background worker in its processes)."""
    import uvicorn

    if not worker:
        os.environ["VPX_WORKER_IN_PROCESS"] = "false"  # read by every server process's settings
    url = _bound_url(host, port)
    if not os.environ.get("VPX_PUBLIC_URL", "").strip():
        # The links the service writes (unsubscribe, password reset, the visitor snippet) point where it
        # listens; behind a proxy VPX_PUBLIC_URL says where that is, and wins.
        os.environ["VPX_PUBLIC_URL"] = url
    get_settings.cache_clear()
    settings = get_settings()
    _migrate(settings)
    try:
        # Before the server processes start: the key file, when there is none yet, is made once.
        load_box(settings)
    except SecretsUnavailable as exc:
        fail(str(exc), as_json=as_json, code="secrets_unavailable")
    if workers > 1 and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="vpx-metrics-")
    # Bound before anything says "serving": a port already taken is said here, and nothing else is.
    sock = _listening_socket(host, port, as_json=as_json)
    serving: dict[str, object] = {
        "status": "serving",
        "url": url,
        "public_url": settings.public_url,
        "workers": workers,
        "background_worker": "in each server process" if settings.runs_worker_in_process else "separate",
        "docs": f"{url}/docs",
        "dashboard": f"{url}/dashboard",
    }
    if settings.demo_mail_port is not None:
        serving.update(_start_mail_catcher(settings.demo_mail_port, settings))
    emit(serving, as_json=as_json)
    config = uvicorn.Config(
        "vpx.app:create_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=settings.log_level.lower(),
        access_log=False,
        proxy_headers=False,
        # uvicorn's protocol, but bytes that are not HTTP get a problem document, not a bare text/plain 400.
        http="vpx.http_protocol:ProblemHttpProtocol",
    )
    if not run_server(config, sock):
        raise typer.Exit(1)


def _listening_socket(host: str, port: int, *, as_json: bool) -> socket.socket:
    """The server's socket, bound as uvicorn binds it (and handed to it); a port already taken ends
    `vpx serve` here, saying so, before it says it serves."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family=family)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        fail(
            f"cannot listen on {_bound_url(host, port).removeprefix('http://')} ({exc.strerror or exc}): another "
            "program may be using that port; choose another with --port",
            as_json=as_json,
            code="port_unavailable",
        )
    sock.set_inheritable(True)  # the server processes take it over when there are several
    return sock


def run_server(config: uvicorn.Config, sock: socket.socket) -> bool:
    """uvicorn on the bound socket, in this process or in ``config.workers`` processes, until it is
    stopped; False when the server could not start."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    server = uvicorn.Server(config)
    try:
        if config.workers > 1:
            Multiprocess(config, sockets=[sock]).run()
            return True
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    return server.started


def _bound_url(host: str, port: int) -> str:
    """The URL of the address the server listens on; a wildcard address (every interface) is reached
    at loopback from this machine (others need VPX_PUBLIC_URL)."""
    shown = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(host, host)
    return f"http://[{shown}]:{port}" if ":" in shown else f"http://{shown}:{port}"


def _start_mail_catcher(wanted: int, settings: Settings) -> dict[str, object]:
    """The demo's mail catcher (VPX_DEMO_MAIL_PORT, make serve) in this process, next to the server
    processes, on that port or the next free one. It is optional: when it cannot listen at all the
    server runs without it, saying so."""
    from vpx.mail import catcher

    try:
        sock = catcher.first_free_socket(wanted)
    except OSError as exc:
        os.environ.pop("VPX_DEMO_MAIL_PORT", None)
        get_settings.cache_clear()
        return {"demo_mail_smtp": f"off: no port from {wanted} could be listened on ({exc.strerror or exc})"}
    port = int(sock.getsockname()[1])
    # The server processes read the port they may let the demo account's mailboxes use from here.
    os.environ["VPX_DEMO_MAIL_PORT"] = str(port)
    get_settings.cache_clear()
    folder = catcher.catcher_folder(settings)
    catcher.run_in_thread(folder, sock)
    taken = "" if port == wanted else f"; {wanted} was taken"
    return {
        "demo_mail_smtp": f"{catcher.HOST}:{port} (the demo account only; no TLS{taken})",
        "demo_mail_folder": f"{folder}/ (one .eml file per email)",
    }


@app.command()
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
    _migrate(settings)
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


@accounts_app.command("create")
def accounts_create(
    name: Annotated[str, typer.Option(help="Account name.")],
    email: Annotated[str | None, typer.Option(help="Contact email (unique).")] = None,
    plan: Annotated[str, typer.Option(help="Plan.")] = "free",
    as_json: bool = JsonOption,
) -> None:
    """Create an account on the free plan (25 credits each calendar month, no payment card)."""
    if plan not in account_service.PLANS:
        fail(
            f"unknown plan {plan!r}; plans: {', '.join(account_service.PLANS)}",
            as_json=as_json,
            code="invalid_parameters",
        )
    if not name.strip():
        fail("--name must not be empty", as_json=as_json, code="invalid_parameters")

    async def work(database: Database, settings: Settings) -> dict[str, object]:
        now = Clock().now()
        async with database.write_sessions() as session, session.begin():
            account = await account_service.create_account(
                session, name=name.strip(), email=email, plan=plan, now=now, settings=settings
            )
            balance = await credit_service.get_balance(session, account_id=account.id)
        return {
            "id": account.id,
            "name": account.name,
            "email": account.email,
            "plan": account.plan,
            "balance": balance.total,
            "created_at": account.created_at,
        }

    emit(run_with_database(work, as_json=as_json), as_json=as_json, title="account")


@keys_app.command("create")
def keys_create(
    account: Annotated[str, typer.Option(help="Account id (acc_…).")],
    key_type: Annotated[KeyType, typer.Option("--type", help="ro, live or full.")],
    name: Annotated[str, typer.Option(help="A name to recognise the key by.")] = "",
    ip: Annotated[list[str] | None, typer.Option(help="Allowed address or CIDR range; repeatable.")] = None,
    test: Annotated[
        bool,
        typer.Option(
            "--test", help="A test key (vpx_test_…): the sandbox catalogue and a test balance, never real data."
        ),
    ] = False,
    as_json: bool = JsonOption,
) -> None:
    """Create an API key; the secret is printed once and never stored."""
    if test and not get_settings().test_mode:
        fail("test mode is off on this server (VPX_TEST_MODE=false)", as_json=as_json, code="invalid_parameters")

    async def work(database: Database, settings: Settings) -> dict[str, object]:
        async with database.write_sessions() as session, session.begin():
            key, secret = await key_service.create_key(
                session,
                account_id=account,
                key_type=key_type,
                name=name,
                ip_allowlist=list(ip or []),
                now=Clock().now(),
                settings=settings,
                livemode=not test,
            )
            shown = {**key_service.key_view(key), "key": secret}
        if test:
            await _prepare_sandbox(database, settings, account_id=account)
        return shown

    emit(run_with_database(work, as_json=as_json), as_json=as_json, title="key (the secret is shown once)")


async def _prepare_sandbox(database: Database, settings: Settings, *, account_id: str) -> None:
    """The sandbox made (the first time), with the account's shadow and test balance (vpx.sandbox)."""
    from vpx.auth.ratelimit import RateLimits
    from vpx.sandbox.world import build_sandbox

    sandbox = build_sandbox(database, settings, clock=Clock(), rate_limits=RateLimits(settings))
    assert sandbox is not None
    try:
        await sandbox.ensure_account(account_id)
    finally:
        await sandbox.stop()


@keys_app.command("revoke")
def keys_revoke(key_id: Annotated[str, typer.Argument(help="Key id (key_…).")], as_json: bool = JsonOption) -> None:
    """Revoke a key at once."""

    async def work(database: Database, settings: Settings) -> dict[str, object]:
        async with database.write_sessions() as session, session.begin():
            key = await key_service.revoke_key(session, key_id=key_id, now=Clock().now())
            return key_service.key_view(key)

    emit(run_with_database(work, as_json=as_json), as_json=as_json, title="revoked")


@keys_app.command("list")
def keys_list(account: Annotated[str, typer.Option(help="Account id (acc_…).")], as_json: bool = JsonOption) -> None:
    """List an account's keys (never their secrets)."""
    from sqlalchemy import select

    from vpx.models import ApiKey

    async def work(database: Database, settings: Settings) -> dict[str, object]:
        async with database.read_sessions() as session:
            await account_service.get_account(session, account_id=account)
            keys = await session.scalars(select(ApiKey).where(ApiKey.account_id == account).order_by(ApiKey.created_at))
            return {"account_id": account, "keys": [key_service.key_view(k) for k in keys]}

    emit(run_with_database(work, as_json=as_json), as_json=as_json, title="keys")


@credits_app.command("grant")
def credits_grant(
    account: Annotated[str, typer.Option(help="Account id (acc_…).")],
    amount: Annotated[str, typer.Option(help="Credits to add (a positive decimal).")],
    reason: Annotated[str, typer.Option(help="Shown in the ledger.")] = "Granted by operator",
    as_json: bool = JsonOption,
) -> None:
    """Grant credits; they carry over from month to month."""
    try:
        value = Decimal(amount)
    except InvalidOperation:
        fail(f"--amount {amount!r} is not a number", as_json=as_json, code="invalid_parameters")
    if not value.is_finite() or value <= 0 or value != value.quantize(Decimal("0.0001")):
        fail("--amount must be positive, with at most 4 decimals", as_json=as_json, code="invalid_parameters")

    async def work(database: Database, settings: Settings) -> dict[str, object]:
        async with database.write_sessions() as session, session.begin():
            # Written to the account's audit trail too (`vpx accounts audit`).
            balance = await lifecycle.grant(
                session,
                account_id=account,
                amount=value,
                note=reason,
                actor=accounts_cli.cli_actor(),
                now=Clock().now(),
                settings=settings,
            )
        return {
            "account_id": account,
            "granted": value,
            "balance": balance.total,
            "free": balance.free,
            "paid": balance.paid,
        }

    emit(run_with_database(work, as_json=as_json), as_json=as_json, title="granted")


@suppress_app.command("add")
def suppress_add(
    reason: Annotated[
        SuppressionReason,
        typer.Option(
            help="fcra, opt_out, do_not_contact, or do_not_call (with --phone: the person asked not to be called; "
            "the phone is flagged for every buyer and the contact stays on sale)."
        ),
    ],
    contact: Annotated[str | None, typer.Option(help="Contact id (ct_…).")] = None,
    phone: Annotated[str | None, typer.Option(help="Phone number, E.164.")] = None,
    email: Annotated[str | None, typer.Option(help="Email address.")] = None,
    note: Annotated[str, typer.Option(help="Free text kept with the entry.")] = "",
    as_json: bool = JsonOption,
) -> None:
    """Add a contact, phone or email to the suppression list: reveals of it are refused (451)."""
    given = [(k, v) for k, v in (("contact", contact), ("phone", phone), ("email", email)) if v]
    if len(given) != 1:
        fail("give exactly one of --contact, --phone or --email", as_json=as_json, code="invalid_parameters")
    kind, value = given[0]
    if reason is SuppressionReason.do_not_call:
        if kind != "phone":
            fail("do_not_call takes --phone: it is the phone channel only", as_json=as_json, code="invalid_parameters")
        kind = "do_not_call"

    async def work(database: Database, settings: Settings) -> dict[str, object]:
        async with database.write_sessions() as session, session.begin():
            now = Clock().now()
            entry, created = await suppression_service.add_suppression(
                session,
                kind=SuppressionKind(kind),
                value=value,
                reason=reason,
                note=note,
                now=now,
            )
            if created:
                await audit.record(
                    session,
                    kind="suppression.added",
                    subject=f"sup_{entry.id}",
                    now=now,
                    kind_of=entry.kind,
                    reason=entry.reason,
                    actor=accounts_cli.cli_actor(),
                )
            return {
                "id": f"sup_{entry.id}",
                "kind": entry.kind,
                "value": entry.value,
                "reason": entry.reason,
                "created": created,
                "created_at": entry.created_at,
            }

    emit(run_with_database(work, as_json=as_json), as_json=as_json, title="suppressed")


@app.command("status")
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


@app.command("openapi")
def openapi(
    output: Annotated[Path | None, typer.Option(help="Write to this file instead of stdout.")] = None,
) -> None:
    """Print (or write) the OpenAPI document; the repository keeps a copy in openapi.json."""
    from vpx.app import create_app

    # An in-memory database and a throwaway secret key: the document needs neither. The app's
    # start-up warnings (no SMTP…) concern a server, not this document: kept out of its output.
    settings = Settings(database_url="sqlite+aiosqlite:///:memory:", secret_keys=generate_key(), log_level="ERROR")
    document = create_app(settings).openapi()
    text = json.dumps(document, indent=2, sort_keys=True) + "\n"
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_text(text)
