"""The demo's mail catcher (make serve): a small SMTP server on 127.0.0.1 that takes every message and
keeps it as a file in ``data_dir/demo-mail/`` (one ``.eml`` each, named by the time it came, the
envelope in its ``Return-Path`` and ``X-Original-To`` lines, lines ending in LF), so that the README's
sequence steps have a mailbox to send from on a fresh machine and a reader can see what was "sent".

Development and demos only: it sends nothing on, takes any login (AUTH PLAIN or LOGIN) and offers no
TLS, so a mailbox pointing at it uses ``smtp_security: "none"``; nothing reads replies from it (the demo
mailbox has no IMAP). `vpx serve` runs it when VPX_DEMO_MAIL_PORT is set; only the demo account's
mailboxes may point at it (``vpx.mailboxes.service``): every other account's loopback host is still
refused (D26's guard). When that port is taken, `vpx serve` takes the next free one, prints it and hands
it to the server processes as their VPX_DEMO_MAIL_PORT.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import os
import re
import secrets
import socket
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from vpx.config import Settings

log = logging.getLogger("vpx.mail")
HOST = "127.0.0.1"
FOLDER = "demo-mail"
# What one message, one line and one connection may hold: a demo's, not a mail server's, limits.
MAX_MESSAGE_BYTES = 10 * 1024 * 1024
MAX_COMMAND_BYTES = 2048
MAX_LINE_BYTES = 64 * 1024
MAX_RECIPIENTS = 100
IDLE_SECONDS = 300.0
# How many ports after VPX_DEMO_MAIL_PORT the catcher tries when that one is taken.
NEXT_PORTS = 20
# Answers the client (the lines of one reply), and reads its next line.
Say = Callable[..., Awaitable[None]]
Line = Callable[[], Awaitable[bytes]]
_PATH = re.compile(r"^(?:FROM|TO):\s*<([^<>]*)>", re.IGNORECASE)


def catcher_folder(settings: Settings) -> Path:
    return settings.data_dir / FOLDER


def is_catcher(host: str, port: int, settings: Settings) -> bool:
    """Whether a mailbox's host and port are the demo's catcher: 127.0.0.1 at VPX_DEMO_MAIL_PORT."""
    return settings.demo_mail_port is not None and host.strip() == HOST and port == settings.demo_mail_port


def listening_socket(port: int, host: str = HOST) -> socket.socket:
    """The catcher's socket, bound and listening; OSError (the port is taken…) for the caller to report."""
    return socket.create_server((host, port))


def first_free_socket(port: int, *, tries: int = NEXT_PORTS) -> socket.socket:
    """A listening socket on ``port`` or, when it is taken, the first free one of the ``tries`` ports
    after it (the catcher is optional: a busy port must not stop the demo). OSError when none is free."""
    last: OSError | None = None
    for candidate in range(port, min(port + tries, 65_535) + 1):
        try:
            return listening_socket(candidate)
        except OSError as exc:
            last = exc
    assert last is not None
    raise last


@dataclass
class _Envelope:
    sender: str | None = None
    recipients: list[str] = field(default_factory=list)


class MailCatcher:
    """The SMTP sink: ``start`` it (on a socket of the caller's, or binding ``host``:``port``; port 0 is
    a free one), read ``port``, ``stop`` it."""

    def __init__(self, folder: Path, *, host: str = HOST, port: int = 0) -> None:
        self.folder = folder
        self.host = host
        self._port = port
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    @property
    def port(self) -> int:
        if self._server is None or not self._server.sockets:
            return self._port
        return int(self._server.sockets[0].getsockname()[1])

    async def start(self, sock: socket.socket | None = None) -> None:
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.folder.chmod(0o700)  # the demo's emails carry the demo contacts' addresses
        if sock is None:
            sock = listening_socket(self._port, self.host)
        self._server = await asyncio.start_server(self._serve, sock=sock, limit=MAX_LINE_BYTES)

    async def stop(self) -> None:
        if self._server is None:
            return
        self._server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        await self._server.wait_closed()
        self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            await self._conversation(reader, writer)
        except (OSError, EOFError, TimeoutError, ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass  # the client went away or sent what no SMTP client sends: the connection ends
        finally:
            if task is not None:
                self._connections.discard(task)
            writer.close()

    async def _conversation(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async def say(*lines: str) -> None:
            text = "".join(
                f"{line[:3]}{'-' if i < len(lines) - 1 else ' '}{line[4:]}\r\n" for i, line in enumerate(lines)
            )
            writer.write(text.encode())
            await writer.drain()

        async def line() -> bytes:
            read = await asyncio.wait_for(reader.readline(), IDLE_SECONDS)
            if not read:
                raise EOFError
            return read

        envelope = _Envelope()
        await say("220 vpx demo mail catcher: every message is kept, none is sent on")
        while True:
            raw = await line()
            if len(raw) > MAX_COMMAND_BYTES:
                await say("500 line too long")
                continue
            verb, _, argument = raw.decode("utf-8", "replace").strip().partition(" ")
            verb = verb.upper()
            if verb == "EHLO":
                envelope = _Envelope()
                await say(
                    "250 vpx demo mail catcher",
                    "250 8BITMIME",
                    "250 SMTPUTF8",
                    f"250 SIZE {MAX_MESSAGE_BYTES}",
                    "250 AUTH PLAIN LOGIN",
                )
            elif verb == "HELO":
                envelope = _Envelope()
                await say("250 vpx demo mail catcher")
            elif verb == "AUTH":
                await self._login(argument, say, line)
            elif verb == "MAIL":
                found = _PATH.match(argument)
                if found is None or not argument.upper().startswith("FROM:"):
                    await say("501 syntax: MAIL FROM:<address>")
                else:
                    envelope = _Envelope(sender=found.group(1))
                    await say("250 OK")
            elif verb == "RCPT":
                found = _PATH.match(argument)
                if envelope.sender is None:
                    await say("503 MAIL FROM first")
                elif found is None or not argument.upper().startswith("TO:") or not found.group(1):
                    await say("501 syntax: RCPT TO:<address>")
                elif len(envelope.recipients) >= MAX_RECIPIENTS:
                    await say("452 too many recipients")
                else:
                    envelope.recipients.append(found.group(1))
                    await say("250 OK")
            elif verb == "DATA":
                if not envelope.recipients:
                    await say("503 RCPT TO first")
                    continue
                await say("354 end the message with <CRLF>.<CRLF>")
                content = await self._content(line)
                if content is None:
                    await say(f"552 a message here holds at most {MAX_MESSAGE_BYTES} bytes")
                else:
                    kept = await asyncio.to_thread(self._keep, envelope, content)
                    await say(f"250 OK: kept as {kept.name}")
                envelope = _Envelope()
            elif verb == "RSET":
                envelope = _Envelope()
                await say("250 OK")
            elif verb == "NOOP":
                await say("250 OK")
            elif verb == "VRFY":
                await say("252 every address is taken here")
            elif verb == "QUIT":
                await say("221 bye")
                return
            elif verb == "STARTTLS":
                await say("502 no TLS here: the demo's catcher is plain SMTP on loopback")
            else:
                await say("500 command not recognised")

    async def _login(self, argument: str, say: Say, line: Line) -> None:
        """Any user name and password are taken (the demo account's mailbox needs none)."""
        mechanism, _, initial = argument.partition(" ")
        if mechanism.upper() == "PLAIN":
            prompts = [] if initial else [""]
        elif mechanism.upper() == "LOGIN":  # the user name may come with the command
            prompts = ["UGFzc3dvcmQ6"] if initial else ["VXNlcm5hbWU6", "UGFzc3dvcmQ6"]
        else:
            await say("504 AUTH PLAIN or LOGIN")
            return
        for prompt in prompts:
            await say(f"334 {prompt}")
            answer = (await line()).strip()
            if answer == b"*":
                await say("501 authentication cancelled")
                return
            try:
                base64.b64decode(answer, validate=True)
            except ValueError:
                await say("501 not base64")
                return
        await say("235 authenticated (any login is taken here)")

    async def _content(self, line: Line) -> bytes | None:
        """The message up to the line holding a single dot, dots unstuffed; None past the size limit
        (read to its end all the same, so that the conversation goes on)."""
        parts: list[bytes] = []
        size = 0
        while True:
            read = await line()
            if read in (b".\r\n", b".\n"):
                return None if size > MAX_MESSAGE_BYTES else b"".join(parts)
            if read.startswith(b"."):
                read = read[1:]
            size += len(read)
            if size <= MAX_MESSAGE_BYTES:
                parts.append(read)

    def _keep(self, envelope: _Envelope, content: bytes) -> Path:
        """Writes the message whole, then renames it into place: a reader never sees half of one."""
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
        path = self.folder / f"{stamp}-{secrets.token_hex(3)}.eml"
        head = f"Return-Path: <{envelope.sender or ''}>\r\nX-Original-To: {', '.join(envelope.recipients)}\r\n"
        partial = path.with_suffix(".part")
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as out:
            # Lines end as text files' do here (the wire's CRLF made LF): `cat` and mail readers take both.
            out.write((head.encode("utf-8", "replace") + content).replace(b"\r\n", b"\n"))
        partial.rename(path)
        log.info(
            "demo mail catcher: a message to %s kept in %s",
            ", ".join(envelope.recipients),
            path,
            extra={"file": str(path)},
        )
        return path


def run_in_thread(folder: Path, sock: socket.socket) -> threading.Thread:
    """The catcher on an event loop of its own in a daemon thread, on ``sock`` (bound by the caller, so
    that a port already taken is reported before the server starts): `vpx serve` runs it next to the
    server processes, whatever their number, for as long as it runs."""
    catcher = MailCatcher(folder)
    started = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(catcher.start(sock))
        except BaseException as exc:  # reported to the caller below
            failure.append(exc)
            started.set()
            loop.close()
            return
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=run, name="vpx demo mail catcher", daemon=True)
    thread.start()
    started.wait()
    if failure:
        raise failure[0]
    return thread
