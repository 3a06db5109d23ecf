"""The email a sequence step sends (D34): plain UTF-8 text, the one-click unsubscribe headers of RFC 8058,
and a footer with the unsubscribe link and the sender's postal address (CAN-SPAM).

No tracking pixel and no rewritten link: the body goes out as the caller rendered it. Every header value
is checked for line breaks before it is set, so a contact's name or a subject cannot add a header.
"""

from __future__ import annotations

import ipaddress
import re
import secrets
from dataclasses import dataclass
from datetime import datetime
from email import policy
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime
from urllib.parse import urlsplit

# SMTP's policy (CRLF, headers folded at 78) except that headers set raw stay as written: a long
# List-Unsubscribe URL folded by the email package comes out RFC 2047 encoded, which no mailbox
# provider reads as a URL.
MESSAGE_POLICY = policy.SMTP.clone(refold_source="none")
# A header line may be 998 characters long (RFC 5322 2.1.1); "List-Unsubscribe: <" and ">" take 20.
MAX_URL_LENGTH = 978
MAX_MESSAGE_ID_LENGTH = 250
# "<" id-left "@" id-right ">" with the characters RFC 5322's dot-atom-text allows on both sides.
_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+"
_MESSAGE_ID = re.compile(rf"<{_ATEXT}@{_ATEXT}>")
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_DOMAIN = re.compile(rf"(?=.{{1,253}}$){_LABEL}(?:\.{_LABEL})*")
# Printable ASCII without spaces (build() also refuses the angle brackets around it and commas between URLs).
_URL = re.compile(r"https?://[!-~]+")
_LINE_BREAKS = ("\r", "\n", "\x00", "\u2028", "\u2029", "\x85")


@dataclass(frozen=True)
class OutgoingEmail:
    message_id: str
    from_email: str
    from_name: str | None
    to_email: str
    to_name: str | None
    subject: str
    text: str
    postal_address: str
    unsubscribe_url: str
    in_reply_to: str | None = None


def new_message_id(domain: str) -> str:
    """A fresh, unguessable Message-ID under ``domain``: ``<token@domain>``."""
    if not _DOMAIN.fullmatch(domain):
        raise ValueError(f"{domain!r} is not a domain name")
    return f"<{secrets.token_urlsafe(18)}@{domain.lower()}>"


def build(email: OutgoingEmail, *, now: datetime) -> EmailMessage:
    """The message as it goes over SMTP; ValueError when a field could break a header or is malformed."""
    if now.tzinfo is None:
        raise ValueError("now must carry a time zone")
    for name in ("message_id", "from_email", "from_name", "to_email", "to_name", "subject", "unsubscribe_url"):
        _single_line(name, getattr(email, name))
    _single_line("in_reply_to", email.in_reply_to)
    _message_id("message_id", email.message_id)
    if email.in_reply_to is not None:
        _message_id("in_reply_to", email.in_reply_to)
    url = email.unsubscribe_url
    if not _URL.fullmatch(url) or any(c in url for c in "<>,") or len(url) > MAX_URL_LENGTH:
        raise ValueError("unsubscribe_url must be an https URL of printable ASCII without <, > or commas")
    if not url.startswith("https://") and not _loopback(url):
        # Gmail and Yahoo honour one-click unsubscribe over https only; plain http is for a local setup.
        raise ValueError("unsubscribe_url must be https (http only for localhost)")
    if not email.postal_address.strip():
        raise ValueError("postal_address is required")

    message = EmailMessage(policy=MESSAGE_POLICY)
    message.set_raw("Message-ID", email.message_id)
    message["Date"] = format_datetime(now)
    message["From"] = _address("from_email", email.from_email, email.from_name)
    message["To"] = _address("to_email", email.to_email, email.to_name)
    message["Subject"] = email.subject
    if email.in_reply_to is not None:
        message.set_raw("In-Reply-To", email.in_reply_to)
        message.set_raw("References", email.in_reply_to)
    message.set_raw("List-Unsubscribe", f"<{url}>")
    message.set_raw("List-Unsubscribe-Post", "List-Unsubscribe=One-Click")
    body = _body(email.text, url, email.postal_address)
    # Seven-bit text goes as it is; anything else quoted-printable, which every server accepts
    # (8bit would need the server's 8BITMIME).
    plain = body.isascii() and all(len(line) <= 78 for line in body.splitlines())
    message.set_content(body, charset="utf-8", cte="7bit" if plain else "quoted-printable")
    if "MIME-Version" not in message:
        message["MIME-Version"] = "1.0"
    return message


def _body(text: str, url: str, postal_address: str) -> str:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").rstrip().split("\n")]
    address = [line.strip() for line in postal_address.replace("\r\n", "\n").replace("\r", "\n").strip().split("\n")]
    return "\n".join([*lines, "", f"Unsubscribe: {url}", *address]) + "\n"


def _loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _single_line(name: str, value: str | None) -> None:
    if value is not None and any(c in value for c in _LINE_BREAKS):
        raise ValueError(f"{name} must not contain line breaks")


def _message_id(name: str, value: str) -> None:
    if len(value) > MAX_MESSAGE_ID_LENGTH or not _MESSAGE_ID.fullmatch(value):
        raise ValueError(f"{name} must look like <token@domain>")


def _address(name: str, addr_spec: str, display_name: str | None) -> Address:
    """The address with its name; ValueError when it would need SMTPUTF8 or is not one address."""
    if not addr_spec.isascii():
        raise ValueError(f"{name} must be ASCII (international addresses need SMTPUTF8, not supported)")
    try:
        address = Address(display_name=(display_name or "").strip(), addr_spec=addr_spec.strip())
    except (ValueError, IndexError) as exc:
        raise ValueError(f"{name} is not an email address ({exc})") from None
    if not address.username or not _DOMAIN.fullmatch(address.domain):
        raise ValueError(f"{name} is not an email address")
    return address
