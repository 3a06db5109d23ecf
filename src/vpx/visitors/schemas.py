"""Visitor identification bodies (D33): sites, page views reported, visits and the companies behind them."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from vpx.fields import SingleLine, Timestamp

MAX_URL = 2048
Method = Literal["ip_range", "reverse_dns"]
Reason = Literal["unknown", "isp", "hosting", "bot", "private_address", "opted_out"]
Url = Annotated[SingleLine, Field(min_length=1, max_length=MAX_URL)]
OptionalUrl = Annotated[SingleLine, Field(max_length=MAX_URL)]
Domain = Annotated[
    str,
    Field(
        min_length=3,
        max_length=253,
        pattern=r"^(?:https?://)?[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+/?$",
        description="The site's host name, e.g. `www.acme.example` (a scheme and a final slash are dropped).",
    ),
]


class SiteCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    domain: Domain
    name: SingleLine | None = Field(default=None, max_length=200)
    topic: SingleLine | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="What a visit to the site counts as research on, for topic_surge (default: the domain).",
    )


class SiteView(BaseModel):
    id: str
    domain: str
    name: str | None
    topic: str
    site_key: str = Field(description="Public, like a publishable key: it only lets a page report its views.")
    snippet: str = Field(description="The HTML tag to paste into every page of the site.")
    pixel_url: str = Field(description="A 1×1 GIF that records a view, for email and pages without JavaScript.")
    created_at: datetime


class SiteList(BaseModel):
    sites: list[SiteView]
    next_cursor: str | None = Field(default=None, description="The next page's cursor; null on the last page.")


class PageView(BaseModel):
    """What the snippet reports (`POST /v/collect`)."""

    model_config = ConfigDict(extra="ignore")

    site_key: str = Field(min_length=1, max_length=40)
    url: Url
    referrer: OptionalUrl | None = None
    title: SingleLine | None = Field(default=None, max_length=1000)


# Site ids are `site_` and letters and digits: anything else cannot name a site and is refused as such
# (422), in the body, the path and the filters alike.
SITE_ID_PATTERN = r"^[A-Za-z0-9_]+$"


class IdentifyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    site_id: str = Field(min_length=1, max_length=40, pattern=SITE_ID_PATTERN)
    ip: str = Field(min_length=2, max_length=64, description="The visitor's IPv4 or IPv6 address.")
    url: Url
    user_agent: SingleLine | None = Field(default=None, max_length=1000)
    referrer: OptionalUrl | None = None
    occurred_at: Timestamp | None = Field(default=None, description="When the view happened (default: now).")


class Company(BaseModel):
    """A preview of the business (a reveal shows the rest)."""

    contact_id: str
    business_name: str
    domain: str | None
    city: str
    state: str
    industry: str


class Identification(BaseModel):
    visit_id: str
    identified: bool
    company: Company | None = None
    method: Method | None = None
    confidence: float | None = None
    reason: Reason | None = None


class VisitView(Identification):
    site_id: str
    url: str
    occurred_at: datetime


class VisitPage(BaseModel):
    visits: list[VisitView]
    next_cursor: str | None


class CompanyActivity(BaseModel):
    contact_id: str
    business_name: str
    domain: str | None
    city: str
    state: str
    industry: str
    visits: int
    pages: int = Field(description="Distinct URLs viewed.")
    first_seen: datetime
    last_seen: datetime


class CompanyList(BaseModel):
    companies: list[CompanyActivity]
