"""What is said of an address without asking anyone: syntax, domain, the disposable and role flags,
and which bounces are hard."""

from __future__ import annotations

import pytest

from vpx.deliverability import checks
from vpx.deliverability.disposable_build import build
from vpx.deliverability.service import is_hard_bounce


@pytest.mark.parametrize(
    ("email", "domain"),
    [
        ("owner@acme.example", "acme.example"),
        ("Jane.Doe@Acme.Example", "acme.example"),
        ("jane+quotes@acme.example.", "acme.example"),
        ("o'neil@plumbing.example", "plumbing.example"),
        ("zoë@bücher.example", "xn--bcher-kva.example"),
    ],
)
def test_a_well_formed_address_gives_its_domain_as_the_dns_is_asked(email: str, domain: str) -> None:
    assert checks.check_address(email).domain == domain


@pytest.mark.parametrize(
    "email",
    [
        "no-at-sign.example",
        "two@@acme.example",
        "a b@acme.example",
        "a..b@acme.example",
        ".a@acme.example",
        "a.@acme.example",
        "@acme.example",
        "owner@",
        "owner@localhost",
        "owner@[192.0.2.1]",
        "owner@-acme.example",
        "owner@acme.123",
        "owner@acme_co.example",
        '"john doe"@acme.example',
        "x" * 65 + "@acme.example",
        "owner@" + "a" * 250 + ".example",
    ],
)
def test_a_malformed_address_has_no_domain(email: str) -> None:
    assert not checks.check_address(email).valid


def test_disposable_domains_come_from_the_published_list_subdomains_included() -> None:
    assert len(checks.disposable_domains()) > 10_000
    assert checks.check_address("someone@mailinator.com").flags == ("disposable",)
    assert checks.check_address("someone@inbox.mailinator.com").flags == ("disposable",)
    assert checks.check_address("someone@gmail.com").flags == ()
    assert checks.check_address("someone@acmemailinator.example").flags == ()


@pytest.mark.parametrize(
    "local", ["info", "Sales", "support", "admin", "customer.service", "customer-service", "no_reply", "info+web"]
)
def test_role_addresses_are_flagged(local: str) -> None:
    assert checks.check_address(f"{local}@acme.example").flags == ("role",)


@pytest.mark.parametrize("local", ["jane", "jane.doe", "informant", "salesperson", "sam"])
def test_personal_addresses_are_not_role_addresses(local: str) -> None:
    assert checks.check_address(f"{local}@acme.example").flags == ()


def test_both_flags_together() -> None:
    assert checks.check_address("info@mailinator.com").flags == ("disposable", "role")


def test_deliverable_means_a_mail_exchanger_and_no_bounce() -> None:
    assert checks.deliverable("owner@acme.example", "mx_found")
    for status in ("unknown", "valid_syntax", "invalid_syntax", "no_mx", "bounced"):
        assert not checks.deliverable("owner@acme.example", status)
    assert not checks.deliverable(None, "mx_found")


def test_the_list_builder_keeps_domains_in_their_dns_form_once_each() -> None:
    text = build("# comment\nMailinator.com\nmailinator.com.\n\nnot a domain\nbücher.example # note\n", source="a test")
    assert text.splitlines()[3] == "# Source: a test: 2 domains."
    assert [line for line in text.splitlines() if not line.startswith("#")] == [
        "mailinator.com",
        "xn--bcher-kva.example",
    ]


@pytest.mark.parametrize(
    "diagnostic",
    [
        "550 5.1.1 User unknown",
        "5.1.1 <dana@prospect.test>: Recipient address rejected: User unknown",
        "550 5.1.10 Recipient address rejected: domain accepts no mail",
        "554 5.2.1 mailbox disabled",
        "550 Requested action not taken: mailbox unavailable",
        "551 User not local",
        "553 mailbox name not allowed",
    ],
)
def test_hard_bounces_say_the_address_itself_takes_no_mail(diagnostic: str) -> None:
    assert is_hard_bounce(diagnostic)


@pytest.mark.parametrize(
    "diagnostic",
    [
        None,
        "",
        "554 5.7.1 Message rejected as spam",
        "552 5.2.2 Mailbox full",
        "550 5.7.1 Relaying denied",
        "550 5.1.8 Sender address rejected",
        "451 4.7.1 Try again later",
        "421 4.4.2 Connection timed out",
        "554 Transaction failed",
    ],
)
def test_soft_or_unexplained_bounces_are_not_hard(diagnostic: str | None) -> None:
    assert not is_hard_bounce(diagnostic)
