"""Fixtures for the sequence tests: a real SMTP server on loopback (aiosmtpd) and a real IMAP server
(Debian's dovecot-imapd, installed when missing; its tests skip, saying why, where it cannot be)."""

from __future__ import annotations

from tests.sequences.dovecot import dovecot_server, fresh_mailbox
from tests.sequences.smtp_server import smtp_sink

__all__ = ["dovecot_server", "fresh_mailbox", "smtp_sink"]
