"""An option a source takes (``--option key=value``), as a kind of source lists it: each kind's own
(vpx.sources.kinds) and the limits every kind takes (vpx.sources.limits) are written alike, so the
limits need nothing from the kinds above them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class OptionSpec:
    """``required``: ``add`` refuses a source without it; ``secret``: sealed at rest and never shown
    back; ``check``: the value as kept, or ValueError with the reason in plain words."""

    name: str
    help: str
    required: bool = False
    secret: bool = False
    check: Callable[[str], str] | None = None
