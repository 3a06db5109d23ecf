"""Sending through a customer's SMTP mailbox, against a real SMTP server on loopback."""

from __future__ import annotations

import asyncio
import dataclasses
import socket
from datetime import UTC, datetime

import pytest

from tests.sequences.smtp_server import SmtpSink, smtp_sink
from vpx.mailboxes import message as email_message
from vpx.mailboxes.message import OutgoingEmail, new_message_id
from vpx.mailboxes.smtp import Outcome, SmtpAccount, SmtpError, SmtpSession, send, verify

__all__ = ["smtp_sink"]

NOW = datetime(2026, 11, 15, 12, 0, tzinfo=UTC)
URL = "https://vpx.example.com/unsubscribe/" + "t0k3n_" * 30
POSTAL = "Acme GmbH\nHauptstraße 1\n10115 Berlin"


def outgoing(**changes: object) -> OutgoingEmail:
    email = OutgoingEmail(
        message_id=new_message_id("acme.example"),
        from_email="jose@acme.example",
        from_name="José Müller",
        to_email="ada@client.example",
        to_name="Ada Lovelace",
        subject="Grüße aus Berlin — a quick question",
        text="Hi Ada,\n\nwould a short call next week work?\n\nJosé",
        postal_address=POSTAL,
        unsubscribe_url=URL,
    )
    return dataclasses.replace(email, **changes)  # type: ignore[arg-type]


def account(sink: SmtpSink, **changes: object) -> SmtpAccount:
    base = SmtpAccount(
        host=sink.host, port=sink.port, security="none", username=None, password=None, timeout=5.0, allow_private=True
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


async def deliver(sink: SmtpSink, email: OutgoingEmail | None = None, **kwargs: object) -> Outcome:
    email = email or outgoing()
    return await send(
        account(sink), email_message.build(email, now=NOW), sender=email.from_email, recipient=email.to_email,
        **kwargs,  # type: ignore[arg-type]
    )  # fmt: skip


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_a_built_message_arrives_once_with_its_headers(smtp_sink: SmtpSink) -> None:
    email = outgoing()
    outcome = await deliver(smtp_sink, email)

    assert outcome.status == "accepted" and outcome.code == 250 and not outcome.in_doubt
    assert len(smtp_sink.received) == 1
    got = smtp_sink.received[0]
    assert (got.sender, got.recipients, got.message_id) == (email.from_email, [email.to_email], email.message_id)
    message = got.message()
    assert message["Subject"] == "Grüße aus Berlin — a quick question"
    assert message["From"].addresses[0].display_name == "José Müller"
    assert message["To"] == "Ada Lovelace <ada@client.example>"
    assert message["List-Unsubscribe"] == f"<{URL}>"
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert message["MIME-Version"] == "1.0" and message["Date"] == "Sun, 15 Nov 2026 12:00:00 +0000"
    assert message["In-Reply-To"] is None and message["References"] is None
    assert message.get_content_type() == "text/plain" and message.get_content_charset() == "utf-8"
    body = message.get_content().replace("\r\n", "\n")  # the parser keeps the wire's CRLF
    assert body.startswith("Hi Ada,\n\nwould a short call")
    assert body.endswith(f"José\n\nUnsubscribe: {URL}\nAcme GmbH\nHauptstraße 1\n10115 Berlin\n")
    # On the wire: seven-bit, CRLF, no line over 998, the URL whole on its header line.
    assert got.data.isascii()
    assert all(len(line) <= 998 for line in got.data.split(b"\r\n"))
    assert f"List-Unsubscribe: <{URL}>\r\n".encode() in got.data
    assert b"=?utf-8?" in got.data  # the subject and the name went RFC 2047 encoded


async def test_a_later_step_threads_under_the_first_message(smtp_sink: SmtpSink) -> None:
    first = new_message_id("acme.example")
    await deliver(smtp_sink, outgoing(in_reply_to=first, subject="Re: a quick question"))

    message = smtp_sink.received[0].message()
    assert message["In-Reply-To"] == first and message["References"] == first


async def test_a_refused_recipient_is_rejected_before_data_and_nothing_arrives(smtp_sink: SmtpSink) -> None:
    smtp_sink.refuse("ada@client.example")
    calls: list[str] = []

    async def before_data() -> None:
        calls.append("called")

    outcome = await deliver(smtp_sink, before_data=before_data)

    assert outcome == Outcome("rejected", 550, "5.1.1 User unknown")
    assert smtp_sink.received == [] and calls == []
    assert "DATA" not in smtp_sink.commands


async def test_a_temporary_failure_is_deferred_then_accepted_on_retry(smtp_sink: SmtpSink) -> None:
    smtp_sink.tempfail_next()
    email = outgoing()

    first = await deliver(smtp_sink, email)
    second = await deliver(smtp_sink, email)

    assert first == Outcome("deferred", 451, "4.7.1 Try again later")
    assert second.status == "accepted"
    assert [r.message_id for r in smtp_sink.received] == [email.message_id]


async def test_a_closed_port_is_deferred() -> None:
    sink = SmtpSink()
    sink.port = closed_port()

    outcome = await deliver(sink)

    assert outcome.status == "deferred" and outcome.code is None and not outcome.in_doubt
    assert "could not connect" in outcome.reply


async def test_a_lost_answer_after_data_is_deferred_in_doubt(smtp_sink: SmtpSink) -> None:
    smtp_sink.vanish_next()

    outcome = await deliver(smtp_sink)

    assert outcome.status == "deferred" and outcome.in_doubt
    assert len(smtp_sink.received) == 1  # it did arrive: the caller must look before sending again


async def test_before_data_runs_once_right_before_data(smtp_sink: SmtpSink) -> None:
    seen: list[list[str]] = []

    async def before_data() -> None:
        seen.append(list(smtp_sink.commands))
        assert smtp_sink.received == []

    outcome = await deliver(smtp_sink, before_data=before_data)

    assert outcome.status == "accepted"
    assert seen == [["MAIL", "RCPT"]]
    assert smtp_sink.commands[:3] == ["MAIL", "RCPT", "DATA"]


async def test_a_failing_before_data_sends_nothing_and_propagates(smtp_sink: SmtpSink) -> None:
    async def before_data() -> None:
        raise RuntimeError("the commit failed")

    with pytest.raises(RuntimeError, match="the commit failed"):
        await deliver(smtp_sink, before_data=before_data)

    assert smtp_sink.received == [] and "DATA" not in smtp_sink.commands


async def test_auth_with_the_right_password_sends(smtp_sink: SmtpSink) -> None:
    smtp_sink.username, smtp_sink.password = "jose", "s3cret-pässword"
    email = outgoing()
    authed = account(smtp_sink, username="jose", password="s3cret-pässword")

    outcome = await send(authed, email_message.build(email, now=NOW), sender=email.from_email, recipient=email.to_email)

    assert outcome.status == "accepted" and len(smtp_sink.received) == 1


async def test_a_wrong_password_raises_with_the_servers_reason_and_without_the_password(smtp_sink: SmtpSink) -> None:
    smtp_sink.username, smtp_sink.password = "jose", "right"
    email = outgoing()
    wrong = account(smtp_sink, username="jose", password="wrong-Pa55")

    with pytest.raises(SmtpError) as raised:
        await send(wrong, email_message.build(email, now=NOW), sender=email.from_email, recipient=email.to_email)

    assert raised.value.code == 535
    assert "Authentication credentials invalid" in raised.value.reason
    assert "wrong-Pa55" not in f"{raised.value} {raised.value.reason} {raised.value!r} {wrong!r}"
    assert smtp_sink.received == []


async def test_a_missing_login_is_a_mailbox_error_not_a_bounce(smtp_sink: SmtpSink) -> None:
    smtp_sink.username, smtp_sink.password = "jose", "right"

    with pytest.raises(SmtpError) as raised:
        await deliver(smtp_sink)

    assert raised.value.code == 530 and "MAIL FROM" in raised.value.reason


@pytest.mark.parametrize(
    "changes",
    [
        {"subject": "Hello\r\nBcc: everyone@example.com"},
        {"subject": "Hello\nBcc: everyone@example.com"},
        {"to_name": "Ada\r\nBcc: everyone@example.com"},
        {"from_name": "José\u2028Bcc: x"},
        {"to_email": "ada@client.example\r\nBcc: everyone@example.com"},
        {"to_email": "ada@client.example, eve@example.com"},
        {"unsubscribe_url": "https://vpx.example.com/u\r\nBcc: x"},
        {"unsubscribe_url": "https://vpx.example.com/u>, <mailto:x@example.com"},
        {"unsubscribe_url": "http://vpx.example.com/u"},
        {"unsubscribe_url": "http://127.0.0.1.example.com/u"},
        {"message_id": "<abc@acme.example>\r\nBcc: x"},
        {"message_id": "abc@acme.example"},
        {"in_reply_to": "<abc@acme.example>\nBcc: x"},
        {"to_email": "jösé@client.example"},
    ],
)
def test_header_injection_and_malformed_fields_are_refused(changes: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        email_message.build(outgoing(**changes), now=NOW)


def test_plain_http_unsubscribe_links_are_for_a_local_setup_only() -> None:
    message = email_message.build(outgoing(unsubscribe_url="http://127.0.0.1:8000/u/abc"), now=NOW)

    assert message["List-Unsubscribe"] == "<http://127.0.0.1:8000/u/abc>"


async def test_envelope_addresses_cannot_carry_commands(smtp_sink: SmtpSink) -> None:
    message = email_message.build(outgoing(), now=NOW)

    with pytest.raises(ValueError):
        await send(account(smtp_sink), message, sender="a@b.example", recipient="x@y.example>\r\nRCPT TO:<z@y.example")

    assert smtp_sink.commands == []


async def test_verify_succeeds_and_fails_with_a_reason(smtp_sink: SmtpSink) -> None:
    smtp_sink.username, smtp_sink.password = "jose", "right"

    await verify(account(smtp_sink, username="jose", password="right"))
    with pytest.raises(SmtpError, match="credentials invalid"):
        await verify(account(smtp_sink, username="jose", password="nope"))
    with pytest.raises(SmtpError, match="could not connect"):
        await verify(dataclasses.replace(account(smtp_sink), port=closed_port()))
    assert smtp_sink.commands.count("QUIT") == 1


async def test_the_ssrf_guard_refuses_private_hosts_unless_allowed(smtp_sink: SmtpSink) -> None:
    async def to_metadata(host: str, port: int) -> list[str]:
        return ["169.254.169.254"]

    with pytest.raises(SmtpError, match="loopback"):
        await verify(account(smtp_sink, allow_private=False))
    # A name's address is not told back (it would map the service's own network).
    with pytest.raises(SmtpError, match=r"^refused: host smtp\.acme\.example resolves to a non-public address$"):
        await verify(account(smtp_sink, host="smtp.acme.example"), resolver=to_metadata)
    assert smtp_sink.connections == 0


async def test_a_host_name_is_resolved_once_and_each_address_tried(smtp_sink: SmtpSink) -> None:
    async def two_addresses(host: str, port: int) -> list[str]:
        return ["127.0.0.2", "127.0.0.1"]  # nothing listens on the first

    await verify(account(smtp_sink, host="smtp.acme.example"), resolver=two_addresses)

    assert smtp_sink.connections == 1


async def test_a_session_reuses_one_connection_and_reconnects_when_dropped(smtp_sink: SmtpSink) -> None:
    async with SmtpSession(account(smtp_sink)) as session:
        for _ in range(3):
            email = outgoing()
            message = email_message.build(email, now=NOW)
            assert (await session.send(message, sender=email.from_email, recipient=email.to_email)).status == "accepted"
        assert smtp_sink.connections == 1

        smtp_sink.refuse("gone@client.example")
        refused = outgoing(to_email="gone@client.example")
        message = email_message.build(refused, now=NOW)
        outcome = await session.send(message, sender=refused.from_email, recipient=refused.to_email)
        assert outcome.status == "rejected" and smtp_sink.connections == 1

        smtp_sink.drop_connections()
        email = outgoing()
        message = email_message.build(email, now=NOW)
        assert (await session.send(message, sender=email.from_email, recipient=email.to_email)).status == "accepted"

    assert len(smtp_sink.received) == 4 and smtp_sink.connections == 2
    assert "RSET" in smtp_sink.commands


@pytest.mark.parametrize("security", ["starttls", "tls"])
async def test_tls_as_configured_and_the_certificate_verified(security: str) -> None:
    with SmtpSink(tls=security, username="jose", password="right") as sink:  # type: ignore[arg-type]
        email = outgoing()
        message = email_message.build(email, now=NOW)
        tls = account(sink, security=security, username="jose", password="right", verify_tls=False)

        outcome = await send(tls, message, sender=email.from_email, recipient=email.to_email)
        assert outcome.status == "accepted" and len(sink.received) == 1

        with pytest.raises(SmtpError, match="certificate does not verify"):
            await verify(dataclasses.replace(tls, verify_tls=True))


async def test_starttls_required_but_not_offered_is_a_mailbox_error(smtp_sink: SmtpSink) -> None:
    with pytest.raises(SmtpError, match="STARTTLS"):
        await deliver_with(account(smtp_sink, security="starttls"))
    assert smtp_sink.received == []


async def deliver_with(smtp: SmtpAccount) -> Outcome:
    email = outgoing()
    return await send(smtp, email_message.build(email, now=NOW), sender=email.from_email, recipient=email.to_email)


async def test_a_cancelled_send_leaves_no_half_conversation(smtp_sink: SmtpSink) -> None:
    started = asyncio.Event()

    async def before_data() -> None:
        started.set()
        await asyncio.sleep(10)

    task = asyncio.create_task(deliver(smtp_sink, before_data=before_data))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert smtp_sink.received == []
