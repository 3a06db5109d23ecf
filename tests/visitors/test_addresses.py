"""What a visit keeps of a page URL (D33), without a database: no credentials, no email addresses, no
values of secret-looking parameters, nothing that cannot be parsed, never longer than its column."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vpx.visitors.addresses import REDACTED, clean_url, secret_name
from vpx.visitors.schemas import MAX_URL


@pytest.mark.parametrize(
    ("raw", "kept"),
    [
        # User information (a login and password) is never kept, with or without a password.
        ("https://alice:S3cret@www.seller.example/pricing", "https://www.seller.example/pricing"),
        ("https://alice@www.seller.example:8443/", "https://www.seller.example:8443/"),
        # Email addresses in the path, percent-encoded or not, once or twice: the segment goes.
        ("https://s.example/users/alice%40example.com", "https://s.example/users/redacted"),
        ("https://s.example/users/alice@example.com/orders", "https://s.example/users/redacted/orders"),
        ("https://s.example/u/alice%2540example.com", "https://s.example/u/redacted"),
        ("https://s.example/shop;jsessionid=1A2B3C4D?x=1", "https://s.example/shop;jsessionid=redacted?x=1"),
        # Parameters named like a secret, whatever their case and spelling.
        ("https://s.example/?sessionid=42&page=2", "https://s.example/?sessionid=redacted&page=2"),
        (
            "https://s.example/?apikey=abc&api_key=abc&X-Api-Key=abc",
            "https://s.example/?apikey=redacted&api_key=redacted&X-Api-Key=redacted",
        ),
        (
            "https://s.example/?accessToken=abc&refresh_token=abc",
            "https://s.example/?accessToken=redacted&refresh_token=redacted",
        ),
        (
            "https://s.example/?PHPSESSID=abc;JSESSIONID=abc",
            "https://s.example/?PHPSESSID=redacted;JSESSIONID=redacted",
        ),
        (
            "https://s.example/?X-Amz-Signature=ab&X-Amz-Credential=cd",
            "https://s.example/?X-Amz-Signature=redacted&X-Amz-Credential=redacted",
        ),
        (
            "https://s.example/?passwd=a&pwd=b&otp=1&code=2&sig=3&sid=4",
            "https://s.example/?passwd=redacted&pwd=redacted&otp=redacted&code=redacted&sig=redacted&sid=redacted",
        ),
        (
            "https://s.example/?e-mail=x&authorization=y&jwt=z",
            "https://s.example/?e-mail=redacted&authorization=redacted&jwt=redacted",
        ),
        # A name that is itself an email address.
        ("https://s.example/?alice%40example.com", "https://s.example/?redacted"),
        # What is not a secret stays, as it was written.
        ("https://s.example/?keyword=plumbers&author=ann&zipcode=80202&utm_campaign=black-friday-2026-email", None),
        ("https://s.example/search?q=caf%C3%A9+cr%C3%A8me&page=2", None),
        ("https://www.seller.example/pricing", None),
        # The fragment is dropped.
        ("https://s.example/a#access_token=abc", "https://s.example/a"),
    ],
)
def test_a_url_keeps_nothing_that_names_a_person_or_a_secret(raw: str, kept: str | None) -> None:
    assert clean_url(raw) == (kept if kept is not None else raw)


@pytest.mark.parametrize(
    "raw",
    ["http://[::1/pricing", "https://s.example:99999/", "https://s.example:port/", "https://a.example/\u0000x", "a\tb"],
)
def test_a_url_that_cannot_be_parsed_is_dropped(raw: str) -> None:
    assert clean_url(raw) is None


def test_a_url_too_long_once_cleaned_loses_its_query_string() -> None:
    raw = "https://s.example/p?" + "&".join(["e=a@b.co"] * 250)
    assert len(raw) > MAX_URL and clean_url(raw) == "https://s.example/p"


@pytest.mark.parametrize(
    "name", ["token", "Secret", "user_password", "sessionId", "SID", "auth", "api-key", "KeyPairId", "signature", "sig"]
)
def test_secret_names(name: str) -> None:
    assert secret_name(name)


@pytest.mark.parametrize(
    "name", ["q", "page", "keyword", "author", "monkey", "zipcode", "inside", "design", "utm_source"]
)
def test_names_that_are_not_secret(name: str) -> None:
    assert not secret_name(name)


SECRET = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=6, max_size=16).map(lambda s: f"S3cr{s}")
EMAIL = st.builds(
    lambda local, domain: f"{local}@{domain}.example",
    st.from_regex(r"[a-z]{3,10}", fullmatch=True),
    st.from_regex(r"[a-z]{3,10}", fullmatch=True),
)
SECRET_PARAMETER = st.sampled_from(
    ["token", "sessionid", "apikey", "accessToken", "password", "X-Amz-Signature", "auth"]
)


@given(
    secret=SECRET,
    email=EMAIL,
    name=SECRET_PARAMETER,
    encode_email=st.booleans(),
    path=st.lists(st.from_regex(r"[a-z0-9\-]{1,12}", fullmatch=True), max_size=4),
)
@settings(max_examples=100, deadline=None)
def test_no_secret_or_email_survives_cleaning(
    secret: str, email: str, name: str, encode_email: bool, path: list[str]
) -> None:
    shown = quote(email, safe="") if encode_email else email
    raw = (
        f"https://user:{secret}@www.seller.example/{'/'.join([*path, shown])}"
        f"?page=2&{name}={secret}&contact={quote(email, safe='')}#{secret}"
    )
    cleaned = clean_url(raw)
    assert cleaned is not None
    assert secret not in cleaned and email not in cleaned and quote(email, safe="") not in cleaned
    assert cleaned.startswith("https://www.seller.example/") and "page=2" in cleaned and REDACTED in cleaned
    assert clean_url(cleaned) == cleaned


@given(st.text(max_size=300) | st.from_regex(r"https?://[^\s]{0,200}", fullmatch=True))
@settings(max_examples=150, deadline=None)
def test_any_text_is_cleaned_without_error_and_fits_its_column(raw: str) -> None:
    cleaned = clean_url(raw)
    assert cleaned is None or (len(cleaned) <= MAX_URL and clean_url(cleaned) == cleaned)
