"""A real SMTP server on loopback for the sequence tests: aiosmtpd in a background thread on a free port.

It records every message it accepts (the whole DATA), and answers as told: a chosen code to RCPT TO for
some recipients, a temporary failure at the end of DATA for the next messages, AUTH required when
``username`` and ``password`` are set (PLAIN or LOGIN, over plain connections too). ``tls`` serves
STARTTLS or implicit TLS with a self-signed certificate for localhost and 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import logging
import ssl
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email import policy
from email.message import EmailMessage
from email.parser import BytesHeaderParser, BytesParser
from pathlib import Path
from typing import Any, Literal, cast

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session

Tls = Literal["none", "starttls", "tls"]


@dataclass
class Received:
    sender: str
    recipients: list[str]
    data: bytes
    message_id: str | None

    def message(self) -> EmailMessage:
        """The message as the email package reads it (headers decoded)."""
        return BytesParser(policy=policy.default).parsebytes(self.data)


class SmtpSink:
    def __init__(
        self, *, username: str | None = None, password: str | None = None, tls: Tls = "none", host: str = "127.0.0.1"
    ) -> None:
        self.host = host
        self.port = 0
        self.username = username
        self.password = password
        self.tls: Tls = tls
        self.received: list[Received] = []
        # The commands the server saw, in order ("MAIL", "RCPT", "DATA", "RSET", "QUIT"), and how many
        # connections it took: what the tests of timing and connection reuse look at.
        self.commands: list[str] = []
        self.connections = 0
        # Called with each message taken, before the answer; and seconds to wait before answering:
        # the window in which a sender killed cannot know whether the message went.
        self.on_accept: Callable[[Received], None] | None = None
        self.answer_delay = 0.0
        self.lock = threading.Lock()
        self._refusals: dict[str, str] = {}
        self._tempfails: list[str] = []
        self._vanish = 0
        self._servers: set[_Server] = set()
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        self._controller: Controller | None = None

    def refuse(self, recipient: str, code: int = 550, text: str = "5.1.1 User unknown") -> None:
        """RCPT TO this address answers ``code text`` from now on."""
        with self.lock:
            self._refusals[recipient.lower()] = f"{code} {text}"

    def tempfail_next(self, times: int = 1, code: int = 451, text: str = "4.7.1 Try again later") -> None:
        """The next ``times`` messages are answered ``code text`` at the end of DATA (and not recorded)."""
        with self.lock:
            self._tempfails.extend([f"{code} {text}"] * times)

    def vanish_next(self, times: int = 1) -> None:
        """The next ``times`` messages are taken (recorded) but the connection closes before the answer:
        the client cannot know whether they went."""
        with self.lock:
            self._vanish += times

    def drop_connections(self) -> None:
        """Closes every open connection from the server's side, as an idle timeout would."""
        controller = self._controller
        if controller is None:
            return
        with self.lock:
            servers = list(self._servers)

        async def close() -> None:
            for server in servers:
                if server.transport is not None:
                    server.transport.close()

        asyncio.run_coroutine_threadsafe(close(), controller.loop).result(timeout=5)

    def reset(self) -> None:
        """Forgets what was received and every scripted answer."""
        with self.lock:
            self.received.clear()
            self.commands.clear()
            self.connections = 0
            self._refusals.clear()
            self._tempfails.clear()
            self._vanish = 0

    def start(self) -> SmtpSink:
        logging.getLogger("mail.log").addFilter(_quiet)
        context: ssl.SSLContext | None = None
        if self.tls != "none":
            self._folder = tempfile.TemporaryDirectory(prefix="smtp-sink-")
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(*self_signed(Path(self._folder.name)))
        parameters: dict[str, Any] = {
            "server_hostname": "sink.test",  # spares aiosmtpd a getfqdn() per connection
            "authenticator": self._authenticate,
            "auth_require_tls": False,
        }
        if self.tls == "starttls":
            parameters["tls_context"] = context
        self._controller = _Controller(
            self, _Handler(self), hostname=self.host, port=0, ready_timeout=5.0,
            ssl_context=context if self.tls == "tls" else None, **parameters,
        )  # fmt: skip
        self._controller.start()
        self.port = self._controller.port
        with self.lock:
            self.connections = 0  # the controller's own start-up probe
        return self

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None

    def __enter__(self) -> SmtpSink:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _note(self, command: str) -> None:
        with self.lock:
            self.commands.append(command)

    def _authenticate(
        self, server: SMTP, session: Session, envelope: Envelope, mechanism: str, data: Any
    ) -> AuthResult:
        if not isinstance(data, LoginPassword) or mechanism not in ("PLAIN", "LOGIN"):
            return AuthResult(success=False, handled=False)
        if self.username is None or (
            data.login.decode() == self.username and data.password.decode() == (self.password or "")
        ):
            return AuthResult(success=True, auth_data=data)
        return AuthResult(success=False, handled=False)


def _quiet(record: logging.LogRecord) -> bool:
    # aiosmtpd itself sets the attribute it then warns about, on every AUTH.
    return "login_data is deprecated" not in record.getMessage()


class _Handler:
    def __init__(self, sink: SmtpSink) -> None:
        self.sink = sink

    async def handle_MAIL(
        self, server: SMTP, session: Session, envelope: Envelope, address: str, options: list[str]
    ) -> str:
        if self.sink.username is not None and not session.authenticated:
            return "530 5.7.0 Authentication required"
        envelope.mail_from = address
        envelope.mail_options.extend(options)
        return "250 OK"

    async def handle_RCPT(
        self, server: SMTP, session: Session, envelope: Envelope, address: str, options: list[str]
    ) -> str:
        with self.sink.lock:
            refusal = self.sink._refusals.get(address.lower())
        if refusal is not None:
            return refusal
        envelope.rcpt_tos.append(address)
        envelope.rcpt_options.extend(options)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        data = envelope.original_content or b""
        with self.sink.lock:
            if self.sink._tempfails:
                return self.sink._tempfails.pop(0)
            found = BytesHeaderParser(policy=policy.default).parsebytes(data)["Message-ID"]
            message_id = str(found).strip() if found is not None else None
            received = Received(envelope.mail_from or "", list(envelope.rcpt_tos), data, message_id)
            self.sink.received.append(received)
            on_accept = self.sink.on_accept
        if on_accept is not None:
            # What a provider does with a message it took (Gmail keeps a copy in Sent), before it answers.
            await asyncio.to_thread(on_accept, received)
        if self.sink.answer_delay:
            await asyncio.sleep(self.sink.answer_delay)
        with self.sink.lock:
            if self.sink._vanish:
                self.sink._vanish -= 1
                cast(asyncio.Transport, server.transport).abort()
            return f"250 2.0.0 Ok: queued as {len(self.sink.received)}"


class _Server(SMTP):
    def __init__(self, sink: SmtpSink, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sink = sink

    def connection_made(self, transport: Any) -> None:
        with self.sink.lock:
            self.sink.connections += 1
            self.sink._servers.add(self)
        super().connection_made(transport)

    def connection_lost(self, error: Exception | None) -> None:
        with self.sink.lock:
            self.sink._servers.discard(self)
        super().connection_lost(error)

    async def smtp_MAIL(self, arg: str | None) -> None:
        self.sink._note("MAIL")
        await super().smtp_MAIL(arg)

    async def smtp_RCPT(self, arg: str | None) -> None:
        self.sink._note("RCPT")
        await super().smtp_RCPT(arg)

    async def smtp_DATA(self, arg: str) -> None:
        self.sink._note("DATA")
        await super().smtp_DATA(arg)

    async def smtp_RSET(self, arg: str) -> None:
        self.sink._note("RSET")
        await super().smtp_RSET(arg)

    async def smtp_QUIT(self, arg: str) -> None:
        self.sink._note("QUIT")
        await super().smtp_QUIT(arg)


class _Controller(Controller):
    def __init__(self, sink: SmtpSink, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sink = sink

    def factory(self) -> SMTP:
        return _Server(self.sink, self.handler, **self.SMTP_kwargs)

    def _trigger_server(self) -> None:
        # Bound to port 0: learn the port the system chose before the controller's probe connects.
        self.port = cast(asyncio.Server, self.server).sockets[0].getsockname()[1]
        super()._trigger_server()


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate and key for localhost and 127.0.0.1, valid for a day, trusted by nobody."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "sink.crt", folder / "sink.key"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


@pytest.fixture
def smtp_sink() -> Iterator[SmtpSink]:
    """A started sink without AUTH or TLS (set ``username``/``password`` on it to require AUTH)."""
    sink = SmtpSink().start()
    try:
        yield sink
    finally:
        sink.stop()
