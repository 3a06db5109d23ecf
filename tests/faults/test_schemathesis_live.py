"""schemathesis against a real `vpx serve` over HTTP, on SQLite and on PostgreSQL: every generated
request, stateless and in stateful sequences that follow the links schemathesis infers between
operations, gets an answer that conforms to the document, and none is a 5xx.

The server runs on the backend's test database, seeded like tests/test_schemathesis.py (which covers
every operation in process, on SQLite, with 25 examples and schemathesis's coverage phase); this one is
about the real HTTP stack and the PostgreSQL half. To stay within the suite's time budget it draws 5
positive and 5 negative examples per operation (the fuzzing phase alone) and runs a few short stateful
scenarios.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.stateful import run_state_machine_as_test
from schemathesis import GenerationMode, checks
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.schemas import OpenApiSchema

from tests.conftest import test_settings, wipe
from tests.factories import Factory
from tests.faults.support import VpxServer
from tests.test_openapi import CHECKED_IN
from tests.test_schemathesis import OPAQUE_INPUTS, PER_ROW_VALIDATION
from vpx import http_protocol
from vpx.app import create_app
from vpx.clock import Clock

STATELESS_EXAMPLES = 5
STATEFUL_SCENARIOS = 6
STATEFUL_STEPS = 10
METHODS = {"get", "post", "put", "patch", "delete"}
# schemathesis's own list of the statuses that refuse invalid data, plus 413 (D2): over HTTP a generated
# body past VPX_MAX_BODY_BYTES (a huge array breaking `maxItems`) is refused for its size first.
REFUSALS = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5xx"]
UVICORN_REFUSAL = b"Invalid HTTP request received."
CONFIG = SchemathesisConfig.from_dict(
    {"request-timeout": 10, "checks": {"negative_data_rejection": {"expected-statuses": REFUSALS}}}
)


@dataclass
class Live:
    url: str
    key: str
    statuses: list[tuple[str, int]] = field(default_factory=list)


async def _seed(database_url: str) -> str:
    app = create_app(test_settings(database_url, pool_size=0), clock=Clock())
    try:
        await wipe(app.state.database)
        factory = Factory(app, app.state.clock)
        await factory.demo(200)
        account = await factory.account(credits=100_000, key_types=("full",))
        return account.keys["full"]
    finally:
        await app.state.database.dispose()


@pytest.fixture(scope="module")
def live(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    """`vpx serve` on the backend's test database, emptied and seeded with a catalogue and a Full key.
    The module's tests run one after the other on it (pytest keeps a module's tests of one backend
    together), and the next test elsewhere empties the database again."""
    key = asyncio.run(_seed(database_url))
    # A signal stream ends after its lifetime (D23): a short one, so that each generated stream request ends.
    server = VpxServer(database_url, tmp_path_factory.mktemp("live") / "server.log", {"stream_max_seconds": "0.2"})
    try:
        yield Live(url=server.url, key=key)
    finally:
        server.stop()


@pytest.fixture(scope="module")
def live_schema(live: Live) -> OpenApiSchema:
    loaded = schemathesis.openapi.from_url(f"{live.url}/api/v1/openapi.json", config=CONFIG)

    @loaded.auth()
    class ApiKeyAuth:
        """Every generated request carries the Full Access key (the X-API-Key security scheme)."""

        def get(self, case: schemathesis.Case[Any], context: schemathesis.AuthContext) -> str:
            return live.key

        def set(self, case: schemathesis.Case[Any], data: str, context: schemathesis.AuthContext) -> None:
            case.headers["X-API-Key"] = data

    return loaded


def excluded_checks(path: str) -> list[Any]:
    """The in-process test's exclusions, for the same reasons (see tests/test_schemathesis.py)."""
    excluded: list[Any] = [checks.positive_data_acceptance] if path in OPAQUE_INPUTS else []
    if path in PER_ROW_VALIDATION:
        excluded.append(checks.negative_data_rejection)
    return excluded


def reached_the_service(response: schemathesis.Response) -> bool:
    """False for the server's own answer to a message that is not valid HTTP/1.1 (a generated header
    name that is not a token, a Transfer-Encoding it does not know): the request never reached the
    service, so its document cannot speak for the answer (`vpx serve` answers it with a problem document
    of its own, vpx.http_protocol; uvicorn alone, with a bare text/plain 400). In process
    (tests/test_schemathesis.py) such requests cannot even be made."""
    if response.status_code != 400:
        return True
    if response.content == UVICORN_REFUSAL:
        return False
    try:
        return bool(json.loads(response.content).get("detail") != http_protocol.DETAIL)
    except (ValueError, AttributeError):
        return True


def _operations() -> list[tuple[str, str]]:
    """(method, path) of every operation in the checked-in document (D27: the one the server serves)."""
    document = json.loads(CHECKED_IN.read_text())
    return [(method.upper(), path) for path, item in document["paths"].items() for method in item if method in METHODS]


@pytest.mark.parametrize(("method", "path"), _operations(), ids=lambda value: str(value))
def test_live_server_conforms_to_its_document(method: str, path: str, live_schema: OpenApiSchema, live: Live) -> None:
    operation = live_schema[path][method]
    excluded = excluded_checks(path)
    inputs = (operation.path_parameters, operation.query, operation.headers, operation.cookies, operation.body)
    # An operation that takes no input (/healthz) has no invalid request to make.
    modes = [GenerationMode.POSITIVE, *([GenerationMode.NEGATIVE] if any(inputs) else [])]
    for mode in modes:

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=STATELESS_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
        def conforms(case: schemathesis.Case[Any]) -> None:
            response = case.call()
            live.statuses.append((case.operation.label, response.status_code))
            if reached_the_service(response):
                case.validate_response(response, excluded_checks=excluded)

        conforms()


def test_stateful_sequences_conform_and_never_fail(live_schema: OpenApiSchema, live: Live) -> None:
    base = live_schema.as_state_machine()
    assert live_schema.statistic.transitions.total, "schemathesis inferred no links between operations"

    class LiveStateMachine(base):  # type: ignore[valid-type, misc]
        def validate_response(
            self,
            response: schemathesis.Response,
            case: schemathesis.Case[Any],
            additional_checks: list[Any] | None = None,
            **kwargs: Any,
        ) -> None:
            live.statuses.append((case.operation.label, response.status_code))
            if not reached_the_service(response):
                return
            case.validate_response(
                response,
                additional_checks=additional_checks,
                excluded_checks=excluded_checks(case.operation.path),
                transport_kwargs=kwargs or None,
                recorder=self.recorder,
            )

    run_state_machine_as_test(
        LiveStateMachine,
        settings=settings(
            max_examples=STATEFUL_SCENARIOS,
            stateful_step_count=STATEFUL_STEPS,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        ),
    )
    server_errors = [(label, status) for label, status in live.statuses if status >= 500]
    assert not server_errors
