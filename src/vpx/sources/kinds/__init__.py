"""Kinds of source: how one kind of publisher is kept in sync. Each kind is one module here holding a
``Kind`` subclass with ``@register``, and the module's name in ``KIND_MODULES``.

The protocol, in full:

- ``name`` (what ``vpx sources add NAME KIND`` takes), ``title``, ``url_help`` (what ``--url`` is for
  this kind, shown in help and errors) and ``default_every`` (seconds, when ``--every`` is not given).
- ``options``: the ``--option key=value`` the kind takes, each an ``OptionSpec`` (vpx.sources.options):
  ``required``, ``secret`` (sealed at rest with vpx.secrets and never shown back; an app token, say),
  and ``check``, a function that returns the value as kept or raises ValueError with the reason in
  plain words.
  Options the kind does not list are refused at ``add``, but for the limits every kind takes besides
  its own (vpx.sources.limits: ``max_download``, ``max_unpacked``, ``max_ratio``, ``max_line``,
  ``max_run_time``, ``stall_timeout``), which the run applies: ``job.limits``.
- ``takes_mapping``: the kind needs ``--mapping FILE`` (a permit mapping, as `vpx signals import
  permits` takes); the file's text is kept with the source. Other kinds refuse one.
- ``check(config)``: anything else to refuse at ``add`` (the URL's shape, options that go together):
  raise ``InvalidSource(field, message)``. Called after the options were checked one by one.
- ``run(job)``: one run. Fetch with ``job.fetcher`` (conditional requests, retries, downloads that
  resume, redirects checked: vpx.sources.fetch), starting from ``job.watermark`` (what the last
  committed run left, a JSON object of the kind's own). Unzip with vpx.sources.unpack, and do any
  slow work on a file in a thread (``off_loop``, ``asyncio.to_thread``), never on the event loop.
  Check what was fetched before anything is written (``job.check_lines`` for a text file a reader of
  the kind's own takes, ``job.check_registry_layout``, a mapping's ``check_header``) and feed it to
  an importer: ``job.import_registry(source, path)`` (vpx.registries) or ``job.ingest(events)`` (the signal
  pipeline); both add their counts to ``job.report`` and raise SourceFailed when the importer fails.
  After each piece of data the importer has committed, ``await job.save(watermark)`` commits the
  watermark that stands for it, so a run killed between the two reads the piece again (the importers
  skip what they have seen) and never skips one. Note the newest record's own date with
  ``job.saw_record(when)``. Return ``"ok"``, or ``"not_modified"`` when nothing new was found (the
  run cost a conditional request). Raise ``SourceFailed(message, code=…)`` to fail the run: the
  source turns ``failing`` with the message, the watermark stays where the last save left it.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar, Literal, TypeVar

from vpx.sources.options import OptionSpec

if TYPE_CHECKING:
    from vpx.sources.job import Job, SourceConfig

# Every kind module; importing one registers its kinds.
KIND_MODULES = (
    "vpx.sources.kinds.files",
    "vpx.sources.kinds.nppes",
    "vpx.sources.kinds.permits_csv",
    "vpx.sources.kinds.permits_socrata",
    "vpx.sources.kinds.permits_arcgis",
    "vpx.sources.kinds.edgar_daily",
)

RunStatus = Literal["ok", "not_modified"]


class InvalidSource(ValueError):
    """A source that cannot be added as given: ``field`` (url, every, mapping, options.<key>…) and why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class Kind(ABC):
    name: ClassVar[str]
    title: ClassVar[str]
    url_help: ClassVar[str]
    default_every: ClassVar[int] = 86_400
    options: ClassVar[tuple[OptionSpec, ...]] = ()
    takes_mapping: ClassVar[bool] = False

    def check(self, config: SourceConfig) -> None:
        """Refuses (InvalidSource) what ``add`` should not accept beyond the options one by one."""
        return None

    @abstractmethod
    async def run(self, job: Job) -> RunStatus:
        """One run: what is new fetched, checked, imported; the watermark saved after each commit."""


K = TypeVar("K", bound=type[Kind])
KINDS: dict[str, type[Kind]] = {}


def register(cls: K) -> K:
    KINDS[cls.name] = cls
    return cls


def all_kinds() -> dict[str, type[Kind]]:
    for module in KIND_MODULES:
        importlib.import_module(module)
    return dict(sorted(KINDS.items()))
