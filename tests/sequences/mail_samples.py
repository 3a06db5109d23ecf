"""Real MIME messages, built with the email package, of the kinds that reach a sequence's mailbox:
people's replies, automatic answers, delivery status notifications, other servers' bounces, garbage.

Every builder returns the raw bytes as they would arrive (CRLF line ends). The names are those of a
sender at acme.test writing to dana@prospect.test.
"""

from __future__ import annotations

from datetime import UTC, datetime
from email import message_from_bytes
from email.headerregistry import Address
from email.message import EmailMessage, Message
from email.mime.base import MIMEBase
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from email.policy import SMTP, compat32
from email.utils import format_datetime

SENDER = "sam@acme.test"
RECIPIENT = "dana@prospect.test"
DATE = format_datetime(datetime(2026, 11, 20, 9, 30, tzinfo=UTC))
SUBJECT = "Quick question about your fleet"


def message_id(token: str, domain: str = "acme.test") -> str:
    return f"<{token}@{domain}>"


def outbound(msg_id: str, *, to: str = RECIPIENT, subject: str = SUBJECT) -> bytes:
    """The email vpx sent: what a Sent folder holds and what bounces return."""
    message = EmailMessage(policy=SMTP)
    message["Message-ID"] = msg_id
    message["Date"] = DATE
    message["From"] = Address("Sam Sender", addr_spec=SENDER)
    message["To"] = to
    message["Subject"] = subject
    message["List-Unsubscribe"] = "<https://acme.test/u/abc>"
    message.set_content("Hi Dana,\n\nDo you have ten minutes next week?\n\nSam\n")
    return message.as_bytes()


def _reply_base(subject: str, *, sender: str = RECIPIENT) -> EmailMessage:
    message = EmailMessage(policy=SMTP)
    message["Message-ID"] = message_id("reply-1", "prospect.test")
    message["Date"] = DATE
    message["From"] = Address("Dana Prospect", addr_spec=sender)
    message["To"] = SENDER
    message["Subject"] = subject
    return message


def plain_reply(answered: str) -> bytes:
    """A person's answer: In-Reply-To and References name the message answered."""
    message = _reply_base(f"Re: {SUBJECT}")
    message["In-Reply-To"] = answered
    message["References"] = answered
    message.set_content("Sure, Tuesday works.\n\nOn Thu, Sam wrote:\n> Do you have ten minutes next week?\n")
    return message.as_bytes()


def thread_reply(thread: list[str]) -> bytes:
    """An answer deep in a thread: References lists it from its root, In-Reply-To the latest."""
    message = _reply_base(f"RE: {SUBJECT}")
    message["In-Reply-To"] = thread[-1]
    message["References"] = " ".join(thread)
    message.set_content("Let me loop in my colleague.\n\n> > earlier text\n> latest text\n")
    return message.as_bytes()


def outlook_reply(answered: str) -> bytes:
    """A person's answer from Outlook, which asks for no automatic answers on what people write."""
    message = _reply_base(f"RE: {SUBJECT}")
    message["In-Reply-To"] = answered
    message["References"] = answered
    message["Thread-Topic"] = SUBJECT
    message["X-Auto-Response-Suppress"] = "DR, RN, NRN, OOF, AutoReply"
    message["X-MS-Has-Attach"] = ""
    message.set_content("Not interested, thanks.\n")
    message.add_alternative("<p>Not interested, thanks.</p>", subtype="html")
    return message.as_bytes()


def rfc3834_auto_reply(answered: str) -> bytes:
    """An automatic answer marked as RFC 3834 says (section 5), naming the message it answers."""
    message = _reply_base(f"Re: {SUBJECT}")
    message["Auto-Submitted"] = "auto-replied (vacation)"
    message["In-Reply-To"] = answered
    message["References"] = answered
    message["Precedence"] = "bulk"
    message.set_content("I am travelling until 1 December and read mail only now and then.\n")
    return message.as_bytes()


def exchange_out_of_office(answered: str) -> bytes:
    """Exchange's out-of-office: no Auto-Submitted, only its subject says what it is."""
    message = _reply_base(f"Automatic reply: {SUBJECT}")
    message["In-Reply-To"] = answered
    message["References"] = answered
    message["Thread-Topic"] = SUBJECT
    message["X-Auto-Response-Suppress"] = "All"
    message["X-MS-Exchange-Inbox-Rules-Loop"] = RECIPIENT
    message.set_content("I am out of the office until Monday with limited access to email.\n")
    message.add_alternative("<p>I am out of the office until Monday.</p>", subtype="html")
    return message.as_bytes()


def localised_out_of_office(answered: str, subject_prefix: str) -> bytes:
    """An out-of-office in another language; the subject travels RFC 2047 encoded when not ASCII."""
    message = _reply_base(f"{subject_prefix} {SUBJECT}")
    message["In-Reply-To"] = answered
    message.set_content("Ich bin bis zum 2. Dezember nicht im Büro.\n")
    return message.as_bytes()


def _status_block(fields: list[tuple[str, str]]) -> Message:
    block = Message(policy=compat32)
    for name, value in fields:
        block[name] = value
    return block


def _dsn(
    *,
    action: str,
    status: str,
    diagnostic: str | None,
    returned: bytes | None,
    subject: str,
    envelope_id: str | None = None,
    extra: list[tuple[str, str]] | None = None,
) -> bytes:
    """A delivery status notification as RFC 3464 lays it out: the text for people, the per-message and
    per-recipient fields, and the returned message's header (RFC 6522 text/rfc822-headers)."""
    report = MIMEMultipart("report", report_type="delivery-status")
    report["Message-ID"] = message_id("dsn-1", "mx.acme.test")
    report["Date"] = DATE
    report["From"] = "Mail Delivery System <MAILER-DAEMON@mx.acme.test>"
    report["To"] = SENDER
    report["Subject"] = subject
    report["Auto-Submitted"] = "auto-replied"
    for name, value in extra or []:
        report[name] = value
    report.attach(
        MIMEText(
            "This is the mail system at host mx.acme.test.\n\n"
            "I'm sorry to have to inform you that your message could not\n"
            "be delivered to one or more recipients.\n",
            "plain",
        )
    )
    status_part = MIMEBase("message", "delivery-status")
    per_message = [("Reporting-MTA", "dns; mx.acme.test"), ("Arrival-Date", DATE)]
    if envelope_id is not None:
        per_message.insert(0, ("Original-Envelope-Id", envelope_id))
    per_recipient = [
        ("Final-Recipient", f"rfc822; {RECIPIENT}"),
        ("Original-Recipient", f"rfc822;{RECIPIENT.upper()}"),
        ("Action", action),
        ("Status", status),
        ("Remote-MTA", "dns; mx.prospect.test"),
    ]
    if diagnostic is not None:
        per_recipient.append(("Diagnostic-Code", diagnostic))
    if action == "delayed":
        per_recipient.append(("Will-Retry-Until", DATE))
    status_part.set_payload([_status_block(per_message), _status_block(per_recipient)])
    report.attach(status_part)
    if returned is not None:
        header = returned.split(b"\r\n\r\n", 1)[0].decode("ascii") + "\r\n"
        report.attach(MIMEText(header, "rfc822-headers"))
    return report.as_bytes(policy=SMTP)


def dsn_failed(original: bytes) -> bytes:
    """A hard bounce: Action failed, 5.1.1, the original's header returned."""
    return _dsn(
        action="failed",
        status="5.1.1",
        diagnostic=(
            "smtp; 550 5.1.1 <dana@prospect.test>: Recipient address rejected:\n"
            "    User unknown in virtual mailbox table"
        ),
        returned=original,
        subject="Undelivered Mail Returned to Sender",
    )


def dsn_failed_without_original(envelope_id: str, *, in_reply_to: str | None = None) -> bytes:
    """A hard bounce that returns nothing of the message; only the envelope id (RFC 3461 ENVID) says which."""
    extra = [("In-Reply-To", in_reply_to)] if in_reply_to else []
    return _dsn(
        action="failed",
        status="5.2.2 (mailbox full)",
        diagnostic="smtp; 552 5.2.2 Mailbox full",
        returned=None,
        subject="Delivery Status Notification (Failure)",
        envelope_id=envelope_id,
        extra=extra,
    )


def dsn_delayed(original: bytes) -> bytes:
    """A warning: delivery delayed (4.4.7), still being retried."""
    return _dsn(
        action="delayed",
        status="4.4.7",
        diagnostic="smtp; 451 4.4.7 Delivery time expired for now",
        returned=original,
        subject="Delayed Mail (still being retried)",
    )


def dsn_delivered(original: bytes) -> bytes:
    """Good news, asked for with NOTIFY=SUCCESS."""
    return _dsn(
        action="delivered",
        status="2.0.0",
        diagnostic=None,
        returned=original,
        subject="Successful Mail Delivery Report",
        extra=[("In-Reply-To", original.split(b"Message-ID: ", 1)[1].split(b"\r\n", 1)[0].decode())],
    )


def postfix_bounce(original: bytes) -> bytes:
    """Postfix's older, non-RFC 3464 bounce: multipart/mixed, a "Notification" part, the message attached."""
    bounce = MIMEMultipart("mixed")
    bounce["Message-ID"] = message_id("pf-1", "mx.acme.test")
    bounce["Date"] = DATE
    bounce["From"] = "MAILER-DAEMON@mx.acme.test (Mail Delivery System)"
    bounce["To"] = SENDER
    bounce["Subject"] = "Undelivered Mail Returned to Sender"
    notice = MIMEText(
        "This is the Postfix program at host mx.acme.test.\n\n"
        "I'm sorry to have to inform you that the message returned\n"
        "below could not be delivered to one or more destinations.\n\n"
        "For further assistance, please send mail to <postmaster>\n\n"
        "\t\t\tThe Postfix program\n\n"
        "<dana@prospect.test>: host mx.prospect.test[192.0.2.10] said: 550 5.1.1\n"
        "    <dana@prospect.test>: Recipient address rejected: User unknown (in reply\n"
        "    to RCPT TO command)\n",
        "plain",
    )
    notice["Content-Description"] = "Notification"
    bounce.attach(notice)
    returned = MIMEBase("message", "rfc822")
    returned.set_payload([_parsed(original)])
    returned["Content-Description"] = "Undelivered Message"
    bounce.attach(returned)
    return bounce.as_bytes(policy=SMTP)


def qmail_bounce(original: bytes) -> bytes:
    """qmail's bounce (QSBMF): plain text, the returned message copied inline below a line."""
    text = (
        "Hi. This is the qmail-send program at mx.acme.test.\n"
        "I'm afraid I wasn't able to deliver your message to the following addresses.\n"
        "This is a permanent error; I've given up. Sorry it didn't work out.\n\n"
        "<dana@prospect.test>:\n"
        "192.0.2.10 does not like recipient.\n"
        "Remote host said: 550 5.1.1 <dana@prospect.test>... User unknown\n"
        "Giving up on 192.0.2.10.\n\n"
        "--- Below this line is a copy of the message.\n\n"
    ) + original.decode("ascii").replace("\r\n", "\n")
    bounce = MIMEText(text, "plain")
    bounce["Message-ID"] = message_id("qm-1", "mx.acme.test")
    bounce["Date"] = DATE
    bounce["From"] = "MAILER-DAEMON@mx.acme.test"
    bounce["To"] = SENDER
    bounce["Subject"] = "failure notice"
    return bounce.as_bytes(policy=SMTP)


def exim_bounce(original: bytes) -> bytes:
    """Exim's bounce: plain text with X-Failed-Recipients, the message copied inline."""
    text = (
        "This message was created automatically by mail delivery software.\n\n"
        "A message that you sent could not be delivered to one or more of its\n"
        "recipients. This is a permanent error. The following address(es) failed:\n\n"
        "  dana@prospect.test\n"
        "    host mx.prospect.test [192.0.2.10]\n"
        "    SMTP error from remote mail server after RCPT TO:<dana@prospect.test>:\n"
        "    550 5.1.1 User unknown\n\n"
        "------ This is a copy of the message, including all the headers. ------\n\n"
    ) + original.decode("ascii").replace("\r\n", "\n")
    bounce = MIMEText(text, "plain")
    bounce["Message-ID"] = message_id("ex-1", "mx.acme.test")
    bounce["Date"] = DATE
    bounce["From"] = "Mail Delivery System <Mailer-Daemon@mx.acme.test>"
    bounce["To"] = SENDER
    bounce["Subject"] = "Mail delivery failed: returning message to sender"
    bounce["X-Failed-Recipients"] = RECIPIENT
    bounce["Auto-Submitted"] = "auto-replied"
    return bounce.as_bytes(policy=SMTP)


def newsletter() -> bytes:
    """Mail that answers nothing: no In-Reply-To, no References."""
    message = _reply_base("Our November product update", sender="news@vendor.test")
    message.set_content("What's new this month.\n")
    return message.as_bytes()


def garbage() -> list[bytes]:
    """Inputs no mail system should send and every reader must survive."""
    return [
        b"",
        b"\x00\xff\xfe" * 100,
        b"not a header at all\r\n\r\nbody",
        b"Subject: " + b"A" * 200_000 + b"\r\n\r\n",
        b"References: " + b"<x@y> " * 20_000 + b"\r\n\r\nbody",
        b"Content-Type: multipart/report; report-type=delivery-status\r\n\r\nno boundary at all",
        b'Content-Type: multipart/report; report-type=delivery-status; boundary="b"\r\n\r\n--b\r\n'
        b"Content-Type: message/delivery-status\r\n\r\nAction: failed\r\nStatus: 5.1.1\r\n--b",
        b"Content-Type: text/plain; charset=no-such-charset\r\nContent-Transfer-Encoding: base64\r\n\r\n!!!",
        b"Subject: =?utf-8?q?broken=ZZ?= =?x-unknown?b?////?=\r\nIn-Reply-To: <\xff\xfe@x>\r\n\r\n",
        b"From: MAILER-DAEMON@x\r\nContent-Type: multipart/mixed; boundary=z\r\n\r\n--z\r\n"
        b"Content-Type: message/rfc822\r\n\r\n\xff\xff\xff\r\n--z--\r\n",
    ]


def _parsed(raw: bytes) -> Message:
    return message_from_bytes(raw, policy=compat32)
