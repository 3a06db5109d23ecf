"""``permits-arcgis``: a city's building permits in an ArcGIS feature service layer
(``…/FeatureServer/<layer>``), with the mapping `vpx signals import permits --mapping` takes, the
layer's field names standing for columns (each feature's ``attributes``, flattened as
vpx.sources.kinds.permit_records says; ArcGIS dates are epoch milliseconds: ``date_format =
"epoch_ms"`` reads them).

A run reads the layer's description (``?f=json``): its fields (the mapping's columns are checked
against them before anything is written), its object-id field, and its edit-date field
(``editFieldsInfo.editDateField``, kept by editor tracking) unless ``--option watermark=FIELD`` names
another date field. It then asks ``…/query`` with ``where <field> >= TIMESTAMP 'YYYY-MM-DD
HH:MI:SS'`` (the documented SQL-92 form; ``1=1`` on the first run, which reads the whole layer),
``outFields=*``, ``orderByFields=<field> ASC, <object id> ASC``, ``resultOffset`` and
``resultRecordCount`` (``--option page_size``, else the layer's ``maxRecordCount``, at most 2,000),
``returnGeometry=false`` and ``f=json``, and goes on while the answer says ``exceededTransferLimit``.

The timestamp is a day before the watermark, floored to the second: a layer may read it in its own
time zone, and the edit dates are milliseconds. Features up to the watermark, the last (edit date,
object id) pair read, are skipped, so a feature is read once however many share its edit date. Each
request after the first repeats the last feature read; when it does not come first (features moved
while the run paged), the run reads again from the first page, skipping what it read. The watermark
is saved after each page's permits are committed.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from vpx.sources.fetch import SourceFailed
from vpx.sources.job import Job, SourceConfig
from vpx.sources.kinds import InvalidSource, Kind, RunStatus, register
from vpx.sources.kinds.files import check_http_url
from vpx.sources.kinds.permit_records import PermitPages, check_columns, flatten_all, page_size_check
from vpx.sources.kinds.permits_csv import check_source_mapping, source_mapping
from vpx.sources.kinds.permits_socrata import check_field
from vpx.sources.options import OptionSpec

MAX_PAGE_SIZE = 2000  # ArcGIS Online's default maxRecordCount; servers cap larger asks at their own
DEFAULT_PAGE_SIZE = 1000
# The where clause's timestamp is this far before the watermark (any time zone the layer reads it in).
MARGIN = timedelta(days=1)
MAX_REREADS = 5


def esri_timestamp(epoch_ms: int) -> str:
    """The where clause's ``TIMESTAMP '…'``: a margin before ``epoch_ms``, floored to the second."""
    moment = datetime.fromtimestamp(epoch_ms / 1000, UTC) - MARGIN
    return f"TIMESTAMP '{moment:%Y-%m-%d %H:%M:%S}'"


def _answer(body: Any, url: str) -> dict[str, Any]:
    """An ArcGIS JSON answer; its ``error`` (sent with a 200) as a failed run."""
    if not isinstance(body, dict):
        raise SourceFailed(f"{url} did not answer a JSON object", code="unexpected_layout")
    error = body.get("error")
    if isinstance(error, dict):
        details = "; ".join(str(d) for d in error.get("details") or [] if d)
        said = f"{error.get('code', '')} {error.get('message', '')}".strip() + (f" ({details})" if details else "")
        raise SourceFailed(f"{url} answered an error: {said}", code="http_error")
    return body


class Layer:
    """What the run needs of the layer's description."""

    def __init__(self, body: dict[str, Any], url: str, watermark: str | None) -> None:
        fields = body.get("fields")
        if not isinstance(fields, list) or not fields:
            raise SourceFailed(
                f"{url}?f=json lists no fields: is the URL a layer (…/FeatureServer/0)?", code="unexpected_layout"
            )
        self.fields = {str(f.get("name")): str(f.get("type", "")) for f in fields if isinstance(f, dict)}
        oid = body.get("objectIdField") or next(
            (name for name, kind in self.fields.items() if kind == "esriFieldTypeOID"), None
        )
        if not oid:
            raise SourceFailed(f"{url}?f=json names no object-id field", code="unexpected_layout")
        self.object_id = str(oid)
        edit_info = body.get("editFieldsInfo") or {}
        chosen = watermark or (edit_info.get("editDateField") if isinstance(edit_info, dict) else None)
        if not chosen:
            raise SourceFailed(
                f"{url}: the layer keeps no edit dates (editFieldsInfo.editDateField: editor tracking is off); name "
                "a date field that changes with each edit with --option watermark=FIELD",
                code="unexpected_layout",
            )
        if chosen not in self.fields:
            raise SourceFailed(f"{url}: the layer has no field {chosen!r} to read changes by", code="unexpected_layout")
        if self.fields[chosen] not in ("esriFieldTypeDate", ""):
            raise SourceFailed(
                f"{url}: {chosen} is a {self.fields[chosen]} field, not a date (esriFieldTypeDate)",
                code="unexpected_layout",
            )
        self.watermark = str(chosen)
        most = body.get("maxRecordCount")
        self.max_records = most if isinstance(most, int) and most > 0 else DEFAULT_PAGE_SIZE


@register
class PermitsArcgisKind(Kind):
    name = "permits-arcgis"
    title = "A city's building permits in an ArcGIS feature service layer"
    url_help = "the layer, https://<server>/…/FeatureServer/<layer number> (ArcGIS REST)"
    default_every = 86_400
    takes_mapping = True
    options = (
        OptionSpec(
            "watermark",
            "the date field that changes with each edit (default: the layer's edit-date field, from editor tracking)",
            check=check_field,
        ),
        OptionSpec(
            "page_size",
            f"features a request, 1 to {MAX_PAGE_SIZE:,} (default: the layer's maxRecordCount, or {MAX_PAGE_SIZE:,})",
            check=page_size_check(MAX_PAGE_SIZE),
        ),
    )

    def check(self, config: SourceConfig) -> None:
        check_http_url(config.url)
        parts = urlsplit(config.url)
        segments = [s for s in parts.path.split("/") if s]
        if (
            len(segments) < 2
            or segments[-2].lower() not in ("featureserver", "mapserver")
            or not segments[-1].isdigit()
        ):
            raise InvalidSource("url", f"must be {self.url_help}, without a query")
        if parts.query:
            raise InvalidSource("url", f"must be {self.url_help}, without a query")
        check_source_mapping(config)

    async def run(self, job: Job) -> RunStatus:
        mapping = source_mapping(job.config)
        url = job.config.url.rstrip("/")
        options = job.config.options
        described = await job.fetcher.get(url, params={"f": "json"})
        layer = Layer(_answer(await described.read_json(), url), url, options.get("watermark"))
        check_columns(mapping, layer.fields, where=f"{url}?f=json")
        size = int(options.get("page_size", min(layer.max_records, MAX_PAGE_SIZE)))
        held = job.watermark.get("features") or {}
        if held.get("field") != layer.watermark:
            held = {}  # another field: read from the start
        last: tuple[int, int] | None = (int(held["value"]), int(held["object_id"])) if "value" in held else None
        where = f"{layer.watermark} >= {esri_timestamp(last[0])}" if last else "1=1"
        order = f"{layer.watermark} ASC, {layer.object_id} ASC"
        pages = PermitPages(job, mapping, name=url.rsplit("/", 2)[-2] + "/" + url.rsplit("/", 1)[-1], url=url)
        offset, expected, rereads = 0, None, 0
        while True:
            params = {
                "where": where,
                "outFields": "*",
                "orderByFields": order,
                "resultOffset": str(offset),
                "resultRecordCount": str(size),
                "returnGeometry": "false",
                "f": "json",
            }
            answer = await job.fetcher.get(f"{url}/query", params=params)
            page = _answer(await answer.read_json(), f"{url}/query")
            features = page.get("features")
            if not isinstance(features, list):
                raise SourceFailed(f"{url}/query answered no features list", code="unexpected_layout")
            attributes = [f.get("attributes") for f in features if isinstance(f, dict)]
            if len(attributes) != len(features) or not all(isinstance(a, dict) for a in attributes):
                raise SourceFailed(f"{url}/query answered features without attributes", code="unexpected_layout")
            rows: list[dict[str, Any]] = attributes  # type: ignore[assignment]
            if expected is not None and rows and rows[0].get(layer.object_id) != expected:
                rereads += 1
                if rereads > MAX_REREADS:
                    raise SourceFailed(
                        f"{url}: the features kept moving while they were read; the next run goes on from the last "
                        "page saved",
                        code="changed_during_run",
                    )
                offset, expected = 0, None
                continue
            fresh = []
            for row in rows:
                key = _key(row, layer)
                if key is not None and last is not None and key <= last:
                    continue  # read already: up to the watermark
                fresh.append(row)
            if fresh:
                await pages.ingest(await flatten_all(fresh))
                keys = [k for k in (_key(r, layer) for r in fresh) if k is not None]
                if keys:
                    last = max([*keys, *([last] if last else [])])
                    await job.save(
                        {
                            **job.watermark,
                            "features": {"field": layer.watermark, "value": last[0], "object_id": last[1]},
                        }
                    )
            if not rows or not page.get("exceededTransferLimit"):
                break
            # The next request repeats the last feature read, to see that nothing moved.
            overlap = 1 if len(rows) > 1 else 0
            offset += len(rows) - overlap
            expected = rows[-1].get(layer.object_id) if overlap else None
        pages.finish()
        return "ok" if pages.piece.rows_read else "not_modified"


def _key(row: dict[str, Any], layer: Layer) -> tuple[int, int] | None:
    """(edit date, object id) of a feature; None when it has no edit date (read on the first run only)."""
    moment, oid = row.get(layer.watermark), row.get(layer.object_id)
    if not isinstance(moment, int | float) or isinstance(moment, bool) or not isinstance(oid, int):
        return None
    return int(moment), oid
