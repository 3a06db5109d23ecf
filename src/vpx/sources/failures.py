"""Why a run cannot go on."""

from __future__ import annotations


class SourceFailed(Exception):
    """A run that cannot go on: the message says why in plain words; ``code`` is stable snake_case
    (``rate_limited``, ``server_error``, ``unexpected_layout`` …) for ``--json`` output; ``status`` the
    HTTP status a publisher refused a request with (``http_error``: a 404 for a day with no file…)."""

    def __init__(self, message: str, *, code: str = "source_failed", status: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.status = status
