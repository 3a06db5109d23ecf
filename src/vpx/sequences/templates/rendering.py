"""Checking and rendering templates (see vpx.sequences.templates): ``check`` with the example values
when a sequence is saved, ``render`` for each email, and their ``_async`` forms, which run in the
renderers' thread off the event loop. Any failure is TemplateInvalid, in words."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from jinja2 import TemplateError

from vpx.sequences.templates.budget import (
    MAX_CHARACTERS,
    MAX_CHECK_SECONDS,
    MAX_SECONDS,
    RENDER_THREADS,
    STEP_CHARACTERS,
    SWITCH_INTERVAL,
    Budget,
    OverBudget,
    spending,
    too_long,
)
from vpx.sequences.templates.sandbox import compiled
from vpx.sequences.templates.variables import VARIABLES, Context, TemplateInvalid

# What a one-line template (a subject) must not render: what the email's headers refuse.
LINE_BREAKS = ("\r", "\n", "\x00", "\x85", "\u2028", "\u2029")


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
    with spending(Budget(MAX_SECONDS, deadline)) as budget:
        try:
            template = compiled(text)
            budget.restart()  # compiling is bounded by MAX_PARTS; the render's own time starts now
            parts: list[str] = []
            written = 0
            for part in template.generate(values):
                written += len(part)
                if written > MAX_CHARACTERS:
                    too_long("the output")
                budget.spend(1 + len(part) // STEP_CHARACTERS)
                parts.append(part)
            return "".join(parts)
        except TemplateInvalid:
            raise
        except OverBudget as exc:
            raise TemplateInvalid(str(exc)) from None
        except TemplateError as exc:
            raise TemplateInvalid(_explain(exc)) from None
        except (Exception, RecursionError, MemoryError) as exc:
            raise TemplateInvalid(_failure(exc)) from None


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
