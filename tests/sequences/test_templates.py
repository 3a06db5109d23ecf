"""Email templates under a budget: every way a template could make the server work without end or
build a huge value is refused when the template is checked (the 422 at creation), naming the limit,
and the same limits hold when an email is rendered for a recipient. No timing is asserted here; the
running server's answer time while such templates arrive is tests/sequences/test_template_server.py's."""

from __future__ import annotations

import pytest

from vpx.sequences import templates

STEPS = "steps"
OUTPUT = "characters"
DIGITS = "digits"

# (template, a word the refusal names: the limit it passed, or what is not supported)
OVER_BUDGET = [
    # Loops: nested ranges multiply past any per-range cap.
    ("{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}x", STEPS),
    ("{% for i in range(10000) %}{% for j in (range(10000)|list) %}{{ j }}{% endfor %}{% endfor %}", STEPS),
    (
        "{% for i in range(100) %}{% for j in range(100) %}{% for k in range(100) %}"
        "{% endfor %}{% endfor %}{% endfor %}",
        STEPS,
    ),
    ("{% for i in range(5000) %}{% for j in ('x' * 5000) %}{% endfor %}{% endfor %}", STEPS),
    # Repetition and concatenation of strings and lists.
    ("{{ 'x' * 30000000 }}", OUTPUT),
    ("{{ 30000000 * 'x' }}", OUTPUT),
    ("{{ [1] * 30000000 }}", OUTPUT),
    ("{% set x = 'x' * 90000 %}{{ x ~ x ~ x }}", OUTPUT),
    ("{% set x = 'x' * 90000 %}{{ x + x }}", OUTPUT),
    ("{% set a = [1] * 1000 %}{% set b = [a] * 1000 %}{% set c = [b] * 1000 %}{{ c }}", OUTPUT),
    (
        "{% set a = ['xxxxxxxxxx'] * 100 %}{% set b = [a,a,a,a,a,a,a,a,a,a] %}{% set c = [b,b,b,b,b,b,b,b,b,b] %}"
        "{% set d = [c,c,c,c,c,c,c,c,c,c] %}{% set e = [d,d,d,d,d,d,d,d,d,d] %}{{ e == e|list }}",
        OUTPUT,
    ),
    ("{% set a = {'k': 'x' * 60000} %}{% set b = {'a': a, 'b': a} %}{{ b }}", OUTPUT),
    ("{% set b = 'x' * 60000 %}{% set c = cycler(b, b, b) %}{{ c.items }}", OUTPUT),
    ("{% set b = 'x' * 60000 %}{% set n = namespace(a=b) %}{% set n.b = b %}{{ n }}", OUTPUT),
    ("{% set b = 'x' * 60000 %}{{ dict(a=b, c=b) }}", OUTPUT),
    ("{% set b = 'x' * 60000 %}{% set s = b[1:] %}{{ s ~ s }}", OUTPUT),
    # Numbers: powers and products are computed in C, holding the interpreter.
    ("{{ 9**(9**9) }}", DIGITS),
    ("{{ 2**99999999 }}", DIGITS),
    ("{{ 10**10000000 }}", DIGITS),
    ("{% set n = 10**900 %}{{ n * n }}", DIGITS),
    ("{{ (10**900)|string * 200 }}", OUTPUT),
    # Format widths and precisions.
    ("{{ '{:>999999999}'.format(1) }}", OUTPUT),
    ("{{ '{:>{w}}'.format(1, w=999999999) }}", OUTPUT),
    ("{{ '{:.999999999f}'.format(1.5) }}", OUTPUT),
    ("{{ '%999999999d' % 1 }}", OUTPUT),
    ("{{ '%.999999999f' % 1.5 }}", OUTPUT),
    ("{{ '%*d' % (999999999, 1) }}", OUTPUT),
    ("{{ '%(a)999999999s' % {'a': 1} }}", OUTPUT),
    ("{{ '%999999999d'|format(1) }}", OUTPUT),
    # Filters that take a size.
    ("{{ 'x'|center(999999999) }}", OUTPUT),
    ("{{ 'x'|indent(999999999) }}", OUTPUT),
    ("{{ ('x\n' * 40000)|indent('y' * 100) }}", OUTPUT),
    ("{{ ('x ' * 40000)|wordwrap(1, wrapstring='y' * 100) }}", OUTPUT),
    ("{{ range(10000)|join('x' * 100000) }}", OUTPUT),
    ("{{ ('x' * 1000)|replace('', 'y' * 1000) }}", OUTPUT),
    ("{{ [1]|batch(999999999, 0)|list }}", OUTPUT),
    ("{{ [1]|slice(999999999)|list }}", OUTPUT),
    ("{{ ([[1]] * 10000)|sum(start=[]) }}", "numbers"),
    ("{{ (('x' * 20000)|list)|map('center', 99999)|list }}", STEPS),
    # str methods.
    ("{{ 'x'.ljust(999999999) }}", OUTPUT),
    ("{{ 'x'.rjust(999999999) }}", OUTPUT),
    ("{{ 'x'.center(999999999) }}", OUTPUT),
    ("{{ 'x'.zfill(999999999) }}", OUTPUT),
    ("{{ ('\t' * 10000).expandtabs(99999) }}", OUTPUT),
    ("{{ ('x' * 1000).replace('', 'y' * 1000) }}", OUTPUT),
    ("{{ ('y' * 100000).join(['a', 'b', 'c']) }}", OUTPUT),
    ("{{ (1).to_bytes(999999999, 'big') }}", "not allowed"),
    ("{{ 'x'.encode() }}", "not allowed"),
    # Ranges: a range larger than the step budget could only be walked past it.
    ("{{ range(10**6)|length }}", "range"),
    ("{{ range(100000)|list }}", "range"),
    # Output past its cap, from many small pieces.
    ("{% for i in range(1000) %}{{ 'x' * 1000 }}{% endfor %}", OUTPUT),
    ("{% for i in range(2000) %}" + "x" * 1000 + "{% endfor %}", OUTPUT),
]

UNSUPPORTED = [
    ("{% import 'x' as y %}", "import"),
    ("{% from 'x' import y %}", "import"),
    ("{% include 'x' %}", "include"),
    ("{% extends 'x' %}", "extends"),
    ("{% macro m() %}x{% endmacro %}{{ m() }}", "macro"),
    ("{% call range(3) %}x{% endcall %}", "call"),
    ("{% filter upper %}x{% endfilter %}", "filter"),
    ("{% set x %}y{% endset %}{{ x }}", "set"),
    ("{% block b %}x{% endblock %}", "block"),
    ("{% for x in [[1]] recursive %}{{ loop(x) }}{% endfor %}", "recursive"),
    ("{{ lipsum(999999) }}", "lipsum"),
    ("{{ 'a<b'|striptags }}", "striptags"),
]

# Templates that fail with the example values: refused at creation, never a 500.
FAILING = [
    "{{ 1 // 0 }}",
    "{{ 1 / 0 }}",
    "{{ 'x' - 1 }}",
    "{{ [1][5] }}",
    "{{ {}|dictsort(by='nothing') }}",
    "{{ 1.5 ** 99999 }}",
    "{{ (10**999) / 0.1 }}",
    "{{ ('{' * 200) ~ 'x' }}{{ ''.format() }}{{ '{}'.format() }}",
    "{{ " + "(" * 400 + "1" + ")" * 400 + " }}",
    "{{ " + "[" * 400 + "1" + "]" * 400 + " }}",
    "{% if true %}" * 120 + "x" + "{% endif %}" * 120,
    "{{ " + "not " * 3000 + "1 }}",
    "{{ " + "-" * 3000 + "1 }}",
    "{{ 'x'|wordwrap(0) }}",
    "{{ '%d' % 'x' }}",
]

WELL_WITHIN = [
    ("Hi {{ decision_maker.first_name or 'there' }}", "Hi Maria"),
    ("{{ contact.business_name|upper }} in {{ contact.city|title }}", "ACME PLUMBING LLC in Denver"),
    ("{% for tag in ['a', 'b', 'c'] %}{{ loop.index }}{{ tag }}{% endfor %}", "1a2b3c"),
    ("{% for i in range(3) %}{{ i }}{% if not loop.last %}, {% endif %}{% endfor %}", "0, 1, 2"),
    ("{{ '%s and %d' % ('x', 3) }} {{ '{:>5}'.format('ab') }} {{ '%05.1f'|format(2.5) }}", "x and 3    ab 002.5"),
    (
        "{{ contact.city|center(10) }}|{{ 'a b c'|replace(' ', '-') }}|{{ ['x', 'y']|join(', ') }}",
        "  Denver  |a-b-c|x, y",
    ),
    ("{{ (contact.phone ~ '')[-4:] }} {{ 2 ** 10 }} {{ 7 // 2 }} {{ '=' * 3 }}", "0100 1024 3 ==="),
    ("{{ [3, 1, 2]|sort|join }} {{ [1, 2, 3]|sum }} {{ {'b': 1, 'a': 2}|dictsort|first|first }}", "123 6 a"),
    (
        "{{ contact.website.replace('https://', '') }} {{ contact.email.split('@')[1] }}",
        "acmeplumbing.example acmeplumbing.example",
    ),
    ("{% set ns = namespace(n=0) %}{% for i in range(4) %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}", "6"),
    ("{{ 'Hello'.ljust(7, '.') }}{{ 'x'.zfill(3) }}{{ 'a\tb'.expandtabs(2) }}", "Hello..00xa b"),
    ("{% set c = cycler('odd', 'even') %}{{ c.next() }} {{ c.next() }}", "odd even"),
    ("{{ (range(10)|batch(3)|list)[3] }} {{ (range(4)|slice(2)|list)[1] }}", "[9] [2, 3]"),
    ("{{ 'x' * 100000 }}", "x" * 100_000),
]

EXAMPLE = templates.Context(
    contact={name: value for name, value in templates.VARIABLES["contact"].items()},
    decision_maker=dict(templates.VARIABLES["decision_maker"]),
    mailbox=dict(templates.VARIABLES["mailbox"]),
)


@pytest.mark.parametrize(("text", "named"), OVER_BUDGET)
def test_a_template_over_its_budget_is_refused_naming_the_limit(text: str, named: str) -> None:
    with pytest.raises(templates.TemplateInvalid) as refused:
        templates.check(text)
    assert named in str(refused.value), str(refused.value)


@pytest.mark.parametrize(("text", "named"), OVER_BUDGET)
def test_the_same_limits_hold_when_an_email_is_rendered(text: str, named: str) -> None:
    with pytest.raises(templates.TemplateInvalid) as refused:
        templates.render(text, EXAMPLE)
    assert named in str(refused.value), str(refused.value)


@pytest.mark.parametrize(("text", "named"), UNSUPPORTED)
def test_constructs_an_email_template_has_no_use_for_are_refused_by_name(text: str, named: str) -> None:
    with pytest.raises(templates.TemplateInvalid) as refused:
        templates.check(text)
    assert named in str(refused.value), str(refused.value)


@pytest.mark.parametrize("text", FAILING)
def test_a_template_failing_in_any_way_is_invalid_never_another_error(text: str) -> None:
    with pytest.raises(templates.TemplateInvalid):
        templates.check(text)
    with pytest.raises(templates.TemplateInvalid):
        templates.render(text, EXAMPLE)


@pytest.mark.parametrize(("text", "expected"), WELL_WITHIN)
def test_templates_within_the_budget_render_as_before(text: str, expected: str) -> None:
    templates.check(text)
    assert templates.render(text, EXAMPLE) == expected


def test_the_budget_is_per_render_not_per_process() -> None:
    text = "{% for i in range(9000) %}{% endfor %}ok"
    for _ in range(5):
        templates.check(text)
        assert templates.render(text, EXAMPLE) == "ok"


async def test_rendering_off_the_event_loop_gives_the_same_answers() -> None:
    assert await templates.render_async("Hi {{ contact.city }}", EXAMPLE) == "Hi Denver"
    await templates.check_async(["Hi {{ contact.city }}", "{{ mailbox.email }}"])
    with pytest.raises(templates.TemplateInvalid, match=DIGITS):
        await templates.check_async(["fine", "{{ 9**(9**9) }}"])
    with pytest.raises(templates.TemplateInvalid, match=OUTPUT):
        await templates.render_async("{{ 'x' * 30000000 }}", EXAMPLE)
