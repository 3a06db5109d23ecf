"""The operator's SMTP server and sender address, read from the settings (VPX_SMTP_URL, VPX_MAIL_FROM).

    smtp://[user[:password]@]host[:port]               plain SMTP, port 25 by default
    smtp://[user[:password]@]host[:port]?starttls=1    STARTTLS required, port 587 by default
    smtps://[user[:password]@]host[:port]              TLS from the first byte, port 465 by default

User name and password are percent-encoded (``@`` is ``%40``, ``:`` is ``%3A``). ``verify=0`` skips
the certificate check: a development server with a self-signed certificate only.

Nothing here opens a connection: the settings check a URL with it when they are read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from email.headerregistry import Address
from email.utils import parseaddr
from ipaddress import ip_address
from urllib.parse import parse_qsl, unquote, urlsplit

DEFAULT_PORTS = {("smtp", False): 25, ("smtp", True): 587, ("smtps", False): 465}
OPTIONS = ("starttls", "verify")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_DOMAIN = re.compile(rf"(?=.{{1,253}}$){_LABEL}(?:\.{_LABEL})*")
_LOCAL_PART = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]{1,64}")


class SmtpUrlError(Exception):
    """A VPX_SMTP_URL that cannot be used. Not a ValueError on purpose: the settings would turn it into
    a validation error that prints the URL, password included, next to the message."""


@dataclass(frozen=True)
class SmtpServer:
    host: str
    port: int
    security: str  # "starttls" | "tls" | "none", as vpx.mailboxes.smtp names them
    username: str | None
    password: str | None = field(repr=False)
    verify_tls: bool = True


def parse_smtp_url(url: str) -> SmtpServer:
    """The server a VPX_SMTP_URL names; SmtpUrlError saying what is wrong (never quoting the URL)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise SmtpUrlError("VPX_SMTP_URL is not a URL such as smtp://user:password@host:587?starttls=1") from None
    scheme = parts.scheme.lower()
    if scheme not in ("smtp", "smtps"):
        raise SmtpUrlError("VPX_SMTP_URL must start with smtp:// or smtps://")
    host = parts.hostname or ""
    if not host:
        raise SmtpUrlError("VPX_SMTP_URL names no host")
    if parts.path not in ("", "/") or parts.fragment:
        raise SmtpUrlError("VPX_SMTP_URL takes no path: smtp://user:password@host:port?starttls=1")
    options: dict[str, bool] = {}
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if name not in OPTIONS:
            raise SmtpUrlError(f"VPX_SMTP_URL: unknown option {name!r} (known: {', '.join(OPTIONS)})")
        if value.lower() not in _TRUE | _FALSE:
            raise SmtpUrlError(f"VPX_SMTP_URL: {name} must be 1 or 0")
        options[name] = value.lower() in _TRUE
    starttls = options.get("starttls", False)
    if scheme == "smtps" and starttls:
        raise SmtpUrlError("VPX_SMTP_URL: smtps:// is TLS from the start; starttls=1 is for smtp://")
    security = "tls" if scheme == "smtps" else "starttls" if starttls else "none"
    return SmtpServer(
        host=host,
        port=port or DEFAULT_PORTS[(scheme, starttls)],
        security=security,
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password is not None else None,
        verify_tls=options.get("verify", True),
    )


def parse_sender(value: str) -> Address:
    """``vpx <no-reply@example.com>`` or a bare address; ValueError when it is not one ASCII address."""
    if any(c in value for c in "\r\n\x00"):
        raise ValueError("VPX_MAIL_FROM must be one line")
    name, addr = parseaddr(value.strip())
    local, at, domain = addr.rpartition("@")
    if not at or not _LOCAL_PART.fullmatch(local) or not _DOMAIN.fullmatch(domain):
        raise ValueError("VPX_MAIL_FROM must be an address such as vpx <no-reply@example.com>")
    return Address(display_name=name, addr_spec=addr)


def default_sender(public_url: str) -> Address:
    """no-reply@ the public URL's host (``localhost`` when that is an address rather than a name)."""
    host = urlsplit(public_url).hostname or ""
    try:
        ip_address(host)
        host = "localhost"
    except ValueError:
        pass
    if not _DOMAIN.fullmatch(host):
        host = "localhost"
    return Address(display_name="vpx", addr_spec=f"no-reply@{host}")
