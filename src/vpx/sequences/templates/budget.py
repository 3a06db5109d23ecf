"""The budget of one render (see vpx.sequences.templates): its limits, the steps and processor time
it has left (one render under way per thread), and what a value weighs against the limits."""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any, NoReturn

from jinja2.utils import Namespace

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

# The most bits a number may have (MAX_DIGITS decimal digits).
MAX_BITS = math.ceil(MAX_DIGITS * math.log2(10))
_NUMBER_LIMIT = 10**MAX_DIGITS


class OverBudget(Exception):
    """A render passed a limit. Not a ValueError or a TypeError: filters that swallow those (int,
    float) must not swallow this."""


class Budget:
    """The steps and the processor time one render has left."""

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
            raise OverBudget(
                f"the template takes more than {MAX_STEPS:,} steps to render (loop rounds, filters, calls and "
                f"operators; building a value costs a step per {STEP_CHARACTERS:,} characters)"
            )
        used = time.thread_time()
        if used > self.deadline or (self.overall is not None and time.monotonic() > self.overall):
            raise OverBudget(f"the template takes more than {MAX_SECONDS:g} s to render")
        if used > self.yield_at:
            # The interpreter is handed over only when another thread has waited for it 5 ms;
            # sleeping a moment hands it to the event loop at once.
            time.sleep(YIELD_FOR)
            self.yield_at = time.thread_time() + YIELD_EVERY


_local = threading.local()


@contextlib.contextmanager
def spending(budget: Budget) -> Iterator[Budget]:
    """``budget`` is the render under way in this thread until the block ends."""
    _local.budget = budget
    try:
        yield budget
    finally:
        _local.budget = None


def current_budget() -> Budget:
    """The budget of the render under way in this thread; OverBudget outside one."""
    budget: Budget | None = getattr(_local, "budget", None)
    if budget is None:
        # Outside a render (a constant the compiler would fold early): not now.
        raise OverBudget("no render under way")
    return budget


def too_long(what: str) -> NoReturn:
    raise OverBudget(
        f"{what} would pass {MAX_CHARACTERS:,} characters (the most a template's output, or any value in it, may have)"
    )


def too_many_digits(what: str) -> NoReturn:
    raise OverBudget(f"{what} would pass {MAX_DIGITS:,} digits (the most a number in a template may have)")


def weight_of(value: Any) -> int:
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


def within_limits(value: Any, what: str) -> Any:
    """``value`` when within the limits (its building paid for in steps), else OverBudget."""
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return value
    if isinstance(value, int):
        if -_NUMBER_LIMIT < value < _NUMBER_LIMIT:
            return value
        too_many_digits(what)
    if isinstance(value, str | list | tuple | set | frozenset | dict | Namespace):
        weight = weight_of(value)
        if weight > MAX_CHARACTERS:
            too_long(what)
        if weight >= STEP_CHARACTERS:
            current_budget().spend(weight // STEP_CHARACTERS)
    return value
