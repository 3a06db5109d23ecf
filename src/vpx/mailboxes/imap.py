"""Reading a customer's own mailbox over IMAP (D34) without changing it: replies and bounces to classify,
and the Sent folder to settle whether a send that a crash interrupted went out.

Every folder is opened read-only (EXAMINE) and every message read with BODY.PEEK, so nothing is marked
\\Seen; nothing is stored, expunged, moved, copied or appended. The customer reads the same mailbox.

Blocking (imapclient over imaplib): callers run these functions in a thread. The host is resolved once,
every address is checked by D26's guard, and the connection goes to a checked address while TLS verifies
the certificate against the configured host name.
"""

from __future__ import annotations

import imaplib
import ipaddress
import re
import socket
import ssl
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from email.parser import BytesHeaderParser
from email.policy import compat32
from typing import Any

from imapclient import IMAPClient  # type: ignore[import-untyped]

from vpx.mailboxes.inbound import canonical_message_id
from vpx.outbound.addresses import checked_address

SECURITIES = ("tls", "starttls", "none")
REASON_CHARS = 500
# A message is read this far: its header and a bounce's report come first, attachments after.
MAX_MESSAGE_BYTES = 1 << 20
FETCH_BATCH = 50
# Where mail clients keep sent mail when the server names no \Sent folder (RFC 6154).
SENT_FOLDER_NAMES = (
    "Sent",
    "Sent Items",
    "Sent Messages",
    "Sent Mail",
    "[Gmail]/Sent Mail",
    "INBOX.Sent",
    "INBOX/Sent",
)
# imaplib words its errors with the server's bytes as Python writes them: b'[AUTHENTICATIONFAILED] ...'.
_PYTHON_BYTES = re.compile(r"""\bb(['"])(.*?)\1""")
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class ImapAccount:
    host: str
    port: int
    security: str  # "tls" | "starttls" | "none"
    username: str
    password: str = field(repr=False)
    timeout: float = 30.0
    verify_tls: bool = True
    # Loopback and private addresses admitted (VPX_MAILBOX_ALLOW_PRIVATE); link-local and metadata never.
    allow_private: bool = False

    def __post_init__(self) -> None:
        if self.security not in SECURITIES:
            raise ValueError(f"security must be one of {', '.join(SECURITIES)}")


@dataclass(frozen=True)
class Fetched:
    uid: int
    raw: bytes  # the message, its first MAX_MESSAGE_BYTES when longer


# What went wrong, in words of our own: what the account is shown. A server's own answer may be
# anything a host on that port says, so it stays in ``reason`` (for the logs). "host" is the address
# guard's refusal, whose reason is ours and is shown as it is.
FAILURES = {
    "auth": "authentication failed",
    "tls": "TLS failed",
    "connect": "could not connect",
    "protocol": "not an IMAP server",
}


class ImapError(Exception):
    """The mailbox could not be read: ``reason`` is the server's answer or the connection's failure,
    never the password; ``kind`` what went wrong (a key of FAILURES, or "host"), ``said`` that in
    words of our own."""

    def __init__(self, reason: str, *, kind: str = "protocol") -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind

    @property
    def said(self) -> str:
        return self.reason if self.kind == "host" else FAILURES[self.kind]


def verify(account: ImapAccount) -> None:
    """Connects, secures, logs in and out as configured; ImapError with the server's reason otherwise."""
    with _session(account):
        pass


def fetch_since(
    account: ImapAccount, *, folder: str = "INBOX", after_uid: int | None, uidvalidity: int | None, limit: int = 200
) -> tuple[list[Fetched], int]:
    """The folder's messages with a UID above ``after_uid``, oldest first, at most ``limit``; its ``limit``
    newest instead when there is no ``after_uid`` or the folder's UIDVALIDITY is not ``uidvalidity`` (its
    UIDs then name other messages, RFC 3501 2.3.1.1). Returned with the folder's UIDVALIDITY."""
    if limit < 1:
        raise ValueError("limit must be at least 1")
    with _session(account) as client:
        status = client.select_folder(folder, readonly=True)
        if b"UIDVALIDITY" not in status:
            raise ImapError(f"the server gave no UIDVALIDITY for {folder}")
        current = int(status[b"UIDVALIDITY"])
        exists = int(status.get(b"EXISTS", 0))
        if exists == 0:
            return [], current
        if after_uid is None or uidvalidity != current:
            # Sequence numbers run in UID order (RFC 3501 2.3.1.2): the last ``limit`` are the newest.
            uids = sorted(client.search([f"{max(1, exists - limit + 1)}:*"]))[-limit:]
        else:
            # "n:*" matches the last message even when its UID is below n (RFC 3501 6.4.8).
            uids = sorted(uid for uid in client.search(["UID", f"{after_uid + 1}:*"]) if uid > after_uid)[:limit]
        return _bodies(client, uids), current


def find_message_id(account: ImapAccount, message_id: str) -> bool:
    """True when a message with this Message-ID is in the account's Sent folder (RFC 6154 \\Sent, else
    one of SENT_FOLDER_NAMES) or its INBOX."""
    wanted = canonical_message_id(message_id)
    if wanted is None:
        raise ValueError(f"{message_id!r} is not a Message-ID")
    with _session(account) as client:
        for folder in [*_sent_folders(client), "INBOX"]:
            try:
                client.select_folder(folder, readonly=True)
            except imaplib.IMAP4.error as exc:
                if isinstance(exc, imaplib.IMAP4.abort):
                    raise
                continue  # a folder that cannot be opened holds nothing to find
            # HEADER searches for a substring, without regard to case: compare what it finds exactly.
            candidates = client.search(["HEADER", "Message-ID", wanted])
            if not candidates:
                continue
            headers = client.fetch(sorted(candidates)[:20], ["BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)]"])
            for data in headers.values():
                header = next((v for k, v in data.items() if k.startswith(b"BODY[") and isinstance(v, bytes)), b"")
                parsed = BytesHeaderParser(policy=compat32).parsebytes(header)
                if canonical_message_id(str(parsed.get("Message-ID", ""))) == wanted:
                    return True
    return False


def _bodies(client: Any, uids: Sequence[int]) -> list[Fetched]:
    """The messages of ``uids`` read with BODY.PEEK (which sets no flag), in the order given."""
    fetched = []
    for start in range(0, len(uids), FETCH_BATCH):
        batch = list(uids[start : start + FETCH_BATCH])
        response = client.fetch(batch, [f"BODY.PEEK[]<0.{MAX_MESSAGE_BYTES}>"])
        for uid in batch:
            data = response.get(uid)
            if data is None:
                continue  # expunged by the mailbox's owner since the search
            raw = next((v for k, v in data.items() if k.startswith(b"BODY[") and isinstance(v, bytes)), None)
            if raw is not None:
                fetched.append(Fetched(uid, raw))
    return fetched


def _sent_folders(client: Any) -> list[str]:
    """The folders marked \\Sent (RFC 6154), else those with a usual name for sent mail."""
    listed = [(flags, name) for flags, _delimiter, name in client.list_folders()]
    selectable = [(flags, name) for flags, name in listed if b"\\Noselect" not in flags]
    marked = [name for flags, name in selectable if b"\\Sent" in flags]
    if marked:
        return marked
    usual = {name.lower() for name in SENT_FOLDER_NAMES}
    return [name for _flags, name in selectable if name.lower() in usual]


@contextmanager
def _session(account: ImapAccount) -> Iterator[Any]:
    """A logged-in client; every failure inside becomes ImapError, and the client logs out at the end."""
    step = "connecting"
    client = None
    try:
        addresses = _checked_addresses(account)
        context = _tls_context(account)
        step = "TLS handshake" if account.security == "tls" else "greeting"
        client = _GuardedClient(account, addresses, context)
        if account.security == "starttls":
            step = "STARTTLS"
            if not client.has_capability("STARTTLS"):
                raise ImapError("the server does not offer STARTTLS", kind="tls")
            client.starttls(context)
        step = "login"
        if account.username.isascii() and account.password.isascii():
            client.login(account.username, account.password)
        else:
            # LOGIN's strings are ASCII in imaplib; SASL PLAIN carries UTF-8 (RFC 4616).
            client.plain_login(account.username, account.password)
        step = "reading"
        yield client
    except (imaplib.IMAP4.error, OSError) as exc:
        raise _failure(account, step, exc) from None
    finally:
        if client is not None:
            _close(client)


def _failure(account: ImapAccount, step: str, exc: imaplib.IMAP4.error | OSError) -> ImapError:
    if isinstance(exc, ssl.SSLCertVerificationError):
        reason, kind = f"the server's certificate does not verify: {exc.verify_message or exc}", "tls"
    elif isinstance(exc, TimeoutError):
        reason, kind = f"timed out ({step}) after {account.timeout:g} s", "connect"
    elif isinstance(exc, ssl.SSLError):
        reason, kind = f"TLS failed ({step}): {exc.reason or exc}", "tls"
    elif isinstance(exc, OSError):
        reason, kind = f"{step} failed: {exc.strerror or exc or type(exc).__name__}", "connect"
    else:
        reason = f"{step} refused: {_PYTHON_BYTES.sub(lambda m: m.group(2), str(exc))}"
        kind = {"login": "auth", "STARTTLS": "tls"}.get(step, "protocol")
    if account.password:
        reason = reason.replace(account.password, "***")
    return ImapError(reason[:REASON_CHARS], kind=kind)


def _close(client: Any) -> None:
    try:
        client.logout()
    except Exception:  # the connection is already gone or broken: close the socket and be done
        with suppress(Exception):
            client.shutdown()


def _tls_context(account: ImapAccount) -> ssl.SSLContext:
    context = ssl.create_default_context()
    if not account.verify_tls:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def _checked_addresses(account: ImapAccount) -> list[IPAddress]:
    """Every address of the host, each allowed by the guard; ImapError naming the first that is not."""
    host = account.host.strip().removeprefix("[").removesuffix("]")
    try:
        found = [str(ipaddress.ip_address(host))]
    except ValueError:
        try:
            infos = socket.getaddrinfo(host, account.port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise ImapError(f"host {host} does not resolve ({exc})", kind="connect") from None
        found = list(dict.fromkeys(str(info[4][0]) for info in infos))
    addresses: list[IPAddress] = []
    for text in found:
        address, why = checked_address(host, text, allow_private=account.allow_private)
        if address is None:
            raise ImapError(f"refused: {why}", kind="host")
        addresses.append(address)
    if not addresses:
        raise ImapError(f"host {host} does not resolve", kind="connect")
    return addresses


class _CheckedIMAP4(imaplib.IMAP4):
    """imaplib's connection, opened to the first checked address that answers instead of the host name."""

    def __init__(
        self, host: str, port: int, addresses: list[IPAddress], tls: ssl.SSLContext | None, timeout: float
    ) -> None:
        self._addresses = addresses
        self._tls = tls
        super().__init__(host, port, timeout)

    def _create_socket(self, timeout: float | None = None) -> socket.socket:
        failures = []
        for address in self._addresses:
            try:
                sock = socket.create_connection((str(address), self.port), timeout)
            except OSError as exc:
                failures.append(f"{address}: {exc.strerror or type(exc).__name__}")
                continue
            if self._tls is None:
                return sock
            try:
                return self._tls.wrap_socket(sock, server_hostname=self.host)
            except BaseException:
                sock.close()
                raise
        raise ImapError(f"could not connect to {self.host}:{self.port} ({'; '.join(failures)})", kind="connect")


class _GuardedClient(IMAPClient):  # type: ignore[misc]
    """IMAPClient whose connection is _CheckedIMAP4's."""

    def __init__(self, account: ImapAccount, addresses: list[IPAddress], context: ssl.SSLContext) -> None:
        self._addresses = addresses
        self._account = account
        tls = account.security == "tls"
        super().__init__(
            account.host.strip().removeprefix("[").removesuffix("]"),
            port=account.port,
            ssl=tls,
            ssl_context=context,
            timeout=account.timeout,
        )

    def _create_IMAP4(self) -> imaplib.IMAP4:
        tls = self.ssl_context if self.ssl else None
        return _CheckedIMAP4(self.host, self.port, self._addresses, tls, self._account.timeout)
