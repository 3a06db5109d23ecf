"""The `vpx` command's help and errors in plain words.

typer (0.29) writes a parameter's Python type beside it in help, even for a switch that takes no value
(`--json <bool>`, `--ip <list[str]>`, `--port <int>`), and hands pydantic's messages on as usage errors
("Input should be a valid integer", "Value error, 'admin' is not one of 'ro', 'live', 'full'"). The
root group below, built once per run from the whole command tree, has every parameter say its kind as
a word (TEXT, INTEGER, PATH; a switch says nothing) and rewrites a refused value's message in the words
the API uses for the same mistake.

Switches stay switches: `--json` takes no value (`--json true` has never worked); a value after one is
refused with a sentence that says so.

Help reads as the terminal wraps it: a docstring's line ends within a paragraph are spaces (rich would
keep them, breaking a summary mid-sentence). Under `--json` a usage error (an unknown option, a missing
argument, a refused value) is one JSON object on stdout like every other error of the command, with
code ``invalid_parameters`` and exit status 2, instead of a box on the terminal.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn

import typer
from pydantic import ValidationError
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from vpx.validation_messages import error_message

# typer's type labels (inside its angle brackets) and the word help shows instead.
_KIND_WORDS = {
    "str": "TEXT",
    "int": "INTEGER",
    "int range": "INTEGER",
    "float": "NUMBER",
    "float range": "NUMBER",
    "Decimal": "NUMBER",
    "bool": "BOOLEAN",
    "datetime": "DATE",
    "path": "PATH",
    "file": "FILE",
    "directory": "DIRECTORY",
}
_BOOLEAN_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "1", "0"})
# click's UsageError: typer (which vendors click) exports only its subclass BadParameter.
_UsageError: type[Exception] = typer.BadParameter.__mro__[1]
_ClickException: type[Exception] = _UsageError.__mro__[1]
# A paragraph's own line ends: a newline with text on both sides (a blank line still parts paragraphs).
_LINE_END = re.compile(r"(?<=\S)[ \t]*\n[ \t]*(?=\S)")


def unwrapped(text: str | None) -> str | None:
    """Help text with each paragraph on one line, for the terminal to wrap."""
    return None if text is None else _LINE_END.sub(" ", text)


def kind_word(param: object, shown: str | None) -> str | None:
    """The word help shows beside a parameter: none for a switch, its metavar when it has one, else
    its kind (`TEXT`, `INTEGER`, `PATH`, `ro|live|full`); a repeatable option says it in its help."""
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return None
    metavar = getattr(param, "metavar", None)
    if metavar is not None:
        return str(metavar)
    if not shown:
        return shown
    label = shown.removesuffix("...").removeprefix("<").removesuffix(">")
    listed = re.fullmatch(r"list\[(.*)\]", label)
    label = listed.group(1) if listed else label
    if "|" in label:
        return label  # the choices themselves
    return _KIND_WORDS.get(label, label.upper())


class PlainOption(TyperOption):
    def display_type_rich(self, ctx: Any) -> str | None:
        return kind_word(self, super().display_type_rich(ctx))


class PlainArgument(TyperArgument):
    def display_type_rich(self, ctx: Any) -> str | None:
        return kind_word(self, super().display_type_rich(ctx))


def _plain_parameter(param: object) -> None:
    # The parameters are typer's own objects, built for this run: given the subclass that words their
    # kind (same attributes, one method more), not rebuilt.
    if type(param) is TyperOption:
        param.__class__ = PlainOption
    elif type(param) is TyperArgument:
        param.__class__ = PlainArgument


class PlainCommand(TyperCommand):
    def get_help_option(self, ctx: Any) -> Any:  # typer's (vendored) click context and option
        option = super().get_help_option(ctx)
        _plain_parameter(option)
        return option


def _tree(command: object) -> Iterator[object]:
    yield command
    for sub in getattr(command, "commands", {}).values():
        yield from _tree(sub)


def plain_message(exc: ValidationError) -> str:
    """A value typer refused, in the API's words: "must be a whole number", "must be at most 1000",
    "must be one of: ro, live, full"."""
    item = exc.errors()[0]
    message = error_message(item)
    # typer's own check of a choice, a ValueError of its wording.
    choice = re.fullmatch(r"'(.*)' is not one of (.*?)\.?", message)
    if item.get("type") == "value_error" and choice:
        return "must be one of: " + ", ".join(re.findall(r"'([^']*)'", choice.group(2)))
    return message


class PlainWordsGroup(TyperGroup):
    """The root of the `vpx` command tree (``typer.Typer(cls=PlainWordsGroup)``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for command in _tree(self):
            for attribute in ("help", "short_help"):
                setattr(command, attribute, unwrapped(getattr(command, attribute, None)))
            if type(command) is TyperGroup:
                command.__class__ = PlainWordsGroup
            elif type(command) is TyperCommand:
                command.__class__ = PlainCommand
            for param in getattr(command, "params", []):
                _plain_parameter(param)

    def get_help_option(self, ctx: Any) -> Any:  # typer's (vendored) click context and option
        option = super().get_help_option(ctx)
        _plain_parameter(option)
        return option

    def main(  # type: ignore[override]  # click's signature, its arguments passed on as they came
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        arguments = list(sys.argv[1:] if args is None else args)
        if not standalone_mode or "--json" not in arguments:
            return super().main(arguments, prog_name, complete_var, standalone_mode, **extra)
        try:
            status = super().main(arguments, prog_name, complete_var, False, **extra)
        except _ClickException as exc:  # usage errors; typer.Exit and typer.Abort are not among them
            _json_usage_error(exc)
        except typer.Abort:
            sys.exit(1)
        sys.exit(status if isinstance(status, int) else 0)

    def invoke(self, ctx: Any) -> Any:
        # Every command's arguments are parsed in here (a subcommand's under its group's invoke).
        try:
            return super().invoke(ctx)
        except typer.BadParameter as exc:
            if isinstance(exc.__cause__, ValidationError):
                exc.message = plain_message(exc.__cause__)
            raise
        except _UsageError as exc:
            message = str(getattr(exc, "message", ""))
            extra = re.fullmatch(r"Got unexpected extra argument(?:s|\(s\))? \((.*)\)", message)
            if extra and set(extra.group(1).lower().split()) <= _BOOLEAN_WORDS:
                exc.message = message + (  # type: ignore[attr-defined]
                    ". Switches such as --json take no value: write the switch alone to turn it on, or leave it out"
                )
            raise


def _json_usage_error(exc: Exception) -> NoReturn:
    """A usage error as the one JSON object a --json command prints (status 2, as click's usage errors)."""
    message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    sys.stdout.write(json.dumps({"error": {"code": "invalid_parameters", "message": message}}) + "\n")
    sys.exit(int(getattr(exc, "exit_code", 2)))
