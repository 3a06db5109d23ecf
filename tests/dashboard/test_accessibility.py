"""Readable contrast (WCAG 2.1 AA) of the stylesheet's colour pairs, labelled form fields, page
structure for keyboard and screen-reader users, and the pages' security headers."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.dashboard.conftest import Browser
from tests.factories import Factory
from vpx.dashboard import STATIC_DIR

CSS = (STATIC_DIR / "dashboard.css").read_text()
# (foreground, background, minimum ratio): 4.5 for text, 3 for borders, focus rings and chart bars.
PAIRS = [
    ("text", "bg", 4.5),
    ("text", "surface", 4.5),
    ("muted", "bg", 4.5),
    ("muted", "surface", 4.5),
    ("accent", "bg", 4.5),
    ("accent", "surface", 4.5),
    ("accent-strong", "bg", 4.5),
    ("on-accent", "accent", 4.5),
    ("on-accent", "accent-strong", 4.5),
    ("on-danger", "danger", 4.5),
    ("on-danger", "error-text", 4.5),
    ("warning-text", "warning-bg", 4.5),
    ("success-text", "success-bg", 4.5),
    ("success-text", "surface", 4.5),
    ("error-text", "error-bg", 4.5),
    ("error-text", "bg", 4.5),
    ("badge-text", "badge-bg", 4.5),
    ("border", "bg", 3.0),
    ("focus", "bg", 3.0),
    ("focus", "surface", 3.0),
    ("bar", "bg", 3.0),
    ("danger", "bg", 3.0),
]


def colours() -> dict[str, str]:
    return dict(re.findall(r"--([a-z-]+):\s*(#[0-9a-fA-F]{6})\s*;", CSS))


def luminance(hex_colour: str) -> float:
    channels = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(one: str, two: str) -> float:
    high, low = sorted((luminance(one), luminance(two)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize(("fg", "bg", "minimum"), PAIRS, ids=[f"{f}-on-{b}" for f, b, _ in PAIRS])
def test_colour_pairs_have_readable_contrast(fg: str, bg: str, minimum: float) -> None:
    palette = colours()
    assert contrast(palette[fg], palette[bg]) >= minimum, (fg, bg, contrast(palette[fg], palette[bg]))


def test_every_colour_in_the_stylesheet_is_a_palette_variable() -> None:
    outside_root = CSS.split("}", 1)[1]
    assert re.findall(r"#[0-9a-fA-F]{3,6}\b", outside_root) == []


class PageStructure(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.fields: list[dict[str, str | None]] = []
        self.label_for: set[str] = set()
        self.h1 = 0
        self.lang = ""
        self.title = False
        self.skip_link = False
        self.main_id = ""
        self.inline_script = False
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "html":
            self.lang = a.get("lang") or ""
        elif tag == "title":
            self.title = True
        elif tag == "h1":
            self.h1 += 1
        elif tag == "label" and a.get("for"):
            self.label_for.add(str(a["for"]))
        elif tag == "a" and a.get("href") == "#main" and "skip-link" in (a.get("class") or ""):
            self.skip_link = True
        elif tag == "main":
            self.main_id = a.get("id") or ""
        elif tag in ("input", "select", "textarea") and a.get("type") not in ("hidden", "submit", "button"):
            self.fields.append(a)
        elif tag == "script":
            self._in_script = "src" not in a

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.inline_script = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False


PAGES = [
    "/dashboard",
    "/dashboard/keys",
    "/dashboard/credits",
    "/dashboard/contacts",
    "/dashboard/contacts?q=plumbing",
    "/dashboard/contacts/{contact}",
    "/dashboard/revealed",
    "/dashboard/signals",
    "/dashboard/rules",
    "/dashboard/webhooks",
]


async def check_page(web: Browser, path: str) -> None:
    response = await web.get(path)
    assert response.status_code in (200, 201), path
    page = PageStructure()
    page.feed(response.text)
    assert page.lang == "en" and page.title and page.h1 == 1, path
    assert page.skip_link and page.main_id == "main", path
    assert not page.inline_script, f"{path}: inline script (the CSP forbids it)"
    assert 'style="' not in response.text, f"{path}: inline style (the CSP forbids it)"
    for field in page.fields:
        labelled = field.get("id") in page.label_for or field.get("aria-label") or field.get("aria-labelledby")
        assert labelled, f"{path}: unlabelled field {field}"
    assert "default-src 'self'" in response.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["cache-control"] == "no-store"


@pytest.mark.asyncio
async def test_pages_have_labels_structure_and_security_headers(web: Browser, factory: Factory) -> None:
    contact = await factory.contact()
    for path in ("/dashboard/login", "/dashboard/signup"):
        await check_page(web, path)
    await web.sign_up()
    await web.create_key(name="labelled")  # the keys page then has its edit forms too
    for path in PAGES:
        await check_page(web, path.format(contact=contact))
    created = await web.create_key(name="second")
    page = PageStructure()
    page.feed(created.text)
    assert all(f.get("id") in page.label_for for f in page.fields)


def test_templates_use_no_inline_event_handlers() -> None:
    templates = Path(STATIC_DIR).parent / "templates"
    for template in templates.glob("*.html"):
        assert not re.search(r"\son[a-z]+=", template.read_text()), template.name
