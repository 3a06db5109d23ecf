"""What a template may compute, each operation paid for in steps and sized before it runs (see
vpx.sequences.templates): the operators, the calls (plain methods of strings, dicts and lists, and a
few globals), the filters and the tests, and the filters the guard puts into a parsed template."""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from jinja2 import pass_environment, pass_eval_context
from jinja2.filters import FILTERS as DEFAULT_FILTERS
from jinja2.filters import sync_do_join
from jinja2.sandbox import SandboxedEscapeFormatter, SandboxedFormatter
from jinja2.tests import TESTS as DEFAULT_TESTS
from jinja2.utils import Cycler, Joiner, Namespace

from vpx.sequences.templates.budget import (
    MAX_BITS,
    MAX_CHARACTERS,
    MAX_RANGE,
    OverBudget,
    current_budget,
    too_long,
    too_many_digits,
    weight_of,
    within_limits,
)

# --- Operators ---


def _repeats(left: Any, right: Any) -> tuple[Any, int] | None:
    """(sequence, count) when ``left * right`` repeats a sequence."""
    if isinstance(left, str | list | tuple) and isinstance(right, int):
        return left, right
    if isinstance(right, str | list | tuple) and isinstance(left, int):
        return right, left
    return None


# A printf-style conversion: %[(key)][flags][width][.precision][length]type
_PERCENT = re.compile(r"%(?:\(([^)]*)\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?(.)", re.DOTALL)


def _percent(template: str, values: Any) -> None:
    """Refuses ``template % values`` when its result could pass MAX_CHARACTERS."""
    positional = list(values) if isinstance(values, tuple) else [values]
    mapping = values if isinstance(values, Mapping) else None
    total = len(template)
    index = 0

    def take() -> Any:
        nonlocal index
        found = positional[index] if index < len(positional) else None
        index += 1
        return found

    for match in _PERCENT.finditer(template):
        key, width, precision, kind = match.groups()
        if kind == "%":
            continue
        sizes = []
        for part in (width, precision):
            if part == "*":
                part_value = take()
                sizes.append(abs(part_value) if isinstance(part_value, int) else 0)
            elif part:
                sizes.append(int(part) if len(part) <= 9 else MAX_CHARACTERS + 1)
        value = mapping.get(key) if mapping is not None and key is not None else take()
        total += sum(sizes) + weight_of(value) + 8
        if total > MAX_CHARACTERS:
            too_long("this % formatting")


_FORMAT_NUMBER = re.compile(r"\d+")


class _Sizes:
    """A str.format under way: every field's width and precision, and the total, within MAX_CHARACTERS."""

    written = 0

    def format_field(self, value: Any, format_spec: str) -> Any:
        for number in _FORMAT_NUMBER.findall(format_spec):
            if len(number) > 9 or int(number) > MAX_CHARACTERS:
                too_long(f"the format {{:{format_spec[:20]}}}")
        result = super().format_field(value, format_spec)  # type: ignore[misc]
        self.written += len(result)
        if self.written > MAX_CHARACTERS:
            too_long("this str.format")
        current_budget().spend()
        return result


class Formatter(_Sizes, SandboxedFormatter):
    pass


class EscapeFormatter(_Sizes, SandboxedEscapeFormatter):
    pass


def binop(symbol: str, left: Any, right: Any) -> Any:
    current_budget().spend()
    what = f"{symbol!r}"
    if symbol == "*":
        repeated = _repeats(left, right)
        if repeated is not None:
            sequence, count = repeated
            if count > 0 and weight_of(sequence) * count > MAX_CHARACTERS:
                too_long(f"{what} repeating a value {count:,} times")
        elif isinstance(left, int) and isinstance(right, int) and left.bit_length() + right.bit_length() > MAX_BITS + 1:
            too_many_digits(what)
    elif symbol == "**":
        powers = isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1
        if powers and (abs(left).bit_length() - 1) * right > MAX_BITS:
            too_many_digits(what)
    elif symbol == "+":
        joins = isinstance(left, str | list | tuple) and isinstance(right, str | list | tuple)
        if joins and weight_of(left) + weight_of(right) > MAX_CHARACTERS:
            too_long(what)
    elif symbol == "%" and isinstance(left, str):
        _percent(left, right)
    return within_limits(OPERATORS[symbol](left, right), what)


OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "**": operator.pow,
    "%": operator.mod,
}


# --- Calls: what a template may call, and the sizes they take ---


def _width_at_most(what: str, *widths: Any) -> None:
    for width in widths:
        if isinstance(width, int) and width > MAX_CHARACTERS:
            too_long(f"{what}({width:,})")


def _replace_size(what: str, text: str, old: str, new: str, count: Any) -> None:
    if not isinstance(text, str) or not isinstance(old, str) or not isinstance(new, str):
        return
    times = text.count(old) if old else len(text) + 1
    if isinstance(count, int) and count >= 0:
        times = min(times, count)
    if len(text) + times * len(new) > MAX_CHARACTERS:
        too_long(f"{what}()")


def _join_size(what: str, separator: str, items: list[Any]) -> None:
    total = len(separator) * max(0, len(items) - 1)
    for item in items:
        total += weight_of(item)
        if total > MAX_CHARACTERS:
            too_long(f"{what}()")
    if total > MAX_CHARACTERS:
        too_long(f"{what}()")


def str_join(self: str, iterable: Any = (), *rest: Any) -> Any:
    items = list(iterable)
    _join_size("join", self, items)
    return self.join(items, *rest)


def _str_checks() -> dict[str, Callable[..., None] | None]:
    def widths(name: str) -> Callable[..., None]:
        def check(self: str, width: Any = 0, *rest: Any) -> None:
            _width_at_most(name, width)

        return check

    def expandtabs(self: str, tabsize: Any = 8) -> None:
        if isinstance(tabsize, int) and len(self) + self.count("\t") * max(tabsize, 0) > MAX_CHARACTERS:
            too_long(f"expandtabs({tabsize:,})")

    def replace(self: str, old: str = "", new: str = "", count: Any = -1) -> None:
        _replace_size("replace", self, old, new, count)

    checks: dict[str, Callable[..., None] | None] = {
        "join": None,  # str_join
        "ljust": widths("ljust"),
        "rjust": widths("rjust"),
        "center": widths("center"),
        "zfill": widths("zfill"),
        "expandtabs": expandtabs,
        "replace": replace,
    }
    for name in [
        "capitalize",
        "casefold",
        "count",
        "endswith",
        "find",
        "index",
        "isalnum",
        "isalpha",
        "isascii",
        "isdecimal",
        "isdigit",
        "isidentifier",
        "islower",
        "isnumeric",
        "isprintable",
        "isspace",
        "istitle",
        "isupper",
        "lower",
        "lstrip",
        "partition",
        "removeprefix",
        "removesuffix",
        "rfind",
        "rindex",
        "rpartition",
        "rsplit",
        "rstrip",
        "split",
        "splitlines",
        "startswith",
        "strip",
        "swapcase",
        "title",
        "upper",
    ]:
        checks[name] = None
    return checks


STR_METHODS = _str_checks()
DICT_METHODS = {"get", "items", "keys", "values", "copy"}
LIST_METHODS = {"index", "count", "copy"}


def safe_range(*args: Any) -> range:
    numbers = range(*args)
    if len(numbers) > MAX_RANGE:
        raise OverBudget(f"range() of more than {MAX_RANGE:,} numbers (a loop over it would pass the step limit)")
    return numbers


class TemplateNamespace(Namespace):
    """``namespace()``: its attributes set with ``{% set ns.x = … %}``, each time weighed."""

    def __setitem__(self, name: str, value: Any) -> None:
        super().__setitem__(name, value)
        within_limits(self, "this namespace")


# --- Filters and tests ---


def _center(value: str, width: int = 80) -> None:
    _width_at_most("center", width)


def _indent(s: str, width: Any = 4, first: bool = False, blank: bool = False) -> None:
    each = len(width) if isinstance(width, str) else width if isinstance(width, int) else 0
    if isinstance(s, str) and len(s) + (s.count("\n") + 1) * max(each, 0) > MAX_CHARACTERS:
        too_long("indent()")


def _wordwrap(
    environment: Any, s: str, width: int = 79, break_long_words: bool = True, wrapstring: str | None = None, *rest: Any
) -> None:
    separator = len(wrapstring) if isinstance(wrapstring, str) else 1
    if not isinstance(s, str) or not isinstance(width, int) or width <= 0:
        return
    if len(s) + (len(s) // width + s.count(" ") + 1) * separator > MAX_CHARACTERS:
        too_long("wordwrap()")


def _format(value: str, *args: Any, **kwargs: Any) -> None:
    if isinstance(value, str):
        _percent(value, kwargs if kwargs else args)


def _replace(eval_ctx: Any, s: str, old: str, new: str, count: int | None = None) -> None:
    _replace_size("replace", str(s) if not isinstance(s, str) else s, old, new, -1 if count is None else count)


def _batch(value: Any, linecount: int, fill_with: Any = None) -> None:
    _width_at_most("batch", linecount)


def _slice(value: Any, slices: int, fill_with: Any = None) -> None:
    _width_at_most("slice", slices)


@pass_eval_context
def _joined(eval_ctx: Any, value: Any, d: str = "", attribute: Any = None) -> str:
    items = list(value)
    if attribute is not None:
        getter = eval_ctx.environment.getitem
        items = [getter(item, attribute) for item in items]
    if not isinstance(d, str):
        d = str(d)
    _join_size("join", d, items)
    return sync_do_join(eval_ctx, items, d)


@pass_environment
def _sum(environment: Any, iterable: Any, attribute: Any = None, start: Any = 0) -> Any:
    items = list(iterable)
    if attribute is not None:
        items = [environment.getitem(item, attribute) for item in items]
    numbers = int | float
    if not isinstance(start, numbers) or not all(isinstance(item, numbers) for item in items):
        raise OverBudget("the sum filter adds numbers only")
    total = start
    for item in items:
        total = binop("+", total, item)
    return total


_PRECHECKS: dict[str, Callable[..., None] | None] = {
    "center": _center,
    "indent": _indent,
    "wordwrap": _wordwrap,
    "format": _format,
    "replace": _replace,
    "batch": _batch,
    "slice": _slice,
}
_REPLACED: dict[str, Callable[..., Any]] = {"join": _joined, "sum": _sum}
# Every filter but those that could cost more than the size of what they read (striptags, urlize:
# regular expressions) or that an email has no use for (xmlattr, pprint).
_FILTERS = [
    "abs",
    "attr",
    "batch",
    "capitalize",
    "center",
    "count",
    "d",
    "default",
    "dictsort",
    "e",
    "escape",
    "filesizeformat",
    "first",
    "float",
    "forceescape",
    "format",
    "groupby",
    "indent",
    "int",
    "items",
    "join",
    "last",
    "length",
    "list",
    "lower",
    "map",
    "max",
    "min",
    "random",
    "reject",
    "rejectattr",
    "replace",
    "reverse",
    "round",
    "safe",
    "select",
    "selectattr",
    "slice",
    "sort",
    "string",
    "sum",
    "title",
    "tojson",
    "trim",
    "truncate",
    "unique",
    "upper",
    "urlencode",
    "wordcount",
    "wordwrap",
]


def _sync(name: str) -> Callable[..., Any]:
    """A default filter; its plain function where Jinja wraps one for async environments (so that
    its arguments come as the prechecks above take them)."""
    function: Callable[..., Any] = DEFAULT_FILTERS[name]
    return getattr(function, "__wrapped__", function)


def _guard_filter(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    precheck = _PRECHECKS.get(name)

    @functools.wraps(function)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        current_budget().spend()
        if precheck is not None:
            precheck(*args, **kwargs)
        return within_limits(function(*args, **kwargs), f"the {name} filter")

    return guarded


def _guard_test(function: Any) -> Callable[..., Any]:
    @functools.wraps(function)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        current_budget().spend()
        return function(*args, **kwargs)

    return guarded


# Filters the guard below puts into the template itself.
def _each(iterable: Any) -> Iterator[Any]:
    """A loop's iterable, a step a round."""
    budget = current_budget()
    for item in iterable:
        budget.spend()
        yield item


def _value(value: Any) -> Any:
    """A list, tuple or dict written in the template, or a slice."""
    current_budget().spend()
    return within_limits(value, "this list")


def _step(value: Any) -> Any:
    """A comparison."""
    current_budget().spend()
    return value


def _concat(values: list[Any]) -> str:
    """``a ~ b ~ c``."""
    current_budget().spend()
    strings = [value if isinstance(value, str) else within_limits(value, "'~'") for value in values]
    if sum(weight_of(value) for value in strings) > MAX_CHARACTERS:
        too_long("'~'")
    return str(within_limits("".join(str(value) for value in strings), "'~'"))


# --- What the sandbox is given ---

# What a template may call by name (besides the plain methods above).
GLOBALS: dict[str, Any] = {
    "range": safe_range,
    "dict": dict,
    "cycler": Cycler,
    "joiner": Joiner,
    "namespace": TemplateNamespace,
}


def template_filters() -> dict[str, Callable[..., Any]]:
    """Every filter a template may use, each paid for and sized, and those the guard puts in."""
    found = {name: _guard_filter(name, _REPLACED.get(name, _sync(name))) for name in _FILTERS}
    found.update({"vpx_each": _each, "vpx_value": _value, "vpx_step": _step, "vpx_concat": _concat})
    return found


def template_tests() -> dict[str, Callable[..., Any]]:
    """Every test Jinja has, each a step."""
    return {name: _guard_test(test) for name, test in DEFAULT_TESTS.items()}
