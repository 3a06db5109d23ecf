"""Reading a customer's mailbox over IMAP against a real Dovecot: logging in, reading only what is new,
following UIDVALIDITY, finding a sent message, and never changing the mailbox (nothing marked \\Seen)."""

from __future__ import annotations

import imaplib
import re
from typing import Any

import pytest

from tests.sequences import mail_samples as samples
from tests.sequences.dovecot import Dovecot, Mailbox, dovecot_server, fresh_mailbox  # noqa: F401 (fixtures)
from vpx.mailboxes.imap import MAX_MESSAGE_BYTES, ImapError, fetch_since, find_message_id, verify
from vpx.mailboxes.inbound import classify

SENT = samples.message_id("Kq3v-8xZ_sent")


def _note(number: int) -> bytes:
    return samples.plain_reply(samples.message_id(f"note-{number}")).replace(b"reply-1@", f"r{number}@".encode())


def test_verify_logs_in_and_out(imap_mailbox: Mailbox) -> None:
    verify(imap_mailbox.account())


def test_a_wrong_password_gives_the_servers_reason_and_never_the_password(imap_mailbox: Mailbox) -> None:
    wrong = "not-the-password-123"
    with pytest.raises(ImapError) as caught:
        verify(imap_mailbox.account(password=wrong))
    reason = caught.value.reason
    assert "AUTHENTICATIONFAILED" in reason
    assert reason.startswith("login refused: ")
    assert wrong not in reason and imap_mailbox.password not in reason and "b'" not in reason


def test_a_password_beyond_ascii_logs_in(dovecot: Dovecot) -> None:
    mailbox = dovecot.new_mailbox(non_ascii_password=True)
    assert not mailbox.password.isascii()
    verify(mailbox.account())


def test_the_servers_shared_mailbox_reads_like_any_other(dovecot: Dovecot) -> None:
    uid = dovecot.deliver(_note(1))
    fetched, _ = fetch_since(dovecot.account(), after_uid=uid - 1, uidvalidity=dovecot.shared.uidvalidity())
    assert [m.uid for m in fetched] == [uid]
    assert "\\Seen" not in dovecot.flags_of(uid)


def test_tls_and_starttls_log_in(imap_mailbox: Mailbox) -> None:
    verify(imap_mailbox.account(security="tls", port=imap_mailbox.tls_port, verify_tls=False))
    verify(imap_mailbox.account(security="starttls", verify_tls=False))


def test_a_certificate_that_does_not_verify_is_refused(imap_mailbox: Mailbox) -> None:
    with pytest.raises(ImapError, match="certificate does not verify"):
        verify(imap_mailbox.account(security="tls", port=imap_mailbox.tls_port))
    with pytest.raises(ImapError, match="certificate does not verify"):
        verify(imap_mailbox.account(security="starttls"))


def test_loopback_is_refused_unless_private_addresses_are_allowed(imap_mailbox: Mailbox) -> None:
    with pytest.raises(ImapError, match=re.escape("refused: 127.0.0.1 is a loopback address")):
        verify(imap_mailbox.account(allow_private=False))


def test_metadata_addresses_are_refused_even_when_private_ones_are_allowed(imap_mailbox: Mailbox) -> None:
    with pytest.raises(ImapError, match="metadata"):
        verify(imap_mailbox.account(host="169.254.169.254"))


def test_a_closed_port_is_a_connection_error(imap_mailbox: Mailbox) -> None:
    with pytest.raises(ImapError, match=re.escape("could not connect to 127.0.0.1:1 (")):
        verify(imap_mailbox.account(port=1))


def test_an_empty_folder_gives_nothing_and_its_uidvalidity(imap_mailbox: Mailbox) -> None:
    fetched, uidvalidity = fetch_since(imap_mailbox.account(), after_uid=None, uidvalidity=None)
    assert fetched == []
    assert uidvalidity == imap_mailbox.uidvalidity()


def test_fetch_since_returns_new_messages_only(imap_mailbox: Mailbox) -> None:
    account = imap_mailbox.account()
    first = [imap_mailbox.deliver(_note(n)) for n in range(3)]
    fetched, uidvalidity = fetch_since(account, after_uid=None, uidvalidity=None)
    assert [m.uid for m in fetched] == first
    assert [m.raw for m in fetched] == [_note(n) for n in range(3)]

    assert fetch_since(account, after_uid=first[-1], uidvalidity=uidvalidity) == ([], uidvalidity)

    later = [imap_mailbox.deliver(_note(n)) for n in range(3, 5)]
    fetched, _ = fetch_since(account, after_uid=first[-1], uidvalidity=uidvalidity)
    assert [m.uid for m in fetched] == later
    assert [m.raw for m in fetched] == [_note(3), _note(4)]


def test_limit_takes_the_newest_on_a_first_read_and_the_oldest_new_ones_after(imap_mailbox: Mailbox) -> None:
    account = imap_mailbox.account()
    uids = [imap_mailbox.deliver(_note(n)) for n in range(5)]
    fetched, uidvalidity = fetch_since(account, after_uid=None, uidvalidity=None, limit=2)
    assert [m.uid for m in fetched] == uids[-2:]
    fetched, _ = fetch_since(account, after_uid=uids[0], uidvalidity=uidvalidity, limit=2)
    assert [m.uid for m in fetched] == uids[1:3]


def test_a_changed_uidvalidity_reads_the_folder_afresh(imap_mailbox: Mailbox) -> None:
    account = imap_mailbox.account()
    imap_mailbox.create_folder("Replies")
    old = [imap_mailbox.deliver(_note(n), folder="Replies") for n in range(3)]
    _, before = fetch_since(account, folder="Replies", after_uid=None, uidvalidity=None)

    imap_mailbox.recreate_folder("Replies")
    new = imap_mailbox.deliver(_note(9), folder="Replies")
    assert new <= old[-1]  # UIDs started over: after_uid alone would miss it
    fetched, after = fetch_since(account, folder="Replies", after_uid=old[-1], uidvalidity=before)
    assert after != before
    assert [(m.uid, m.raw) for m in fetched] == [(new, _note(9))]


def test_reading_marks_nothing_seen(imap_mailbox: Mailbox) -> None:
    uids = [imap_mailbox.deliver(_note(n)) for n in range(2)]
    seen = imap_mailbox.deliver(_note(2), flags=("\\Seen",))
    fetch_since(imap_mailbox.account(), after_uid=None, uidvalidity=None)
    fetch_since(imap_mailbox.account(), after_uid=0, uidvalidity=imap_mailbox.uidvalidity())
    for uid in uids:
        assert "\\Seen" not in imap_mailbox.flags_of(uid)
    assert "\\Seen" in imap_mailbox.flags_of(seen)


def test_a_large_message_is_read_up_to_the_cap(imap_mailbox: Mailbox) -> None:
    raw = _note(1) + (b"y" * 998 + b"\r\n") * 1100
    uid = imap_mailbox.deliver(raw)
    (fetched,), _ = fetch_since(imap_mailbox.account(), after_uid=None, uidvalidity=None)
    assert fetched.uid == uid
    assert fetched.raw == raw[:MAX_MESSAGE_BYTES]
    assert classify(fetched.raw).kind == "reply"


def test_a_bounce_read_from_the_inbox_is_classified(imap_mailbox: Mailbox) -> None:
    imap_mailbox.deliver(samples.dsn_failed(samples.outbound(SENT)))
    (fetched,), _ = fetch_since(imap_mailbox.account(), after_uid=None, uidvalidity=None)
    verdict = classify(fetched.raw)
    assert (verdict.kind, verdict.refers_to, verdict.status) == ("bounce", (SENT,), "5.1.1")


def test_a_folder_that_does_not_exist_is_the_servers_answer(imap_mailbox: Mailbox) -> None:
    with pytest.raises(ImapError, match=r"(?i)mailbox doesn't exist: Nowhere"):
        fetch_since(imap_mailbox.account(), folder="Nowhere", after_uid=None, uidvalidity=None)


def test_find_message_id_looks_in_sent_without_marking_it_seen(imap_mailbox: Mailbox) -> None:
    uid = imap_mailbox.deliver(samples.outbound(SENT), folder="Sent")
    account = imap_mailbox.account()
    assert find_message_id(account, SENT)
    assert find_message_id(account, SENT.replace("acme.test", "ACME.test"))
    assert "\\Seen" not in imap_mailbox.flags_of(uid, folder="Sent")


def test_find_message_id_is_exact_and_false_for_an_absent_message(imap_mailbox: Mailbox) -> None:
    imap_mailbox.deliver(samples.outbound(samples.message_id("xKq3v-8xZ_sent-2")), folder="Sent")
    assert not find_message_id(imap_mailbox.account(), SENT)
    assert not find_message_id(imap_mailbox.account(), samples.message_id("never-sent"))


def test_find_message_id_also_looks_in_the_inbox(imap_mailbox: Mailbox) -> None:
    imap_mailbox.deliver(samples.outbound(SENT))
    assert find_message_id(imap_mailbox.account(), SENT)


def test_only_reading_commands_are_sent(imap_mailbox: Mailbox, monkeypatch: pytest.MonkeyPatch) -> None:
    """A spy on what goes over the wire: EXAMINE, SEARCH, FETCH and the like, never a command that changes."""
    sent: list[str] = []
    original = imaplib.IMAP4._command

    def spy(self: imaplib.IMAP4, name: str, *args: Any) -> Any:
        sent.append(f"UID {args[0]}" if name == "UID" and args else name)
        return original(self, name, *args)

    imap_mailbox.deliver(samples.outbound(SENT), folder="Sent")
    imap_mailbox.deliver(_note(1))
    uidvalidity = imap_mailbox.uidvalidity()
    monkeypatch.setattr(imaplib.IMAP4, "_command", spy)
    verify(imap_mailbox.account())
    fetch_since(imap_mailbox.account(), after_uid=None, uidvalidity=None)
    fetch_since(imap_mailbox.account(), after_uid=0, uidvalidity=uidvalidity)
    assert find_message_id(imap_mailbox.account(), SENT)
    monkeypatch.undo()
    assert set(sent) <= {"CAPABILITY", "LOGIN", "EXAMINE", "SEARCH", "UID SEARCH", "UID FETCH", "LIST", "LOGOUT"}
    assert {"EXAMINE", "UID FETCH"} <= set(sent)
