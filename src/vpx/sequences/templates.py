"""Email templates: Jinja2 in a sandbox with strict undefined. Every variable a template may name is
known at creation, so a template naming an unknown one is refused then (422), never a broken email
later: ``{{ contact.business_name }}``, ``{{ decision_maker.first_name }}``, ``{{ mailbox.from_name }}``…
A value the contact lacks renders as an empty string."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from jinja2 import StrictUndefined, Template, TemplateError, nodes
from jinja2.sandbox import SandboxedEnvironment

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

_ENVIRONMENT = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)


class TemplateInvalid(ValueError):
    """A template that cannot be used: its text says why (the first problem found)."""


@dataclass(frozen=True)
class Context:
    """The values of one email's template variables."""

    contact: dict[str, str]
    decision_maker: dict[str, str]
    mailbox: dict[str, str]

    def as_dict(self) -> dict[str, Any]:
        return {"contact": self.contact, "decision_maker": self.decision_maker, "mailbox": self.mailbox}


def check(text: str) -> None:
    """Raises TemplateInvalid when ``text`` does not parse or names a variable (or an attribute of
    one) templates do not have."""
    try:
        parsed = _ENVIRONMENT.parse(text)
    except TemplateError as exc:
        raise TemplateInvalid(_explain(exc)) from None
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
    try:
        _ENVIRONMENT.from_string(text).render(_attributes_only(VARIABLES))
    except TemplateError as exc:
        raise TemplateInvalid(_explain(exc)) from None


def render(text: str, context: Context) -> str:
    return _compiled(text).render(context.as_dict())


@functools.lru_cache(maxsize=512)
def _compiled(text: str) -> Template:
    """A template compiled once per process (compiling costs a millisecond; a sequence's steps are
    rendered for every recipient)."""
    return _ENVIRONMENT.from_string(text)


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
