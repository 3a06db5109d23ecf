"""Strong identifiers of a business: what two records must not disagree on to be one contact.

A contact's phone and website have columns of their own; everything else that identifies a business
beyond doubt is kept as tokens ``kind:value`` in ``contacts.identifiers`` (space-separated, sorted):

- ``npi:1234567890`` — an organisation's NPI (CMS NPPES);
- ``ein:123456789`` — an employer identification number;
- ``cik:320193`` — an SEC filer's CIK;
- ``lic:<state>:<scheme>:<number>`` — a licence: its state, what kind of licence it is (``contractor``
  for a CSLB licence, ``physician``, ``dentist``… for NPPES) and its number;
- ``tel:+13035550100`` — a phone beyond the contact's own (NPPES's mailing-address phone, say), so that
  a record listing both numbers agrees with either;
- ``web:acme.example`` — a registrable domain beyond the contact's website;

and one token that is no identifier but a second name to compare: ``aka:cape_fear_valley_home_health``
— another name the business is registered under (NPPES's "other organization name": a DBA, a
former legal name), its matching key with ``_`` for spaces. Two different ``aka`` names never conflict.

Entity resolution (``vpx.registries.matching``) keeps two records apart when they carry different
values of one kind and share none.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from sqlalchemy import ColumnElement, Text, case, literal

from vpx.contacts.normalise import name_key


@lru_cache(maxsize=1)
def _extractor() -> Any:
    """The Public Suffix List as the installed tldextract ships it: never fetched at run time (the
    service runs offline), private suffixes included so that two shops on one hosting platform
    (acme.github.io, other.github.io) are two domains. Loaded on first use: it and its imports
    weigh some 25 MB, which an import of a registry without websites (NPPES) never needs."""
    import tldextract

    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, include_psl_private_domains=True)


_HOST = re.compile(r"^(?:[a-z][a-z0-9+.-]*://)?(?:[^@/?#]*@)?([^/?#:]+)")
_NOT_ALNUM = re.compile(r"[^0-9a-z]+")
KINDS = ("tel", "web", "lic", "npi", "ein", "cik", "aka")
NOT_EVIDENCE = frozenset({"aka"})  # kinds that name, never veto


@lru_cache(maxsize=1 << 16)
def registrable_domain(website: str | None) -> str | None:
    """The domain a website's owner registered (``shop.acme.co.uk`` → ``acme.co.uk``), by the Public
    Suffix List; for a name under a suffix the list does not know (the reserved ``.example``,
    ``.test``), its last two labels. None when there is no host."""
    if not website:
        return None
    found = _HOST.match(website.strip().lower())
    if found is None:
        return None
    host = found.group(1).strip(".")
    if not host or " " in host:
        return None
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    parts = _extractor()(host)
    if parts.suffix and parts.domain:
        return f"{parts.domain}.{parts.suffix}"
    labels = host.split(".")
    return ".".join(labels[-2:]) if len(labels) >= 2 else None


def _key(text: str) -> str:
    lowered = text.lower()
    return lowered if lowered.isalnum() and lowered.isascii() else _NOT_ALNUM.sub("", lowered)


def licence_token(state: str | None, scheme: str | None, number: str | None) -> str | None:
    """``lic:<state>:<scheme>:<number>``, or None unless all three are given. The number keeps its
    letters and digits only (``A-12 345`` and ``a12345`` are one licence)."""
    if not state or not scheme or not number:
        return None
    number_key, scheme_key = _key(number), _scheme_key(scheme)
    if not number_key or not scheme_key:
        return None
    return f"lic:{state.lower()}:{scheme_key}:{number_key}"


@lru_cache(maxsize=1024)
def _scheme_key(scheme: str) -> str:
    return _key(scheme)


def npi_token(npi: str | None) -> str | None:
    return f"npi:{npi}" if npi and len(npi) == 10 and npi.isdigit() else None


def ein_token(ein: str | None) -> str | None:
    """``ein:`` and the nine digits of an EIN written ``12-3456789`` or ``123456789``; None for
    anything else (NPPES publishes ``<UNAVAIL>``)."""
    if not ein or not ein[:1].isdigit():
        return None  # NPPES's "<UNAVAIL>", or nothing
    digits = re.sub(r"[\s-]", "", ein)
    return f"ein:{digits}" if len(digits) == 9 and digits.isdigit() else None


def cik_token(cik: int | str | None) -> str | None:
    text = str(cik).lstrip("0") if cik is not None else ""
    return f"cik:{text}" if text.isdigit() else None


def aka_token(name: str | None) -> str | None:
    """``aka:`` and the matching key of another name of the business, or None."""
    key = name_key(name) if name else ""
    return f"aka:{key.replace(' ', '_')}" if key else None


def other_names(identifiers: frozenset[str]) -> tuple[str, ...]:
    """The name keys of a record's ``aka`` tokens."""
    return tuple(t[4:].replace("_", " ") for t in identifiers if t.startswith("aka:"))


def phone_token(phone: str | None) -> str | None:
    return f"tel:{phone}" if phone else None


def website_token(website: str | None) -> str | None:
    domain = registrable_domain(website)
    return f"web:{domain}" if domain else None


def joined(tokens: Iterable[str | None]) -> str | None:
    """Tokens as the column keeps them: unique, sorted, space-separated; None when there are none."""
    unique = sorted({t for t in tokens if t})
    return " ".join(unique) if unique else None


def parsed(text: str | None) -> frozenset[str]:
    return frozenset(text.split()) if text else frozenset()


def kind_of(token: str) -> str:
    """A token's kind: what must agree (``npi``, ``tel``…; for a licence, its state and scheme)."""
    return token.rsplit(":", 1)[0] if token.startswith("lic:") else token.split(":", 1)[0]


def licence_of(fields: dict[str, object]) -> str | None:
    """The licence token of a contact's fields, its scheme being the licence type."""
    state, kind, number = fields.get("license_state"), fields.get("license_type"), fields.get("license_number")
    if isinstance(state, str) and isinstance(kind, str) and isinstance(number, str):
        return licence_token(state, kind, number)
    return None


def identifiers_added(column: ColumnElement[Any], new: ColumnElement[Any]) -> ColumnElement[Any]:
    """SQL for a contact's identifiers with ``new`` ones added (a token written twice reads once)."""
    return case((new.is_(None), column), (column.is_(None), new), else_=column + literal(" ", Text) + new)
