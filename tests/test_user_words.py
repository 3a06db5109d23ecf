"""What the product says to people is in plain words (tests/plain_words.py lists what may not appear):
every CLI command's help, the OpenAPI document's descriptions and summaries, and the problem details a
sweep of bad requests across every operation of that document draws. Validation errors name the field
and the rule ("limit: must be at most 100"); a body that is not JSON is told where (line and column).
(tests/conftest.py checks every other problem document the suite receives the same way.)"""

from __future__ import annotations

import contextlib
import functools
import io
import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Annotated, Any, Literal

import httpx
import pytest
import typer
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from typer.testing import CliRunner

from tests.conftest import TEST_SECRET_KEY, test_settings
from tests.factories import Factory
from tests.plain_words import offences, problem_offences
from vpx.app import create_app
from vpx.cli.app import app as cli_app
from vpx.config import Settings
from vpx.errors import validation_errors

ADMIN_TOKEN = "plain-words-admin-token-0123456789"
MALFORMED = b'{"name": "Denver",\n  "limit": }'  # the value missing at line 2, column 12


# --- the CLI ---------------------------------------------------------------------------------------


def _command_paths(command: Any, path: list[str]) -> Iterator[list[str]]:  # typer's click tree
    yield path
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        if not sub.hidden:
            yield from _command_paths(sub, [*path, name])


@pytest.fixture
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    """Help one line an option, colourless: read as a person reads it."""
    for name, value in {"COLUMNS": "250", "NO_COLOR": "1", "TERM": "dumb"}.items():
        monkeypatch.setenv(name, value)


def _cli(*args: str) -> str:
    return CliRunner().invoke(cli_app, list(args)).output


def _help(root: Any, path: list[str]) -> str:  # typer's click tree
    """A command's --help, from one tree built for all of them (building it takes a while)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        root.main([*path, "--help"], prog_name="vpx", standalone_mode=False)
    return out.getvalue()


def _options(help_text: str) -> dict[str, list[str]]:
    """Each option's line of help, as words, by the option's name."""
    rows = ([word for word in line.split() if word not in ("│", "*")] for line in help_text.splitlines())
    return {row[0]: row for row in rows if row and row[0].startswith("--")}


@pytest.mark.usefixtures("wide")
def test_every_cli_commands_help_is_in_plain_words() -> None:
    root = typer.main.get_command(cli_app)
    paths = list(_command_paths(root, []))
    assert len(paths) > 30 and ["keys", "create"] in paths and ["signals", "import", "permits"] in paths
    found = [f"vpx {' '.join(path)}: {o}" for path in paths for o in offences(_help(root, path))]
    assert not found, "\n".join(found)


@pytest.mark.usefixtures("wide")
def test_switches_take_no_value_and_options_say_their_kind_in_words() -> None:
    options = _options(_help(typer.main.get_command(cli_app), ["keys", "create"]))
    assert options["--json"][1] == "Print" and options["--help"][1] == "Show"  # a switch shows no kind
    assert options["--ip"][1] == "TEXT" and "repeatable." in options["--ip"]
    assert options["--type"][1] == "ro|live|full" and options["--account"][1] == "TEXT"
    refused = _cli("status", "--json", "true")
    assert "take no value" in refused and "--json" in refused


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["keys", "create", "--account", "acc_x", "--type", "admin"], "must be one of: ro, live, full"),
        (["serve", "--port", "eighty"], "must be a whole number"),
        (["serve", "--workers", "0"], "must be at least 1"),
        (["signals", "import", "permits", "x.csv", "--city", "sf", "--show", "5000"], "must be at most 1000"),
    ],
)
@pytest.mark.usefixtures("wide")
def test_a_refused_cli_value_is_told_in_the_apis_words(args: list[str], message: str) -> None:
    output = " ".join(_cli(*args).replace("│", " ").split())
    assert message in output and not offences(output), output


# --- the OpenAPI document ----------------------------------------------------------------------------


def _texts(node: Any, where: str = "") -> Iterator[tuple[str, str]]:  # a JSON document
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("description", "summary") and isinstance(value, str):
                yield f"{where}/{key}", value
            else:
                yield from _texts(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _texts(value, f"{where}/{index}")


@functools.cache
def _document() -> dict[str, Any]:
    """The OpenAPI document (generating it takes seconds: once for this file's tests)."""
    app = create_app(Settings(database_url="sqlite+aiosqlite:///:memory:", secret_keys=TEST_SECRET_KEY))
    document: dict[str, Any] = json.loads(json.dumps(app.openapi()))
    return document


def test_the_openapi_documents_descriptions_are_in_plain_words() -> None:
    texts = list(_texts(_document()))
    assert len(texts) > 300
    found = [f"{where}: {o}" for where, text in texts for o in offences(text)]
    assert not found, "\n".join(found)


# --- validation errors, as messages -------------------------------------------------------------------


class Everything(BaseModel):
    model_config = ConfigDict(extra="forbid")

    limit: int = Field(ge=1, le=100)
    budget: Decimal = Field(ge=Decimal("0.0001"))
    password: str = Field(min_length=10)
    name: str = Field(min_length=1, max_length=5)
    type: Literal["ro", "live", "full"]
    ids: list[str] = Field(max_length=2)
    confidence: float = Field(le=1)
    kind: Annotated[str, Field(pattern=r"^[a-z]+$")]


@pytest.mark.parametrize(
    ("values", "field", "message"),
    [
        ({"limit": 101}, "limit", "must be at most 100"),
        ({"limit": 0}, "limit", "must be at least 1"),
        ({"limit": "ten"}, "limit", "must be a whole number"),
        ({"budget": "0"}, "budget", "must be at least 0.0001"),
        ({"budget": "much"}, "budget", "must be a number"),
        ({"password": "short"}, "password", "must be at least 10 characters"),
        ({"name": ""}, "name", "must not be empty"),
        ({"name": "toolong"}, "name", "must be at most 5 characters"),
        ({"name": 5}, "name", "must be a string"),
        ({"type": "admin"}, "type", "must be one of: ro, live, full"),
        ({"ids": ["a", "b", "c"]}, "ids", "must have at most 2 items"),
        ({"ids": "a"}, "ids", "must be a list"),
        ({"confidence": 1.5}, "confidence", "must be at most 1"),
        ({"kind": "A1"}, "kind", "must match the pattern ^[a-z]+$"),
        ({"extra": 1}, "extra", "is not a known field"),
        ({}, "limit", "is required"),
    ],
)
def test_a_validation_error_names_the_field_and_the_rule_in_words(
    values: dict[str, Any], field: str, message: str
) -> None:
    good: dict[str, Any] = {
        "limit": 1, "budget": "1", "password": "0123456789", "name": "a", "type": "ro", "ids": [],
        "confidence": 0.5, "kind": "a",
    }  # fmt: skip
    with pytest.raises(ValidationError) as refused:
        Everything.model_validate({**good, **values} if values else {})
    errors = {(e.field, e.message) for e in validation_errors(refused.value.errors())}
    assert (field, message) in errors, errors


# --- every problem a sweep of bad requests draws -------------------------------------------------------


@pytest.fixture
def settings(database_url: str) -> Settings:
    return test_settings(database_url, admin_token=ADMIN_TOKEN, worker_in_process=False)


SKIP = object()  # no value of this kind is surely wrong for the schema


class Sweep:
    """Bad values for an operation's inputs, read from the OpenAPI document: a value of the wrong type
    for every field, and a value beyond every bound the document states."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.schemas: dict[str, Any] = document["components"]["schemas"]

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while True:
            if "$ref" in schema:
                schema = self.schemas[schema["$ref"].rsplit("/", 1)[1]]
            elif "anyOf" in schema or "oneOf" in schema:
                options = [s for s in schema.get("anyOf", schema.get("oneOf", [])) if s.get("type") != "null"]
                schema = options[0] if options else {}
            elif "allOf" in schema and len(schema["allOf"]) == 1:
                schema = schema["allOf"][0]
            else:
                return schema

    def wrong_type(self, schema: dict[str, Any], *, in_query: bool = False) -> Any:
        schema = self.resolve(schema)
        kind = schema.get("type")
        if "enum" in schema or "const" in schema:
            return "zzz_unknown" if in_query else 12345
        if kind in ("integer", "number"):
            return "many"
        if kind == "boolean":
            return "maybe"
        if schema.get("format") == "date-time":
            return "yesterday"
        if in_query:
            return SKIP  # any text is text in a query string
        return {"string": 12345, "array": "not a list", "object": "not an object"}.get(str(kind), SKIP)

    def beyond(self, schema: dict[str, Any], *, depth: int = 0) -> Any:
        schema = self.resolve(schema)
        kind = schema.get("type")
        if kind == "string" and "maxLength" in schema:
            return "x" * (schema["maxLength"] + 1)
        if kind == "string" and schema.get("minLength", 0) > 0:
            return ""
        if kind in ("integer", "number") and "maximum" in schema:
            return schema["maximum"] * 10 + 1
        if kind in ("integer", "number") and "minimum" in schema:
            return schema["minimum"] - 1
        if kind == "array" and 0 < schema.get("maxItems", 10_000) <= 1000:
            return ["x"] * (schema["maxItems"] + 1)
        if kind == "array" and schema.get("minItems", 0) > 0:
            return []
        if kind == "array" and depth < 2 and self.resolve(schema.get("items", {})).get("type") == "object":
            return [self.body_of(schema["items"], depth=depth + 1, wrong=True)]
        if kind == "object" and depth < 2:
            return self.body_of(schema, depth=depth + 1, wrong=False)
        return SKIP

    def body_of(self, schema: dict[str, Any], *, depth: int = 0, wrong: bool) -> Any:
        """An object whose every field is wrong (or beyond its bounds), and one field that is not known."""
        schema = self.resolve(schema)
        if schema.get("type") == "array":
            return {"not": "a list"}
        values = {
            name: (self.wrong_type(field) if wrong else self.beyond(field, depth=depth))
            for name, field in schema.get("properties", {}).items()
        }
        if "discriminator" in schema or "oneOf" in schema:
            values["type"] = "zzz_unknown"
        return {**{k: v for k, v in values.items() if v is not SKIP}, "zz_not_a_field": 1}

    def query(self, parameters: list[dict[str, Any]], *, wrong: bool) -> dict[str, str]:
        values = {}
        for parameter in parameters:
            if parameter["in"] != "query":
                continue
            schema = parameter.get("schema", {})
            value = self.wrong_type(schema, in_query=True) if wrong else self.beyond(schema, depth=2)
            if value is not SKIP and not isinstance(value, list | dict):
                values[parameter["name"]] = str(value)
        return values


def _requests(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(method, path, httpx arguments) of each bad request of the sweep."""
    sweep = Sweep(document)
    for template, operations in document["paths"].items():
        if template in ("/healthz", "/readyz"):
            continue
        for method, operation in operations.items():
            parameters = operation.get("parameters", [])
            path = template
            for parameter in parameters:
                if parameter["in"] == "path":
                    limit = sweep.resolve(parameter.get("schema", {})).get("maxLength")
                    path = path.replace("{" + parameter["name"] + "}", "x" * (limit + 1) if limit else "zz_unknown")
            streams = "text/event-stream" in str(operation.get("responses", {}))
            for wrong in (True, False) if not streams else (True,):
                query = sweep.query(parameters, wrong=wrong)
                if query:
                    yield method, template, {"url": path, "params": query}
            if not any(p["in"] == "query" for p in parameters) and "requestBody" not in operation:
                yield method, template, {"url": path}
            content = operation.get("requestBody", {}).get("content", {})
            if "application/json" not in content:
                continue
            schema = content["application/json"].get("schema", {})
            json_headers = {"content-type": "application/json"}
            yield method, template, {"url": path, "content": MALFORMED, "headers": json_headers}
            if operation["requestBody"].get("required"):
                yield method, template, {"url": path, "content": b"", "headers": json_headers}
            for wrong in (True, False):
                yield method, template, {"url": path, "json": sweep.body_of(schema, wrong=wrong)}


async def test_every_problem_a_sweep_of_bad_requests_draws_is_in_plain_words(
    client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await factory.account(key_types=("full",))
    client.headers.update({**account.headers("full"), "X-Admin-Token": ADMIN_TOKEN})
    document = _document()  # the app's own, built once
    found: list[str] = []
    statuses: dict[int, int] = {}
    json_bodies: set[str] = set()
    for method, template, arguments in _requests(document):
        url = arguments.pop("url")
        response = await client.request(method.upper(), url, **arguments)
        statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
        assert response.status_code < 500, (method, url, response.text)
        if not response.headers.get("content-type", "").startswith("application/problem+json"):
            continue
        problem = response.json()
        found += [f"{method.upper()} {url}: {o}" for o in problem_offences(problem)]
        if arguments.get("content") == MALFORMED and response.status_code == 400:
            # The content type was right: the client is told where the JSON goes wrong.
            assert "line 2, column 12" in problem["detail"], (method, url, problem)
            json_bodies.add(f"{method} {template}")
    assert not found, "\n".join(found)
    assert statuses.get(422, 0) > 100 and statuses.get(400, 0) > 20, statuses
    assert {"post /api/v1/keys", "post /api/v1/admin/signals", "post /v/collect"} <= json_bodies


async def test_a_malformed_json_body_is_told_where_in_the_usual_problem(
    client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await factory.account(key_types=("full",))
    headers = {**account.headers("full"), "content-type": "application/json"}
    response = await client.post("/api/v1/keys", content=b'{\n  "type": "ro",\n  "name": "a" "b"\n}', headers=headers)
    assert response.status_code == 400 and response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert problem["code"] == "malformed_request" and problem["title"] == "Malformed request"
    assert problem["detail"] == "The request body is not valid JSON: expecting ',' delimiter at line 3, column 15."
    empty = await client.post("/api/v1/keys", content=b"", headers=headers)
    assert empty.status_code == 400 and empty.json()["detail"] == "This request needs a JSON body."
    for body, why in ((b'{"type": "r\xff"}', "it is not UTF-8 text"), (b"[" * 100_000, "it nests too deeply")):
        refused = await client.post("/api/v1/keys", content=body, headers=headers)
        assert refused.status_code == 400 and refused.json()["code"] == "malformed_request"
        assert refused.json()["detail"] == f"The request body is not valid JSON: {why}.", refused.text
