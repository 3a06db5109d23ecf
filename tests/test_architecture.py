"""The layers of src/vpx, checked from its imports (docs/architecture.md draws them).

Every module under src/vpx is parsed with ``ast``; every ``import`` and ``from … import`` of ours
counts, wherever it stands: at the top, inside a function (an import put off to break a circle is
still a dependency), and under ``if TYPE_CHECKING:`` (a circle that only the type checker closes is a
circle a reader follows all the same, and the first use at run time closes it for good). Imports by
name at run time (``importlib.import_module``: the registries of source kinds and enrichment
providers, a migration reading an earlier one) are not counted: they are how a lower module names the
parts that fill it without importing them.

A package's ``__init__`` is a module of its own: ``from vpx.a import b`` depends on ``vpx.a.b`` when
``b`` is a submodule and on ``vpx.a``'s ``__init__`` only for a name defined there. That Python runs
the parents' ``__init__`` first is not counted (a package re-exporting its parts would otherwise be
in a circle with each of them).

Two rules:
- no circles: no two modules import each other, directly or through others;
- imports run down the layers, from entry points to services to stores to the foundation; the few
  that run back up are listed below with the reason each is kept, fewer than ten.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src"
ARCHITECTURE_DOC = ROOT / "docs" / "architecture.md"

# The layers, bottom up. A module may import its own layer and the layers below it.
FOUNDATION, STORES, SERVICES, ENTRY_POINTS = "foundation", "stores", "services", "entry points"
LAYERS = (FOUNDATION, STORES, SERVICES, ENTRY_POINTS)

# Each module's layer: the longest prefix (a package, or a module) listed here; docs/architecture.md
# shows the same table. Every module ``router`` (the API's and the pages' routes) is an entry point,
# whichever package it is in.
LAYER_OF = {
    # Settings, the error hierarchy and its handlers, the database and its replicas, customer
    # secrets, the outbound guard, and small primitives every part uses.
    "vpx": FOUNDATION,  # the package itself: its version
    "vpx.config": FOUNDATION,
    "vpx.validation_messages": FOUNDATION,
    "vpx.errors": FOUNDATION,
    "vpx.db": FOUNDATION,
    "vpx.replicas": FOUNDATION,
    "vpx.sqlite_inline": FOUNDATION,
    "vpx.secrets": FOUNDATION,
    "vpx.outbound": FOUNDATION,
    "vpx.nameservers": FOUNDATION,
    "vpx.listen": FOUNDATION,
    "vpx.clock": FOUNDATION,
    "vpx.ids": FOUNDATION,
    "vpx.money": FOUNDATION,
    "vpx.cursors": FOUNDATION,
    "vpx.fields": FOUNDATION,
    "vpx.geography": FOUNDATION,
    "vpx.verticals": FOUNDATION,
    "vpx.metrics": FOUNDATION,
    "vpx.logs": FOUNDATION,
    "vpx.worker.wakeup": FOUNDATION,  # the worker's doorbell, rung by whatever queues work
    # The tables, and the migrations that make them.
    "vpx.models": STORES,
    "vpx.migrations": STORES,
    # One package per product area: its rules, its store, its API schemas.
    "vpx.accounts": SERVICES,
    "vpx.auth": SERVICES,
    "vpx.autobuy": SERVICES,
    "vpx.batches": SERVICES,
    "vpx.compliance": SERVICES,
    "vpx.contacts": SERVICES,
    "vpx.credits": SERVICES,
    "vpx.deliverability": SERVICES,
    "vpx.demo": SERVICES,
    "vpx.enrichment": SERVICES,
    "vpx.exports": SERVICES,
    "vpx.idempotency": SERVICES,
    "vpx.mail": SERVICES,
    "vpx.mailboxes": SERVICES,
    "vpx.publishers": SERVICES,
    "vpx.quality": SERVICES,
    "vpx.registries": SERVICES,
    "vpx.sequences": SERVICES,
    "vpx.signals": SERVICES,
    "vpx.sources": SERVICES,
    "vpx.suppression": SERVICES,
    "vpx.visitors": SERVICES,
    "vpx.webhooks": SERVICES,
    # What a person or a program starts, and what wires the services together for it.
    "vpx.app": ENTRY_POINTS,
    "vpx.middleware": ENTRY_POINTS,
    "vpx.deps": ENTRY_POINTS,
    "vpx.http_protocol": ENTRY_POINTS,
    "vpx.meta": ENTRY_POINTS,
    "vpx.admin": ENTRY_POINTS,
    "vpx.apidocs": ENTRY_POINTS,
    "vpx.cli": ENTRY_POINTS,
    "vpx.dashboard": ENTRY_POINTS,
    "vpx.operator_page": ENTRY_POINTS,
    "vpx.mcp_server": ENTRY_POINTS,
    "vpx.worker": ENTRY_POINTS,
    "vpx.sandbox": ENTRY_POINTS,  # test mode's second world: a database, a worker and a feed of its own
}

# The imports that run from a lower layer up to a higher one, kept, and why (docs/architecture.md
# says the same). Fewer than ten; any other fails this test.
KEPT_UPWARD_IMPORTS = {
    ("vpx.config", "vpx.mail.server"): "the settings check VPX_SMTP_URL and VPX_MAIL_FROM with the mail "
    "parser when they are read (a parser with no imports of ours)",
    ("vpx.config", "vpx.contacts.search.vocabulary"): "the settings check VPX_SEARCH_SYNONYMS with the reader "
    "search uses, so a bad file stops the start with the settings' one-line error",
    ("vpx.db", "vpx.compliance.hashing"): "every SQLite connection gets the SQL functions the schema's DROP "
    "triggers call, whichever code opened it (a hash function with no imports of ours)",
    ("vpx.migrations.versions.2026_11_26_visitors", "vpx.contacts.identifiers"): "a migration fills a new "
    "column with the function that fills it at run time",
    ("vpx.migrations.versions.2026_11_28_search_postings", "vpx.contacts.search.postings"): "a migration builds "
    "the search index with the code that keeps it",
}

# Circles being broken by other work, each allowed as it stands (or smaller) until that work is done.
# Empty this list as they go; anything not listed fails.
KNOWN_CIRCLES_BEING_BROKEN: list[frozenset[str]] = []


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SOURCE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted((SOURCE / "vpx").rglob("*.py"))}


def _known(name: str) -> str:
    """The module an imported name lives in: the longest prefix of it that is one of ours."""
    while name not in modules() and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def _imported(module: str, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (_known(alias.name) for alias in node.names if alias.name.split(".")[0] == "vpx")
        return
    if node.level:  # relative: from the module's own package, one level up per extra dot
        package = module.split(".")
        if modules()[module].name != "__init__.py":
            package.pop()
        package = package[: len(package) - (node.level - 1)]
        source = ".".join([*package, *([node.module] if node.module else [])])
    else:
        source = node.module or ""
    if source.split(".")[0] != "vpx":
        return
    for alias in node.names:
        submodule = f"{source}.{alias.name}"
        yield submodule if submodule in modules() else _known(source)


@cache
def import_graph() -> dict[str, frozenset[str]]:
    """Each module of ours and the modules of ours it imports."""
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in modules().items():
        graph.setdefault(module, set())  # a module that imports nothing of ours is in the graph too
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                graph[module].update(target for target in _imported(module, node) if target != module)
    return {module: frozenset(targets) for module, targets in graph.items()}


def circles(graph: dict[str, frozenset[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def layer_of(module: str) -> str:
    if module.rsplit(".", 1)[-1] == "router":
        return ENTRY_POINTS
    prefix = module
    while prefix not in LAYER_OF:
        prefix = prefix.rsplit(".", 1)[0]
    return LAYER_OF[prefix]


def upward_imports(graph: dict[str, frozenset[str]]) -> set[tuple[str, str]]:
    rank = {layer: position for position, layer in enumerate(LAYERS)}
    return {
        (module, target)
        for module, targets in graph.items()
        for target in targets
        if rank[layer_of(target)] > rank[layer_of(module)]
    }


def test_every_module_has_a_layer() -> None:
    """A new top-level module or package is placed in a layer on purpose, not by default."""
    unplaced = sorted(
        module
        for module in modules()
        if module != "vpx"
        and module.rsplit(".", 1)[-1] != "router"
        and not any(module == p or module.startswith(p + ".") for p in LAYER_OF if p != "vpx")
    )
    assert not unplaced, f"modules in no layer (add them to LAYER_OF and docs/architecture.md): {unplaced}"


def test_the_graph_sees_imports_inside_functions_and_type_checking() -> None:
    """The parser is what the rules stand on: it sees a put-off import and a type-only one."""
    graph = import_graph()
    assert "vpx.config" in graph and "vpx.models" in graph["vpx.signals.pipeline"]
    assert "vpx.contacts.search.vocabulary" in graph["vpx.config"]  # put off inside a validator
    assert "vpx.signals.hook_context" in graph["vpx.autobuy.matching"]  # under TYPE_CHECKING
    # `from vpx.signals import stream`: the submodule, not the package's __init__.
    assert "vpx.signals.stream" in graph["vpx.signals.hooks"] and "vpx.signals" not in graph["vpx.signals.hooks"]
    assert circles({"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset({"a"}), "d": frozenset({"a"})}) == [
        frozenset({"a", "b", "c"})
    ]


def test_no_import_circles() -> None:
    found = circles(import_graph())
    unknown = [sorted(c) for c in found if not any(c <= known for known in KNOWN_CIRCLES_BEING_BROKEN)]
    assert not unknown, (
        "modules that import each other, directly or through others (break the circle: the lower module "
        f"exposes a registry or a protocol that the higher one fills, or the shared piece moves down): {unknown}"
    )


def test_imports_that_run_up_the_layers_are_the_listed_few() -> None:
    assert len(KEPT_UPWARD_IMPORTS) < 10
    found = upward_imports(import_graph())
    new = sorted(f"{a} ({layer_of(a)}) -> {b} ({layer_of(b)})" for a, b in found - KEPT_UPWARD_IMPORTS.keys())
    assert not new, f"imports from a lower layer up to a higher one: {new}"
    gone = sorted(f"{a} -> {b}" for a, b in KEPT_UPWARD_IMPORTS.keys() - found)
    assert not gone, f"listed upward imports that no longer exist (take them off the list and the doc): {gone}"


def test_the_architecture_doc_lists_the_kept_upward_imports() -> None:
    text = ARCHITECTURE_DOC.read_text(encoding="utf-8")
    missing = [f"{a} -> {b}" for a, b in KEPT_UPWARD_IMPORTS if f"`{a}` → `{b}`" not in text]
    assert not missing, f"docs/architecture.md does not list: {missing}"
