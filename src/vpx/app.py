"""create_app(): the FastAPI application with its state, middleware, error handlers and routers."""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse, RedirectResponse
from starlette.routing import Route

from vpx import __version__
from vpx.accounts.router import router as account_router
from vpx.admin.router import router as admin_accounts_router
from vpx.apidocs import install_api_docs
from vpx.auth import network
from vpx.auth.ratelimit import RateLimits
from vpx.auth.router import router as key_router
from vpx.autobuy.router import router as autobuy_router
from vpx.batches.router import router as batch_reveal_router
from vpx.clock import Clock
from vpx.compliance.privacy.router import admin_router as privacy_admin_router
from vpx.compliance.privacy.router import router as privacy_router
from vpx.config import Settings, get_settings
from vpx.contacts.router import router as contact_router
from vpx.contacts.search import backend_for
from vpx.contacts.search.folding import FoldAssist
from vpx.dashboard.router import install_dashboard
from vpx.db import Database
from vpx.demo.feed import start_demo_feed
from vpx.enrichment import build_waterfall, close_waterfall
from vpx.enrichment.router import batch_router as enrichment_batch_router
from vpx.enrichment.router import keys_router as enrichment_keys_router
from vpx.enrichment.router import router as enrichment_router
from vpx.errors import FieldError, Problem, install_error_handlers
from vpx.exports.router import router as export_router
from vpx.logs import configure_logging
from vpx.mail.outbox import Outbox
from vpx.mailboxes.router import router as mailbox_router
from vpx.mcp_server.http import PATH as MCP_PATH
from vpx.mcp_server.http import McpEndpoint
from vpx.meta import router as meta_router
from vpx.middleware import RequestContextMiddleware
from vpx.operator_page.router import router as operator_page_router
from vpx.outbound.resolver import system_resolver
from vpx.publishers.router import contribute_router
from vpx.publishers.router import router as publisher_router
from vpx.quality.router import admin_router as quality_admin_router
from vpx.quality.router import router as report_router
from vpx.registries.router import router as registry_router
from vpx.sandbox import build_sandbox
from vpx.sandbox.middleware import TestModeRouting
from vpx.sandbox.router import router as test_balance_router
from vpx.secrets import load_box
from vpx.sequences.router import enrollments_router
from vpx.sequences.router import router as sequence_router
from vpx.sequences.unsubscribe import router as unsubscribe_router
from vpx.signals.router import admin_router as signal_admin_router
from vpx.signals.router import router as signal_router
from vpx.signals.stream import SignalBroker
from vpx.sources.router import router as source_admin_router
from vpx.suppression.router import router as suppression_router
from vpx.visitors import build_resolver
from vpx.visitors.collect import router as visitor_collect_router
from vpx.visitors.router import router as visitor_router
from vpx.webhooks.router import router as webhook_router
from vpx.worker import status as worker_status
from vpx.worker.loop import InProcessWorker, Worker

TITLE = "vpx Contact and Intent Signal API"
DESCRIPTION = """Contacts from government registries, revealed for credits; buyer-intent signals.

Every request carries an `X-API-Key` header. Errors are RFC 9457 problem details with a stable `code`.
"""


async def _warn_without_worker(database: Database, now: datetime) -> None:
    """Webhook deliveries, batch reveals, sequences and batch enrichments wait for a worker: say so at
    start when this server runs none and no `vpx worker` is alive."""
    try:
        async with database.read_sessions() as session:
            alive = await worker_status.live_workers(session, now)
    except Exception:  # the database not answering is /readyz's business
        return
    if alive == 0:
        logging.getLogger("vpx").warning(
            "this server runs without a worker (VPX_WORKER_IN_PROCESS=false) and no `vpx worker` is alive: "
            "webhook deliveries, batch reveals, batch enrichments and sequences will wait until one runs"
        )


def create_app(settings: Settings | None = None, *, clock: Clock | None = None) -> FastAPI:
    settings = settings or get_settings()
    configure_logging(settings.log_level, json_lines=settings.log_json)
    database = Database(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # What exists at start-up (modules, the app, its schemas) lives as long as the process: keep it
        # out of the cyclic collector's full passes, which otherwise add tens of milliseconds to random
        # requests (p99 of a 100-id batch reveal: 130 ms -> 77 ms, bench/webhooks_batch_reveal.py).
        gc.collect()
        gc.freeze()
        # D26: the background worker runs inside each server process unless VPX_WORKER_IN_PROCESS=false.
        worker = None
        if settings.runs_worker_in_process:
            worker = InProcessWorker(
                Worker(
                    database,
                    settings,
                    clock=app.state.clock,
                    resolver=app.state.webhook_resolver,
                    enrichment=(app.state.enrichment, app.state.secrets),
                )
            )
            worker.start()
        else:
            await _warn_without_worker(database, app.state.clock.now())
        demo_feed = start_demo_feed(database, settings, clock=app.state.clock)  # VPX_DEMO_FEED=1 (make serve)
        if app.state.sandbox is not None:  # test mode's worker and signal feed (vpx.sandbox)
            await app.state.sandbox.start(resolver=app.state.webhook_resolver, box=app.state.secrets)
        yield
        await app.state.mcp.stop()
        if app.state.sandbox is not None:
            await app.state.sandbox.stop()
        if demo_feed is not None:
            await demo_feed.stop()
        await app.state.signal_broker.stop()
        await app.state.fold_assist.stop()
        if worker is not None:
            await worker.stop(grace_seconds=settings.webhook_timeout_seconds + 2)
        await app.state.mail.close(grace_seconds=settings.smtp_timeout_seconds * 3)
        await close_waterfall(app.state.enrichment)
        await app.state.rate_limits.close()
        await database.dispose()

    app = FastAPI(
        title=TITLE,
        version=__version__,
        description=DESCRIPTION,
        openapi_url="/api/v1/openapi.json",
        # /docs is Swagger UI served from the package under a strict policy (vpx.apidocs); no ReDoc.
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.database = database
    app.state.clock = clock or Clock()
    app.state.mail = Outbox(settings, clock=app.state.clock)  # dashboard emails (password reset)
    app.state.rate_limits = RateLimits(settings)
    # Customer secrets: keys that cannot be used stop the service here, saying why (vpx.secrets).
    app.state.secrets = load_box(settings)
    # D32: the enrichment waterfall and its HTTP client to the providers.
    app.state.enrichment = build_waterfall(database, settings, app.state.rate_limits)
    # Search answers are remembered per process and refreshed in the background (search/caches.py).
    app.state.search = backend_for(database.dialect).refresh_from(database)
    # A search that finds more changes waiting than it applies has this process fold them.
    app.state.fold_assist = FoldAssist(database)
    app.state.search.on_backlog = app.state.fold_assist.request
    # D23: one broker per process feeds every open signal stream (started by the first one).
    app.state.signal_broker = SignalBroker(database, settings)
    app.state.trusted_proxies = [network.parse_network(p) for p in settings.trusted_proxies]
    # How webhook hosts are resolved for the SSRF guard (tests may put a stand-in DNS here).
    app.state.webhook_resolver = system_resolver
    # D33: imported address ranges in memory, reverse DNS with its cache.
    app.state.visitors = build_resolver(database, settings)
    # Test mode: test keys' requests run against the sandbox database and its parts (vpx.sandbox).
    app.state.sandbox = build_sandbox(database, settings, clock=app.state.clock, rate_limits=app.state.rate_limits)

    install_error_handlers(app)
    app.add_middleware(TestModeRouting, sandbox=app.state.sandbox)
    app.add_middleware(
        RequestContextMiddleware,
        max_body_bytes=settings.max_body_bytes,
        strict_transport=settings.public_url.lower().startswith("https://"),
    )
    app.include_router(meta_router)
    # Batch reveal and contributions live under /contacts but in domains of their own.
    app.include_router(batch_reveal_router)
    app.include_router(contribute_router)
    app.include_router(enrichment_batch_router)
    app.include_router(enrichment_router)
    app.include_router(contact_router)
    app.include_router(report_router)
    app.include_router(registry_router)
    app.include_router(account_router)
    app.include_router(test_balance_router)
    app.include_router(publisher_router)
    app.include_router(webhook_router)
    app.include_router(key_router)
    app.include_router(export_router)
    app.include_router(signal_router)
    app.include_router(signal_admin_router)
    app.include_router(suppression_router)
    app.include_router(admin_accounts_router)
    app.include_router(source_admin_router)
    app.include_router(quality_admin_router)
    app.include_router(privacy_router)
    app.include_router(privacy_admin_router)
    app.include_router(autobuy_router)
    app.include_router(enrichment_keys_router)
    app.include_router(mailbox_router)
    app.include_router(sequence_router)
    app.include_router(enrollments_router)
    app.include_router(unsubscribe_router)
    app.include_router(visitor_router)
    app.include_router(visitor_collect_router)
    install_dashboard(app)
    app.include_router(operator_page_router)
    install_api_docs(app)
    # The MCP server's streamable HTTP transport, authenticated by API keys (vpx.mcp_server).
    app.state.mcp = McpEndpoint(app)
    app.router.routes.append(Route(MCP_PATH, endpoint=app.state.mcp, include_in_schema=False))
    app.add_api_route("/", root, methods=["GET"], include_in_schema=False)
    app.openapi = lambda: openapi_document(app)  # type: ignore[method-assign]
    return app


# What `GET /` lists for a client that asks for anything but a page.
ROOT_LINKS = {
    "openapi": "/api/v1/openapi.json",
    "docs": "/docs",
    "dashboard": "/dashboard",
    "health": "/healthz",
    "ready": "/readyz",
}


async def root(request: Request) -> Response:
    """`/`: a browser (asking for HTML) is sent to the dashboard; anything else gets an index of links."""
    accept = request.headers.get("accept", "")
    if "text/html" in accept or "application/xhtml+xml" in accept:
        return RedirectResponse("/dashboard", status_code=307)
    return JSONResponse({"name": TITLE, "version": __version__, "links": ROOT_LINKS})


def openapi_document(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document, with every error answered as problem details (D1, D27)."""
    if app.openapi_schema:
        return app.openapi_schema
    document = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    for model in (FieldError, Problem):
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        schema.pop("$defs", None)
        schemas[model.__name__] = schema
    schemas.pop("HTTPValidationError", None)
    schemas.pop("ValidationError", None)
    problem = {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
    for path in document.get("paths", {}).values():
        for operation in path.values():
            responses = operation.get("responses", {})
            if "422" in responses:
                responses["422"] = {
                    "description": "Invalid parameters (`invalid_parameters`) or idempotency key reused "
                    "with another body (`idempotency_mismatch`).",
                    "content": problem,
                }
    app.openapi_schema = document
    return document
