"""What is generated stays generated: models.py from openapi.json, the sync client from the async
one; and the client covers every operation of the document a customer's key may call."""

from __future__ import annotations

import importlib.util
import inspect
import json
import re
from pathlib import Path
from types import ModuleType

import pytest

import vpx_client

CLIENT = Path(__file__).resolve().parents[1]
SCRIPTS = CLIENT / "scripts"
DOCUMENT = CLIENT.parents[1] / "openapi.json"
GROUPS = ["contacts", "signals", "autobuy", "webhooks", "exports", "account", "publisher", "visitors", "sequences",
          "mailboxes", "suppressions"]  # fmt: skip


def script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_models_match_the_openapi_document(tmp_path: Path) -> None:
    generator = script("generate_models")
    version = generator.installed_version()
    if version is None:
        pytest.skip(f"datamodel-code-generator is not installed: pip install -e '{CLIENT}[dev]'")
    assert version == generator.GENERATOR_VERSION, (
        f"datamodel-code-generator {version} installed, {generator.GENERATOR_VERSION} pinned: "
        f"pip install -e '{CLIENT}[dev]'"
    )
    fresh = tmp_path / "models.py"
    generator.generate(DOCUMENT, fresh)
    assert fresh.read_text() == generator.MODELS.read_text(), (
        "openapi.json and src/vpx_client/models.py have drifted apart: "
        "run clients/python/scripts/generate_models.py (make openapi does)"
    )


def test_the_sync_client_is_the_async_one_translated() -> None:
    unasync = script("unasync")
    present = {path.name: path.read_text() for path in sorted(unasync.TARGET.glob("*.py"))}
    assert present == unasync.expected(), "src/vpx_client/_blocking/ is stale: run clients/python/scripts/unasync.py"


def _public_methods(group: object) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in inspect.getmembers(group, inspect.ismethod)
        if not name.startswith("_")
    }


def test_client_and_async_client_have_the_same_surface() -> None:
    sync, concurrent = vpx_client.Client("vpx_ro_x"), vpx_client.AsyncClient("vpx_ro_x")
    assert [name for name in GROUPS if hasattr(sync, name)] == GROUPS
    for name in GROUPS:
        mine, theirs = _public_methods(getattr(sync, name)), _public_methods(getattr(concurrent, name))
        assert mine.keys() == theirs.keys(), name
        for method, signature in mine.items():
            expected = str(theirs[method]).replace("Async", "")
            assert str(signature) == expected, f"{name}.{method}"
    assert inspect.signature(sync.request).parameters.keys() == inspect.signature(concurrent.request).parameters.keys()


def test_the_groups_have_the_calls_integrators_need() -> None:
    client = vpx_client.Client("vpx_ro_x")
    wanted = {
        "contacts": {"search", "reveal", "batch_reveal", "get", "report", "decision_makers", "enrich", "batch_enrich"},
        "signals": {"list", "iterate", "get", "purchase", "batch", "stream"},
        "account": {"balances", "ledger", "keys"},
        "exports": {"contacts", "signals"},
        "suppressions": {"feed", "iterate_feed"},
    }
    for group, methods in wanted.items():
        assert methods <= _public_methods(getattr(client, group)).keys(), group


# Second forms of one operation: the client sends the first.
SAME_AS = {
    ("POST", "/contacts/search"): ("GET", "/contacts/search"),
    ("POST", "/contacts/reveal"): ("POST", "/contacts/{}/reveal"),
}


def _template(path: str) -> str:
    return re.sub(r"\{[^}]*\}", "{}", path)


def test_every_customer_operation_of_the_document_has_a_call() -> None:
    """Each (method, path) a customer's key may call in openapi.json appears in the async client's
    sources (operator, health and public routes, such as a consumer's privacy request or the visitor
    pixel, are not the client's: a public operation says so with an empty `security`)."""
    document = json.loads(DOCUMENT.read_text())
    operations = {
        (method.upper(), _template(path.removeprefix("/api/v1")))
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if path.startswith("/api/v1/") and not path.startswith("/api/v1/admin/") and operation.get("security") != []
    }
    source = "\n".join(p.read_text() for p in (CLIENT / "src" / "vpx_client" / "_async").glob("*.py"))
    calls = {
        (method, _template(path))
        for method, path in re.findall(r'"(GET|POST|PUT|PATCH|DELETE)",\s*f?"(/[^"]*)"', source)
    }
    # Calls built from a variable path (`path = f"..."` then `call("POST", path, …)`).
    calls |= {("POST", _template(p)) for p in re.findall(r'path = f"(/[^"]*)"', source)}
    calls |= {("GET", _template(p)) for p in re.findall(r'_download\("(/[^"]*)"', source)}
    missing = sorted(op for op in operations - calls if SAME_AS.get(op) not in calls)
    assert missing == [], f"operations without a client call: {missing}"
