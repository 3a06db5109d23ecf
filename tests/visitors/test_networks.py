"""Which networks are negatives: the listed big networks and the plainly named ones, nothing else."""

from __future__ import annotations

import pytest

from vpx.visitors.networks import HOSTING, ISP, classify


@pytest.mark.parametrize(
    ("asn", "kind"),
    [
        (7922, "isp"),  # Comcast
        (20115, "isp"),  # Charter
        (7018, "isp"),  # AT&T
        (21928, "isp"),  # T-Mobile
        (3320, "isp"),  # Deutsche Telekom
        (16509, "hosting"),  # Amazon
        (396982, "hosting"),  # Google Cloud
        (15169, "hosting"),  # Google
        (8075, "hosting"),  # Microsoft
        (14061, "hosting"),  # DigitalOcean
        (13335, "hosting"),  # Cloudflare
    ],
)
def test_listed_networks_by_as_number(asn: int, kind: str) -> None:
    assert classify(asn, None) == kind
    assert classify(asn, "whatever the name says") == kind


def test_no_network_is_listed_twice() -> None:
    assert not set(ISP) & set(HOSTING)


def test_as_number_wins_over_the_name() -> None:
    assert classify(16509, "Example Broadband") == "hosting"


def test_unknown_network_is_never_a_negative() -> None:
    assert classify(64496, "Example Widgets Inc") is None
    assert classify(64496, None) is None
    assert classify(None, None) is None
    assert classify(None, "") is None


@pytest.mark.parametrize(
    ("organisation", "kind"),
    [
        ("Example Broadband LLC", "isp"),
        ("EXAMPLE-TELECOM", "isp"),
        ("Example Wireless Internet", "isp"),
        ("Example Cable Communications", "isp"),
        ("Example Mobile Telesystems", "isp"),
        ("Example Telecomunicações Ltda", "isp"),
        ("Example Hosting Ltd", "hosting"),
        ("Example Data Center GmbH", "hosting"),
        ("EXAMPLE-DATACENTER", "hosting"),
        ("Example VPS", "hosting"),
        ("Example Dedicated Servers", "hosting"),
        ("Example Colocation", "hosting"),
        ("Example Cloud Infrastructure", "hosting"),
        ("Example VPN AB", "hosting"),
    ],
)
def test_plainly_named_networks(organisation: str, kind: str) -> None:
    assert classify(64500, organisation) == kind


@pytest.mark.parametrize(
    "organisation",
    [
        "Cloudera Inc",  # "cloud" only as a whole word
        "Example Cloud Software Group",  # "cloud" alone is too common a business word
        "Mobile Example Corp",  # nor "mobile": an app maker, a town (Mobile, AL)
        "First Example Bank Mobile Banking",
        "City of Mobile",
        "Mobile County Public Schools",
        "Example University Data Center",  # a university is a business, its data center its own
        "General Cable Corporation",  # a cable maker, not a cable operator
        "Serverius Example",  # "server" only as a whole word
        "Telecomputing Example",
    ],
)
def test_business_names_are_not_negatives(organisation: str) -> None:
    assert classify(64501, organisation) is None
