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

The parts: ``variables`` (what a template may name, and TemplateInvalid), ``budget`` (the limits and
the budget of the render under way), ``operations`` (each operator, call, filter and test, paid for
and sized), ``sandbox`` (the environment, the statements refused, the compiled templates) and
``rendering`` (checking and rendering, off the event loop).
"""

from __future__ import annotations

from vpx.sequences.templates.budget import MAX_CHARACTERS, MAX_DIGITS, MAX_PARTS, MAX_SECONDS, MAX_STEPS
from vpx.sequences.templates.rendering import check, check_async, render, render_async
from vpx.sequences.templates.variables import VARIABLES, Context, TemplateInvalid

__all__ = [
    "MAX_CHARACTERS",
    "MAX_DIGITS",
    "MAX_PARTS",
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
