"""The links of a publisher's download page, as absolute URLs."""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit


class _Links(HTMLParser):
    def __init__(self, base: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base = base
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag.lower() != "a":
            return
        for name, value in attrs:
            if name.lower() == "href" and value and value.strip():
                self.found.append(urljoin(self.base, value.strip()))


def page_links(html: str, base: str) -> list[str]:
    """Every ``<a href>`` of the page, made absolute against ``base``, in page order, once each."""
    parser = _Links(base)
    parser.feed(html)
    parser.close()
    return list(dict.fromkeys(parser.found))


def file_name(url: str) -> str:
    """The last segment of a URL's path (``…/NPPES_Data_Dissemination_May_2026_V2.zip``)."""
    return urlsplit(url).path.rsplit("/", 1)[-1]
