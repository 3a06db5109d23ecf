"""Reading one inbound message: replies stop a sequence, automatic answers never do, bounces and delays
are told apart, and no input makes the reader fail."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.sequences import mail_samples as samples
from vpx.mailboxes.inbound import DIAGNOSTIC_CHARS, MAX_REFERS, InboundVerdict, canonical_message_id, classify
from vpx.mailboxes.message import new_message_id

SENT = samples.message_id("Kq3v-8xZ_sent")
ORIGINAL = samples.outbound(SENT)


def test_a_plain_reply_names_the_message_it_answers() -> None:
    verdict = classify(samples.plain_reply(SENT))
    assert verdict == InboundVerdict("reply", (SENT,), "<reply-1@prospect.test>")


def test_a_reply_in_a_thread_lists_in_reply_to_first_then_references_in_order() -> None:
    root, middle = samples.message_id("root"), samples.message_id("middle")
    verdict = classify(samples.thread_reply([root, middle, SENT]))
    assert verdict.kind == "reply"
    assert verdict.refers_to == (SENT, root, middle)


def test_an_outlook_reply_asking_for_no_auto_replies_is_still_a_reply() -> None:
    assert classify(samples.outlook_reply(SENT)).kind == "reply"


def test_an_rfc3834_auto_reply_is_automatic_even_though_it_names_the_message() -> None:
    verdict = classify(samples.rfc3834_auto_reply(SENT))
    assert verdict.kind == "auto_reply"
    assert verdict.refers_to == (SENT,)


def test_an_exchange_out_of_office_is_known_by_its_subject() -> None:
    verdict = classify(samples.exchange_out_of_office(SENT))
    assert (verdict.kind, verdict.refers_to) == ("auto_reply", (SENT,))


@pytest.mark.parametrize(
    "prefix", ["Abwesenheitsnotiz:", "Réponse automatique :", "Automatische Antwort:", "Auto:", "Out of Office:"]
)
def test_out_of_office_subjects_in_several_languages_are_automatic(prefix: str) -> None:
    assert classify(samples.localised_out_of_office(SENT, prefix)).kind == "auto_reply"


def test_an_out_of_office_subject_written_in_raw_utf8_is_read() -> None:
    raw = f"Subject: Réponse automatique: {samples.SUBJECT}\r\nIn-Reply-To: {SENT}\r\n\r\nabsent\r\n".encode()
    assert classify(raw).kind == "auto_reply"


@pytest.mark.parametrize(
    "header", ["Auto-Submitted: auto-generated", "X-Autoreply: yes", "X-Autorespond: on", "Precedence: junk"]
)
def test_automatic_markers_make_an_answer_automatic(header: str) -> None:
    raw = f"{header}\r\nSubject: Re: hello\r\nIn-Reply-To: {SENT}\r\n\r\nbody\r\n".encode()
    assert classify(raw).kind == "auto_reply"


def test_auto_submitted_no_is_a_person_writing() -> None:
    raw = f"Auto-Submitted: no\r\nSubject: Re: hello\r\nIn-Reply-To: {SENT}\r\n\r\nbody\r\n".encode()
    assert classify(raw).kind == "reply"


def test_an_rfc3464_failure_is_a_bounce_with_recipient_status_and_diagnostic() -> None:
    verdict = classify(samples.dsn_failed(ORIGINAL))
    assert verdict.kind == "bounce"
    assert verdict.refers_to == (SENT,)
    assert verdict.message_id == "<dsn-1@mx.acme.test>"
    assert verdict.recipient == "dana@prospect.test"
    assert verdict.status == "5.1.1"
    assert verdict.diagnostic == (
        "550 5.1.1 <dana@prospect.test>: Recipient address rejected: User unknown in virtual mailbox table"
    )


def test_a_failure_that_returns_nothing_is_matched_by_its_envelope_id() -> None:
    # RFC 3461 xtext: "+40" is "@".
    verdict = classify(samples.dsn_failed_without_original("Kq3v-8xZ_sent+40acme.test"))
    assert (verdict.kind, verdict.refers_to, verdict.status) == ("bounce", (SENT,), "5.2.2")


def test_a_failure_with_neither_original_nor_envelope_id_falls_back_to_in_reply_to() -> None:
    raw = samples.dsn_failed_without_original("not-an-id", in_reply_to=SENT)
    assert classify(raw).refers_to == (SENT,)


def test_a_delay_warning_is_not_a_bounce() -> None:
    verdict = classify(samples.dsn_delayed(ORIGINAL))
    assert (verdict.kind, verdict.refers_to, verdict.status) == ("delayed", (SENT,), "4.4.7")


def test_a_success_report_is_neither_a_bounce_nor_a_reply() -> None:
    assert classify(samples.dsn_delivered(ORIGINAL)).kind == "other"


@pytest.mark.parametrize(
    "build", [samples.postfix_bounce, samples.qmail_bounce, samples.exim_bounce], ids=["postfix", "qmail", "exim"]
)
def test_bounces_in_other_servers_formats_are_bounces(build: Callable[[bytes], bytes]) -> None:
    verdict = classify(build(ORIGINAL))
    assert verdict.kind == "bounce"
    assert verdict.refers_to == (SENT,)
    assert verdict.recipient == "dana@prospect.test"
    assert verdict.status == "5.1.1"
    assert verdict.diagnostic is not None and "User unknown" in verdict.diagnostic


def test_a_message_answering_nothing_is_other() -> None:
    verdict = classify(samples.newsletter())
    assert (verdict.kind, verdict.refers_to) == ("other", ())


def test_a_person_writing_from_postmaster_without_a_bounce_is_not_a_bounce() -> None:
    raw = f"From: postmaster@prospect.test\r\nSubject: Re: hello\r\nIn-Reply-To: {SENT}\r\n\r\nHappy to talk.\r\n"
    assert classify(raw.encode()).kind == "reply"


def test_a_long_thread_keeps_its_root_and_latest_messages() -> None:
    thread = [samples.message_id(f"m{i}") for i in range(300)]
    verdict = classify(samples.thread_reply(thread))
    assert len(verdict.refers_to) == MAX_REFERS
    assert verdict.refers_to[0] == thread[-1]
    assert verdict.refers_to[1] == thread[0]
    assert verdict.refers_to[-1] == thread[-2]


def test_diagnostics_are_trimmed() -> None:
    raw = samples.dsn_failed(ORIGINAL).replace(b"User unknown", b"User unknown " + b"x" * 2000)
    verdict = classify(raw)
    assert verdict.diagnostic is not None and len(verdict.diagnostic) == DIAGNOSTIC_CHARS


@pytest.mark.parametrize(
    ("value", "canonical"),
    [
        ("<Kq3v-8xZ@acme.test>", "<Kq3v-8xZ@acme.test>"),
        ("  <Kq3v-8xZ@ACME.Test>\r\n ", "<Kq3v-8xZ@acme.test>"),
        ("Kq3v-8xZ@acme.test", "<Kq3v-8xZ@acme.test>"),
        ("<Kq3v-8xZ@acme.test> (Sam's message of Thursday)", "<Kq3v-8xZ@acme.test>"),
        ("<Kq3v\r\n -8xZ@acme.test>", "<Kq3v-8xZ@acme.test>"),
        ("no id here", None),
        ("", None),
        ("<@acme.test>", None),
    ],
)
def test_canonical_message_ids(value: str, canonical: str | None) -> None:
    assert canonical_message_id(value) == canonical


def test_the_ids_vpx_generates_are_already_canonical() -> None:
    for _ in range(20):
        generated = new_message_id("Mail.Acme.test")
        assert canonical_message_id(generated) == generated


@pytest.mark.parametrize("raw", samples.garbage(), ids=lambda raw: f"{len(raw)}-bytes")
def test_garbage_gets_a_verdict(raw: bytes) -> None:
    _assert_storable(classify(raw))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=4000))
def test_random_bytes_never_raise(raw: bytes) -> None:
    _assert_storable(classify(raw))


_REAL = [
    samples.plain_reply(SENT),
    samples.exchange_out_of_office(SENT),
    samples.dsn_failed(ORIGINAL),
    samples.postfix_bounce(ORIGINAL),
    samples.qmail_bounce(ORIGINAL),
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_REAL), st.integers(min_value=0), st.binary(max_size=64), st.integers(min_value=0))
def test_damaged_real_messages_never_raise(raw: bytes, cut: int, noise: bytes, where: int) -> None:
    """Real messages cut short or with bytes spliced in, where a parser's assumptions break first."""
    cut, where = cut % (len(raw) + 1), where % (len(raw) + 1)
    _assert_storable(classify(raw[:where] + noise + raw[where:cut]))


def _assert_storable(verdict: InboundVerdict) -> None:
    """Every verdict can go into a database as it is: UTF-8 text without NUL, ids in canonical form."""
    assert verdict.kind in ("reply", "auto_reply", "bounce", "delayed", "other")
    texts = [*verdict.refers_to, verdict.message_id, verdict.recipient, verdict.status, verdict.diagnostic]
    for text in texts:
        if text is not None:
            text.encode("utf-8")
            assert "\x00" not in text
    for message_id in verdict.refers_to:
        assert canonical_message_id(message_id) == message_id
    assert verdict.diagnostic is None or len(verdict.diagnostic) <= DIAGNOSTIC_CHARS
