"""Where a publisher may send a run: a redirect is followed one hop at a time, each hop checked by the
outbound guard; a source on a public address is never sent to a loopback, private or link-local
address (by a redirect or a link on its page), one on the operator's own network may be sent to
another machine there but never to a cloud-metadata address; a redirect loop is cut; an app token
is not sent on to another host."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from tests.registries.formats import write_nucc
from tests.sources.conftest import QUICK, add_source, run_source
from tests.sources.publisher import Answer, Publisher, Route
from tests.sources.test_runs import MAPPING, PERMITS, export
from vpx.config import Settings
from vpx.secrets import load_box
from vpx.sources import runner
from vpx.sources.egress import MAX_REDIRECTS, Egress
from vpx.sources.fetch import Fetcher, SourceFailed

# A stand-in for DNS: names of our choosing and what they resolve to.
ZONE = {"intranet.example": ["192.0.2.20"], "metadata.example": ["169.254.169.254"]}


async def fake_dns(host: str, port: int) -> list[str]:
    if host not in ZONE:
        raise OSError("no such name")
    return ZONE[host]


def redirect(to: str, status: int = 302) -> Route:
    return lambda query, headers: Answer(status, headers={"Location": to})


@pytest.fixture
def elsewhere() -> Iterator[Publisher]:
    """A second server on loopback: another host, as far as origins go."""
    served = Publisher()
    yield served
    served.close()


@pytest.fixture
async def public_fetcher(publisher: Publisher) -> AsyncIterator[Fetcher]:
    """The fetcher of a run whose source is on a public address (the fake publisher stands for it)."""
    egress = Egress(publisher.url("/"), resolver=fake_dns, private=False)
    async with httpx.AsyncClient(timeout=10) as client:
        yield Fetcher(client, policy=QUICK, egress=egress)


async def test_a_source_on_loopback_follows_redirects_on_loopback(
    app: FastAPI, settings: Settings, publisher: Publisher, elsewhere: Publisher, tmp_path: Path
) -> None:
    elsewhere.serve("/files/nucc.csv", write_nucc(tmp_path / "nucc.csv").read_bytes())
    publisher.route("/nucc.csv", redirect(elsewhere.url("/files/nucc.csv"), 301))
    await add_source(app, "nucc", "nucc", publisher.url("/nucc.csv"))
    report = await run_source(app, settings, "nucc")
    assert (report.status, report.created) == ("ok", 8), report.error
    assert [s.status for s in publisher.requests_for("/nucc.csv")] == [301]
    assert [s.status for s in elsewhere.requests_for("/files/nucc.csv")] == [200]


async def test_a_public_source_is_not_sent_to_internal_addresses(
    publisher: Publisher, elsewhere: Publisher, public_fetcher: Fetcher, tmp_path: Path
) -> None:
    elsewhere.serve("/secret", b"internal")
    publisher.serve("/moved/f.csv", b"a,b\n1,2\n")
    cases = {
        "http://192.0.2.10/admin": "192.0.2.10 is a private address",
        "http://intranet.example/admin": "host intranet.example resolves to a non-public address",
        elsewhere.url("/secret"): "127.0.0.1 is a loopback address",
        "http://[::1]:8080/admin": "::1 is a loopback address",
    }
    for to, why in cases.items():
        publisher.route("/f.csv", redirect(to))
        with pytest.raises(SourceFailed) as refused:
            await public_fetcher.download(publisher.url("/f.csv"), tmp_path / "f.csv")
        assert refused.value.code == "address_refused"
        assert str(refused.value) == (
            f"a redirect from {publisher.url('/f.csv')} sent the run to {to}, which it may not reach ({why}): a "
            "source on a public address is sent on to public addresses only"
        )
    assert elsewhere.requests_for("/secret") == []  # never asked
    publisher.route("/f.csv", redirect("ftp://192.0.2.10/f.csv"))
    with pytest.raises(SourceFailed, match="only http and https are followed"):
        await public_fetcher.download(publisher.url("/f.csv"), tmp_path / "f.csv")
    # A link on the publisher's page to an internal address is refused as a redirect is.
    with pytest.raises(SourceFailed) as linked:
        await public_fetcher.get("http://192.0.2.10/admin")
    assert str(linked.value).startswith("the publisher sent the run to http://192.0.2.10/admin, which it may not")
    # The publisher's own host is its own to redirect within.
    publisher.route("/f.csv", redirect("/moved/f.csv"))
    got = await public_fetcher.download(publisher.url("/f.csv"), tmp_path / "f.csv")
    assert got.path is not None and got.path.read_bytes() == b"a,b\n1,2\n"


async def test_no_source_is_sent_to_a_cloud_metadata_address(
    app: FastAPI, settings: Settings, publisher: Publisher
) -> None:
    publisher.route("/nucc.csv", redirect("http://metadata.example/latest/meta-data/"))
    await add_source(app, "nucc", "nucc", publisher.url("/nucc.csv"))
    report = await runner.run_source(
        app.state.database, settings, name="nucc", owner="test", box=load_box(settings), clock=app.state.clock,
        resolver=fake_dns,
    )  # fmt: skip
    assert report.status == "failed" and report.error is not None
    assert report.error["code"] == "address_refused"
    assert "(host metadata.example resolves to a non-public address)" in report.error["message"]
    assert report.error["message"].endswith(": no source is sent on to a link-local or cloud-metadata address")


async def test_a_redirect_loop_is_cut(app: FastAPI, settings: Settings, publisher: Publisher) -> None:
    publisher.route("/nucc.csv", redirect("/nucc.csv"))
    await add_source(app, "nucc", "nucc", publisher.url("/nucc.csv"))
    report = await run_source(app, settings, "nucc")
    assert report.error == {
        "code": "too_many_redirects",
        "message": f"{publisher.url('/nucc.csv')} redirected more than {MAX_REDIRECTS} times",
    }
    assert len(publisher.requests_for("/nucc.csv")) == MAX_REDIRECTS + 1


async def test_an_app_token_is_not_sent_on_to_another_host(
    app: FastAPI, settings: Settings, publisher: Publisher, elsewhere: Publisher
) -> None:
    elsewhere.serve("/export.csv", export(*PERMITS))
    publisher.route("/permits.csv", redirect(elsewhere.url("/export.csv"), 307))
    await add_source(
        app, "ogden", "permits-csv", publisher.url("/permits.csv"), mapping=MAPPING, mapping_name="ogden",
        options={"app_token": "tok-0123456789"},
    )  # fmt: skip
    report = await run_source(app, settings, "ogden")
    assert (report.status, report.ingested) == ("ok", 2), report.error
    [asked] = publisher.requests_for("/permits.csv")
    [followed] = elsewhere.requests_for("/export.csv")
    assert asked.headers["x-app-token"] == "tok-0123456789" and "x-app-token" not in followed.headers
