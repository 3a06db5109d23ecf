"""Sending due steps (the worker's job): no email twice after a crash, none skipped.

A step's message row, with the Message-ID it will carry, is committed before any SMTP conversation
(status ``sending``, leased). Right before the DATA command it is committed ``transmitting``; when
the server answers it becomes ``sent``, ``deferred`` (a 4xx: tried again with backoff, at most five
times over 24 hours) or ``bounced`` (a 5xx). A worker killed at any point leaves a leased row; when
the lease runs out:

- ``sending``: DATA was never sent, so the server cannot have accepted it: sent again, same Message-ID;
- ``transmitting``: in doubt. With IMAP, the mailbox's Sent folder tells whether the server took it
  (found: recorded as sent; not found: sent again); without IMAP it is recorded as sent, unconfirmed
  (never twice; the window is the time between the end of DATA and the server's answer).

Suppression (D15 and the account's unsubscribes) is checked immediately before each send. A
mailbox's ``daily_limit`` is a rolling 24-hour cap across its sequences, its sends at least
``send_interval_seconds`` apart plus up to 20 % jitter; what does not fit waits. A mailbox whose
bounce rate passes 5 % over its last 40 sends pauses its sequences.

The parts: ``claiming`` (what may go now, within the mailboxes' caps), ``composing`` (a message's
templates rendered for its recipient), ``conversation`` (the round, and the SMTP conversation of each
message), ``settling`` (the server's answer recorded, bounces counted, interrupted sends settled) and
``steps`` (an enrollment moving on).
"""

from __future__ import annotations

from vpx.sequences.sending.claiming import BATCH, Claimed, Due, claim_due, find_due
from vpx.sequences.sending.conversation import run_due_sends, send_claimed
from vpx.sequences.sending.settling import mark_bounced, mark_sent, record_outcome, settle_interrupted

__all__ = [
    "BATCH",
    "Claimed",
    "Due",
    "claim_due",
    "find_due",
    "mark_bounced",
    "mark_sent",
    "record_outcome",
    "run_due_sends",
    "send_claimed",
    "settle_interrupted",
]
