"""`funding_ma` signals from SEC EDGAR daily (or full) index files: the filings that say a company is
raising money or combining with another.

The index gives the filer's CIK, name, form type, date and file; no address. A filing becomes a
signal about the filer's contact when the filer is a company of the catalogue (``vpx import edgar``
loads the SEC company lists; a company is linked to a contact when one matches). EDGAR gives no city
or state, so no contact is ever made from a filing alone: other filers are skipped as
``company_not_in_catalogue``.

Which forms (the index names no 8-K items, so an 8-K cannot be told apart from any other current
report without reading the filing; 8-Ks are skipped as ``8k_items_unknown``, and the forms filed for a
business combination itself are used instead):
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, time
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.models import Company, Contact
from vpx.registries.edgar import IndexEntry, read_index
from vpx.registries.reader import SkipRow, open_text
from vpx.signals.events import SignalEvent

SOURCE = "edgar"
# Form type → (what it means, the evidence it carries). Amendments count as their form.
FORMS: dict[str, tuple[str, dict[str, str]]] = {
    "D": ("private offering of securities (Form D)", {"budget": "new capital raised (Form D offering)"}),
    "S-1": ("registration for a public offering (S-1)", {"budget": "public offering registered (S-1)"}),
    "F-1": ("registration for a public offering (F-1)", {"budget": "public offering registered (F-1)"}),
    "S-4": ("registration of securities for a merger or acquisition (S-4)", {"need": "business combination"}),
    "F-4": ("registration of securities for a merger or acquisition (F-4)", {"need": "business combination"}),
    "425": ("communication about a business combination (Rule 425)", {"need": "business combination"}),
    "DEFM14A": ("definitive proxy statement for a merger (DEFM14A)", {"need": "business combination"}),
    "PREM14A": ("preliminary proxy statement for a merger (PREM14A)", {"need": "business combination"}),
    "SC TO-T": ("third-party tender offer (SC TO-T)", {"need": "acquisition by tender offer"}),
    "SC 14D9": ("target's response to a tender offer (SC 14D9)", {"need": "acquisition by tender offer"}),
}
__doc__ = (__doc__ or "") + "".join(f"\n- ``{form}``: {meaning}" for form, (meaning, _) in FORMS.items())


@dataclass
class FilingSkip:
    entry: int
    reason: str
    message: str


def _form(form_type: str) -> str:
    return form_type.strip().upper().removesuffix("/A")


def relevant_filings(path: Path, skipped: list[FilingSkip]) -> Iterator[IndexEntry]:
    """The index's filings of the forms above; 8-Ks and malformed lines are noted in ``skipped``."""
    opened = open_text(path)
    try:
        for number, item in enumerate(read_index(opened.text), start=1):
            if isinstance(item, SkipRow):
                skipped.append(FilingSkip(number, item.reason, item.detail))
            elif _form(item.form_type) == "8-K":
                skipped.append(
                    FilingSkip(number, "8k_items_unknown", f"{item.accession_number}: no items in the index")
                )
            elif _form(item.form_type) in FORMS:
                yield item
    finally:
        opened.close()


async def filing_events(
    session: AsyncSession, filings: Iterable[IndexEntry], skipped: list[FilingSkip]
) -> list[SignalEvent]:
    """Events for the filings whose filer is a company linked to a contact of the catalogue."""
    entries = list(filings)
    ciks = sorted({e.cik for e in entries})
    contact_of: dict[int, tuple[int, str]] = {}
    for start in range(0, len(ciks), 500):
        rows = await session.execute(
            select(Company.cik, Contact.id, Contact.industry)
            .join(Contact, Contact.id == Company.contact_id)
            .where(Company.cik.in_(ciks[start : start + 500]), Contact.status == "active")
        )
        contact_of.update({int(cik): (int(contact), industry) for cik, contact, industry in rows})
    events: list[SignalEvent] = []
    for number, entry in enumerate(entries, start=1):
        linked = contact_of.get(entry.cik)
        if linked is None:
            skipped.append(
                FilingSkip(number, "company_not_in_catalogue", f"CIK {entry.cik} ({entry.company_name}) has no contact")
            )
            continue
        contact_id, industry = linked
        meaning, evidence = FORMS[_form(entry.form_type)]
        events.append(
            SignalEvent(
                category="funding_ma",
                industry=industry,
                observed_at=datetime.combine(entry.filed_on, time(0), tzinfo=UTC),
                evidence={
                    **evidence,
                    "timeline": f"filed {entry.filed_on.isoformat()}",
                    "filing": entry.form_type,
                    "accession_number": entry.accession_number,
                    "cik": entry.cik,
                },
                source=SOURCE,
                # One signal per filing and filer (a filing can list several filers).
                source_record_id=f"{entry.accession_number}:{entry.cik}",
                topic=meaning,
                summary=f"{entry.company_name}: {meaning}, filed {entry.filed_on.isoformat()}",
                contact_id=f"ct_{contact_id}",
            )
        )
    return events
