"""``permits-socrata``: a city's building permits on a Socrata portal, read through the SODA API
(``https://<portal>/resource/<id>.json``) with the mapping `vpx signals import permits --mapping`
takes, field names standing for columns (records flattened as vpx.sources.kinds.permit_records says).

Each request asks ``$select=:*, *`` (the system fields ``:id``, ``:created_at``, ``:updated_at`` with
the dataset's own), ``$where <watermark> >= '<last value read>'`` (``:updated_at`` unless
``--option watermark=FIELD``; the first run asks ``IS NOT NULL`` and reads the whole dataset),
``$order <watermark>, :id`` (``:id`` breaks ties so that rows of one watermark page in a stable order)
and ``$limit``/``$offset`` (``--option page_size``, 1,000 by default).

Rows sharing a watermark (a publisher's upsert stamps a whole batch with one ``:updated_at``) are
neither lost nor read twice: the watermark keeps the last value read, the ``:id`` of the rows read
at exactly that value and how many there were. The next request starts at that value with an
``$offset`` of that count less one, and must find the last row read first; rows met again are
skipped by their ``:id``. When that row is not first (the rows of that value changed meanwhile), the
value's rows are read again from the first, skipping those already read. Anything after the last
value read is found by the ``>=`` whatever was updated in between. The watermark is saved after each
page's permits are committed. The ids kept are the last 10,000 of one value: rows of a larger batch
read again after a change are counted as duplicates by the signal pipeline, never imported twice.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

from vpx.sources.fetch import SourceFailed
from vpx.sources.job import Job, SourceConfig
from vpx.sources.kinds import InvalidSource, Kind, RunStatus, register
from vpx.sources.kinds.files import check_http_url
from vpx.sources.kinds.permit_records import PermitPages, check_columns, flatten_all, page_size_check
from vpx.sources.kinds.permits_csv import check_source_mapping, source_mapping
from vpx.sources.options import OptionSpec

DEFAULT_WATERMARK = ":updated_at"
DEFAULT_PAGE_SIZE = 1000
MAX_PAGE_SIZE = 50_000  # SODA 2.0 endpoints answer at most this many rows a request
KEPT_IDS = 10_000
# A page whose rows changed under the run is read again from its value's first row this many times
# in one run; past that the run fails and the next one goes on from the last page committed.
MAX_REREADS = 5
FIELD = re.compile(r":?[A-Za-z_@][A-Za-z0-9_]*")
RESOURCE = re.compile(r"/resource/[^/]+\.json", re.IGNORECASE)


def check_field(value: str) -> str:
    text = value.strip()
    if not FIELD.fullmatch(text):
        raise ValueError(
            f"{value!r} is not a field name (letters, digits and _, or a system field such as :updated_at)"
        )
    return text


def soql_literal(value: Any) -> str:
    """A watermark value as SoQL writes it: a number bare, anything else quoted."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "'" + str(value).replace("'", "''") + "'"
    return repr(value)


class TiedRows:
    """Where the last run (or page) stopped: the last watermark value read, the ``:id`` of the rows
    read at exactly that value (the last ones, up to KEPT_IDS) and how many rows of that value were
    read in ``$order``."""

    def __init__(self, field: str, held: dict[str, Any]) -> None:
        same = held.get("field") == field and "value" in held
        self.field = field
        self.value: Any = held.get("value") if same else None
        self.ids: list[str] = [str(i) for i in held.get("ids", [])] if same else []
        self.position: int = int(held.get("position", len(self.ids))) if same else 0
        self._seen = set(self.ids)

    @property
    def started(self) -> bool:
        return self.value is not None

    def where(self) -> str:
        if not self.started:
            return f"{self.field} IS NOT NULL"
        return f"{self.field} >= {soql_literal(self.value)}"

    def seen(self, row: dict[str, Any]) -> bool:
        return self.started and row.get(self.field) == self.value and str(row.get(":id")) in self._seen

    def read(self, rows: list[dict[str, Any]], offset: int) -> None:
        """Moves past a page read at ``offset`` from the current value's query."""
        last = rows[-1].get(self.field)
        tied = [str(r.get(":id")) for r in rows if r.get(self.field) == last]
        if self.started and last == self.value:
            # The whole page is of the value already held: its rows follow those read, in $order.
            self.position = offset + len(rows)
            again = set(tied)
            self.ids = ([i for i in self.ids if i not in again] + tied)[-KEPT_IDS:]
        else:
            # A new value: its rows so far are the end of this page, the first of that value.
            self.value, self.position, self.ids = last, len(tied), tied[-KEPT_IDS:]
        self._seen = set(self.ids)

    def as_json(self) -> dict[str, Any]:
        return {"field": self.field, "value": self.value, "ids": self.ids, "position": self.position}


@register
class PermitsSocrataKind(Kind):
    name = "permits-socrata"
    title = "A city's building permits on a Socrata open-data portal (SODA API)"
    url_help = "the dataset's SODA endpoint, https://<portal>/resource/<dataset id>.json"
    default_every = 86_400
    takes_mapping = True
    options = (
        OptionSpec(
            "watermark",
            "the field that orders changes, read from where the last run stopped (default :updated_at, when "
            "the row was last updated)",
            check=check_field,
        ),
        OptionSpec(
            "page_size", f"rows a request, 1 to {MAX_PAGE_SIZE:,} (default 1,000)", check=page_size_check(MAX_PAGE_SIZE)
        ),
        OptionSpec(
            "app_token",
            "an application token, sent as X-App-Token (Socrata throttles requests without one)",
            secret=True,
        ),
    )

    def check(self, config: SourceConfig) -> None:
        check_http_url(config.url)
        parts = urlsplit(config.url)
        if not RESOURCE.search(parts.path) or parts.query:
            raise InvalidSource("url", f"must be {self.url_help} (no query: the run writes its own)")
        check_source_mapping(config)

    async def run(self, job: Job) -> RunStatus:
        mapping = source_mapping(job.config)
        url = job.config.url
        options = job.config.options
        field = options.get("watermark", DEFAULT_WATERMARK)
        size = int(options.get("page_size", DEFAULT_PAGE_SIZE))
        token = options.get("app_token")
        headers = {"X-App-Token": token} if token else None
        held = TiedRows(field, job.watermark.get("rows") or {})
        pages = PermitPages(job, mapping, name=urlsplit(url).path.rsplit("/", 1)[-1], url=url)
        # One row of overlap: the next request must begin with the last row read, else the rows of
        # that value moved and are read again from their first.
        overlap = 1 if size > 1 else 0
        offset = max(held.position - overlap, 0) if held.started else 0
        expected = held.ids[-1] if held.started and offset and held.ids else None
        rereads = 0
        while True:
            params = {
                "$select": ":*, *",
                "$where": held.where(),
                "$order": f"{field}, :id",
                "$limit": str(size),
                "$offset": str(offset),
            }
            page = await job.fetcher.get(url, params=params, headers=headers)
            rows = _records(await page.read_json(), url)
            if rows and any(field not in r or ":id" not in r for r in rows):
                raise SourceFailed(
                    f"{url} answered rows without {field} or :id; is --option watermark a field of the dataset, and "
                    "the URL a SODA /resource/ endpoint?",
                    code="unexpected_layout",
                )
            if expected is not None and rows and str(rows[0].get(":id")) != expected:
                rereads += 1
                if rereads > MAX_REREADS:
                    raise SourceFailed(
                        f"{url}: the rows kept changing while they were read; the next run goes on from the last "
                        "page saved",
                        code="changed_during_run",
                    )
                offset, expected = 0, None
                continue
            fresh = [r for r in rows if not held.seen(r)]
            if fresh:
                flat = await flatten_all(fresh)
                declared = _declared_fields(page.headers.get("x-soda2-fields"))
                check_columns(mapping, [*declared, *(k for r in flat for k in r)], where=url)
                await pages.ingest(flat)
            if rows:
                held.read(rows, offset)
                await job.save({**job.watermark, "rows": held.as_json()})
            if len(rows) < size:
                break
            offset = max(held.position - overlap, 0)
            expected = str(rows[-1][":id"]) if offset else None
        pages.finish()
        return "ok" if pages.piece.rows_read else "not_modified"


def _records(body: Any, url: str) -> list[dict[str, Any]]:
    if not isinstance(body, list) or not all(isinstance(r, dict) for r in body):
        raise SourceFailed(f"{url} did not answer a JSON array of rows", code="unexpected_layout")
    return body


def _declared_fields(header: str | None) -> list[str]:
    """The fields SODA declares for the answer (``X-SODA2-Fields``): rows leave out their null fields."""
    if not header:
        return []
    try:
        found = json.loads(header)
    except ValueError:
        return []
    return [str(f) for f in found] if isinstance(found, list) else []
