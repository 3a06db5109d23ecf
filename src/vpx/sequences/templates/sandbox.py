"""The sandbox a template runs in (see vpx.sequences.templates): Jinja's immutable sandbox with every
operator, call, filter and test paid for (vpx.sequences.templates.operations), the statements an
email has no use for refused, and each template parsed, checked, guarded and compiled once per process."""

from __future__ import annotations

import functools
import threading
import time
import types
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from jinja2 import StrictUndefined, Template, nodes
from jinja2.runtime import LoopContext
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedFormatter
from jinja2.utils import Cycler, Joiner
from jinja2.visitor import NodeTransformer
from markupsafe import Markup

from vpx.sequences.templates.budget import MAX_PARTS, YIELD_FOR, OverBudget, current_budget, within_limits
from vpx.sequences.templates.operations import (
    DICT_METHODS,
    GLOBALS,
    LIST_METHODS,
    OPERATORS,
    STR_METHODS,
    EscapeFormatter,
    Formatter,
    binop,
    str_join,
    template_filters,
    template_tests,
)
from vpx.sequences.templates.variables import VARIABLES, TemplateInvalid


class _Environment(ImmutableSandboxedEnvironment):
    intercepted_binops = frozenset(OPERATORS)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        return binop(operator, left, right)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        budget = current_budget()
        budget.spend()
        name = _allowed(__obj)
        check = STR_METHODS.get(name) if isinstance(getattr(__obj, "__self__", None), str) else None
        if check is not None:
            check(__obj.__self__, *args, **kwargs)
        if name == "join" and isinstance(getattr(__obj, "__self__", None), str):
            return within_limits(str_join(__obj.__self__, *args, **kwargs), "join()")
        result = __context.call(__obj, *args, **kwargs)
        if isinstance(result, Cycler):
            within_limits(result.items, "cycler()")  # it keeps what it was given, and shows it
        return within_limits(result, f"{name}()")

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        if not isinstance(value, types.MethodType | types.BuiltinMethodType) or value.__name__ not in (
            "format",
            "format_map",
        ):
            return None
        owner = value.__self__
        if not isinstance(owner, str):
            return None
        kind = type(owner)
        is_map = value.__name__ == "format_map"
        formatter: SandboxedFormatter = (
            EscapeFormatter(self, escape=owner.escape) if isinstance(owner, Markup) else Formatter(self)
        )

        def checked_format(*args: Any, **kwargs: Any) -> str:
            if is_map:
                if kwargs or len(args) != 1:
                    raise TypeError("format_map() takes exactly one argument")
                kwargs, args = args[0], ()
            formatter.written = 0  # type: ignore[attr-defined]
            return kind(formatter.vformat(owner, args, kwargs))

        checked_format.vpx_format = True  # type: ignore[attr-defined]
        return functools.update_wrapper(checked_format, value)


def _allowed(obj: Any) -> str:
    """The name of a callable a template may call; SecurityError for any other."""
    owner = getattr(obj, "__self__", None)
    name = getattr(obj, "__name__", type(obj).__name__)
    if getattr(obj, "vpx_format", False):
        return "format"
    if isinstance(owner, str) and name in STR_METHODS:
        return str(name)
    if isinstance(owner, dict) and name in DICT_METHODS:
        return str(name)
    if isinstance(owner, list | tuple) and name in LIST_METHODS:
        return str(name)
    if isinstance(owner, LoopContext) and name in ("cycle", "changed"):
        return f"loop.{name}"
    if isinstance(owner, Cycler) and name in ("next", "reset"):
        return f"cycler.{name}"
    if any(obj is known for known in _CALLABLE_GLOBALS) or isinstance(obj, Joiner):
        return str(name)
    raise OverBudget(f"calling {name} is not allowed in email templates")


_CALLABLE_GLOBALS: tuple[Any, ...] = tuple(GLOBALS.values())

_ENVIRONMENT = _Environment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)
_ENVIRONMENT.globals.clear()
_ENVIRONMENT.globals.update(GLOBALS)
_ENVIRONMENT.filters.clear()
_ENVIRONMENT.filters.update(template_filters())
_ENVIRONMENT.tests.clear()
_ENVIRONMENT.tests.update(template_tests())


# Statements an email template has no use for, and whose output would be gathered out of the
# output limit's sight (macros, call and filter blocks, block sets) or need a loader (the others).
_REFUSED: dict[type[nodes.Node], str] = {
    nodes.Extends: "{% extends %}",
    nodes.Include: "{% include %}",
    nodes.Import: "{% import %}",
    nodes.FromImport: "{% from … import %}",
    nodes.Macro: "{% macro %}",
    nodes.CallBlock: "{% call %}",
    nodes.FilterBlock: "{% filter %}",
    nodes.AssignBlock: "{% set %}…{% endset %}",
    nodes.Block: "{% block %}",
}


class _Guard(NodeTransformer):
    """Puts the budget into a parsed template: each loop round, list or dict written, slice,
    comparison and ``~`` goes through a filter that counts it (and weighs what it builds)."""

    def generic_visit(self, node: nodes.Node, *args: Any, **kwargs: Any) -> nodes.Node:
        refused = _REFUSED.get(type(node))
        if refused is not None:
            raise TemplateInvalid(f"{refused} is not supported in email templates (line {node.lineno})")
        return super().generic_visit(node, *args, **kwargs)

    def visit_For(self, node: nodes.For) -> nodes.Node:
        if node.recursive:
            raise TemplateInvalid(f"recursive loops are not supported in email templates (line {node.lineno})")
        visited = self.generic_visit(node)
        assert isinstance(visited, nodes.For)
        visited.iter = _filter(visited.iter, "vpx_each")
        return visited

    def visit_List(self, node: nodes.List) -> nodes.Node:
        return _filter(self.generic_visit(node), "vpx_value")

    def visit_Dict(self, node: nodes.Dict) -> nodes.Node:
        return _filter(self.generic_visit(node), "vpx_value")

    def visit_Tuple(self, node: nodes.Tuple) -> nodes.Node:
        visited = self.generic_visit(node)
        return visited if node.ctx == "store" else _filter(visited, "vpx_value")

    def visit_Getitem(self, node: nodes.Getitem) -> nodes.Node:
        visited = self.generic_visit(node)
        return _filter(visited, "vpx_value") if isinstance(node.arg, nodes.Slice) else visited  # a copy

    def visit_Compare(self, node: nodes.Compare) -> nodes.Node:
        return _filter(self.generic_visit(node), "vpx_step")

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        visited = self.generic_visit(node)
        assert isinstance(visited, nodes.Concat)
        return _filter(nodes.List(visited.nodes, lineno=node.lineno), "vpx_concat")


def _filter(node: nodes.Node, name: str) -> nodes.Filter:
    return nodes.Filter(node, name, [], [], None, None, lineno=node.lineno)


_cache: OrderedDict[str, Template] = OrderedDict()
_cache_lock = threading.Lock()
CACHED_TEMPLATES = 512


def compiled(text: str) -> Template:
    """A template parsed, checked, guarded and compiled once per process (compiling costs a
    millisecond; a sequence's steps are rendered for every recipient). Called within a render's
    budget (the compiler folds constants through the guarded filters)."""
    with _cache_lock:
        found = _cache.get(text)
        if found is not None:
            _cache.move_to_end(text)
            return found
    # Between its stages (each some milliseconds of work) the interpreter goes back to the event loop.
    parsed = _ENVIRONMENT.parse(text)
    _check_parts(parsed)
    _check_names(parsed)
    time.sleep(YIELD_FOR)
    guarded = _Guard().visit(parsed)
    assert isinstance(guarded, nodes.Template)
    guarded.set_environment(_ENVIRONMENT)
    source = _ENVIRONMENT.compile(guarded, raw=True)
    time.sleep(YIELD_FOR)
    code = compile(source, "<template>", "exec")
    template = _ENVIRONMENT.template_class.from_code(_ENVIRONMENT, code, _ENVIRONMENT.make_globals(None))
    with _cache_lock:
        _cache[text] = template
        while len(_cache) > CACHED_TEMPLATES:
            _cache.popitem(last=False)
    return template


def _check_parts(parsed: nodes.Template) -> None:
    """At most MAX_PARTS nodes: compiling runs in C, holding the interpreter, for a time that grows
    with them."""
    parts, waiting = 0, list[nodes.Node]([parsed])
    while waiting:
        node = waiting.pop()
        parts += 1
        if parts > MAX_PARTS:
            raise TemplateInvalid(
                f"the template has more than {MAX_PARTS:,} parts (each name, constant, operator, filter, "
                "tag and piece of text is one): split it, or write the text plainly"
            )
        waiting.extend(node.iter_child_nodes())


def _check_names(parsed: nodes.Template) -> None:
    """Every variable named is one templates have, with a field it has."""
    for node in parsed.find_all((nodes.Getattr, nodes.Getitem)):
        field: object
        if isinstance(node, nodes.Getattr):
            target, field = node.node, node.attr
        elif isinstance(node, nodes.Getitem):
            target, field = node.node, getattr(node.arg, "value", None)
        else:
            continue
        if isinstance(target, nodes.Name) and target.name in VARIABLES and field not in VARIABLES[target.name]:
            known = ", ".join(VARIABLES[target.name])
            raise TemplateInvalid(f"{target.name} has no field {field!r} (line {node.lineno}); its fields: {known}")


# --- Checking and rendering ---
