"""Sending through a customer's own SMTP mailbox (D34), one step of the conversation at a time.

The caller stores the Message-ID before calling and commits "transmitting" in ``before_data``, which runs
right before the DATA command: a message is never on its way before that commit, and ``before_data`` is
not called when the server has already refused the sender or the recipient.

What each answer becomes:
- the server takes the message (250 after DATA): Outcome "accepted";
- 5xx to RCPT TO or DATA: Outcome "rejected", a bounce (this recipient or this message will not go);
- 4xx at any step, a connection refused, reset or timed out, a TLS handshake that breaks: Outcome
  "deferred" (try later); ``in_doubt`` when it broke after the message was sent and before the answer,
  so the server may have taken it;
- 5xx before RCPT TO (greeting, EHLO, STARTTLS, AUTH, MAIL FROM), credentials refused, STARTTLS not
  offered, a certificate that does not verify, a host the SSRF guard refuses: SmtpError. The mailbox
  itself is wrong and no message can go until someone fixes it, so retrying each message would only
  delay the news; the caller pauses the mailbox. SmtpError is raised before ``before_data`` only.

The host is resolved once and every address checked by D26's guard; the connection goes to a checked
address and TLS verifies the certificate against the configured host name, so a DNS answer cannot
change between the check and the connection.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from email.message import EmailMessage
from types import TracebackType
from typing import Literal

import aiosmtplib

from vpx.outbound.addresses import checked_address
from vpx.outbound.resolver import Resolver, system_resolver

Status = Literal["accepted", "rejected", "deferred"]
SECURITIES = ("starttls", "tls", "none")
REPLY_CHARS = 500
# Servers cap the messages of one connection (often at 100); a session opens a new one before that.
SENDS_PER_CONNECTION = 90
# An envelope address: ASCII, one "@", nothing that could end the command line or the angle brackets.
_ENVELOPE_ADDRESS = re.compile(r"[!-;=?-~]+@[A-Za-z0-9.-]+")


@dataclass(frozen=True)
class SmtpAccount:
    host: str
    port: int
    security: str  # "starttls" | "tls" | "none"
    username: str | None
    password: str | None = field(repr=False)
    timeout: float = 30.0
    verify_tls: bool = True
    # Loopback and private addresses admitted (VPX_MAILBOX_ALLOW_PRIVATE); link-local and metadata never.
    allow_private: bool = False

    def __post_init__(self) -> None:
        if self.security not in SECURITIES:
            raise ValueError(f"security must be one of {', '.join(SECURITIES)}")


# What went wrong, in words of our own: what the account is shown (a mailbox's check, its pause
# reason). A server's own answer may be anything a host on that port says (a banner, a page), so it
# is kept for the logs and the message's last answer only. "host" is the address guard's refusal,
# whose reason is ours and is shown as it is.
FAILURES = {
    "auth": "authentication failed",
    "tls": "TLS failed",
    "connect": "could not connect",
    "protocol": "not an SMTP server",
    "refused": "the server refused the connection",
    "unavailable": "the server is unavailable, try again later",
    "sender": "the server refused the sender",
}


class SmtpError(Exception):
    """The mailbox cannot send at all: ``reason`` is the server's answer or ours, never the password;
    ``kind`` what went wrong (a key of FAILURES, or "host"), ``said`` that in words of our own."""

    def __init__(self, reason: str, code: int | None = None, *, kind: str = "refused") -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code
        self.kind = kind

    @property
    def said(self) -> str:
        return self.reason if self.kind == "host" else FAILURES[self.kind]


@dataclass(frozen=True)
class Outcome:
    status: Status
    code: int | None
    reply: str  # the server's answer (or what went wrong), trimmed
    in_doubt: bool = False  # deferred after the message went and before the answer: it may have arrived


BeforeData = Callable[[], Awaitable[None]]


async def verify(account: SmtpAccount, *, resolver: Resolver = system_resolver) -> None:
    """Connects, secures, greets and logs in as configured, then says goodbye; SmtpError with the reason."""
    async with SmtpSession(account, resolver=resolver) as session:
        try:
            await session._open()
        except _Deferred as exc:
            raise SmtpError(exc.outcome.reply, exc.outcome.code, kind=exc.kind) from None


async def send(
    account: SmtpAccount,
    message: EmailMessage,
    *,
    sender: str,
    recipient: str,
    before_data: BeforeData | None = None,
    resolver: Resolver = system_resolver,
) -> Outcome:
    """Sends one message over a connection of its own; see the module's docstring for what each answer gives."""
    async with SmtpSession(account, resolver=resolver) as session:
        return await session.send(message, sender=sender, recipient=recipient, before_data=before_data)


class SmtpSession:
    """One connection to a mailbox's server kept for several sends, one at a time; opened again when it
    has dropped or has carried SENDS_PER_CONNECTION messages."""

    def __init__(self, account: SmtpAccount, *, resolver: Resolver = system_resolver) -> None:
        self.account = account
        self._resolver = resolver
        self._client: aiosmtplib.SMTP | None = None
        self._sends = 0
        self._lock = asyncio.Lock()

    async def __aenter__(self) -> SmtpSession:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.close()

    async def _open(self) -> None:
        """Connected and logged in, or SmtpError; a temporary failure raises _Deferred."""
        if self._usable():
            return
        await self.close()
        self._client = await self._connect()
        self._sends = 0

    async def close(self) -> None:
        """QUIT when connected (a failure to say goodbye is no failure)."""
        client, self._client = self._client, None
        if client is None or not client.is_connected:
            return
        try:
            await client.quit(timeout=min(self.account.timeout, 5.0))
        except (aiosmtplib.SMTPException, OSError, TimeoutError):
            pass
        finally:
            client.close()

    async def send(
        self, message: EmailMessage, *, sender: str, recipient: str, before_data: BeforeData | None = None
    ) -> Outcome:
        """Sends one message; see the module's docstring for what each answer gives."""
        for name, address in (("sender", sender), ("recipient", recipient)):
            if not _ENVELOPE_ADDRESS.fullmatch(address):
                raise ValueError(f"{name} must be a plain ASCII address")
        content = message.as_bytes()
        async with self._lock:
            kept = self._usable()
            try:
                try:
                    return await self._transaction(content, sender, recipient, before_data)
                except _Stale:
                    if not kept:
                        raise
                    # The kept connection had been closed by the server while idle, and nothing was sent
                    # on it: once more on a new one.
                    return await self._transaction(content, sender, recipient, before_data)
            except _Deferred as exc:
                return exc.outcome

    async def _transaction(
        self, content: bytes, sender: str, recipient: str, before_data: BeforeData | None
    ) -> Outcome:
        await self._open()
        client = self._client
        assert client is not None
        try:
            return await self._steps(client, content, sender, recipient, before_data)
        except BaseException as exc:
            # before_data failed, or the task was cancelled: the conversation stops where it is.
            if not isinstance(exc, _Deferred | SmtpError):
                self._drop()
            raise

    async def _steps(
        self, client: aiosmtplib.SMTP, content: bytes, sender: str, recipient: str, before_data: BeforeData | None
    ) -> Outcome:
        try:
            await client.mail(sender)
        except aiosmtplib.SMTPResponseException as exc:
            if exc.code >= 500:
                await self._reset()
                raise SmtpError(
                    f"MAIL FROM <{sender}> refused: {self._trim(exc.message)}", exc.code, kind="sender"
                ) from None
            if exc.code == 421:
                self._drop()
                raise _Stale(self._deferred(exc)) from None
            await self._reset()
            return self._deferred(exc)
        except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
            self._drop()
            raise _Stale(self._deferred(exc)) from None

        try:
            await client.rcpt(recipient)
        except aiosmtplib.SMTPResponseException as exc:
            return await self._refused(exc)
        except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
            self._drop()
            return self._deferred(exc)

        if before_data is not None:
            await before_data()
        self._sends += 1
        try:
            answer = await client.data(content)
        except aiosmtplib.SMTPResponseException as exc:
            return await self._refused(exc)
        except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
            # The message may have reached the server, whose answer never came.
            self._drop()
            return self._deferred(exc, in_doubt=True)
        return Outcome("accepted", answer.code, self._trim(answer.message))

    async def _refused(self, exc: aiosmtplib.SMTPResponseException) -> Outcome:
        """A refusal of the recipient or the message: rejected on 5xx, deferred otherwise."""
        if exc.code == 421:  # the server is closing the connection
            self._drop()
        else:
            await self._reset()
        if exc.code >= 500:
            return Outcome("rejected", exc.code, self._trim(exc.message))
        return self._deferred(exc)

    def _usable(self) -> bool:
        return self._client is not None and self._client.is_connected and self._sends < SENDS_PER_CONNECTION

    async def _connect(self) -> aiosmtplib.SMTP:
        account = self.account
        host = account.host.strip().removeprefix("[").removesuffix("]")
        try:
            async with asyncio.timeout(account.timeout):
                addresses = await self._checked_addresses(host)
                sock = await self._open_socket(addresses)
        except TimeoutError:
            raise _Deferred(Outcome("deferred", None, f"timed out connecting to {host}:{account.port}")) from None
        client = aiosmtplib.SMTP(
            hostname=host,  # the name TLS verifies the certificate against (and sends as SNI)
            sock=sock,
            local_hostname=await _local_hostname(),
            timeout=account.timeout,
            use_tls=account.security == "tls",
            start_tls=False,
            tls_context=await _tls_context(account.verify_tls) if account.security != "none" else None,
        )
        step = "greeting"
        try:
            await client.connect()
            step = "EHLO"
            await client.ehlo()
            if account.security == "starttls":
                step = "STARTTLS"
                if not client.supports_extension("starttls"):
                    raise SmtpError("the server does not offer STARTTLS", kind="tls")
                await client.starttls()
                await client.ehlo()
            if account.username and account.password is not None:
                step = "AUTH"
                await client.login(account.username, account.password)
        except BaseException as exc:
            client.close()
            sock.close()
            if isinstance(exc, Exception) and not isinstance(exc, SmtpError):
                raise self._opening_failure(step, exc) from None
            raise
        return client

    async def _checked_addresses(self, host: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
        """Every address of the host, each allowed by the guard; SmtpError naming the first that is not."""
        try:
            found = [str(ipaddress.ip_address(host))]
        except ValueError:
            try:
                found = await self._resolver(host, self.account.port)
            except (OSError, UnicodeError) as exc:
                raise _Deferred(Outcome("deferred", None, f"host {host} does not resolve ({exc})")) from None
        if not found:
            raise _Deferred(Outcome("deferred", None, f"host {host} does not resolve"))
        addresses = []
        for text in found:
            address, why = checked_address(host, text, allow_private=self.account.allow_private)
            if address is None:
                raise SmtpError(f"refused: {why}", kind="host")
            addresses.append(address)
        return addresses

    async def _open_socket(self, addresses: list[ipaddress.IPv4Address | ipaddress.IPv6Address]) -> socket.socket:
        """A socket connected to the first address that answers, each tried in the resolver's order."""
        loop = asyncio.get_running_loop()
        failures = []
        for address in addresses:
            sock = socket.socket(socket.AF_INET6 if address.version == 6 else socket.AF_INET, socket.SOCK_STREAM)
            sock.setblocking(False)
            try:
                await loop.sock_connect(sock, (str(address), self.account.port))
            except OSError as exc:
                sock.close()
                failures.append(f"{address}: {exc.strerror or type(exc).__name__}")
                continue
            except BaseException:
                sock.close()
                raise
            return sock
        reason = f"could not connect to {self.account.host}:{self.account.port} ({'; '.join(failures)})"
        raise _Deferred(Outcome("deferred", None, reason))

    def _opening_failure(self, step: str, exc: Exception) -> Exception:
        """What a failure while connecting, securing, greeting or logging in means: SmtpError or _Deferred."""
        cause = exc.__cause__ if isinstance(exc, aiosmtplib.SMTPConnectError) else exc
        if isinstance(cause, ssl.SSLCertVerificationError):
            return SmtpError(f"the server's certificate does not verify: {cause.verify_message or cause}", kind="tls")
        if isinstance(exc, aiosmtplib.SMTPResponseException):
            if exc.code >= 500:
                kind = {"AUTH": "auth", "STARTTLS": "tls"}.get(step, "refused")
                return SmtpError(f"{step} refused: {self._trim(exc.message)}", exc.code, kind=kind)
            # A line that is no SMTP answer at all (code -1), or a temporary refusal.
            return _Deferred(self._deferred(exc), kind="unavailable" if 400 <= exc.code < 500 else "protocol")
        if type(exc) is aiosmtplib.SMTPException or isinstance(exc, aiosmtplib.SMTPNotSupported):
            # "No suitable authentication method", "AUTH not supported": the account's settings are wrong.
            return SmtpError(f"{step}: {self._trim(str(exc))}", kind="auth" if step == "AUTH" else "protocol")
        tls = isinstance(cause, ssl.SSLError) or step == "STARTTLS"
        return _Deferred(self._deferred(exc), kind="tls" if tls else "connect")

    def _deferred(self, exc: BaseException, *, in_doubt: bool = False) -> Outcome:
        if isinstance(exc, aiosmtplib.SMTPResponseException):
            return Outcome("deferred", exc.code, self._trim(exc.message), in_doubt)
        detail = str(exc) or type(exc).__name__
        if isinstance(exc.__cause__, OSError) and str(exc.__cause__) not in detail:
            detail = f"{detail}: {exc.__cause__}"
        return Outcome("deferred", None, self._trim(detail), in_doubt)

    def _trim(self, text: str) -> str:
        text = " ".join(text.split())
        password = self.account.password
        if password:
            text = text.replace(password, "***")
        return text[:REPLY_CHARS]

    async def _reset(self) -> None:
        """Ends the transaction with RSET so the connection can carry the next one; closes it otherwise."""
        client = self._client
        if client is None or not client.is_connected:
            return
        try:
            await client.rset()
        except (aiosmtplib.SMTPException, OSError, TimeoutError):
            self._drop()

    def _drop(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            client.close()


class _Deferred(Exception):
    """Carries a "deferred" Outcome out of the steps of a conversation; ``kind`` as SmtpError's."""

    def __init__(self, outcome: Outcome, *, kind: str = "connect") -> None:
        super().__init__(outcome.reply)
        self.outcome = outcome
        self.kind = kind


class _Stale(_Deferred):
    """The connection was gone before anything was sent on it."""


_local_name: str | None = None
_tls_contexts: dict[bool, ssl.SSLContext] = {}


async def _tls_context(verify: bool) -> ssl.SSLContext:
    """One client context per setting, built once: loading the system's certificates takes milliseconds."""
    if verify not in _tls_contexts:
        context = await asyncio.to_thread(ssl.create_default_context)
        if not verify:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        _tls_contexts[verify] = context
    return _tls_contexts[verify]


async def _local_hostname() -> str:
    """This machine's name for EHLO, looked up once (the lookup can take the resolver's time)."""
    global _local_name
    if _local_name is None:
        name = await asyncio.to_thread(socket.getfqdn)
        _local_name = name if name and re.fullmatch(r"[A-Za-z0-9.-]+", name) else "localhost"
    return _local_name
