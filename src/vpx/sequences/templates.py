"""Email templates: Jinja2 in a sandbox with strict undefined, within a budget. Every variable a
template may name is known at creation, so a template naming an unknown one is refused then (422),
never a broken email later: ``{{ contact.business_name }}``, ``{{ decision_maker.first_name }}``,
``{{ mailbox.from_name }}``… A value the contact lacks renders as an empty string.

The budget. A template is code a customer runs on the service, once when it is checked and again
for every recipient, so each render has limits, the same at both times:

- MAX_STEPS steps: a loop round, a filter, a call, an operator, a comparison and an output piece
  are a step each, and building a value costs one more step per STEP_CHARACTERS characters;
- MAX_CHARACTERS characters of output, and in any one value (a string, or a list or a dict as it
  would be written out, counting a value it holds twice twice);
- MAX_DIGITS digits in a number;
- MAX_SECONDS seconds of the rendering thread's own processor time (not of the clock on the wall: a
  busy machine, which makes the thread wait its turn, never makes a template fail; a check's
  templates together also end at MAX_CHECK_SECONDS of wall time).

Whatever could pass a limit in one operation is refused before it runs: ``'x' * n``, ``a ~ b``,
``n ** m`` and ``n * m`` on numbers (computed in C, which a deadline cannot stop), format widths and
precisions (``'{:>999999999}'.format(1)``, ``'%999999999d' % 1``), filters and str methods that take
a size (center, indent, wordwrap, join, replace, batch, slice, ljust, zfill, expandtabs…), and
``range()`` past MAX_RANGE numbers. Only plain methods of strings, dicts and lists can be called;
lists and dicts cannot be changed (the immutable sandbox); imports, includes, macros, blocks and
recursive loops are refused by name: an email template has no use for them, and their output would
be gathered where the output limit does not see it. Any failure of a render is TemplateInvalid,
never another exception. Renders run off the event loop (``check_async``, ``render_async``), in
one thread per process that hands the interpreter back to the loop every YIELD_EVERY of its work
(and the process's switch interval is SWITCH_INTERVAL), so that one customer's templates never hold
up the server: bench/template_budget.py measures /healthz while over-budget templates arrive.
"""

from __future__ import annotations

import asyncio
import functools
import math
import operator
import re
import sys
import threading
import time
import types
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

from jinja2 import StrictUndefined, Template, TemplateError, nodes, pass_environment, pass_eval_context
from jinja2.filters import FILTERS as DEFAULT_FILTERS
from jinja2.filters import sync_do_join
from jinja2.runtime import LoopContext
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedEscapeFormatter, SandboxedFormatter
from jinja2.tests import TESTS as DEFAULT_TESTS
from jinja2.utils import Cycler, Joiner, Namespace
from jinja2.visitor import NodeTransformer
from markupsafe import Markup

# What templates may name, with an example value of each (validation renders with these).
VARIABLES: dict[str, dict[str, str]] = {
    "contact": {
        "business_name": "Acme Plumbing LLC",
        "city": "Denver",
        "state": "CO",
        "industry": "home-services",
        "specialty": "Plumbing",
        "website": "https://acmeplumbing.example",
        "phone": "+13035550100",
        "email": "info@acmeplumbing.example",
    },
    "decision_maker": {"name": "Maria Lopez", "first_name": "Maria", "last_name": "Lopez", "title": "Owner"},
    "mailbox": {"from_name": "Sam Seller", "email": "sam@seller.example"},
}

# The budget of one render (see the module's docstring).
MAX_STEPS = 10_000
STEP_CHARACTERS = 1_000
MAX_CHARACTERS = 100_000
MAX_DIGITS = 1_000
MAX_SECONDS = 0.5
MAX_RANGE = MAX_STEPS
# Nodes of a parsed template (compiling it holds the interpreter for a time that grows with them).
MAX_PARTS = 500
# Checking a sequence's templates (up to 20 steps of two each) together: at most this long.
MAX_CHECK_SECONDS = 5.0
# Threads that render templates, per process: one, so that renders take turns with the event loop
# only (two busy threads would make its waits for the interpreter longer).
RENDER_THREADS = 1
# A render gives the interpreter back to the event loop this often (seconds of its own work), so
# that the loop never waits for it longer than that.
YIELD_EVERY = 0.002
YIELD_FOR = 0.0002
# Where a render does not give it back itself (parsing, compiling), the interpreter passes between
# threads that want it after this long (Python's default is 5 ms); set once this process renders.
SWITCH_INTERVAL = 0.001

# What a one-line template (a subject) must not render: what the email's headers refuse.
LINE_BREAKS = ("\r", "\n", "\x00", "\x85", "\u2028", "\u2029")

_MAX_BITS = math.ceil(MAX_DIGITS * math.log2(10))
_NUMBER_LIMIT = 10**MAX_DIGITS


class TemplateInvalid(ValueError):
    """A template that cannot be used: its text says why (the first problem found); ``index`` is
    the template's place among those ``check_async`` was given."""

    def __init__(self, message: str, index: int | None = None) -> None:
        super().__init__(message)
        self.index = index


class _OverBudget(Exception):
    """A render passed a limit. Not a ValueError or a TypeError: filters that swallow those (int,
    float) must not swallow this."""


@dataclass(frozen=True)
class Context:
    """The values of one email's template variables."""

    contact: dict[str, str]
    decision_maker: dict[str, str]
    mailbox: dict[str, str]

    def as_dict(self) -> dict[str, Any]:
        return {"contact": self.contact, "decision_maker": self.decision_maker, "mailbox": self.mailbox}


# --- The budget of the render under way (one per thread) ---


class _Budget:
    def __init__(self, seconds: float, deadline: float | None = None) -> None:
        # ``seconds`` of this thread's processor time (time.thread_time); ``deadline`` a time.monotonic().
        self.seconds, self.overall = seconds, deadline
        self.steps = 0
        self.restart()

    def restart(self) -> None:
        """The render's time starts again (after compiling); the overall deadline stays."""
        used = time.thread_time()
        self.deadline = used + self.seconds
        self.yield_at = used + YIELD_EVERY

    def spend(self, steps: int = 1) -> None:
        self.steps += steps
        if self.steps > MAX_STEPS:
            raise _OverBudget(
                f"the template takes more than {MAX_STEPS:,} steps to render (loop rounds, filters, calls and "
                f"operators; building a value costs a step per {STEP_CHARACTERS:,} characters)"
            )
        used = time.thread_time()
        if used > self.deadline or (self.overall is not None and time.monotonic() > self.overall):
            raise _OverBudget(f"the template takes more than {MAX_SECONDS:g} s to render")
        if used > self.yield_at:
            # The interpreter is handed over only when another thread has waited for it 5 ms;
            # sleeping a moment hands it to the event loop at once.
            time.sleep(YIELD_FOR)
            self.yield_at = time.thread_time() + YIELD_EVERY


_local = threading.local()


def _budget() -> _Budget:
    budget: _Budget | None = getattr(_local, "budget", None)
    if budget is None:
        # Outside a render (a constant the compiler would fold early): not now.
        raise _OverBudget("no render under way")
    return budget


def _too_long(what: str) -> NoReturn:
    raise _OverBudget(
        f"{what} would pass {MAX_CHARACTERS:,} characters (the most a template's output, or any value in it, may have)"
    )


def _too_many_digits(what: str) -> NoReturn:
    raise _OverBudget(f"{what} would pass {MAX_DIGITS:,} digits (the most a number in a template may have)")


def _weight(value: Any) -> int:
    """About how many characters ``value`` takes written out; a value held twice counts twice, as
    writing it out repeats it. Each object is weighed once (memo), so this costs one pass over the
    distinct objects; past MAX_CHARACTERS it stops and says so."""
    memo: dict[int, int] = {}

    def weigh(item: Any) -> int:
        if isinstance(item, str):
            return len(item)
        if isinstance(item, bool) or item is None:
            return 5
        if isinstance(item, int):
            return item.bit_length() * 3 // 10 + 1
        if isinstance(item, float):
            return 24
        if isinstance(item, list | tuple | set | frozenset | dict | Namespace):
            key = id(item)
            if key in memo:
                return memo[key]
            memo[key] = MAX_CHARACTERS + 1  # a value inside itself weighs too much
            total = 2
            if isinstance(item, Namespace):
                item = object.__getattribute__(item, "_Namespace__attrs")
                total = 14
            parts: Iterable[Any] = (part for pair in item.items() for part in pair) if isinstance(item, dict) else item
            for part in parts:
                total += weigh(part) + 2
                if total > MAX_CHARACTERS:
                    break
            memo[key] = total
            return total
        return 40  # anything else is written out as a short description

    return weigh(value)


def _checked(value: Any, what: str) -> Any:
    """``value`` when within the limits (its building paid for in steps), else _OverBudget."""
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return value
    if isinstance(value, int):
        if -_NUMBER_LIMIT < value < _NUMBER_LIMIT:
            return value
        _too_many_digits(what)
    if isinstance(value, str | list | tuple | set | frozenset | dict | Namespace):
        weight = _weight(value)
        if weight > MAX_CHARACTERS:
            _too_long(what)
        if weight >= STEP_CHARACTERS:
            _budget().spend(weight // STEP_CHARACTERS)
    return value


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
        total += sum(sizes) + _weight(value) + 8
        if total > MAX_CHARACTERS:
            _too_long("this % formatting")


_FORMAT_NUMBER = re.compile(r"\d+")


class _Sizes:
    """A str.format under way: every field's width and precision, and the total, within MAX_CHARACTERS."""

    written = 0

    def format_field(self, value: Any, format_spec: str) -> Any:
        for number in _FORMAT_NUMBER.findall(format_spec):
            if len(number) > 9 or int(number) > MAX_CHARACTERS:
                _too_long(f"the format {{:{format_spec[:20]}}}")
        result = super().format_field(value, format_spec)  # type: ignore[misc]
        self.written += len(result)
        if self.written > MAX_CHARACTERS:
            _too_long("this str.format")
        _budget().spend()
        return result


class _Formatter(_Sizes, SandboxedFormatter):
    pass


class _EscapeFormatter(_Sizes, SandboxedEscapeFormatter):
    pass


def _binop(symbol: str, left: Any, right: Any) -> Any:
    _budget().spend()
    what = f"{symbol!r}"
    if symbol == "*":
        repeated = _repeats(left, right)
        if repeated is not None:
            sequence, count = repeated
            if count > 0 and _weight(sequence) * count > MAX_CHARACTERS:
                _too_long(f"{what} repeating a value {count:,} times")
        elif (
            isinstance(left, int) and isinstance(right, int) and left.bit_length() + right.bit_length() > _MAX_BITS + 1
        ):
            _too_many_digits(what)
    elif symbol == "**":
        powers = isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1
        if powers and (abs(left).bit_length() - 1) * right > _MAX_BITS:
            _too_many_digits(what)
    elif symbol == "+":
        joins = isinstance(left, str | list | tuple) and isinstance(right, str | list | tuple)
        if joins and _weight(left) + _weight(right) > MAX_CHARACTERS:
            _too_long(what)
    elif symbol == "%" and isinstance(left, str):
        _percent(left, right)
    return _checked(_OPERATORS[symbol](left, right), what)


_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
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
            _too_long(f"{what}({width:,})")


def _replace_size(what: str, text: str, old: str, new: str, count: Any) -> None:
    if not isinstance(text, str) or not isinstance(old, str) or not isinstance(new, str):
        return
    times = text.count(old) if old else len(text) + 1
    if isinstance(count, int) and count >= 0:
        times = min(times, count)
    if len(text) + times * len(new) > MAX_CHARACTERS:
        _too_long(f"{what}()")


def _join_size(what: str, separator: str, items: list[Any]) -> None:
    total = len(separator) * max(0, len(items) - 1)
    for item in items:
        total += _weight(item)
        if total > MAX_CHARACTERS:
            _too_long(f"{what}()")
    if total > MAX_CHARACTERS:
        _too_long(f"{what}()")


def _str_join(self: str, iterable: Any = (), *rest: Any) -> Any:
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
            _too_long(f"expandtabs({tabsize:,})")

    def replace(self: str, old: str = "", new: str = "", count: Any = -1) -> None:
        _replace_size("replace", self, old, new, count)

    checks: dict[str, Callable[..., None] | None] = {
        "join": None,  # _str_join
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


_STR_METHODS = _str_checks()
_DICT_METHODS = {"get", "items", "keys", "values", "copy"}
_LIST_METHODS = {"index", "count", "copy"}


def _safe_range(*args: Any) -> range:
    numbers = range(*args)
    if len(numbers) > MAX_RANGE:
        raise _OverBudget(f"range() of more than {MAX_RANGE:,} numbers (a loop over it would pass the step limit)")
    return numbers


class _Namespace(Namespace):
    """``namespace()``: its attributes set with ``{% set ns.x = … %}``, each time weighed."""

    def __setitem__(self, name: str, value: Any) -> None:
        super().__setitem__(name, value)
        _checked(self, "this namespace")


# --- Filters and tests ---


def _center(value: str, width: int = 80) -> None:
    _width_at_most("center", width)


def _indent(s: str, width: Any = 4, first: bool = False, blank: bool = False) -> None:
    each = len(width) if isinstance(width, str) else width if isinstance(width, int) else 0
    if isinstance(s, str) and len(s) + (s.count("\n") + 1) * max(each, 0) > MAX_CHARACTERS:
        _too_long("indent()")


def _wordwrap(
    environment: Any, s: str, width: int = 79, break_long_words: bool = True, wrapstring: str | None = None, *rest: Any
) -> None:
    separator = len(wrapstring) if isinstance(wrapstring, str) else 1
    if not isinstance(s, str) or not isinstance(width, int) or width <= 0:
        return
    if len(s) + (len(s) // width + s.count(" ") + 1) * separator > MAX_CHARACTERS:
        _too_long("wordwrap()")


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
        raise _OverBudget("the sum filter adds numbers only")
    total = start
    for item in items:
        total = _binop("+", total, item)
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
        _budget().spend()
        if precheck is not None:
            precheck(*args, **kwargs)
        return _checked(function(*args, **kwargs), f"the {name} filter")

    return guarded


def _guard_test(function: Any) -> Callable[..., Any]:
    @functools.wraps(function)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        _budget().spend()
        return function(*args, **kwargs)

    return guarded


# Filters the guard below puts into the template itself.
def _each(iterable: Any) -> Iterator[Any]:
    """A loop's iterable, a step a round."""
    budget = _budget()
    for item in iterable:
        budget.spend()
        yield item


def _value(value: Any) -> Any:
    """A list, tuple or dict written in the template, or a slice."""
    _budget().spend()
    return _checked(value, "this list")


def _step(value: Any) -> Any:
    """A comparison."""
    _budget().spend()
    return value


def _concat(values: list[Any]) -> str:
    """``a ~ b ~ c``."""
    _budget().spend()
    strings = [value if isinstance(value, str) else _checked(value, "'~'") for value in values]
    if sum(_weight(value) for value in strings) > MAX_CHARACTERS:
        _too_long("'~'")
    return str(_checked("".join(str(value) for value in strings), "'~'"))


# --- The environment ---


class _Environment(ImmutableSandboxedEnvironment):
    intercepted_binops = frozenset(_OPERATORS)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        return _binop(operator, left, right)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        budget = _budget()
        budget.spend()
        name = _allowed(__obj)
        check = _STR_METHODS.get(name) if isinstance(getattr(__obj, "__self__", None), str) else None
        if check is not None:
            check(__obj.__self__, *args, **kwargs)
        if name == "join" and isinstance(getattr(__obj, "__self__", None), str):
            return _checked(_str_join(__obj.__self__, *args, **kwargs), "join()")
        result = __context.call(__obj, *args, **kwargs)
        if isinstance(result, Cycler):
            _checked(result.items, "cycler()")  # it keeps what it was given, and shows it
        return _checked(result, f"{name}()")

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
            _EscapeFormatter(self, escape=owner.escape) if isinstance(owner, Markup) else _Formatter(self)
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
    if isinstance(owner, str) and name in _STR_METHODS:
        return str(name)
    if isinstance(owner, dict) and name in _DICT_METHODS:
        return str(name)
    if isinstance(owner, list | tuple) and name in _LIST_METHODS:
        return str(name)
    if isinstance(owner, LoopContext) and name in ("cycle", "changed"):
        return f"loop.{name}"
    if isinstance(owner, Cycler) and name in ("next", "reset"):
        return f"cycler.{name}"
    if any(obj is known for known in _CALLABLE_GLOBALS) or isinstance(obj, Joiner):
        return str(name)
    raise _OverBudget(f"calling {name} is not allowed in email templates")


_CALLABLE_GLOBALS: tuple[Any, ...] = (_safe_range, dict, Cycler, Joiner, _Namespace)

_ENVIRONMENT = _Environment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)
_ENVIRONMENT.globals.clear()
_ENVIRONMENT.globals.update(
    {"range": _safe_range, "dict": dict, "cycler": Cycler, "joiner": Joiner, "namespace": _Namespace}
)
_ENVIRONMENT.filters.clear()
_ENVIRONMENT.filters.update({name: _guard_filter(name, _REPLACED.get(name, _sync(name))) for name in _FILTERS})
_ENVIRONMENT.filters.update({"vpx_each": _each, "vpx_value": _value, "vpx_step": _step, "vpx_concat": _concat})
_ENVIRONMENT.tests.clear()
_ENVIRONMENT.tests.update({name: _guard_test(test) for name, test in DEFAULT_TESTS.items()})


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


def _compiled(text: str) -> Template:
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


def check(text: str, *, single_line: bool = False, deadline: float | None = None) -> None:
    """Raises TemplateInvalid when ``text`` does not parse, names a variable (or an attribute of
    one) templates do not have, uses what email templates do not support, or fails or passes its
    budget rendered with the example values; a ``single_line`` one (a subject) also when it renders a
    line break. ``deadline`` (a time.monotonic() value) ends it sooner."""
    written = _render(text, _attributes_only(VARIABLES), deadline=deadline)
    if single_line and any(character in written for character in LINE_BREAKS):
        raise TemplateInvalid("it renders a line break, and a subject is one line")


def render(text: str, context: Context) -> str:
    """The template rendered for one email; TemplateInvalid when it fails or passes its budget."""
    return _render(text, context.as_dict())


async def check_async(texts: Sequence[str], *, single_line: Sequence[bool] = ()) -> None:
    """``check`` of each text (``single_line`` says which are), off the event loop, within
    MAX_CHECK_SECONDS together; TemplateInvalid's ``index`` says which failed."""

    def run() -> None:
        deadline = time.monotonic() + MAX_CHECK_SECONDS
        for index, text in enumerate(texts):
            try:
                check(text, single_line=index < len(single_line) and single_line[index], deadline=deadline)
            except TemplateInvalid as exc:
                raise TemplateInvalid(str(exc), index) from None

    await _off_loop(run)


async def render_async(text: str, context: Context) -> str:
    """``render``, off the event loop."""
    return await _off_loop(lambda: render(text, context))


_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()
T = TypeVar("T")


async def _off_loop(function: Callable[[], T]) -> T:
    """``function`` run in the renderers' threads. Each render stops itself at its deadline (every
    step checks the clock) and no step runs long, so a thread is soon free again."""
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=RENDER_THREADS, thread_name_prefix="vpx-template")
            sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL))
    return await asyncio.get_running_loop().run_in_executor(_executor, function)


def _render(text: str, values: dict[str, Any], *, deadline: float | None = None) -> str:
    budget = _Budget(MAX_SECONDS, deadline)
    _local.budget = budget
    try:
        template = _compiled(text)
        budget.restart()  # compiling is bounded by MAX_PARTS; the render's own time starts now
        parts: list[str] = []
        written = 0
        for part in template.generate(values):
            written += len(part)
            if written > MAX_CHARACTERS:
                _too_long("the output")
            budget.spend(1 + len(part) // STEP_CHARACTERS)
            parts.append(part)
        return "".join(parts)
    except TemplateInvalid:
        raise
    except _OverBudget as exc:
        raise TemplateInvalid(str(exc)) from None
    except TemplateError as exc:
        raise TemplateInvalid(_explain(exc)) from None
    except (Exception, RecursionError, MemoryError) as exc:
        raise TemplateInvalid(_failure(exc)) from None
    finally:
        _local.budget = None


class _Known(dict[str, str]):
    """A variable's attributes as the sandbox reads them: ``contact.city`` is an item lookup."""


def _attributes_only(variables: dict[str, dict[str, str]]) -> dict[str, Any]:
    return {name: _Known(values) for name, values in variables.items()}


def _explain(exc: TemplateError) -> str:
    message = str(exc.message or exc)
    if "is undefined" in message:
        known = ", ".join(f"{name}.{attr}" for name, attrs in VARIABLES.items() for attr in attrs)
        return f"{message}; the variables are: {known}"
    line = getattr(exc, "lineno", None)
    return f"{message} (line {line})" if line else message


def _failure(exc: BaseException) -> str:
    """What a render that failed some other way says: the error's kind and its first words."""
    if isinstance(exc, RecursionError):
        return "the template is nested too deeply"
    if isinstance(exc, MemoryError):
        return f"the template needs more memory than a render may have ({MAX_CHARACTERS:,} characters a value)"
    kind = next((words for kinds, words in _FAILURES if isinstance(exc, kinds)), "an error")
    detail = " ".join(str(exc).split())[:200]
    return f"the template fails with {kind}" + (f": {detail}" if detail else "")


# What a failed render says of its error, in words (not Python's exception names).
_FAILURES: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], str], ...] = (
    (ZeroDivisionError, "a division by zero"),
    (OverflowError, "a number too large"),
    ((IndexError, KeyError, LookupError), "an item that is not there"),
    (TypeError, "a value of the wrong kind"),
    (ValueError, "a value it cannot use"),
    (AttributeError, "an attribute that is not there"),
)


__all__ = [
    "MAX_CHARACTERS",
    "MAX_DIGITS",
    "MAX_SECONDS",
    "MAX_STEPS",
    "VARIABLES",
    "Context",
    "TemplateInvalid",
    "check",
    "check_async",
    "render",
    "render_async",
]
