"""`vpx serve`: migrate, bind the socket, start the demo's mail catcher when asked, and run the server
processes on that socket."""

from __future__ import annotations

import os
import socket
import tempfile
from typing import TYPE_CHECKING, Annotated

import typer

from vpx.cli.database import migrate
from vpx.cli.output import JsonOption, emit, fail
from vpx.config import Settings, get_settings
from vpx.secrets import SecretsUnavailable, load_box

if TYPE_CHECKING:
    import uvicorn


def register(app: typer.Typer) -> None:
    app.command()(serve)


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
    migrate(settings)
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
