"""Fakes of the portals' query APIs, served as routes of the fake publisher (tests/sources/publisher.py):

- ``SodaDataset``: a Socrata dataset's ``/resource/<id>.json``: ``$select`` (system fields only when
  asked, ``:*, *``), ``$where`` (``FIELD >= | > | = 'value'``, ``FIELD IS NOT NULL``), ``$order``
  (fields, ASC/DESC), ``$limit``/``$offset``; rows leave out their null fields and ``X-SODA2-Fields``
  names the answer's fields, as SODA does; with ``app_token`` set, a request without that
  ``X-App-Token`` is refused 403, as an invalid token is;
- ``ArcgisLayer``: a feature service layer (``…/FeatureServer/0?f=json`` describing its fields,
  object-id field, ``editFieldsInfo`` and ``maxRecordCount``) and its ``…/query``: ``where`` (``1=1``,
  ``FIELD >= | > TIMESTAMP 'YYYY-MM-DD HH:MI:SS'``, read in the layer's time zone), ``orderByFields``,
  ``resultOffset``/``resultRecordCount`` capped at ``maxRecordCount``, ``exceededTransferLimit``
  while more features match; dates as epoch milliseconds;
- EDGAR's daily-index tree: ``edgar_index`` writes a day's ``master.YYYYMMDD.idx``; ``sec_gate``
  refuses a request whose User-Agent names no email address, as the SEC does.

``after_request`` (both portals) runs after each answer: a test changes the data between pages."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from tests.sources.publisher import Answer, Publisher

WHERE = re.compile(r"\s*(?P<field>:?[\w@]+)\s*(?P<op>>=|>|=)\s*(?P<value>'(?:[^']|'')*'|-?[\d.]+)\s*")
NOT_NULL = re.compile(r"\s*(?P<field>:?[\w@]+)\s+IS\s+NOT\s+NULL\s*", re.IGNORECASE)
ESRI_WHERE = re.compile(r"\s*(?P<field>\w+)\s*(?P<op>>=|>)\s*TIMESTAMP\s*'(?P<value>[\d\- :]+)'\s*", re.IGNORECASE)


def _json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Answer:
    return Answer(status, json.dumps(body).encode(), {"Content-Type": "application/json", **(headers or {})})


def _ordered(items: list[dict[str, Any]], order: str) -> list[dict[str, Any]]:
    """Sorted by ``field [ASC|DESC], …``; nulls last."""
    for part in reversed([p.strip() for p in order.split(",") if p.strip()]):
        name, _, direction = part.partition(" ")

        def key(item: dict[str, Any], name: str = name) -> tuple[bool, Any]:
            return (item.get(name) is None, item.get(name) or "")

        items.sort(key=key, reverse=direction.strip().upper() == "DESC")
    return items


def _compare(value: Any, op: str, wanted: Any) -> bool:
    if value is None:
        return False
    if op == ">=":
        return bool(value >= wanted)
    if op == ">":
        return bool(value > wanted)
    return bool(value == wanted)


class SodaDataset:
    """Rows of one dataset; ``add`` stamps each with an ``:id`` and ``:updated_at`` as Socrata does."""

    def __init__(self, publisher: Publisher, path: str = "/resource/ab12-cd34.json") -> None:
        self.publisher = publisher
        self.path = path
        self.rows: list[dict[str, Any]] = []
        self.app_token: str | None = None
        self.after_request: Callable[[int], None] | None = None
        self.requests = 0
        self.lock = threading.Lock()
        self._next = 0
        publisher.route(path, self.answer)

    @property
    def url(self) -> str:
        return self.publisher.url(self.path)

    def add(self, updated_at: str, row_id: str | None = None, **fields: Any) -> dict[str, Any]:
        with self.lock:
            self._next += 1
            row = {":id": row_id or f"row-{self._next:04d}", ":created_at": updated_at, ":updated_at": updated_at}
            row.update(fields)
            self.rows.append(row)
            return row

    def update(self, row_id: str, updated_at: str, **fields: Any) -> None:
        with self.lock:
            for row in self.rows:
                if row[":id"] == row_id:
                    row.update(fields)
                    row[":updated_at"] = updated_at

    def answer(self, query: dict[str, str], headers: dict[str, str]) -> Answer:
        if self.app_token is not None and headers.get("x-app-token") != self.app_token:
            return _json({"error": True, "message": "Invalid app_token specified"}, 403)
        with self.lock:
            rows = [dict(r) for r in self.rows]
        where = query.get("$where")
        if where:
            if found := NOT_NULL.fullmatch(where):
                rows = [r for r in rows if r.get(found["field"]) is not None]
            elif found := WHERE.fullmatch(where):
                raw = found["value"]
                wanted: Any = raw[1:-1].replace("''", "'") if raw.startswith("'") else float(raw)
                rows = [r for r in rows if _compare(r.get(found["field"]), found["op"], wanted)]
            else:
                return _json({"error": True, "message": f"could not parse $where {where!r}"}, 400)
        rows = _ordered(rows, query.get("$order", ""))
        offset = int(query.get("$offset", "0"))
        limit = int(query.get("$limit", "1000"))
        rows = rows[offset : offset + limit]
        system = query.get("$select", "").replace(" ", "") == ":*,*"
        fields = sorted({k for r in self.rows for k in r if system or not k.startswith(":")})
        shown = [{k: v for k, v in r.items() if v is not None and (system or not k.startswith(":"))} for r in rows]
        with self.lock:
            self.requests += 1
            count = self.requests
        answered = _json(shown, headers={"X-SODA2-Fields": json.dumps(fields)})
        if self.after_request is not None:
            self.after_request(count)
        return answered


def epoch_ms(text: str, zone: ZoneInfo | None = None) -> int:
    """``2026-11-02 10:00:00`` (UTC unless ``zone``) as epoch milliseconds."""
    moment = datetime.fromisoformat(text).replace(tzinfo=zone or ZoneInfo("UTC"))
    return int(moment.timestamp() * 1000)


class ArcgisLayer:
    """A layer of features (``attributes`` only) at ``path``, its query at ``path + "/query"``."""

    def __init__(
        self,
        publisher: Publisher,
        fields: list[str],
        *,
        path: str = "/arcgis/rest/services/Permits/FeatureServer/0",
        max_record_count: int = 1000,
        edit_date_field: str | None = "EditDate",
        zone: str = "UTC",
    ) -> None:
        self.publisher = publisher
        self.path = path
        self.names = ["OBJECTID", *fields, "EditDate"]
        self.max_record_count = max_record_count
        self.edit_date_field = edit_date_field
        self.zone = ZoneInfo(zone)  # the time zone its where clause reads timestamps in
        self.features: list[dict[str, Any]] = []
        self.after_request: Callable[[int], None] | None = None
        self.queries: list[dict[str, str]] = []
        self.lock = threading.Lock()
        publisher.route(path, self.describe)
        publisher.route(path + "/query", self.query)

    @property
    def url(self) -> str:
        return self.publisher.url(self.path)

    def add(self, edited: int, **attributes: Any) -> dict[str, Any]:
        with self.lock:
            feature = {"OBJECTID": len(self.features) + 1, **attributes, "EditDate": edited}
            self.features.append(feature)
            return feature

    def edit(self, object_id: int, edited: int, **attributes: Any) -> None:
        with self.lock:
            for feature in self.features:
                if feature["OBJECTID"] == object_id:
                    feature.update(attributes, EditDate=edited)

    def _field(self, name: str) -> dict[str, str]:
        kind = {"OBJECTID": "esriFieldTypeOID", "EditDate": "esriFieldTypeDate"}.get(name, "esriFieldTypeString")
        return {"name": name, "type": kind, "alias": name}

    def describe(self, query: dict[str, str], headers: dict[str, str]) -> Answer:
        if query.get("f") != "json":
            return Answer(200, b"<html>the layer's page</html>", {"Content-Type": "text/html"})
        body: dict[str, Any] = {
            "id": 0,
            "name": "Permits",
            "type": "Feature Layer",
            "objectIdField": "OBJECTID",
            "fields": [self._field(n) for n in self.names],
            "maxRecordCount": self.max_record_count,
            "advancedQueryCapabilities": {"supportsPagination": True},
        }
        if self.edit_date_field:
            body["editFieldsInfo"] = {
                "creationDateField": "CreationDate",
                "creatorField": "Creator",
                "editDateField": self.edit_date_field,
                "editorField": "Editor",
            }
        return _json(body)

    def query(self, query: dict[str, str], headers: dict[str, str]) -> Answer:
        with self.lock:
            self.queries.append(query)
            count = len(self.queries)
            features = [dict(f) for f in self.features]
        where = query.get("where", "")
        if where.strip() != "1=1":
            found = ESRI_WHERE.fullmatch(where)
            if found is None:
                return _json({"error": {"code": 400, "message": "Unable to complete operation.", "details": [where]}})
            wanted = epoch_ms(found["value"], self.zone)
            features = [f for f in features if _compare(f.get(found["field"]), found["op"], wanted)]
        features = _ordered(features, query.get("orderByFields", ""))
        offset = int(query.get("resultOffset", "0"))
        asked = int(query.get("resultRecordCount", str(self.max_record_count)))
        page = features[offset : offset + min(asked, self.max_record_count)]
        body: dict[str, Any] = {
            "objectIdFieldName": "OBJECTID",
            "fields": [self._field(n) for n in self.names],
            "features": [{"attributes": f} for f in page],
        }
        if offset + len(page) < len(features):
            body["exceededTransferLimit"] = True
        answered = _json(body)
        if self.after_request is not None:
            self.after_request(count)
        return answered


EDGAR_ROOT = "/Archives/edgar/daily-index/"


def edgar_path(day: date, index: str = "master") -> str:
    return f"{EDGAR_ROOT}{day.year}/QTR{(day.month - 1) // 3 + 1}/{index}.{day:%Y%m%d}.idx"


def edgar_index(day: date, lines: list[str]) -> bytes:
    """A day's master index as the SEC writes it: the preamble, the header, a rule, then
    ``CIK|Company Name|Form Type|Date Filed|File Name`` lines."""
    preamble = (
        "Description:           Daily Index of EDGAR Dissemination Feed by Company Name\n"
        f"Last Data Received:    {day:%b %d, %Y}\n"
        "Comments:              webmaster@sec.gov\n"
        "Anonymous FTP:         ftp://ftp.sec.gov/edgar/\n \n \n \n"
        "CIK|Company Name|Form Type|Date Filed|File Name\n" + "-" * 80 + "\n"
    )
    return (preamble + "".join(f"{line}\n" for line in lines)).encode("ascii")


def sec_gate(headers: dict[str, str]) -> Answer | None:
    """The SEC refuses an undeclared automated tool: a User-Agent without an email address."""
    if "@" in headers.get("user-agent", ""):
        return None
    return Answer(403, b"<h1>Your Request Originates from an Undeclared Automated Tool</h1>", {})
