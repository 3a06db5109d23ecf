"""Whether the dashboard may send its emails (sign-up confirmation, password reset), whose links are
credentials: through the operator's SMTP server (VPX_SMTP_URL), or, for development and demos only, to
the log (VPX_MAIL_TO_LOG=1). With neither, it offers no sign-up and no password reset, so that no link
ever reaches a log; the server says which at start."""

from __future__ import annotations

import logging

from fastapi import Request
from fastapi.responses import HTMLResponse

from vpx.config import Settings
from vpx.dashboard.web import render

log = logging.getLogger("vpx.mail")

FEATURES = {
    "signup": ("Sign-up is not available here", "an account"),
    "reset": ("Password reset is not available here", "a new password"),
}


def can_send(settings: Settings) -> bool:
    return settings.smtp_url is not None or settings.mail_to_log


def announce(settings: Settings) -> None:
    """The start-up warning when the dashboard's emails are not sent by SMTP."""
    if settings.smtp_url is not None:
        return
    if settings.mail_to_log:
        log.warning(
            "VPX_MAIL_TO_LOG=1 and VPX_SMTP_URL is not set: the dashboard's emails, with their sign-up "
            "confirmation and password reset links, are written to the log, not sent. Whoever reads this "
            "log can take over any dashboard account: for development and demos only, never on a public server"
        )
        return
    log.warning(
        "VPX_SMTP_URL is not set: dashboard sign-up and password reset are off, since their links could "
        "not be emailed (set VPX_SMTP_URL; VPX_MAIL_TO_LOG=1 writes the emails to the log, for development)"
    )


def unavailable_page(request: Request, feature: str, *, status: int) -> HTMLResponse:
    """The page saying that ``feature`` ("signup" or "reset") needs email this server cannot send: 200
    for its page, 403 for its form (refused here, whatever the input: not a server error)."""
    title, wanted = FEATURES[feature]
    return render(request, "no_mail.html", {"title": title, "wanted": wanted}, status=status)
