# Generated from the service's openapi.json by clients/python/scripts/generate_models.py
# (datamodel-code-generator 0.89.0). Do not edit: regenerate.
# ruff: noqa

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, ConfigDict, Field
from typing_extensions import TypeAliasType
from vpx_client._meta import ApiModel


class Address(ApiModel):
    city: Annotated[str, Field(title="City")]
    country: Annotated[str, Field(title="Country")]
    postal_code: Annotated[str | None, Field(title="Postal Code")]
    state: Annotated[str, Field(title="State")]
    street: Annotated[str | None, Field(title="Street")]


class AdminAccount(ApiModel):
    balance: Annotated[
        Decimal, Field(description="Credits, exact to 1/10,000.", title="Balance")
    ]
    created_at: Annotated[AwareDatetime, Field(title="Created At")]
    deleted_at: Annotated[AwareDatetime | None, Field(title="Deleted At")]
    email: Annotated[
        str | None,
        Field(
            description="The sign-in email; erased when the account is deleted.",
            title="Email",
        ),
    ]
    id: Annotated[str, Field(title="Id")]
    keys: Annotated[
        int, Field(description="Active (unrevoked) API keys.", title="Keys")
    ]
    last_request_at: Annotated[
        AwareDatetime | None,
        Field(
            description="The latest use of any of its keys, to the minute.",
            title="Last Request At",
        ),
    ]
    name: Annotated[
        str,
        Field(
            description="Erased (`(deleted)`) when the account is deleted.",
            title="Name",
        ),
    ]
    plan: Annotated[str, Field(title="Plan")]
    status: Annotated[Literal["active", "suspended", "deleted"], Field(title="Status")]
    suspended_at: Annotated[AwareDatetime | None, Field(title="Suspended At")]
    suspension_reason: Annotated[
        str | None,
        Field(
            description="The operator's reason; never shown to the customer.",
            title="Suspension Reason",
        ),
    ]


class AdminAccountList(ApiModel):
    accounts: Annotated[list[AdminAccount], Field(title="Accounts")]


class AppliedRun(ApiModel):
    """
    The last run that applied something, as a later run that did not keeps it.
    """

    created: Annotated[int, Field(title="Created")]
    deactivated: Annotated[int, Field(title="Deactivated")]
    duplicates: Annotated[int, Field(title="Duplicates")]
    finished_at: Annotated[AwareDatetime | None, Field(title="Finished At")]
    ingested: Annotated[int, Field(title="Ingested")]
    newest_record_at: Annotated[AwareDatetime | None, Field(title="Newest Record At")]
    rows_read: Annotated[int, Field(title="Rows Read")]
    started_at: Annotated[AwareDatetime | None, Field(title="Started At")]
    unchanged: Annotated[int, Field(title="Unchanged")]
    updated: Annotated[int, Field(title="Updated")]


class AttemptView(ApiModel):
    attempted_at: Annotated[AwareDatetime, Field(title="Attempted At")]
    duration_ms: Annotated[int, Field(title="Duration Ms")]
    error: Annotated[str | None, Field(title="Error")]
    response_excerpt: Annotated[str | None, Field(title="Response Excerpt")]
    status_code: Annotated[int | None, Field(title="Status Code")]


class AuditEntry(ApiModel):
    action: Annotated[
        Literal["suspend", "resume", "delete", "grant"], Field(title="Action")
    ]
    actor: Annotated[
        str, Field(description="`cli:<user>` or `admin:<token name>`.", title="Actor")
    ]
    at: Annotated[AwareDatetime, Field(title="At")]
    detail: Annotated[dict[str, Any], Field(title="Detail")]


class AuditTrail(ApiModel):
    account_id: Annotated[str, Field(title="Account Id")]
    entries: Annotated[list[AuditEntry], Field(title="Entries")]


class BalanceView(ApiModel):
    free: Annotated[
        Decimal,
        Field(
            description="This month's free credits left; they do not carry over.",
            title="Free",
        ),
    ]
    paid: Annotated[
        Decimal,
        Field(
            description="Granted credits and revenue share; these carry over.",
            title="Paid",
        ),
    ]
    total: Annotated[
        Decimal, Field(description="Credits, exact to 1/10,000.", title="Total")
    ]


class BatchEnrichAccepted(ApiModel):
    batch_id: Annotated[str, Field(examples=["ben_3kTz9aQ1xYb2LmN0"], title="Batch Id")]
    status: Annotated[Literal["processing"], Field(title="Status")]
    status_url: Annotated[str, Field(title="Status Url")]
    total: Annotated[int, Field(title="Total")]
    webhook_secret: Annotated[
        str | None,
        Field(
            description="Signs the deliveries to `webhook_url` (Standard Webhooks); shown once.",
            title="Webhook Secret",
        ),
    ]


Fields = TypeAliasType(
    "Fields",
    Annotated[
        list[Literal["email", "phone", "website", "linkedin_url", "employee_count", "decision_maker.email", "decision_maker.phone", "decision_maker.title", "decision_maker.linkedin_url"]],
        Field(min_length=1, title="Fields"),
    ],
)


Providers = TypeAliasType(
    "Providers",
    Annotated[
        list[Literal["apollo", "hunter", "pdl"]],
        Field(max_length=20, min_length=1, title="Providers"),
    ],
)


WebhookUrl = TypeAliasType(
    "WebhookUrl",
    Annotated[
        str,
        Field(
            description="Receives `enrichment.completed`, signed with the secret in the 202.",
            max_length=2048,
            title="Webhook Url",
        ),
    ],
)


class BatchEnrichRequest(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    contact_ids: Annotated[
        list[str],
        Field(
            description="1-100 contact ids (duplicates collapsed).",
            max_length=100,
            min_length=1,
            title="Contact Ids",
        ),
    ]
    fields: Annotated[Fields | None, Field(title="Fields")] = None
    providers: Annotated[Providers | None, Field(title="Providers")] = None
    webhook_url: Annotated[
        WebhookUrl | None,
        Field(
            description="Receives `enrichment.completed`, signed with the secret in the 202.",
            title="Webhook Url",
        ),
    ] = None


class BatchProgressItem(ApiModel):
    contact_id: Annotated[str, Field(title="Contact Id")]
    credits_charged: Annotated[
        Decimal,
        Field(description="Credits, exact to 1/10,000.", title="Credits Charged"),
    ]
    status: Annotated[
        Literal["pending", "revealed", "already_revealed", "not_found", "suppressed", "insufficient_credits", "do_not_call"],
        Field(title="Status"),
    ]


class BatchRevealAccepted(ApiModel):
    """
    The answer with `webhook_url` (202): follow progress at `status_url`.
    """

    batch_id: Annotated[str, Field(examples=["brv_3kTz9aQ1xYb2LmN0"], title="Batch Id")]
    status: Annotated[Literal["processing"], Field(title="Status")]
    status_url: Annotated[str, Field(title="Status Url")]
    total: Annotated[int, Field(title="Total")]
    webhook_secret: Annotated[
        str,
        Field(
            description="`whsec_…`: verifies this batch's deliveries (Standard Webhooks); shown once.",
            title="Webhook Secret",
        ),
    ]


class BatchRevealProgress(ApiModel):
    batch_id: Annotated[str, Field(title="Batch Id")]
    completed: Annotated[int, Field(title="Completed")]
    completed_at: Annotated[AwareDatetime | None, Field(title="Completed At")]
    counts: Annotated[dict[str, int], Field(title="Counts")]
    created_at: Annotated[AwareDatetime, Field(title="Created At")]
    credits_charged: Annotated[
        Decimal,
        Field(description="Credits, exact to 1/10,000.", title="Credits Charged"),
    ]
    results: Annotated[list[BatchProgressItem], Field(title="Results")]
    status: Annotated[Literal["processing", "completed"], Field(title="Status")]
    total: Annotated[int, Field(title="Total")]
    webhook_url: Annotated[str | None, Field(title="Webhook Url")]


ContactId = TypeAliasType("ContactId", Annotated[str, Field(max_length=40)])


WebhookUrl1 = TypeAliasType(
    "WebhookUrl1",
    Annotated[
        str,
        Field(
            description="When given: a 202 at once, each result POSTed here as it completes (`contact.revealed`), then `batch_reveal.completed`. https, public address.",
            max_length=2048,
            title="Webhook Url",
        ),
    ],
)


class BatchRevealRequest(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    contact_ids: Annotated[
        list[ContactId],
        Field(
            description="1–100 ids (`ct_…`); duplicates are collapsed.",
            max_length=100,
            min_length=1,
            title="Contact Ids",
        ),
    ]
    exclude_dnc: Annotated[
        bool | None,
        Field(
            description="Leave out, uncharged, contacts whose phone may not be called for marketing: listed on the national Do-Not-Call registry, on a person's own do-not-call request, or not checked against registry data at most 31 days old (see `phone_dnc`). Their status is `do_not_call`. Contacts without a phone are kept.",
            title="Exclude Dnc",
        ),
    ] = False
    webhook_url: Annotated[
        WebhookUrl1 | None,
        Field(
            description="When given: a 202 at once, each result POSTed here as it completes (`contact.revealed`), then `batch_reveal.completed`. https, public address.",
            title="Webhook Url",
        ),
    ] = None


class BounceRate(ApiModel):
    bounced: Annotated[int, Field(title="Bounced")]
    emails: Annotated[int, Field(description="Contacts with an email.", title="Emails")]
    rate: Annotated[
        Decimal,
        Field(
            description="bounced / emails, 0–1 (0 when there are no emails).",
            title="Rate",
        ),
    ]


class Company(ApiModel):
    """
    A preview of the business (a reveal shows the rest).
    """

    business_name: Annotated[str, Field(title="Business Name")]
    city: Annotated[str, Field(title="City")]
    contact_id: Annotated[str, Field(title="Contact Id")]
    domain: Annotated[str | None, Field(title="Domain")]
    industry: Annotated[str, Field(title="Industry")]
    state: Annotated[str, Field(title="State")]


class CompanyActivity(ApiModel):
    business_name: Annotated[str, Field(title="Business Name")]
    city: Annotated[str, Field(title="City")]
    contact_id: Annotated[str, Field(title="Contact Id")]
    domain: Annotated[str | None, Field(title="Domain")]
    first_seen: Annotated[AwareDatetime, Field(title="First Seen")]
    industry: Annotated[str, Field(title="Industry")]
    last_seen: Annotated[AwareDatetime, Field(title="Last Seen")]
    pages: Annotated[int, Field(description="Distinct URLs viewed.", title="Pages")]
    state: Annotated[str, Field(title="State")]
    visits: Annotated[int, Field(title="Visits")]


class CompanyList(ApiModel):
    companies: Annotated[list[CompanyActivity], Field(title="Companies")]


class ContactPreview(ApiModel):
    business_name: Annotated[str, Field(title="Business Name")]
    city: Annotated[str, Field(title="City")]
    email_deliverable: Annotated[
        bool,
        Field(
            description="Whether mail to that address can be expected to arrive: its domain has a mail exchanger and no sequence saw the address bounce for good. False without an email or while it is not checked yet.",
            title="Email Deliverable",
        ),
    ]
    has_address: Annotated[
        bool,
        Field(
            description="Whether a reveal includes a street address (city and state are shown here).",
            title="Has Address",
        ),
    ]
    has_email: Annotated[
        bool,
        Field(
            description="Whether a reveal includes an email address.", title="Has Email"
        ),
    ]
    has_phone: Annotated[
        bool,
        Field(
            description="Whether a reveal includes a phone number.", title="Has Phone"
        ),
    ]
    has_website: Annotated[
        bool,
        Field(description="Whether a reveal includes a website.", title="Has Website"),
    ]
    id: Annotated[
        str,
        Field(
            description="Contact identifier, `ct_<id>`.",
            examples=["ct_1042"],
            title="Id",
        ),
    ]
    industry: Annotated[
        str, Field(description="One of the 46 verticals.", title="Industry")
    ]
    preview: Annotated[Literal[True], Field(title="Preview")] = True
    reveal_cost: Annotated[
        Decimal,
        Field(
            description="Credits a reveal of this contact costs now: its intent tier's price for a contact with a phone, an email, a website and a street address, that price's share for each of them it has otherwise.",
            title="Reveal Cost",
        ),
    ]
    state: Annotated[
        str, Field(description="Two-letter USPS state code.", title="State")
    ]


class ContactReportView(ApiModel):
    """
    A report as its author sees it.
    """

    contact_id: Annotated[str, Field(examples=["ct_1042"], title="Contact Id")]
    created_at: Annotated[AwareDatetime, Field(title="Created At")]
    credits_refunded: Annotated[
        Decimal,
        Field(
            description="What this field's refund gave back for your reveal (0 until the report is confirmed), to the credits it was paid with: free credits stay free credits. The same amount is a `refund` entry of your ledger whose reference is the contact.",
            title="Credits Refunded",
        ),
    ]
    field: Annotated[
        Literal["phone", "email", "website", "address"], Field(title="Field")
    ]
    id: Annotated[str, Field(examples=["rpt_17"], title="Id")]
    note: Annotated[str | None, Field(title="Note")]
    problem: Annotated[
        Literal["wrong", "disconnected", "closed_business"], Field(title="Problem")
    ]
    refund_withheld: Annotated[
        Decimal,
        Field(
            description="The part of the field's share not given back (see `refund_withheld_reason`); 0 otherwise.",
            title="Refund Withheld",
        ),
    ]
    refund_withheld_reason: Annotated[
        Literal["monthly_limit", "free_credits_expired"] | None,
        Field(
            description="`monthly_limit`: your automatic refunds this month reached the service's limit; `free_credits_expired`: the reveal was paid with free credits of a month that has ended, and free credits expire with their month.",
            title="Refund Withheld Reason",
        ),
    ]
    resolved_at: Annotated[AwareDatetime | None, Field(title="Resolved At")]
    status: Annotated[
        Literal["open", "confirmed", "dismissed"],
        Field(
            description="open (waiting for the operator, or for the value to be found bad another way: the same report from another paying account unrelated to yours, or a corroborated bounce), confirmed (the field was found bad; you were refunded) or dismissed (the operator found the field right).",
            title="Status",
        ),
    ]


class Contact(ApiModel):
    business_name: Annotated[
        str | None, Field(pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$")
    ] = None
    city: Annotated[
        str | None, Field(pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$")
    ] = None
    email: Annotated[
        str | None, Field(pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$")
    ] = None
    industry: Annotated[
        str | None, Field(pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$")
    ] = None
    phone: Annotated[
        str | None,
        Field(
            examples=["+13035550100"],
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
        ),
    ] = None
    postal_code: Annotated[
        str | None, Field(pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$")
    ] = None
    specialty: Annotated[
        str | None, Field(pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$")
    ] = None
    state: Annotated[
        str | None, Field(pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$")
    ] = None
    street: Annotated[
        str | None, Field(pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$")
    ] = None
    website: Annotated[
        str | None, Field(pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$")
    ] = None


class ContributeRequest(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    contacts: Annotated[
        list[Contact],
        Field(
            description="1–1,000 contributed contacts: `business_name`, `phone` (with a leading `+`), `city`, `state`, `industry`; optional `email`, `website`, `street`, `postal_code`, `specialty`. Each row is validated on its own: a bad row is `rejected` with field errors, the others go on.",
            max_length=1000,
            min_length=1,
            title="Contacts",
        ),
    ]


class Contribution(ApiModel):
    business_name: Annotated[str, Field(title="Business Name")]
    city: Annotated[str, Field(title="City")]
    contact_id: Annotated[str, Field(title="Contact Id")]
    contributed_at: Annotated[AwareDatetime, Field(title="Contributed At")]
    earned: Annotated[
        Decimal, Field(description="Credits, exact to 1/10,000.", title="Earned")
    ]
    industry: Annotated[str, Field(title="Industry")]
    paid_reveals: Annotated[
        int,
        Field(
            description="Reveals by other accounts that paid a share.",
            title="Paid Reveals",
        ),
    ]
    phone: Annotated[str | None, Field(title="Phone")]
    state: Annotated[str, Field(title="State")]
    status: Annotated[
        str,
        Field(
            description="active, or deactivated (no longer searchable).", title="Status"
        ),
    ]


class ContributionPage(ApiModel):
    contributions: Annotated[list[Contribution], Field(title="Contributions")]
    limit: Annotated[int, Field(title="Limit")]
    next_cursor: Annotated[str | None, Field(title="Next Cursor")]


class DayBounceRate(ApiModel):
    bounced: Annotated[int, Field(title="Bounced")]
    emails: Annotated[int, Field(description="Contacts with an email.", title="Emails")]
    imported_on: Annotated[
        date,
        Field(
            description="The UTC day the records entered the catalogue.",
            title="Imported On",
        ),
    ]
    rate: Annotated[
        Decimal,
        Field(
            description="bounced / emails, 0–1 (0 when there are no emails).",
            title="Rate",
        ),
    ]


class DecisionMakerSource(ApiModel):
    record_id: Annotated[
        str,
        Field(
            description="The registry's own identifier (NPI, licence number).",
            examples=["1497758544"],
            title="Record Id",
        ),
    ]
    registry: Annotated[str, Field(examples=["nppes"], title="Registry")]


class DecisionMakerView(ApiModel):
    id: Annotated[str, Field(examples=["dm_17"], title="Id")]
    name: Annotated[str, Field(title="Name")]
    phone: Annotated[
        str | None,
        Field(
            description="E.164; only for an account that revealed the contact, else null (see phone_available).",
            title="Phone",
        ),
    ]
    phone_available: Annotated[
        bool,
        Field(
            description="The registry gives this person a phone; revealing the contact shows it.",
            title="Phone Available",
        ),
    ]
    role: Annotated[
        str,
        Field(
            description="authorized_official (NPPES), owner or partner (a licence's named personnel), officer, qualifier.",
            title="Role",
        ),
    ]
    source: DecisionMakerSource
    title: Annotated[str | None, Field(title="Title")]


class DeliveryView(ApiModel):
    attempt_count: Annotated[int, Field(title="Attempt Count")]
    attempts: Annotated[list[AttemptView], Field(title="Attempts")]
    created_at: Annotated[AwareDatetime, Field(title="Created At")]
    event_id: Annotated[
        str,
        Field(
            description="The `webhook-id` header; the same on every attempt and redelivery.",
            title="Event Id",
        ),
    ]
    event_type: Annotated[str, Field(title="Event Type")]
    finished_at: Annotated[AwareDatetime | None, Field(title="Finished At")]
    id: Annotated[str, Field(examples=["dlv_42"], title="Id")]
    next_attempt_at: Annotated[AwareDatetime | None, Field(title="Next Attempt At")]
    redelivery_of: Annotated[str | None, Field(title="Redelivery Of")]
    status: Annotated[
        Literal["pending", "succeeded", "failed", "cancelled"], Field(title="Status")
    ]
    webhook_id: Annotated[str | None, Field(title="Webhook Id")]


Note = TypeAliasType(
    "Note",
    Annotated[
        str,
        Field(
            max_length=1000,
            pattern="^[^\\u0000-\\u0008\\u000B-\\u001F\\u007F]*$",
            title="Note",
        ),
    ],
)


class DenyRequest(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    note: Annotated[Note | None, Field(title="Note")] = None
    reason: Annotated[
        Literal["no_match", "insuf_verification", "exempt", "not_a_consumer", "other"],
        Field(
            description="`no_match` (no record of the person), `insuf_verification` (could not be verified), `exempt` (the information is exempt), `not_a_consumer`, `other`.",
            title="Reason",
        ),
    ]


Fields1 = TypeAliasType(
    "Fields1",
    Annotated[
        list[Literal["email", "phone", "website", "linkedin_url", "employee_count", "decision_maker.email", "decision_maker.phone", "decision_maker.title", "decision_maker.linkedin_url"]],
        Field(
            description="Fields to fill. Default: every supported field.",
            min_length=1,
            title="Fields",
        ),
    ],
)


Providers2 = TypeAliasType(
    "Providers2",
    Annotated[
        list[Literal["apollo", "hunter", "pdl"]],
        Field(
            description="The waterfall, in order. Default: every provider the account has a key for, in the order the keys were first stored.",
            max_length=20,
            min_length=1,
            title="Providers",
        ),
    ],
)


class EnrichRequest(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    dry_run: Annotated[
        bool | None,
        Field(
            description="Say which providers would be asked for which fields; call none.",
            title="Dry Run",
        ),
    ] = False
    fields: Annotated[
        Fields1 | None,
        Field(
            description="Fields to fill. Default: every supported field.",
            title="Fields",
        ),
    ] = None
    providers: Annotated[
        Providers2 | None,
        Field(
            description="The waterfall, in order. Default: every provider the account has a key for, in the order the keys were first stored.",
            title="Providers",
        ),
    ] = None
    refresh: Annotated[
        bool | None,
        Field(
            description="Ask the providers again for the fields, even those the account already holds a value for, without the cached answers. A value found replaces the one held (kept as `previous`); a provider that finds nothing replaces nothing.",
            title="Refresh",
        ),
    ] = False


class EnrollRequest(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    contact_ids: Annotated[
        list[ContactId], Field(max_length=100, min_length=1, title="Contact Ids")
    ]
    decision_maker: Annotated[
        bool | None,
        Field(
            description="Write to each contact's first decision-maker with an email, not the business.",
            title="Decision Maker",
        ),
    ] = False


class EnrollResult(ApiModel):
    contact_id: Annotated[str, Field(title="Contact Id")]
    email_status: Annotated[
        Literal["unknown", "valid_syntax", "invalid_syntax", "no_mx", "mx_found", "bounced"] | None,
        Field(
            description="The deliverability of the address written to, once one is chosen: `undeliverable` when it is `no_mx`, `invalid_syntax` or `bounced`; null when nothing is known of it yet or no address was chosen.",
            title="Email Status",
        ),
    ] = None
    enrollment_id: Annotated[str | None, Field(title="Enrollment Id")] = None
    status: Annotated[
        Literal["enrolled", "not_revealed", "suppressed", "no_email", "undeliverable", "already_enrolled", "not_found"],
        Field(title="Status"),
    ]


class FieldError(ApiModel):
    field: Annotated[
        str,
        Field(
            description="The offending input, e.g. `limit` or `contacts[3].phone`.",
            title="Field",
        ),
    ]
    message: Annotated[str, Field(title="Message")]


Note1 = TypeAliasType(
    "Note1",
    Annotated[
        str,
        Field(
            description="Kept with the request.",
            max_length=1000,
            pattern="^[^\\u0000-\\u0008\\u000B-\\u001F\\u007F]*$",
            title="Note",
        ),
    ],
)


class FulfilRequest(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    note: Annotated[
        Note1 | None, Field(description="Kept with the request.", title="Note")
    ] = None


class GrantRequest(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    amount: Annotated[
        Decimal, Field(description="Credits.", ge=0.0001, le=1000000000, title="Amount")
    ]
    note: Annotated[
        str | None,
        Field(
            description="Shown in the ledger.",
            max_length=200,
            min_length=1,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Note",
        ),
    ] = "Granted by operator"


class GrantResult(ApiModel):
    account_id: Annotated[str, Field(title="Account Id")]
    balance: Annotated[
        Decimal, Field(description="Credits, exact to 1/10,000.", title="Balance")
    ]
    granted: Annotated[
        Decimal, Field(description="Credits, exact to 1/10,000.", title="Granted")
    ]


class Identification(ApiModel):
    company: Company | None = None
    confidence: Annotated[Decimal | None, Field(title="Confidence")] = None
    identified: Annotated[bool, Field(title="Identified")]
    method: Annotated[
        Literal["ip_range", "reverse_dns"] | None, Field(title="Method")
    ] = None
    reason: Annotated[
        Literal["unknown", "isp", "hosting", "bot", "private_address", "opted_out"] | None,
        Field(title="Reason"),
    ] = None
    visit_id: Annotated[str, Field(title="Visit Id")]


Referrer = TypeAliasType(
    "Referrer",
    Annotated[
        str,
        Field(
            max_length=2048,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Referrer",
        ),
    ],
)


UserAgent = TypeAliasType(
    "UserAgent",
    Annotated[
        str,
        Field(
            max_length=1000,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="User Agent",
        ),
    ],
)


class IdentifyRequest(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    ip: Annotated[
        str,
        Field(
            description="The visitor's IPv4 or IPv6 address.",
            max_length=64,
            min_length=2,
            title="Ip",
        ),
    ]
    occurred_at: Annotated[
        AwareDatetime | None,
        Field(
            description="When the view happened (default: now).", title="Occurred At"
        ),
    ] = None
    referrer: Annotated[Referrer | None, Field(title="Referrer")] = None
    site_id: Annotated[
        str,
        Field(max_length=40, min_length=1, pattern="^[A-Za-z0-9_]+$", title="Site Id"),
    ]
    url: Annotated[
        str,
        Field(
            max_length=2048,
            min_length=1,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Url",
        ),
    ]
    user_agent: Annotated[UserAgent | None, Field(title="User Agent")] = None


class InboundAccepted(ApiModel):
    enrollment_id: Annotated[
        str | None,
        Field(description="The enrollment it stopped, if any.", title="Enrollment Id"),
    ] = None
    kind: Annotated[
        Literal["reply", "auto_reply", "bounce", "delayed", "other", "duplicate"],
        Field(title="Kind"),
    ]


class Interpretation(ApiModel):
    """
    How the search read its question.
    """

    city: Annotated[
        str | None,
        Field(
            description="The city searched: the `city` filter, else a place in the words (every city of that name when no state is given and the catalogue holds it in several states).",
            title="City",
        ),
    ]
    dropped: Annotated[
        list[str] | None,
        Field(
            description="Words of `q` the answer does not require: filler such as `near me` or `best`, and words left out because no business matches them together with the rest (`total` counts the businesses that match every other word); empty when every word matched.",
            title="Dropped",
        ),
    ] = None
    postal_code: Annotated[
        str | None,
        Field(
            description="The ZIP code the place was read from (`dentist 78701`: the ZIP code's city and state are searched), else null.",
            title="Postal Code",
        ),
    ] = None
    q: Annotated[
        str,
        Field(
            description="The words searched for, without a place read from them.",
            title="Q",
        ),
    ]
    state: Annotated[
        str | None,
        Field(
            description="The state searched: the `state` filter, else a place in the words.",
            title="State",
        ),
    ]


IpAllowlistItem = TypeAliasType(
    "IpAllowlistItem",
    Annotated[
        str,
        Field(
            description="An IPv4 or IPv6 address, or a CIDR range such as `198.51.100.0/24` or `2001:db8::/48`.",
            max_length=64,
            pattern="^((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}(/(3[0-2]|[12]?[0-9]))?|(([0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}|([0-9a-fA-F]{1,4}:){1,7}:|([0-9a-fA-F]{1,4}:){1,6}:[0-9a-fA-F]{1,4}|([0-9a-fA-F]{1,4}:){1,5}(:[0-9a-fA-F]{1,4}){1,2}|([0-9a-fA-F]{1,4}:){1,4}(:[0-9a-fA-F]{1,4}){1,3}|([0-9a-fA-F]{1,4}:){1,3}(:[0-9a-fA-F]{1,4}){1,4}|([0-9a-fA-F]{1,4}:){1,2}(:[0-9a-fA-F]{1,4}){1,5}|[0-9a-fA-F]{1,4}:(:[0-9a-fA-F]{1,4}){1,6}|:((:[0-9a-fA-F]{1,4}){1,7}|:)|::(ffff(:0{1,4})?:)?(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}|([0-9a-fA-F]{1,4}:){1,4}:(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3})(/(12[0-8]|1[01][0-9]|[1-9]?[0-9]))?)$",
        ),
    ],
)


IpAllowlist = TypeAliasType(
    "IpAllowlist",
    Annotated[
        list[IpAllowlistItem],
        Field(
            description="IPv4/IPv6 addresses and CIDR ranges allowed to use the key; empty = no restriction.",
            max_length=100,
            title="Ip Allowlist",
        ),
    ],
)


Name = TypeAliasType(
    "Name",
    Annotated[
        str,
        Field(
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Name",
        ),
    ],
)


class KeyUpdate(ApiModel):
    """
    Fields left out stay as they are; `ip_allowlist: []` lifts the restriction.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    ip_allowlist: Annotated[
        IpAllowlist | None,
        Field(
            description="IPv4/IPv6 addresses and CIDR ranges allowed to use the key; empty = no restriction.",
            title="Ip Allowlist",
        ),
    ] = None
    name: Annotated[Name | None, Field(title="Name")] = None


class KeyView(ApiModel):
    created_at: Annotated[AwareDatetime, Field(title="Created At")]
    id: Annotated[str, Field(examples=["key_3kTz9QmWb1xYpL0a"], title="Id")]
    ip_allowlist: Annotated[list[str], Field(title="Ip Allowlist")]
    last_used_at: Annotated[
        AwareDatetime | None,
        Field(
            description="Last authenticated request, to the minute.",
            title="Last Used At",
        ),
    ]
    mode: Annotated[
        Literal["live", "test"],
        Field(
            description="`live`, or `test` for a test key (`vpx_test_…`): it sees the sandbox catalogue and spends a test balance, never real contacts or credits.",
            title="Mode",
        ),
    ]
    name: Annotated[str, Field(title="Name")]
    prefix: Annotated[
        str,
        Field(
            description="The first characters of the secret, to recognise it (`vpx_live_3kTz`).",
            title="Prefix",
        ),
    ]
    revoked_at: Annotated[AwareDatetime | None, Field(title="Revoked At")]
    rotate_by: Annotated[
        AwareDatetime,
        Field(
            description="90 days after creation; rotation is recommended by then.",
            title="Rotate By",
        ),
    ]
    rotation_due: Annotated[
        bool,
        Field(
            description="True once `rotate_by` has passed (and the key is active).",
            title="Rotation Due",
        ),
    ]
    status: Annotated[Literal["active", "revoked"], Field(title="Status")]
    type: Annotated[
        Literal["ro", "live", "full"],
        Field(
            description="`ro` (Read Only), `live` (Standard) or `full` (Full Access).",
            title="KeyType",
        ),
    ]
    type_label: Annotated[str, Field(examples=["Full Access"], title="Type Label")]


class LedgerEntryView(ApiModel):
    amount: Annotated[
        Decimal, Field(description="Signed: negative for spending.", title="Amount")
    ]
    balance_after: Annotated[
        Decimal, Field(description="Credits, exact to 1/10,000.", title="Balance After")
    ]
    created_at: Annotated[AwareDatetime, Field(title="Created At")]
    description: Annotated[str, Field(title="Description")]
    id: Annotated[str, Field(title="Id")]
    kind: Annotated[
        str,
        Field(
            description="grant, free_monthly, reveal, revenue_share, refund, auto_buy; in test mode also test_reset",
            title="Kind",
        ),
    ]
    reference: Annotated[str | None, Field(title="Reference")]


class LedgerPage(ApiModel):
    entries: Annotated[list[LedgerEntryView], Field(title="Entries")]
    limit: Annotated[int, Field(title="Limit")]
    next_cursor: Annotated[
        str | None,
        Field(
            description="Pass as `cursor` for the next (older) page; null at the end.",
            title="Next Cursor",
        ),
    ]


class License(ApiModel):
    number: Annotated[str | None, Field(title="Number")]
    state: Annotated[str | None, Field(title="State")]
    type: Annotated[str | None, Field(title="Type")]


FromName = TypeAliasType(
    "FromName",
    Annotated[
        str,
        Field(
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="From Name",
        ),
    ],
)


ImapHost = TypeAliasType(
    "ImapHost",
    Annotated[
        str,
        Field(
            max_length=255,
            min_length=1,
            pattern="^[A-Za-z0-9.\\-:\\[\\]]+$",
            title="Imap Host",
        ),
    ],
)


ImapPassword = TypeAliasType(
    "ImapPassword",
    Annotated[
        str,
        Field(
            description="Sealed at rest; never returned.",
            max_length=500,
            min_length=1,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Imap Password",
        ),
    ],
)


ImapPort = TypeAliasType(
    "ImapPort", Annotated[int, Field(ge=1, le=65535, title="Imap Port")]
)


ImapUsername = TypeAliasType(
    "ImapUsername",
    Annotated[
        str,
        Field(
            max_length=320,
            min_length=1,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Imap Username",
        ),
    ],
)


SmtpPassword = TypeAliasType(
    "SmtpPassword",
    Annotated[
        str,
        Field(
            description="Sealed at rest; never returned.",
            max_length=500,
            min_length=1,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Smtp Password",
        ),
    ],
)


SmtpUsername = TypeAliasType(
    "SmtpUsername",
    Annotated[
        str,
        Field(
            max_length=320,
            min_length=1,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Smtp Username",
        ),
    ],
)


class MailboxCreate(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    daily_limit: Annotated[
        int | None,
        Field(
            description="Emails at most in any 24 hours, across all the mailbox's sequences.",
            ge=1,
            le=10000,
            title="Daily Limit",
        ),
    ] = 30
    email: Annotated[
        str,
        Field(
            max_length=320,
            min_length=3,
            pattern="^[^\\s@<>\\x00-\\x1f\\x7f]+@[^\\s@<>\\x00-\\x1f\\x7f]+$",
            title="Email",
        ),
    ]
    from_name: Annotated[FromName | None, Field(title="From Name")] = None
    imap_host: Annotated[ImapHost | None, Field(title="Imap Host")] = None
    imap_password: Annotated[
        ImapPassword | None,
        Field(description="Sealed at rest; never returned.", title="Imap Password"),
    ] = None
    imap_port: Annotated[ImapPort | None, Field(title="Imap Port")] = None
    imap_security: Annotated[
        Literal["starttls", "tls", "none"] | None, Field(title="Imap Security")
    ] = None
    imap_username: Annotated[ImapUsername | None, Field(title="Imap Username")] = None
    postal_address: Annotated[
        str,
        Field(
            description="Ends the body of every email (CAN-SPAM).",
            max_length=500,
            min_length=5,
            pattern="^[^\\u0000-\\u0008\\u000B-\\u001F\\u007F]*$",
            title="Postal Address",
        ),
    ]
    send_interval_seconds: Annotated[
        int | None,
        Field(
            description="Seconds at least between two emails (plus up to 20 % at random).",
            ge=0,
            le=86400,
            title="Send Interval Seconds",
        ),
    ] = 60
    smtp_host: Annotated[
        str,
        Field(
            max_length=255,
            min_length=1,
            pattern="^[A-Za-z0-9.\\-:\\[\\]]+$",
            title="Smtp Host",
        ),
    ]
    smtp_password: Annotated[
        SmtpPassword | None,
        Field(description="Sealed at rest; never returned.", title="Smtp Password"),
    ] = None
    smtp_port: Annotated[int, Field(ge=1, le=65535, title="Smtp Port")]
    smtp_security: Annotated[
        Literal["starttls", "tls", "none"], Field(title="Smtp Security")
    ]
    smtp_username: Annotated[SmtpUsername | None, Field(title="Smtp Username")] = None


DailyLimit = TypeAliasType(
    "DailyLimit", Annotated[int, Field(ge=1, le=10000, title="Daily Limit")]
)


ImapPassword1 = TypeAliasType(
    "ImapPassword1",
    Annotated[
        str,
        Field(
            max_length=500,
            min_length=1,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Imap Password",
        ),
    ],
)


PostalAddress = TypeAliasType(
    "PostalAddress",
    Annotated[
        str,
        Field(
            max_length=500,
            min_length=5,
            pattern="^[^\\u0000-\\u0008\\u000B-\\u001F\\u007F]*$",
            title="Postal Address",
        ),
    ],
)


SendIntervalSeconds = TypeAliasType(
    "SendIntervalSeconds",
    Annotated[int, Field(ge=0, le=86400, title="Send Interval Seconds")],
)


SmtpHost = TypeAliasType(
    "SmtpHost",
    Annotated[
        str,
        Field(
            max_length=255,
            min_length=1,
            pattern="^[A-Za-z0-9.\\-:\\[\\]]+$",
            title="Smtp Host",
        ),
    ],
)


SmtpPassword1 = TypeAliasType(
    "SmtpPassword1",
    Annotated[
        str,
        Field(
            max_length=500,
            min_length=1,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Smtp Password",
        ),
    ],
)


SmtpPort = TypeAliasType(
    "SmtpPort", Annotated[int, Field(ge=1, le=65535, title="Smtp Port")]
)


class MailboxUpdate(ApiModel):
    """
    Fields given replace the mailbox's; a password field given as null removes it.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    daily_limit: Annotated[DailyLimit | None, Field(title="Daily Limit")] = None
    from_name: Annotated[FromName | None, Field(title="From Name")] = None
    imap_host: Annotated[ImapHost | None, Field(title="Imap Host")] = None
    imap_password: Annotated[ImapPassword1 | None, Field(title="Imap Password")] = None
    imap_port: Annotated[ImapPort | None, Field(title="Imap Port")] = None
    imap_security: Annotated[
        Literal["starttls", "tls", "none"] | None, Field(title="Imap Security")
    ] = None
    imap_username: Annotated[ImapUsername | None, Field(title="Imap Username")] = None
    postal_address: Annotated[PostalAddress | None, Field(title="Postal Address")] = (
        None
    )
    send_interval_seconds: Annotated[
        SendIntervalSeconds | None, Field(title="Send Interval Seconds")
    ] = None
    smtp_host: Annotated[SmtpHost | None, Field(title="Smtp Host")] = None
    smtp_password: Annotated[SmtpPassword1 | None, Field(title="Smtp Password")] = None
    smtp_port: Annotated[SmtpPort | None, Field(title="Smtp Port")] = None
    smtp_security: Annotated[
        Literal["starttls", "tls", "none"] | None, Field(title="Smtp Security")
    ] = None
    smtp_username: Annotated[SmtpUsername | None, Field(title="Smtp Username")] = None
    status: Annotated[
        Literal["active", "paused"] | None,
        Field(description="Pause or resume the mailbox.", title="Status"),
    ] = None


class MailboxView(ApiModel):
    created_at: Annotated[AwareDatetime, Field(title="Created At")]
    daily_limit: Annotated[int, Field(title="Daily Limit")]
    email: Annotated[str, Field(title="Email")]
    from_name: Annotated[str | None, Field(title="From Name")]
    id: Annotated[str, Field(examples=["mbx_3kTz9aQ1xYb2LmN0"], title="Id")]
    imap_host: Annotated[str | None, Field(title="Imap Host")]
    imap_password_set: Annotated[bool, Field(title="Imap Password Set")]
    imap_port: Annotated[int | None, Field(title="Imap Port")]
    imap_security: Annotated[str | None, Field(title="Imap Security")]
    imap_username: Annotated[str | None, Field(title="Imap Username")]
    pause_reason: Annotated[
        str | None,
        Field(
            description="Why the mailbox paused itself (bounce_rate, smtp_auth_failed…).",
            title="Pause Reason",
        ),
    ]
    postal_address: Annotated[str, Field(title="Postal Address")]
    send_interval_seconds: Annotated[int, Field(title="Send Interval Seconds")]
    sent_last_24h: Annotated[int, Field(title="Sent Last 24H")]
    smtp_host: Annotated[str, Field(title="Smtp Host")]
    smtp_password_set: Annotated[bool, Field(title="Smtp Password Set")]
    smtp_port: Annotated[int, Field(title="Smtp Port")]
    smtp_security: Annotated[str, Field(title="Smtp Security")]
    smtp_username: Annotated[str | None, Field(title="Smtp Username")]
    status: Annotated[Literal["active", "paused"], Field(title="Status")]
    updated_at: Annotated[AwareDatetime, Field(title="Updated At")]


class MonthEarnings(ApiModel):
    earned: Annotated[
        Decimal, Field(description="Credits, exact to 1/10,000.", title="Earned")
    ]
    month: Annotated[str, Field(examples=["2026-11"], title="Month")]
    paid_reveals: Annotated[int, Field(title="Paid Reveals")]


class MonthRefunds(ApiModel):
    count: Annotated[int, Field(title="Count")]
    credits: Annotated[
        Decimal, Field(description="Credits, exact to 1/10,000.", title="Credits")
    ]
    month: Annotated[str, Field(examples=["2026-11"], title="Month")]


class PhoneDnc(ApiModel):
    """
    What the Do-Not-Call data says of the phone shown: check it before calling for marketing.
    """

    listed: Annotated[
        bool | None,
        Field(
            description="Whether the national Do-Not-Call registry lists the number; null when its area code's registry data is not held or is older than 31 days (a call may only be screened against a version at most 31 days old).",
            title="Listed",
        ),
    ]
    registry_date: Annotated[
        date | None,
        Field(
            description="The registry version `listed` comes from (when its data was obtained); null with `listed`.",
            title="Registry Date",
        ),
    ]
    requested: Annotated[
        bool | None,
        Field(
            description="The person asked not to be called on this number, whatever the registry says.",
            title="Requested",
        ),
    ] = False


class PreviousValue(ApiModel):
    """
    A value a refresh replaced, with where it came from.
    """

    confidence: Annotated[
        Decimal | None,
        Field(
            description="0-1, when the provider says how sure it is.",
            title="Confidence",
        ),
    ] = None
    fetched_at: Annotated[
        AwareDatetime,
        Field(description="When the provider answered.", title="Fetched At"),
    ]
    provider: Annotated[
        str, Field(description="The provider that found it.", title="Provider")
    ]
    provider_record_id: Annotated[
        str | None,
        Field(
            description="The provider's own id of the record.",
            title="Provider Record Id",
        ),
    ] = None
    value: Annotated[str, Field(title="Value")]


Details = TypeAliasType(
    "Details",
    Annotated[
        str,
        Field(
            description="What to correct, or anything else the operator should know.",
            max_length=2000,
            pattern="^[^\\u0000-\\u0008\\u000B-\\u001F\\u007F]*$",
            title="Details",
        ),
    ],
)


Email = TypeAliasType(
    "Email",
    Annotated[
        str,
        Field(
            examples=["pat.doe@example.com"],
            max_length=320,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Email",
        ),
    ],
)


Name1 = TypeAliasType(
    "Name1",
    Annotated[
        str,
        Field(
            description="Your name as a registry lists it.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Name",
        ),
    ],
)


Npi = TypeAliasType(
    "Npi",
    Annotated[
        str,
        Field(
            description="Your National Provider Identifier.",
            max_length=10,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Npi",
        ),
    ],
)


Phone = TypeAliasType(
    "Phone",
    Annotated[
        str,
        Field(
            examples=["+1 202 555 0143"],
            max_length=40,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Phone",
        ),
    ],
)


PostalCode = TypeAliasType(
    "PostalCode",
    Annotated[
        str,
        Field(
            description="Your practice's ZIP code.",
            max_length=10,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Postal Code",
        ),
    ],
)


class PrivacyRequestCreate(ApiModel):
    """
    A person's request. Give what identifies you in the catalogue: an email or phone (or an NPI)
    finds the record; each further detail that matches it verifies the request.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    details: Annotated[
        Details | None,
        Field(
            description="What to correct, or anything else the operator should know.",
            title="Details",
        ),
    ] = None
    email: Annotated[
        Email | None, Field(examples=["pat.doe@example.com"], title="Email")
    ] = None
    name: Annotated[
        Name1 | None,
        Field(description="Your name as a registry lists it.", title="Name"),
    ] = None
    npi: Annotated[
        Npi | None, Field(description="Your National Provider Identifier.", title="Npi")
    ] = None
    phone: Annotated[
        Phone | None, Field(examples=["+1 202 555 0143"], title="Phone")
    ] = None
    postal_code: Annotated[
        PostalCode | None,
        Field(description="Your practice's ZIP code.", title="Postal Code"),
    ] = None
    type: Annotated[
        Literal["access", "deletion", "opt_out", "correction"],
        Field(
            description="`access` (what the catalogue holds on you and who bought it), `deletion`, `opt_out` (of sale: takes effect at once), `correction`.",
            title="Type",
        ),
    ]


class PrivacyRequestReceived(ApiModel):
    expected_by: Annotated[
        AwareDatetime,
        Field(
            description="The answer is due by then: 45 days after the request.",
            title="Expected By",
        ),
    ]
    id: Annotated[
        str,
        Field(
            description="Quote it when you write to the operator.",
            examples=["pr_3kTz9aQ1xYb2LmN0"],
            title="Id",
        ),
    ]
    received_at: Annotated[AwareDatetime, Field(title="Received At")]
    status: Annotated[
        Literal["open", "fulfilled", "denied"],
        Field(
            description="`open` until the operator answers it; an opt-out is `fulfilled` at once (it needs no check).",
            title="Status",
        ),
    ]
    type: Annotated[
        Literal["access", "deletion", "opt_out", "correction"], Field(title="Type")
    ]


class Problem(ApiModel):
    """
    RFC 9457 problem details, the body of every error response.
    """

    code: Annotated[
        str,
        Field(description="Stable, machine-readable snake_case code.", title="Code"),
    ]
    detail: Annotated[str, Field(title="Detail")]
    errors: Annotated[
        list[FieldError] | None,
        Field(description="Validation errors, field by field.", title="Errors"),
    ] = None
    request_id: Annotated[str, Field(title="Request Id")]
    status: Annotated[int, Field(title="Status")]
    title: Annotated[str, Field(title="Title")]
    type: Annotated[
        str,
        Field(
            description="A URI naming the kind of problem: `urn:vpx:problem:<code>`.",
            title="Type",
        ),
    ]


class ProviderError(ApiModel):
    code: Annotated[
        Literal["provider_auth_failed", "provider_quota_exhausted", "provider_timeout", "provider_unavailable", "provider_bad_response", "rate_limited"],
        Field(title="Code"),
    ]
    message: Annotated[str | None, Field(title="Message")] = None


MonthlyLimit = TypeAliasType(
    "MonthlyLimit",
    Annotated[
        int,
        Field(
            description="Requests vpx may send with this key each calendar month.",
            ge=1,
            le=1000000000,
            title="Monthly Limit",
        ),
    ],
)


class ProviderKeyBody(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    api_key: Annotated[
        str,
        Field(
            description="Your key at the provider.",
            max_length=500,
            min_length=4,
            pattern="^[^\\x00-\\x20\\x7f]+$",
            title="Api Key",
        ),
    ]
    monthly_limit: Annotated[
        MonthlyLimit | None,
        Field(
            description="Requests vpx may send with this key each calendar month.",
            title="Monthly Limit",
        ),
    ] = None


class ProviderKeyView(ApiModel):
    created_at: Annotated[AwareDatetime, Field(title="Created At")]
    last4: Annotated[
        str,
        Field(
            description="The key's last four characters; the key itself is never shown again.",
            title="Last4",
        ),
    ]
    monthly_limit: Annotated[int | None, Field(title="Monthly Limit")]
    provider: Annotated[str, Field(examples=["hunter"], title="Provider")]
    requests_this_month: Annotated[
        int,
        Field(
            description="Requests sent with this key this calendar month (UTC).",
            title="Requests This Month",
        ),
    ]
    updated_at: Annotated[AwareDatetime, Field(title="Updated At")]


class ReportActionView(ApiModel):
    action: Annotated[
        Literal["opened", "confirmed", "dismissed"], Field(title="Action")
    ]
    actor: Annotated[
        str,
        Field(
            description="`account:<id>` (the reporter), `rule:two_accounts`, `rule:bounce`, `rule:field_bad` (a rule decided), or the operator: `cli:<user>` or `admin:<token name>`.",
            title="Actor",
        ),
    ]
    at: Annotated[AwareDatetime, Field(title="At")]
    note: Annotated[str | None, Field(title="Note")]


class ReportCounts(ApiModel):
    confirmed: Annotated[int, Field(title="Confirmed")]
    dismissed: Annotated[int, Field(title="Dismissed")]
    open: Annotated[int, Field(title="Open")]
    opened: Annotated[
        int,
        Field(description="Every report made, whatever became of it.", title="Opened"),
    ]


Note2 = TypeAliasType(
    "Note2",
    Annotated[
        str,
        Field(
            description="Why, kept in the report's trail.",
            max_length=500,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Note",
        ),
    ],
)


class ReportDecision(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    note: Annotated[
        Note2 | None,
        Field(description="Why, kept in the report's trail.", title="Note"),
    ] = None


Note3 = TypeAliasType(
    "Note3",
    Annotated[
        str,
        Field(
            description="Optional details for the operator; kept with the report, never shown to other accounts.",
            max_length=500,
            pattern="^[^\\u0000-\\u0008\\u000B-\\u001F\\u007F]*$",
            title="Note",
        ),
    ],
)


class ReportRequest(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    field: Annotated[
        Literal["phone", "email", "website", "address"],
        Field(
            description="The field that is wrong: phone, email, website or address.",
            title="Field",
        ),
    ]
    note: Annotated[
        Note3 | None,
        Field(
            description="Optional details for the operator; kept with the report, never shown to other accounts.",
            title="Note",
        ),
    ] = None
    problem: Annotated[
        Literal["wrong", "disconnected", "closed_business"],
        Field(
            description="What is wrong with it: wrong (not this business's), disconnected (no longer in service), closed_business (the business has closed).",
            title="Problem",
        ),
    ]


class RevealRequest(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    contact_id: Annotated[
        str, Field(examples=["ct_1042"], max_length=40, title="Contact Id")
    ]


class RowResult(ApiModel):
    contact_id: Annotated[
        str | None,
        Field(
            description="The new contact (accepted); for a duplicate, the contact it repeats, given only when your account contributed or revealed that contact (or it is the contact an earlier row of this request became).",
            title="Contact Id",
        ),
    ] = None
    duplicate_of_index: Annotated[
        int | None,
        Field(
            description="An earlier row of this request it repeats.",
            title="Duplicate Of Index",
        ),
    ] = None
    errors: Annotated[list[FieldError] | None, Field(title="Errors")] = None
    index: Annotated[
        int,
        Field(description="Position of the row in `contacts`, from 0.", title="Index"),
    ]
    status: Annotated[
        Literal["accepted", "duplicate", "rejected"], Field(title="Status")
    ]


BudgetCredits = TypeAliasType(
    "BudgetCredits",
    Annotated[
        Decimal,
        Field(description="Credits.", ge=0.0001, le=1000000000, title="Budget Credits"),
    ],
)


Categories = TypeAliasType(
    "Categories",
    Annotated[
        list[Literal["switching_intent", "bant_qualified", "funding_ma", "topic_surge", "permit_filed", "tech_install"]],
        Field(
            description="Signal categories to buy on; absent: all.",
            min_length=1,
            title="Categories",
        ),
    ],
)


DailyCap = TypeAliasType(
    "DailyCap",
    Annotated[
        int,
        Field(
            description="Contacts bought per UTC day; absent: no cap.",
            ge=1,
            le=1000000,
            title="Daily Cap",
        ),
    ],
)


IntentLevels = TypeAliasType(
    "IntentLevels",
    Annotated[
        list[Literal["hot", "warm", "cold"]],
        Field(
            description="Intent levels to buy on; absent: all.",
            min_length=1,
            title="Intent Levels",
        ),
    ],
)


class RuleCreate(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    budget_credits: Annotated[
        BudgetCredits | None,
        Field(
            description="Total credits the rule may spend; absent: only the balance limits it.",
            title="Budget Credits",
        ),
    ] = None
    categories: Annotated[
        Categories | None,
        Field(
            description="Signal categories to buy on; absent: all.", title="Categories"
        ),
    ] = None
    daily_cap: Annotated[
        DailyCap | None,
        Field(
            description="Contacts bought per UTC day; absent: no cap.",
            title="Daily Cap",
        ),
    ] = None
    exclude_dnc: Annotated[
        bool | None,
        Field(
            description="Skip contacts whose phone may not be called for marketing: listed on the national Do-Not-Call registry, on a person's own do-not-call request, or not checked against registry data at most 31 days old. Contacts without a phone are bought as usual.",
            title="Exclude Dnc",
        ),
    ] = False
    industries: Annotated[
        list[Literal["accounting", "advertising-marketing", "agriculture", "automotive", "aviation-aerospace", "banking", "beauty-personal-care", "biotech-pharma", "construction", "consulting", "cybersecurity", "dental", "ecommerce", "education", "energy-utilities", "engineering", "entertainment-media", "environmental-services", "financial-services", "fitness-wellness", "food-beverage", "government", "healthcare", "home-services", "hospitality", "hr-staffing", "insurance", "it-services", "legal", "logistics-transportation", "manufacturing", "medical-devices", "mental-health", "nonprofit", "pet-services", "real-estate", "restaurants", "retail", "saas", "security-services", "senior-care", "solar", "telecommunications", "travel", "veterinary", "wholesale-distribution"]],
        Field(
            description="Verticals to buy in.",
            max_length=46,
            min_length=1,
            title="Industries",
        ),
    ]
    intent_levels: Annotated[
        IntentLevels | None,
        Field(
            description="Intent levels to buy on; absent: all.", title="Intent Levels"
        ),
    ] = None
    min_confidence: Annotated[
        Decimal,
        Field(
            description="Signals below this confidence are not bought.",
            ge=0,
            le=1,
            title="Min Confidence",
        ),
    ]
    name: Annotated[
        str | None,
        Field(
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Name",
        ),
    ] = ""
    states: Annotated[
        list[Literal["AK", "AL", "AR", "AS", "AZ", "CA", "CO", "CT", "DC", "DE", "FL", "GA", "GU", "HI", "IA", "ID", "IL", "IN", "KS", "KY", "LA", "MA", "MD", "ME", "MI", "MN", "MO", "MP", "MS", "MT", "NC", "ND", "NE", "NH", "NJ", "NM", "NV", "NY", "OH", "OK", "OR", "PA", "PR", "RI", "SC", "SD", "TN", "TX", "UT", "VA", "VI", "VT", "WA", "WI", "WV", "WY", "ak", "al", "ar", "as", "az", "ca", "co", "ct", "dc", "de", "fl", "ga", "gu", "hi", "ia", "id", "il", "in", "ks", "ky", "la", "ma", "md", "me", "mi", "mn", "mo", "mp", "ms", "mt", "nc", "nd", "ne", "nh", "nj", "nm", "nv", "ny", "oh", "ok", "or", "pa", "pr", "ri", "sc", "sd", "tn", "tx", "ut", "va", "vi", "vt", "wa", "wi", "wv", "wy"]],
        Field(
            description="Two-letter state codes.",
            max_length=60,
            min_length=1,
            title="States",
        ),
    ]


Categories1 = TypeAliasType(
    "Categories1",
    Annotated[
        list[Literal["switching_intent", "bant_qualified", "funding_ma", "topic_surge", "permit_filed", "tech_install"]],
        Field(min_length=1, title="Categories"),
    ],
)


DailyCap1 = TypeAliasType(
    "DailyCap1", Annotated[int, Field(ge=1, le=1000000, title="Daily Cap")]
)


Industries = TypeAliasType(
    "Industries",
    Annotated[
        list[Literal["accounting", "advertising-marketing", "agriculture", "automotive", "aviation-aerospace", "banking", "beauty-personal-care", "biotech-pharma", "construction", "consulting", "cybersecurity", "dental", "ecommerce", "education", "energy-utilities", "engineering", "entertainment-media", "environmental-services", "financial-services", "fitness-wellness", "food-beverage", "government", "healthcare", "home-services", "hospitality", "hr-staffing", "insurance", "it-services", "legal", "logistics-transportation", "manufacturing", "medical-devices", "mental-health", "nonprofit", "pet-services", "real-estate", "restaurants", "retail", "saas", "security-services", "senior-care", "solar", "telecommunications", "travel", "veterinary", "wholesale-distribution"]],
        Field(max_length=46, min_length=1, title="Industries"),
    ],
)


IntentLevels1 = TypeAliasType(
    "IntentLevels1",
    Annotated[
        list[Literal["hot", "warm", "cold"]], Field(min_length=1, title="Intent Levels")
    ],
)


MinConfidence = TypeAliasType(
    "MinConfidence", Annotated[Decimal, Field(ge=0, le=1, title="Min Confidence")]
)


Name2 = TypeAliasType(
    "Name2",
    Annotated[
        str,
        Field(
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Name",
        ),
    ],
)


States = TypeAliasType(
    "States",
    Annotated[
        list[Literal["AK", "AL", "AR", "AS", "AZ", "CA", "CO", "CT", "DC", "DE", "FL", "GA", "GU", "HI", "IA", "ID", "IL", "IN", "KS", "KY", "LA", "MA", "MD", "ME", "MI", "MN", "MO", "MP", "MS", "MT", "NC", "ND", "NE", "NH", "NJ", "NM", "NV", "NY", "OH", "OK", "OR", "PA", "PR", "RI", "SC", "SD", "TN", "TX", "UT", "VA", "VI", "VT", "WA", "WI", "WV", "WY", "ak", "al", "ar", "as", "az", "ca", "co", "ct", "dc", "de", "fl", "ga", "gu", "hi", "ia", "id", "il", "in", "ks", "ky", "la", "ma", "md", "me", "mi", "mn", "mo", "mp", "ms", "mt", "nc", "nd", "ne", "nh", "nj", "nm", "nv", "ny", "oh", "ok", "or", "pa", "pr", "ri", "sc", "sd", "tn", "tx", "ut", "va", "vi", "vt", "wa", "wi", "wv", "wy"]],
        Field(max_length=60, min_length=1, title="States"),
    ],
)


class RuleUpdate(ApiModel):
    """
    Only the fields given change; `budget_credits` or `daily_cap` set to null removes the limit;
    null for `name`, `industries`, `states` or `min_confidence` leaves them as they are.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    budget_credits: Annotated[BudgetCredits | None, Field(title="Budget Credits")] = (
        None
    )
    categories: Annotated[Categories1 | None, Field(title="Categories")] = None
    daily_cap: Annotated[DailyCap1 | None, Field(title="Daily Cap")] = None
    exclude_dnc: Annotated[
        bool | None,
        Field(
            description="Skip contacts whose phone may not be called for marketing: listed on the national Do-Not-Call registry, on a person's own do-not-call request, or not checked against registry data at most 31 days old. Contacts without a phone are bought as usual.",
            title="Exclude Dnc",
        ),
    ] = None
    industries: Annotated[Industries | None, Field(title="Industries")] = None
    intent_levels: Annotated[IntentLevels1 | None, Field(title="Intent Levels")] = None
    min_confidence: Annotated[MinConfidence | None, Field(title="Min Confidence")] = (
        None
    )
    name: Annotated[Name2 | None, Field(title="Name")] = None
    states: Annotated[States | None, Field(title="States")] = None


class RuleView(ApiModel):
    budget_credits: Annotated[Decimal | None, Field(title="Budget Credits")]
    budget_remaining: Annotated[Decimal | None, Field(title="Budget Remaining")]
    categories: Annotated[list[str] | None, Field(title="Categories")]
    created_at: Annotated[AwareDatetime, Field(title="Created At")]
    daily_cap: Annotated[int | None, Field(title="Daily Cap")]
    exclude_dnc: Annotated[
        bool | None,
        Field(
            description="Skip contacts whose phone may not be called for marketing: listed on the national Do-Not-Call registry, on a person's own do-not-call request, or not checked against registry data at most 31 days old. Contacts without a phone are bought as usual.",
            title="Exclude Dnc",
        ),
    ] = False
    id: Annotated[str, Field(examples=["abr_3kTz9aQ1xYb2LmN0"], title="Id")]
    industries: Annotated[list[str], Field(title="Industries")]
    intent_levels: Annotated[list[str] | None, Field(title="Intent Levels")]
    min_confidence: Annotated[Decimal, Field(title="Min Confidence")]
    name: Annotated[str, Field(title="Name")]
    paused_reason: Annotated[
        str | None,
        Field(
            description="Why the rule is paused: by the account, or its budget is spent.",
            title="Paused Reason",
        ),
    ]
    purchases_today: Annotated[
        int,
        Field(
            description="Contacts bought this UTC day (counts against `daily_cap`).",
            title="Purchases Today",
        ),
    ]
    purchases_total: Annotated[int, Field(title="Purchases Total")]
    spent_today: Annotated[
        Decimal, Field(description="Credits spent this UTC day.", title="Spent Today")
    ]
    spent_total: Annotated[
        Decimal, Field(description="Credits, exact to 1/10,000.", title="Spent Total")
    ]
    states: Annotated[list[str], Field(title="States")]
    status: Annotated[Literal["active", "paused"], Field(title="Status")]
    updated_at: Annotated[AwareDatetime, Field(title="Updated At")]


class RunError(ApiModel):
    code: Annotated[
        str,
        Field(
            description="Stable snake_case: `rate_limited`, `server_error`, `unexpected_layout`, …",
            title="Code",
        ),
    ]
    message: Annotated[str, Field(title="Message")]


class RunFile(ApiModel):
    created: Annotated[int, Field(title="Created")]
    deactivated: Annotated[int, Field(title="Deactivated")]
    duplicates: Annotated[int, Field(title="Duplicates")]
    file_date: Annotated[str | None, Field(title="File Date")]
    ingested: Annotated[int, Field(title="Ingested")]
    name: Annotated[str, Field(title="Name")]
    note: Annotated[str | None, Field(title="Note")]
    rows_read: Annotated[int, Field(title="Rows Read")]
    skipped: Annotated[dict[str, int], Field(title="Skipped")]
    status: Annotated[
        str,
        Field(description="`applied`, `not_modified` or `skipped`.", title="Status"),
    ]
    unchanged: Annotated[int, Field(title="Unchanged")]
    updated: Annotated[int, Field(title="Updated")]
    url: Annotated[str | None, Field(title="Url")]


class RunReport(ApiModel):
    bytes_downloaded: Annotated[int, Field(title="Bytes Downloaded")]
    created: Annotated[int, Field(title="Created")]
    deactivated: Annotated[int, Field(title="Deactivated")]
    duplicates: Annotated[int, Field(title="Duplicates")]
    error: RunError | None
    files: Annotated[list[RunFile], Field(title="Files")]
    finished_at: Annotated[AwareDatetime | None, Field(title="Finished At")]
    ingested: Annotated[
        int, Field(description="Signals ingested (permit sources).", title="Ingested")
    ]
    kind: Annotated[str, Field(title="Kind")]
    last_applied: Annotated[
        AppliedRun | None,
        Field(
            description="When this run found nothing new (`not_modified`) or failed: the last run that applied something (a run of the worker's just before, say), when it ran and what it did; null otherwise."
        ),
    ] = None
    newest_record_at: Annotated[AwareDatetime | None, Field(title="Newest Record At")]
    requests: Annotated[
        int,
        Field(
            description="HTTP requests the run made (an unchanged source: one).",
            title="Requests",
        ),
    ]
    rows_read: Annotated[int, Field(title="Rows Read")]
    seconds: Annotated[Decimal | None, Field(title="Seconds")]
    skipped: Annotated[dict[str, int], Field(title="Skipped")]
    source: Annotated[str, Field(title="Source")]
    started_at: Annotated[AwareDatetime | None, Field(title="Started At")]
    status: Annotated[Literal["ok", "not_modified", "failed"], Field(title="Status")]
    unchanged: Annotated[int, Field(title="Unchanged")]
    updated: Annotated[int, Field(title="Updated")]


City = TypeAliasType(
    "City",
    Annotated[
        str,
        Field(
            max_length=120,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="City",
        ),
    ],
)


LicenseType = TypeAliasType(
    "LicenseType",
    Annotated[
        str,
        Field(
            max_length=120,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="License Type",
        ),
    ],
)


PostalCode1 = TypeAliasType(
    "PostalCode1",
    Annotated[
        str,
        Field(
            description="A US ZIP code (or ZIP+4).",
            examples=["78701"],
            pattern="^[0-9]{5}(-[0-9]{4})?$",
            title="Postal Code",
        ),
    ],
)


Q = TypeAliasType(
    "Q",
    Annotated[
        str,
        Field(
            description="Synonym of `query`.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Q",
        ),
    ],
)


Query = TypeAliasType(
    "Query",
    Annotated[
        str,
        Field(
            description="Business name, category or keyword.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Query",
        ),
    ],
)


Specialty = TypeAliasType(
    "Specialty",
    Annotated[
        str,
        Field(
            description="Words the specialty starts with.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Specialty",
        ),
    ],
)


class SearchBody(ApiModel):
    """
    POST /contacts/search: ``query`` (or ``q``) and the same filters as GET.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    city: Annotated[City | None, Field(title="City")] = None
    email_status: Annotated[
        Literal["unknown", "valid_syntax", "invalid_syntax", "no_mx", "mx_found", "bounced"] | None,
        Field(
            description="Only contacts whose email has this status, such as `mx_found` (see `email_status` of a revealed contact); contacts without an email have none.",
            title="Email Status",
        ),
    ] = None
    exclude_dnc: Annotated[
        bool | None,
        Field(
            description="Leave out contacts whose phone may not be called for marketing: listed on the national Do-Not-Call registry, or on a person's own request. A phone not screened against current registry data yet is kept (the revealed contact's `phone_dnc` says what is known: screen it before calling); contacts without a phone are kept.",
            title="Exclude Dnc",
        ),
    ] = False
    industry: Annotated[
        Literal["accounting", "advertising-marketing", "agriculture", "automotive", "aviation-aerospace", "banking", "beauty-personal-care", "biotech-pharma", "construction", "consulting", "cybersecurity", "dental", "ecommerce", "education", "energy-utilities", "engineering", "entertainment-media", "environmental-services", "financial-services", "fitness-wellness", "food-beverage", "government", "healthcare", "home-services", "hospitality", "hr-staffing", "insurance", "it-services", "legal", "logistics-transportation", "manufacturing", "medical-devices", "mental-health", "nonprofit", "pet-services", "real-estate", "restaurants", "retail", "saas", "security-services", "senior-care", "solar", "telecommunications", "travel", "veterinary", "wholesale-distribution"] | None,
        Field(title="Industry"),
    ] = None
    license_type: Annotated[LicenseType | None, Field(title="License Type")] = None
    limit: Annotated[
        int | None, Field(description="Page size, 1–100.", ge=1, le=100, title="Limit")
    ] = 25
    offset: Annotated[
        int | None, Field(description="0–10000.", ge=0, le=10000, title="Offset")
    ] = 0
    postal_code: Annotated[
        PostalCode1 | None,
        Field(
            description="A US ZIP code in use (ZIP+4 read as its first five digits): its city and state are searched, as the ZIP code list names them (`interpreted.postal_code` says so when there are words); its state alone when the catalogue holds no business in its city. The `city` filter wins over it; with a `state` of another state it matches nothing.",
            examples=["78701"],
            title="Postal Code",
        ),
    ] = None
    q: Annotated[Q | None, Field(description="Synonym of `query`.", title="Q")] = None
    query: Annotated[
        Query | None,
        Field(description="Business name, category or keyword.", title="Query"),
    ] = None
    specialty: Annotated[
        Specialty | None,
        Field(description="Words the specialty starts with.", title="Specialty"),
    ] = None
    state: Annotated[
        Literal["AK", "AL", "AR", "AS", "AZ", "CA", "CO", "CT", "DC", "DE", "FL", "GA", "GU", "HI", "IA", "ID", "IL", "IN", "KS", "KY", "LA", "MA", "MD", "ME", "MI", "MN", "MO", "MP", "MS", "MT", "NC", "ND", "NE", "NH", "NJ", "NM", "NV", "NY", "OH", "OK", "OR", "PA", "PR", "RI", "SC", "SD", "TN", "TX", "UT", "VA", "VI", "VT", "WA", "WI", "WV", "WY", "ak", "al", "ar", "as", "az", "ca", "co", "ct", "dc", "de", "fl", "ga", "gu", "hi", "ia", "id", "il", "in", "ks", "ky", "la", "ma", "md", "me", "mi", "mn", "mo", "mp", "ms", "mt", "nc", "nd", "ne", "nh", "nj", "nm", "nv", "ny", "oh", "ok", "or", "pa", "pr", "ri", "sc", "sd", "tn", "tx", "ut", "va", "vi", "vt", "wa", "wi", "wv", "wy"] | None,
        Field(title="State"),
    ] = None


class SearchResult(ApiModel):
    contacts: Annotated[list[ContactPreview], Field(title="Contacts")]
    exact: Annotated[
        bool | None,
        Field(
            description="Whether the answer holds every change to the catalogue made before the question: always, unless more than 5,000 changes were waiting to be indexed (a large load written around the service, or the service catching up after an outage); the service then indexes them at once.",
            title="Exact",
        ),
    ] = True
    interpreted: Annotated[
        Interpretation | None,
        Field(
            description="How the words were read (null without words): a place before or after the words, such as `dentists in austin tx`, `Charleston SC roofers` or `dentist 78701`, becomes the city and state searched (a business whose name holds the place's words comes first, wherever it is); the `city` and `state` filters win over such a place. `dropped` says which words the answer did without.",
            examples=[{"city": "Austin", "dropped": [], "q": "dentists", "state": "TX"}],
        ),
    ] = None
    limit: Annotated[int, Field(title="Limit")]
    offset: Annotated[int, Field(title="Offset")]
    total: Annotated[
        int,
        Field(
            description="All matches, not just this page: the businesses that match every word not in `interpreted.dropped`, in the place and filters (and, for a place read from the words without 'in', those whose name holds the words as typed).",
            title="Total",
        ),
    ]


class SecretRotated(ApiModel):
    id: Annotated[str, Field(title="Id")]
    previous_secret_expires_at: Annotated[
        AwareDatetime | None, Field(title="Previous Secret Expires At")
    ]
    secret: Annotated[
        str, Field(description="The new `whsec_…` secret; shown once.", title="Secret")
    ]


GraceHours = TypeAliasType(
    "GraceHours",
    Annotated[
        int,
        Field(
            description="How long the previous secret keeps signing (default 24).",
            ge=0,
            le=720,
            title="Grace Hours",
        ),
    ],
)


class SecretRotation(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    grace_hours: Annotated[
        GraceHours | None,
        Field(
            description="How long the previous secret keeps signing (default 24).",
            title="Grace Hours",
        ),
    ] = None


class SendWindow(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    days: Annotated[
        list[Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]] | None,
        Field(max_length=7, min_length=1, title="Days"),
    ] = None
    end: Annotated[
        str | None, Field(pattern="^(([01]\\d|2[0-3]):[0-5]\\d|24:00)$", title="End")
    ] = "24:00"
    start: Annotated[
        str | None, Field(pattern="^([01]\\d|2[0-3]):[0-5]\\d$", title="Start")
    ] = "00:00"
    timezone: Annotated[
        str | None,
        Field(
            description='An IANA name, or "contact": the contact\'s own, from its state.',
            max_length=64,
            title="Timezone",
        ),
    ] = "UTC"


class SentMessage(ApiModel):
    message_id: Annotated[str, Field(title="Message Id")]
    sent_at: Annotated[AwareDatetime, Field(title="Sent At")]
    step: Annotated[int, Field(title="Step")]


MailboxId = TypeAliasType(
    "MailboxId", Annotated[str, Field(max_length=40, title="Mailbox Id")]
)


Name3 = TypeAliasType(
    "Name3",
    Annotated[
        str,
        Field(
            max_length=200,
            min_length=1,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Name",
        ),
    ],
)


class SignalBatchQuery(ApiModel):
    """
    One query of a batch: the filters of `GET /signals`.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    category: Annotated[
        Literal["switching_intent", "bant_qualified", "funding_ma", "topic_surge", "permit_filed", "tech_install"] | None,
        Field(title="Category"),
    ] = None
    industry: Annotated[
        Literal["accounting", "advertising-marketing", "agriculture", "automotive", "aviation-aerospace", "banking", "beauty-personal-care", "biotech-pharma", "construction", "consulting", "cybersecurity", "dental", "ecommerce", "education", "energy-utilities", "engineering", "entertainment-media", "environmental-services", "financial-services", "fitness-wellness", "food-beverage", "government", "healthcare", "home-services", "hospitality", "hr-staffing", "insurance", "it-services", "legal", "logistics-transportation", "manufacturing", "medical-devices", "mental-health", "nonprofit", "pet-services", "real-estate", "restaurants", "retail", "saas", "security-services", "senior-care", "solar", "telecommunications", "travel", "veterinary", "wholesale-distribution"] | None,
        Field(title="Industry"),
    ] = None
    intent_level: Annotated[
        Literal["hot", "warm", "cold"] | None, Field(title="Intent Level")
    ] = None
    since: Annotated[AwareDatetime | None, Field(title="Since")] = None
    source_status: Annotated[
        Literal["available", "fcra_blocked"] | None, Field(title="Source Status")
    ] = None
    state: Annotated[
        Literal["AK", "AL", "AR", "AS", "AZ", "CA", "CO", "CT", "DC", "DE", "FL", "GA", "GU", "HI", "IA", "ID", "IL", "IN", "KS", "KY", "LA", "MA", "MD", "ME", "MI", "MN", "MO", "MP", "MS", "MT", "NC", "ND", "NE", "NH", "NJ", "NM", "NV", "NY", "OH", "OK", "OR", "PA", "PR", "RI", "SC", "SD", "TN", "TX", "UT", "VA", "VI", "VT", "WA", "WI", "WV", "WY", "ak", "al", "ar", "as", "az", "ca", "co", "ct", "dc", "de", "fl", "ga", "gu", "hi", "ia", "id", "il", "in", "ks", "ky", "la", "ma", "md", "me", "mi", "mn", "mo", "mp", "ms", "mt", "nc", "nd", "ne", "nh", "nj", "nm", "nv", "ny", "oh", "ok", "or", "pa", "pr", "ri", "sc", "sd", "tn", "tx", "ut", "va", "vi", "vt", "wa", "wi", "wv", "wy"] | None,
        Field(title="State"),
    ] = None


class SignalBatchRequest(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    limit_per_query: Annotated[
        int | None,
        Field(
            description="Signals per query, 1–100.",
            ge=1,
            le=100,
            title="Limit Per Query",
        ),
    ] = 25
    queries: Annotated[
        list[SignalBatchQuery],
        Field(
            description="1–25 queries.", max_length=25, min_length=1, title="Queries"
        ),
    ]


class SignalFilter(ApiModel):
    """
    Every given field must equal the signal's; an absent field matches anything.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    category: Annotated[
        Literal["switching_intent", "bant_qualified", "funding_ma", "topic_surge", "permit_filed", "tech_install"] | None,
        Field(title="Category"),
    ] = None
    industry: Annotated[
        str | None, Field(description="One of the 46 verticals.", title="Industry")
    ] = None
    intent_level: Annotated[
        Literal["hot", "warm", "cold"] | None, Field(title="Intent Level")
    ] = None
    source_status: Annotated[
        Literal["available", "fcra_blocked"] | None,
        Field(
            description="Absent means available signals only.", title="Source Status"
        ),
    ] = None
    state: Annotated[
        str | None, Field(description="Two-letter state code.", title="State")
    ] = None


Confidence = TypeAliasType(
    "Confidence",
    Annotated[
        Decimal,
        Field(
            description="0–1; null when fcra_blocked.", ge=0, le=1, title="Confidence"
        ),
    ],
)


class SignalView(ApiModel):
    """
    A signal. An ``fcra_blocked`` signal keeps only id, category, industry, state,
    source_status and timestamps: every other field is null (no contact, no evidence).
    """

    category: Annotated[
        Literal["switching_intent", "bant_qualified", "funding_ma", "topic_surge", "permit_filed", "tech_install"],
        Field(title="Category"),
    ]
    city: Annotated[str | None, Field(title="City")]
    confidence: Annotated[
        Confidence | None,
        Field(description="0–1; null when fcra_blocked.", title="Confidence"),
    ]
    contact: Annotated[
        ContactPreview | None,
        Field(description="The contact's preview; null when fcra_blocked or unlinked."),
    ]
    created_at: Annotated[
        AwareDatetime,
        Field(
            description="When it entered the service (what `since` compares).",
            title="Created At",
        ),
    ]
    evidence: Annotated[
        dict[str, Any] | None,
        Field(
            description="The source's evidence attributes; null when fcra_blocked.",
            title="Evidence",
        ),
    ]
    id: Annotated[
        str,
        Field(
            description="Signal identifier, `sg_…`.",
            examples=["sg_4Fq9zK2mX7bT1cYw"],
            title="Id",
        ),
    ]
    industry: Annotated[
        str, Field(description="One of the 46 verticals.", title="Industry")
    ]
    intent_level: Annotated[
        Literal["hot", "warm", "cold"] | None,
        Field(
            description="hot: budget, timeline and vendor evaluation in the evidence; warm: a timeline or a named vendor; cold: an interest only. Null when fcra_blocked.",
            title="Intent Level",
        ),
    ]
    observed_at: Annotated[
        AwareDatetime,
        Field(description="When the source observed it.", title="Observed At"),
    ]
    reveal_cost: Annotated[
        Decimal | None,
        Field(
            description="Credits a purchase costs now; null when fcra_blocked.",
            title="Reveal Cost",
        ),
    ]
    sequence: Annotated[
        int,
        Field(
            description="Position in commit order; the stream's event id.",
            title="Sequence",
        ),
    ]
    source_status: Annotated[
        Literal["available", "fcra_blocked"], Field(title="Source Status")
    ]
    state: Annotated[
        str, Field(description="Two-letter USPS state code.", title="State")
    ]
    summary: Annotated[str | None, Field(title="Summary")]
    topic: Annotated[str | None, Field(title="Topic")]


Name4 = TypeAliasType(
    "Name4",
    Annotated[
        str,
        Field(
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Name",
        ),
    ],
)


Topic = TypeAliasType(
    "Topic",
    Annotated[
        str,
        Field(
            description="What a visit to the site counts as research on, for topic_surge (default: the domain).",
            max_length=200,
            min_length=1,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Topic",
        ),
    ],
)


class SiteCreate(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    domain: Annotated[
        str,
        Field(
            description="The site's host name, e.g. `www.acme.example` (a scheme and a final slash are dropped).",
            max_length=253,
            min_length=3,
            pattern="^(?:https?://)?[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+/?$",
            title="Domain",
        ),
    ]
    name: Annotated[Name4 | None, Field(title="Name")] = None
    topic: Annotated[
        Topic | None,
        Field(
            description="What a visit to the site counts as research on, for topic_surge (default: the domain).",
            title="Topic",
        ),
    ] = None


class SiteView(ApiModel):
    created_at: Annotated[AwareDatetime, Field(title="Created At")]
    domain: Annotated[str, Field(title="Domain")]
    id: Annotated[str, Field(title="Id")]
    name: Annotated[str | None, Field(title="Name")]
    pixel_url: Annotated[
        str,
        Field(
            description="A 1×1 GIF that records a view, for email and pages without JavaScript.",
            title="Pixel Url",
        ),
    ]
    site_key: Annotated[
        str,
        Field(
            description="Public, like a publishable key: it only lets a page report its views.",
            title="Site Key",
        ),
    ]
    snippet: Annotated[
        str,
        Field(
            description="The HTML tag to paste into every page of the site.",
            title="Snippet",
        ),
    ]
    topic: Annotated[str, Field(title="Topic")]


class SkippedEvent(ApiModel):
    index: Annotated[
        int,
        Field(
            description="0-based position in the request (line number - 1 for files).",
            title="Index",
        ),
    ]
    line: Annotated[
        int | None,
        Field(description="1-based line number of a JSON Lines file.", title="Line"),
    ] = None
    message: Annotated[str, Field(title="Message")]
    reason: Annotated[
        str,
        Field(
            description="Stable snake_case reason, e.g. `invalid_event`, `bant_incomplete`.",
            title="Reason",
        ),
    ]


class SourceBounceRate(ApiModel):
    bounced: Annotated[int, Field(title="Bounced")]
    emails: Annotated[int, Field(description="Contacts with an email.", title="Emails")]
    rate: Annotated[
        Decimal,
        Field(
            description="bounced / emails, 0–1 (0 when there are no emails).",
            title="Rate",
        ),
    ]
    source: Annotated[
        str,
        Field(
            description="The registry a contact came from (`contributed` for contributions).",
            title="Source",
        ),
    ]


Every = TypeAliasType(
    "Every",
    Annotated[
        str,
        Field(
            description="`30m`, `6h`, `1d`, `1w`…, at least `1m`; default: the kind's.",
            max_length=10,
            title="Every",
        ),
    ],
)


Mapping = TypeAliasType(
    "Mapping",
    Annotated[
        str,
        Field(
            description="A permit mapping (TOML text), as `vpx signals import permits --mapping` reads it.",
            max_length=65536,
            title="Mapping",
        ),
    ],
)


MappingName = TypeAliasType(
    "MappingName",
    Annotated[
        str,
        Field(
            description="The mapping's name (its file's name without .toml); default: the source's name.",
            max_length=100,
            title="Mapping Name",
        ),
    ],
)


class SourceCreate(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    every: Annotated[
        Every | None,
        Field(
            description="`30m`, `6h`, `1d`, `1w`…, at least `1m`; default: the kind's.",
            title="Every",
        ),
    ] = None
    kind: Annotated[
        str,
        Field(
            description="`nppes`, `nucc`, `cslb`, `edgar-daily`, `permits-csv`, `permits-socrata` or `permits-arcgis`.",
            examples=["nppes"],
            max_length=40,
            title="Kind",
        ),
    ]
    mapping: Annotated[
        Mapping | None,
        Field(
            description="A permit mapping (TOML text), as `vpx signals import permits --mapping` reads it.",
            title="Mapping",
        ),
    ] = None
    mapping_name: Annotated[
        MappingName | None,
        Field(
            description="The mapping's name (its file's name without .toml); default: the source's name.",
            title="Mapping Name",
        ),
    ] = None
    name: Annotated[
        str,
        Field(
            description="1-63 lower-case letters, digits, `-` or `_`.",
            examples=["nppes"],
            max_length=63,
            min_length=1,
            title="Name",
        ),
    ]
    options: Annotated[
        dict[str, str] | None,
        Field(
            description="The kind's options, and the limits every kind takes (`max_download`, `max_unpacked`, `max_ratio`, `max_line`, `max_run_time`, `stall_timeout`: see the operator guide); secret ones are never shown back.",
            max_length=50,
            title="Options",
        ),
    ] = None
    url: Annotated[
        str,
        Field(
            description="Where the publisher publishes; loopback and private addresses are allowed.",
            examples=["https://download.cms.gov/nppes/NPI_Files.html"],
            max_length=2000,
            min_length=1,
            title="Url",
        ),
    ]


class SourceRef(ApiModel):
    file_date: Annotated[date | None, Field(title="File Date")]
    record_id: Annotated[str, Field(title="Record Id")]
    registry: Annotated[str, Field(title="Registry")]


class SourceTotals(ApiModel):
    rows_created: Annotated[int, Field(title="Rows Created")]
    rows_deactivated: Annotated[int, Field(title="Rows Deactivated")]
    rows_updated: Annotated[int, Field(title="Rows Updated")]
    runs_failed: Annotated[int, Field(title="Runs Failed")]
    runs_not_modified: Annotated[int, Field(title="Runs Not Modified")]
    runs_ok: Annotated[int, Field(title="Runs Ok")]


class StatusShare(ApiModel):
    count: Annotated[int, Field(title="Count")]
    share: Annotated[
        Decimal,
        Field(description="Of all emails in the catalogue, 0–1.", title="Share"),
    ]
    status: Annotated[str, Field(title="Status")]


class SuppressedContact(ApiModel):
    contact_id: Annotated[
        str,
        Field(
            description="The contact, `ct_…`: delete your copies of it.",
            examples=["ct_1042"],
            title="Contact Id",
        ),
    ]
    reason: Annotated[
        Literal["opt_out", "do_not_contact", "fcra", "unsubscribed"],
        Field(
            description="Why, as a class: opt_out (the person asked), do_not_contact, fcra (regulated data), unsubscribed (from a sequence email, where the operator makes that apply to every account).",
            title="Reason",
        ),
    ]
    suppressed_at: Annotated[
        AwareDatetime,
        Field(
            description="When it was put on the suppression list.",
            title="Suppressed At",
        ),
    ]


class SuppressionFeed(ApiModel):
    """
    Newest first; pass ``next_cursor`` as ``cursor`` for the next page (null at the end).
    """

    limit: Annotated[int, Field(title="Limit")]
    next_cursor: Annotated[
        str | None,
        Field(
            description="Pass as `cursor` for the next page; null at the end.",
            title="Next Cursor",
        ),
    ]
    suppressions: Annotated[list[SuppressedContact], Field(title="Suppressions")]


class SuppressionMark(ApiModel):
    reason: Annotated[
        Literal["opt_out", "do_not_contact", "fcra", "unsubscribed"],
        Field(
            description="Why, as a class: `opt_out` (the person asked), `do_not_contact`, `fcra` (a regulated record), `unsubscribed` (an unsubscribe from a sequence, where the operator makes those apply to everyone).",
            title="Reason",
        ),
    ]
    since: Annotated[
        AwareDatetime,
        Field(description="When the contact was put on the list.", title="Since"),
    ]


class SuspendRequest(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    reason: Annotated[
        str,
        Field(
            description="Kept in the audit trail for operators.",
            max_length=500,
            min_length=1,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Reason",
        ),
    ]


class TestBalanceReset(ApiModel):
    balance: Annotated[
        BalanceView, Field(description="The test balance after the reset.")
    ]
    livemode: Annotated[
        Literal[False],
        Field(
            description="Always false: the test balance is test mode's.",
            title="Livemode",
        ),
    ]
    reset_at: Annotated[AwareDatetime, Field(title="Reset At")]
    test_credits: Annotated[
        Decimal,
        Field(
            description="Granted credits a test balance starts with and is reset to.",
            title="Test Credits",
        ),
    ]


class Verification(ApiModel):
    contacts: Annotated[
        list[str], Field(description="The contacts found (`ct_…`).", title="Contacts")
    ]
    handled_as: Annotated[
        Literal["opt_out"] | None,
        Field(
            description="`opt_out` when the request could not be verified and was applied as an opt-out of sale.",
            title="Handled As",
        ),
    ]
    matched: Annotated[
        list[str],
        Field(
            description="The data points that matched the best record (email, phone, name…).",
            title="Matched",
        ),
    ]
    verified: Annotated[
        bool,
        Field(
            description="Enough data points matched one record for the request's type.",
            title="Verified",
        ),
    ]


class VerifyResult(ApiModel):
    imap: Annotated[Literal["ok", "not_configured"], Field(title="Imap")]
    smtp: Annotated[Literal["ok"], Field(title="Smtp")]


class VisitView(ApiModel):
    company: Company | None = None
    confidence: Annotated[Decimal | None, Field(title="Confidence")] = None
    identified: Annotated[bool, Field(title="Identified")]
    method: Annotated[
        Literal["ip_range", "reverse_dns"] | None, Field(title="Method")
    ] = None
    occurred_at: Annotated[AwareDatetime, Field(title="Occurred At")]
    reason: Annotated[
        Literal["unknown", "isp", "hosting", "bot", "private_address", "opted_out"] | None,
        Field(title="Reason"),
    ] = None
    site_id: Annotated[str, Field(title="Site Id")]
    url: Annotated[str, Field(title="Url")]
    visit_id: Annotated[str, Field(title="Visit Id")]


class Wait(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    days: Annotated[int | None, Field(ge=0, le=365, title="Days")] = 0
    hours: Annotated[int | None, Field(ge=0, le=1000, title="Hours")] = 0
    minutes: Annotated[int | None, Field(ge=0, le=100000, title="Minutes")] = 0


class WebhookCreate(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    description: Annotated[
        str | None,
        Field(
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Description",
        ),
    ] = ""
    events: Annotated[
        list[Literal["contact.revealed", "batch_reveal.completed", "signal.created", "auto_buy.purchased", "enrichment.completed", "visitor.identified", "sequence.step_sent", "sequence.replied", "sequence.bounced", "sequence.unsubscribed", "sequence.finished", "contact.suppressed", "contact.corrected"]],
        Field(max_length=20, min_length=1, title="Events"),
    ]
    signal_filter: Annotated[
        SignalFilter | None,
        Field(
            description="Applies to `signal.created`: the filters of `GET /signals`."
        ),
    ] = None
    url: Annotated[
        str,
        Field(
            description="https, public address.",
            examples=["https://example.com/hooks/vpx"],
            max_length=2048,
            title="Url",
        ),
    ]


class WebhookCreated(ApiModel):
    created_at: Annotated[AwareDatetime, Field(title="Created At")]
    description: Annotated[str, Field(title="Description")]
    disabled_reason: Annotated[str | None, Field(title="Disabled Reason")]
    events: Annotated[list[str], Field(title="Events")]
    id: Annotated[str, Field(examples=["wh_3kTz9aQ1xYb2LmN0"], title="Id")]
    livemode: Annotated[
        bool,
        Field(
            description="False for a subscription made with a test key: it receives test mode's events, each with `livemode: false`.",
            title="Livemode",
        ),
    ]
    secret: Annotated[
        str,
        Field(
            description="`whsec_…`; shown once. Verify signatures with it (Standard Webhooks).",
            title="Secret",
        ),
    ]
    secret_rotating_until: Annotated[
        AwareDatetime | None,
        Field(
            description="While set, the previous secret signs too.",
            title="Secret Rotating Until",
        ),
    ]
    signal_filter: SignalFilter
    status: Annotated[Literal["active", "disabled"], Field(title="Status")]
    updated_at: Annotated[AwareDatetime, Field(title="Updated At")]
    url: Annotated[str, Field(title="Url")]


Description = TypeAliasType(
    "Description",
    Annotated[
        str,
        Field(
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Description",
        ),
    ],
)


Events = TypeAliasType(
    "Events",
    Annotated[
        list[Literal["contact.revealed", "batch_reveal.completed", "signal.created", "auto_buy.purchased", "enrichment.completed", "visitor.identified", "sequence.step_sent", "sequence.replied", "sequence.bounced", "sequence.unsubscribed", "sequence.finished", "contact.suppressed", "contact.corrected"]],
        Field(max_length=20, min_length=1, title="Events"),
    ],
)


Url = TypeAliasType("Url", Annotated[str, Field(max_length=2048, title="Url")])


class WebhookUpdate(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    description: Annotated[Description | None, Field(title="Description")] = None
    events: Annotated[Events | None, Field(title="Events")] = None
    signal_filter: SignalFilter | None = None
    status: Annotated[
        Literal["active", "disabled"] | None,
        Field(
            description="`active` re-enables an endpoint the service disabled after a 410.",
            title="Status",
        ),
    ] = None
    url: Annotated[Url | None, Field(title="Url")] = None


class WebhookView(ApiModel):
    created_at: Annotated[AwareDatetime, Field(title="Created At")]
    description: Annotated[str, Field(title="Description")]
    disabled_reason: Annotated[str | None, Field(title="Disabled Reason")]
    events: Annotated[list[str], Field(title="Events")]
    id: Annotated[str, Field(examples=["wh_3kTz9aQ1xYb2LmN0"], title="Id")]
    livemode: Annotated[
        bool,
        Field(
            description="False for a subscription made with a test key: it receives test mode's events, each with `livemode: false`.",
            title="Livemode",
        ),
    ]
    secret_rotating_until: Annotated[
        AwareDatetime | None,
        Field(
            description="While set, the previous secret signs too.",
            title="Secret Rotating Until",
        ),
    ]
    signal_filter: SignalFilter
    status: Annotated[Literal["active", "disabled"], Field(title="Status")]
    updated_at: Annotated[AwareDatetime, Field(title="Updated At")]
    url: Annotated[str, Field(title="Url")]


class AccountView(ApiModel):
    active_keys: Annotated[
        int,
        Field(
            description="Active keys of the caller's mode (live or test).",
            title="Active Keys",
        ),
    ]
    balance: BalanceView
    created_at: Annotated[AwareDatetime, Field(title="Created At")]
    email: Annotated[str | None, Field(title="Email")]
    free_credits_monthly: Annotated[
        Decimal,
        Field(description="Credits, exact to 1/10,000.", title="Free Credits Monthly"),
    ]
    id: Annotated[str, Field(title="Id")]
    livemode: Annotated[
        bool,
        Field(
            description="False when asked with a test key: `balance` is then the test balance, never the real one.",
            title="Livemode",
        ),
    ]
    max_active_keys: Annotated[int, Field(title="Max Active Keys")]
    name: Annotated[str, Field(title="Name")]
    next_free_reset: Annotated[
        AwareDatetime,
        Field(description="Start of the next UTC month.", title="Next Free Reset"),
    ]
    plan: Annotated[str, Field(title="Plan")]


class AdminReport(ApiModel):
    """
    A report as the operator sees it: its author, the value reported, and its trail.
    """

    account_id: Annotated[str, Field(title="Account Id")]
    business_name: Annotated[str, Field(title="Business Name")]
    contact_id: Annotated[str, Field(examples=["ct_1042"], title="Contact Id")]
    created_at: Annotated[AwareDatetime, Field(title="Created At")]
    credits_refunded: Annotated[
        Decimal,
        Field(
            description="What this field's refund gave back for your reveal (0 until the report is confirmed), to the credits it was paid with: free credits stay free credits. The same amount is a `refund` entry of your ledger whose reference is the contact.",
            title="Credits Refunded",
        ),
    ]
    current: Annotated[
        bool,
        Field(
            description="Whether that is still the contact's value.", title="Current"
        ),
    ]
    field: Annotated[
        Literal["phone", "email", "website", "address"], Field(title="Field")
    ]
    history: Annotated[list[ReportActionView], Field(title="History")]
    id: Annotated[str, Field(examples=["rpt_17"], title="Id")]
    note: Annotated[str | None, Field(title="Note")]
    problem: Annotated[
        Literal["wrong", "disconnected", "closed_business"], Field(title="Problem")
    ]
    refund_withheld: Annotated[
        Decimal,
        Field(
            description="The part of the field's share not given back (see `refund_withheld_reason`); 0 otherwise.",
            title="Refund Withheld",
        ),
    ]
    refund_withheld_reason: Annotated[
        Literal["monthly_limit", "free_credits_expired"] | None,
        Field(
            description="`monthly_limit`: your automatic refunds this month reached the service's limit; `free_credits_expired`: the reveal was paid with free credits of a month that has ended, and free credits expire with their month.",
            title="Refund Withheld Reason",
        ),
    ]
    resolved_at: Annotated[AwareDatetime | None, Field(title="Resolved At")]
    status: Annotated[
        Literal["open", "confirmed", "dismissed"],
        Field(
            description="open (waiting for the operator, or for the value to be found bad another way: the same report from another paying account unrelated to yours, or a corroborated bounce), confirmed (the field was found bad; you were refunded) or dismissed (the operator found the field right).",
            title="Status",
        ),
    ]
    value: Annotated[
        str, Field(description="The field's value when it was reported.", title="Value")
    ]


class AdminReportList(ApiModel):
    next_after: Annotated[
        str | None,
        Field(
            description="Pass as `after` for the next page; null at the end.",
            title="Next After",
        ),
    ]
    reports: Annotated[list[AdminReport], Field(title="Reports")]


class Attempt(ApiModel):
    duration_ms: Annotated[
        Decimal,
        Field(
            description="Time spent on its requests, retries and waits included.",
            title="Duration Ms",
        ),
    ]
    error: ProviderError | None = None
    fields: Annotated[
        list[str],
        Field(
            description="The missing fields it can give: what it was (or would be) asked for.",
            title="Fields",
        ),
    ]
    found: Annotated[
        list[str], Field(description="The fields it filled.", title="Found")
    ]
    provider: Annotated[str, Field(title="Provider")]
    reason: Annotated[
        Literal["nothing_missing", "no_key", "monthly_limit_reached", "insufficient_query"] | None,
        Field(
            description="Why it was skipped; `insufficient_query`: it needs what may not be sent (a domain the account cannot see).",
            title="Reason",
        ),
    ] = None
    status: Annotated[
        Literal["found", "not_found", "skipped", "cached", "rate_limited", "error", "planned"],
        Field(
            description="`planned`: a dry run would ask it (when the providers before it leave the fields missing).",
            title="Status",
        ),
    ]


class BatchEnrichItem(ApiModel):
    attempts: Annotated[list[Attempt] | None, Field(title="Attempts")] = None
    contact_id: Annotated[str, Field(title="Contact Id")]
    found: Annotated[
        list[str] | None,
        Field(description="Fields this batch filled for the contact.", title="Found"),
    ] = None
    status: Annotated[
        Literal["pending", "enriched", "not_found", "unknown_contact", "suppressed", "failed"],
        Field(title="Status"),
    ]


class BatchEnrichProgress(ApiModel):
    batch_id: Annotated[str, Field(title="Batch Id")]
    completed_at: Annotated[AwareDatetime | None, Field(title="Completed At")]
    created_at: Annotated[AwareDatetime, Field(title="Created At")]
    done: Annotated[int, Field(title="Done")]
    items: Annotated[list[BatchEnrichItem], Field(title="Items")]
    status: Annotated[Literal["processing", "completed"], Field(title="Status")]
    total: Annotated[int, Field(title="Total")]


class ContributeResult(ApiModel):
    counts: Annotated[
        dict[str, int],
        Field(description="accepted, duplicate, rejected.", title="Counts"),
    ]
    results: Annotated[list[RowResult], Field(title="Results")]


class DecisionMakerList(ApiModel):
    contact_id: Annotated[str, Field(title="Contact Id")]
    decision_makers: Annotated[list[DecisionMakerView], Field(title="Decision Makers")]
    revealed: Annotated[
        bool,
        Field(
            description="Whether this account revealed the contact (then direct details are shown).",
            title="Revealed",
        ),
    ]


class DeliveryPage(ApiModel):
    deliveries: Annotated[list[DeliveryView], Field(title="Deliveries")]
    limit: Annotated[int, Field(title="Limit")]
    next_cursor: Annotated[str | None, Field(title="Next Cursor")]


class Earnings(ApiModel):
    contributed_contacts: Annotated[int, Field(title="Contributed Contacts")]
    months: Annotated[
        list[MonthEarnings],
        Field(description="Newest first; months with earnings only.", title="Months"),
    ]
    paid_reveals: Annotated[int, Field(title="Paid Reveals")]
    revenue_share_percent: Annotated[
        Decimal,
        Field(description="Credits, exact to 1/10,000.", title="Revenue Share Percent"),
    ]
    total_earned: Annotated[
        Decimal, Field(description="Credits, exact to 1/10,000.", title="Total Earned")
    ]


class EmailStep(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    body: Annotated[
        str,
        Field(
            description="A template; the postal address and unsubscribe line follow it.",
            max_length=20000,
            min_length=1,
            pattern="^[^\\u0000-\\u0008\\u000B-\\u001F\\u007F]*$",
            title="Body",
        ),
    ]
    subject: Annotated[
        str,
        Field(
            description="A template (Jinja2, sandboxed).",
            max_length=300,
            min_length=1,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Subject",
        ),
    ]
    type: Annotated[Literal["email"], Field(title="Type")]
    wait: Annotated[
        Wait | None,
        Field(
            description="After the previous step (the first step: after enrollment)."
        ),
    ] = None


class EnrollResponse(ApiModel):
    counts: Annotated[
        dict[str, int],
        Field(
            description="How many results have each status (`enrolled`, `undeliverable`, …); a status no result has is left out.",
            title="Counts",
        ),
    ]
    results: Annotated[list[EnrollResult], Field(title="Results")]


class EnrollmentView(ApiModel):
    contact_id: Annotated[str, Field(title="Contact Id")]
    decision_maker: Annotated[str | None, Field(title="Decision Maker")]
    email: Annotated[str, Field(title="Email")]
    id: Annotated[str, Field(examples=["enr_3kTz9aQ1xYb2LmN0"], title="Id")]
    messages: Annotated[list[SentMessage], Field(title="Messages")]
    next_due_at: Annotated[AwareDatetime | None, Field(title="Next Due At")]
    sequence_id: Annotated[str, Field(title="Sequence Id")]
    status: Annotated[
        Literal["active", "finished", "replied", "bounced", "unsubscribed", "stopped", "paused"],
        Field(title="Status"),
    ]
    step: Annotated[
        int,
        Field(
            description="The next step to run (0-based); the number of steps when finished.",
            title="Step",
        ),
    ]
    stop_reason: Annotated[str | None, Field(title="Stop Reason")] = None


class FieldValue(ApiModel):
    """
    A value the account holds, with where it came from.
    """

    confidence: Annotated[
        Decimal | None,
        Field(
            description="0-1, when the provider says how sure it is.",
            title="Confidence",
        ),
    ] = None
    fetched_at: Annotated[
        AwareDatetime,
        Field(description="When the provider answered.", title="Fetched At"),
    ]
    previous: Annotated[
        PreviousValue | None,
        Field(
            description="The value a refresh replaced (a different value, or another provider's), with where it came from; null until a refresh replaces the value."
        ),
    ] = None
    provider: Annotated[
        str, Field(description="The provider that found it.", title="Provider")
    ]
    provider_record_id: Annotated[
        str | None,
        Field(
            description="The provider's own id of the record.",
            title="Provider Record Id",
        ),
    ] = None
    value: Annotated[str, Field(title="Value")]


class IngestResult(ApiModel):
    """
    What an ingest of evidence events did.
    """

    contacts_created: Annotated[int, Field(title="Contacts Created")]
    contacts_linked: Annotated[int, Field(title="Contacts Linked")]
    duplicates: Annotated[int, Field(title="Duplicates")]
    fcra_blocked: Annotated[int, Field(title="Fcra Blocked")]
    ingested: Annotated[int, Field(title="Ingested")]
    signal_ids: Annotated[
        list[str],
        Field(
            description="Ids of the signals inserted, in input order.",
            title="Signal Ids",
        ),
    ]
    skipped: Annotated[list[SkippedEvent], Field(title="Skipped")]


class KeyCreate(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    ip_allowlist: Annotated[
        list[IpAllowlistItem] | None,
        Field(
            description="IPv4/IPv6 addresses and CIDR ranges allowed to use the key; empty = no restriction.",
            examples=[["203.0.113.7", "2001:db8::/48"]],
            max_length=100,
            title="Ip Allowlist",
        ),
    ] = None
    mode: Annotated[
        Literal["live", "test"] | None,
        Field(
            description="`live`, or `test` for a test key (`vpx_test_…`): it sees the sandbox catalogue and spends a test balance, never real contacts or credits. A test key can create test keys only.",
            title="Mode",
        ),
    ] = "live"
    name: Annotated[
        str | None,
        Field(
            description="A name to recognise the key by.",
            max_length=200,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Name",
        ),
    ] = ""
    type: Annotated[
        Literal["ro", "live", "full"],
        Field(
            description="`ro` (Read Only), `live` (Standard) or `full` (Full Access).",
            title="KeyType",
        ),
    ]


class KeyCreated(ApiModel):
    created_at: Annotated[AwareDatetime, Field(title="Created At")]
    id: Annotated[str, Field(examples=["key_3kTz9QmWb1xYpL0a"], title="Id")]
    ip_allowlist: Annotated[list[str], Field(title="Ip Allowlist")]
    last_used_at: Annotated[
        AwareDatetime | None,
        Field(
            description="Last authenticated request, to the minute.",
            title="Last Used At",
        ),
    ]
    mode: Annotated[
        Literal["live", "test"],
        Field(
            description="`live`, or `test` for a test key (`vpx_test_…`): it sees the sandbox catalogue and spends a test balance, never real contacts or credits.",
            title="Mode",
        ),
    ]
    name: Annotated[str, Field(title="Name")]
    prefix: Annotated[
        str,
        Field(
            description="The first characters of the secret, to recognise it (`vpx_live_3kTz`).",
            title="Prefix",
        ),
    ]
    revoked_at: Annotated[AwareDatetime | None, Field(title="Revoked At")]
    rotate_by: Annotated[
        AwareDatetime,
        Field(
            description="90 days after creation; rotation is recommended by then.",
            title="Rotate By",
        ),
    ]
    rotation_due: Annotated[
        bool,
        Field(
            description="True once `rotate_by` has passed (and the key is active).",
            title="Rotation Due",
        ),
    ]
    secret: Annotated[
        str | None,
        Field(
            description="The key itself, shown only in this response and never stored. A repeat of the creation with the same `Idempotency-Key` returns the same key with `secret: null`.",
            title="Secret",
        ),
    ]
    status: Annotated[Literal["active", "revoked"], Field(title="Status")]
    type: Annotated[
        Literal["ro", "live", "full"],
        Field(
            description="`ro` (Read Only), `live` (Standard) or `full` (Full Access).",
            title="KeyType",
        ),
    ]
    type_label: Annotated[str, Field(examples=["Full Access"], title="Type Label")]


class KeyList(ApiModel):
    active_keys: Annotated[
        int,
        Field(
            description="Active keys of the caller's mode (live or test).",
            title="Active Keys",
        ),
    ]
    keys: Annotated[list[KeyView], Field(title="Keys")]
    limit: Annotated[int, Field(title="Limit")]
    max_active_keys: Annotated[
        int,
        Field(
            description="At most this many keys of each mode may be active at once.",
            title="Max Active Keys",
        ),
    ]
    max_keys: Annotated[
        int,
        Field(
            description="Keys the account keeps, active and revoked: a new key past it forgets the keys revoked longest ago.",
            title="Max Keys",
        ),
    ]
    next_cursor: Annotated[
        str | None,
        Field(
            description="Pass as `cursor` for the next page; null at the end.",
            title="Next Cursor",
        ),
    ]


class MailboxList(ApiModel):
    limit: Annotated[int, Field(description="The page size asked for.", title="Limit")]
    mailboxes: Annotated[list[MailboxView], Field(title="Mailboxes")]
    next_cursor: Annotated[
        str | None,
        Field(
            description="Pass as `cursor` for the next page; null at the end.",
            title="Next Cursor",
        ),
    ]


class PrivacyRequestView(ApiModel):
    days_left: Annotated[
        Decimal,
        Field(
            description="Days until `expected_by` (negative when late); 0 once answered.",
            title="Days Left",
        ),
    ]
    decided_at: Annotated[AwareDatetime | None, Field(title="Decided At")]
    decided_by: Annotated[str | None, Field(title="Decided By")]
    deny_reason: Annotated[
        Literal["no_match", "insuf_verification", "exempt", "not_a_consumer", "other"] | None,
        Field(title="Deny Reason"),
    ]
    details: Annotated[str | None, Field(title="Details")]
    email: Annotated[str | None, Field(title="Email")]
    expected_by: Annotated[AwareDatetime, Field(title="Expected By")]
    id: Annotated[str, Field(title="Id")]
    name: Annotated[str | None, Field(title="Name")]
    note: Annotated[str | None, Field(title="Note")]
    npi: Annotated[str | None, Field(title="Npi")]
    phone: Annotated[str | None, Field(title="Phone")]
    postal_code: Annotated[str | None, Field(title="Postal Code")]
    received_at: Annotated[AwareDatetime, Field(title="Received At")]
    resolution: Annotated[
        dict[str, Any] | None,
        Field(
            description="What fulfilment produced: an access request's report (what the catalogue holds, and how many accounts bought each record and when, never who), a deletion's counts, an opt-out's entries.",
            title="Resolution",
        ),
    ]
    status: Annotated[Literal["open", "fulfilled", "denied"], Field(title="Status")]
    type: Annotated[
        Literal["access", "deletion", "opt_out", "correction"], Field(title="Type")
    ]
    verification: Verification


class ProviderKeyList(ApiModel):
    keys: Annotated[
        list[ProviderKeyView],
        Field(
            description="In waterfall order: the order the keys were first stored.",
            title="Keys",
        ),
    ]


class PurchaseView(ApiModel):
    contact_id: Annotated[str, Field(title="Contact Id")]
    created_at: Annotated[AwareDatetime, Field(title="Created At")]
    credits_charged: Annotated[
        Decimal,
        Field(description="Credits, exact to 1/10,000.", title="Credits Charged"),
    ]
    id: Annotated[str, Field(examples=["abp_42"], title="Id")]
    rule_id: Annotated[str, Field(title="Rule Id")]
    signal: Annotated[
        SignalView | None, Field(description="The signal that set the purchase off.")
    ]
    signal_id: Annotated[str, Field(title="Signal Id")]


class QualityFigures(ApiModel):
    """
    The catalogue's data quality, for operators.
    """

    bad_fields: Annotated[
        dict[str, int],
        Field(description="Values found bad, by field.", title="Bad Fields"),
    ]
    bounce_rate: BounceRate
    bounce_rate_by_import_date: Annotated[
        list[DayBounceRate], Field(title="Bounce Rate By Import Date")
    ]
    bounce_rate_by_source: Annotated[
        list[SourceBounceRate], Field(title="Bounce Rate By Source")
    ]
    email_status: Annotated[list[StatusShare], Field(title="Email Status")]
    emails: Annotated[int, Field(description="Contacts with an email.", title="Emails")]
    generated_at: Annotated[AwareDatetime, Field(title="Generated At")]
    refunds_by_month: Annotated[list[MonthRefunds], Field(title="Refunds By Month")]
    reports: ReportCounts


class RevealedContact(ApiModel):
    address: Address
    bad_fields: Annotated[
        list[Literal["phone", "email", "website", "address"]] | None,
        Field(
            description="Fields whose value was found wrong (buyers' reports, an email that bounced, or the operator): not shown above, and not charged for in later reveals.",
            title="Bad Fields",
        ),
    ] = None
    business_name: Annotated[str, Field(title="Business Name")]
    city: Annotated[str, Field(title="City")]
    credits_charged: Annotated[
        Decimal,
        Field(
            description="Charged by this request; 0 for a contact already revealed. An idempotent replay (`Idempotent-Replayed: true`) repeats the first request's figure and charges nothing.",
            title="Credits Charged",
        ),
    ]
    credits_remaining: Annotated[
        Decimal,
        Field(description="Credits, exact to 1/10,000.", title="Credits Remaining"),
    ]
    email: Annotated[str | None, Field(title="Email")]
    email_checked_at: Annotated[
        AwareDatetime | None,
        Field(
            description="When `email_status` was last worked out; null before.",
            title="Email Checked At",
        ),
    ]
    email_flags: Annotated[
        list[Literal["disposable", "role"]],
        Field(
            description="`disposable`: the domain gives out throwaway addresses; `role`: the address names a function (info@, sales@, support@…), not a person. Empty when neither, or without an email.",
            title="Email Flags",
        ),
    ]
    email_status: Annotated[
        Literal["unknown", "valid_syntax", "invalid_syntax", "no_mx", "mx_found", "bounced"] | None,
        Field(
            description="What is known of the email's deliverability (null without an email): `unknown` not checked yet, or its domain's look-up timed out; `valid_syntax` well formed, its domain not looked up yet; `invalid_syntax` not a well-formed address; `no_mx` its domain takes no mail (no mail exchanger, a null MX, or no such domain); `mx_found` its domain has a mail exchanger; `bounced` an email to it bounced for good in a sequence of any account. No mail server is ever contacted to find out.",
            title="Email Status",
        ),
    ]
    id: Annotated[str, Field(title="Id")]
    industry: Annotated[str, Field(title="Industry")]
    license: License
    phone: Annotated[str | None, Field(description="E.164.", title="Phone")]
    phone_dnc: Annotated[
        PhoneDnc | None,
        Field(
            description="The phone's do-not-call state: whether the national registry lists it and which version says so, and whether the person asked not to be called. Null without a phone."
        ),
    ] = None
    preview: Annotated[Literal[False], Field(title="Preview")] = False
    revealed_at: Annotated[AwareDatetime, Field(title="Revealed At")]
    sources: Annotated[list[SourceRef], Field(title="Sources")]
    specialty: Annotated[str | None, Field(title="Specialty")]
    state: Annotated[str, Field(title="State")]
    suppressed: Annotated[
        SuppressionMark | None,
        Field(
            description="Set when the contact has been put on the suppression list since you revealed it: stop contacting it and delete it from your systems (also announced by `contact.suppressed`). Null otherwise."
        ),
    ] = None
    website: Annotated[str | None, Field(title="Website")]


class RuleList(ApiModel):
    limit: Annotated[int, Field(title="Limit")]
    next_cursor: Annotated[
        str | None,
        Field(
            description="Pass as `cursor` for the next page; null at the end.",
            title="Next Cursor",
        ),
    ]
    rules: Annotated[list[RuleView], Field(description="Oldest first.", title="Rules")]


class SignalBatchResult(ApiModel):
    query: SignalBatchQuery
    signals: Annotated[list[SignalView], Field(title="Signals")]


class SignalPage(ApiModel):
    """
    Newest first; pass ``next_cursor`` as ``cursor`` for the next page (null at the end).
    """

    limit: Annotated[int, Field(title="Limit")]
    next_cursor: Annotated[str | None, Field(title="Next Cursor")]
    signals: Annotated[list[SignalView], Field(title="Signals")]


class SignalPurchase(ApiModel):
    """
    A purchase: the signal and its contact, revealed at the contact's price.
    """

    contact: RevealedContact
    signal: SignalView


class SiteList(ApiModel):
    next_cursor: Annotated[
        str | None,
        Field(
            description="The next page's cursor; null on the last page.",
            title="Next Cursor",
        ),
    ] = None
    sites: Annotated[list[SiteView], Field(title="Sites")]


class Source(ApiModel):
    age_seconds: Annotated[
        Decimal | None,
        Field(description="Seconds since the last success.", title="Age Seconds"),
    ]
    consecutive_failures: Annotated[int, Field(title="Consecutive Failures")]
    created_at: Annotated[AwareDatetime, Field(title="Created At")]
    every: Annotated[
        str, Field(description="The interval: `30m`, `6h`, `1d`, `1w`.", title="Every")
    ]
    kind: Annotated[str, Field(title="Kind")]
    last_error: Annotated[str | None, Field(title="Last Error")]
    last_run: RunReport | None
    last_success_at: Annotated[AwareDatetime | None, Field(title="Last Success At")]
    mapping: Annotated[
        str | None,
        Field(description="The mapping's name (permit sources).", title="Mapping"),
    ]
    name: Annotated[str, Field(title="Name")]
    newest_record_at: Annotated[
        AwareDatetime | None,
        Field(
            description="The newest record's own date: a registry file's publication day, a permit's date.",
            title="Newest Record At",
        ),
    ]
    next_run_at: Annotated[
        AwareDatetime | None,
        Field(description="Null while paused.", title="Next Run At"),
    ]
    options: Annotated[
        dict[str, str],
        Field(description="Secret options are shown as `(secret)`.", title="Options"),
    ]
    run_requested: Annotated[bool, Field(title="Run Requested")]
    running: Annotated[bool, Field(description="A run holds it now.", title="Running")]
    stale: Annotated[
        bool,
        Field(
            description="Its last success (or its addition) is older than twice its interval.",
            title="Stale",
        ),
    ]
    state: Annotated[
        Literal["active", "paused", "failing"],
        Field(
            description="`failing` from a failed run until the next success.",
            title="State",
        ),
    ]
    totals: SourceTotals
    url: Annotated[
        str, Field(description="A password in it is shown as `***`.", title="Url")
    ]


class SourceList(ApiModel):
    sources: Annotated[list[Source], Field(title="Sources")]


class SourceRemoved(ApiModel):
    age_seconds: Annotated[
        Decimal | None,
        Field(description="Seconds since the last success.", title="Age Seconds"),
    ]
    consecutive_failures: Annotated[int, Field(title="Consecutive Failures")]
    created_at: Annotated[AwareDatetime, Field(title="Created At")]
    every: Annotated[
        str, Field(description="The interval: `30m`, `6h`, `1d`, `1w`.", title="Every")
    ]
    kind: Annotated[str, Field(title="Kind")]
    last_error: Annotated[str | None, Field(title="Last Error")]
    last_run: RunReport | None
    last_success_at: Annotated[AwareDatetime | None, Field(title="Last Success At")]
    mapping: Annotated[
        str | None,
        Field(description="The mapping's name (permit sources).", title="Mapping"),
    ]
    name: Annotated[str, Field(title="Name")]
    newest_record_at: Annotated[
        AwareDatetime | None,
        Field(
            description="The newest record's own date: a registry file's publication day, a permit's date.",
            title="Newest Record At",
        ),
    ]
    next_run_at: Annotated[
        AwareDatetime | None,
        Field(description="Null while paused.", title="Next Run At"),
    ]
    options: Annotated[
        dict[str, str],
        Field(description="Secret options are shown as `(secret)`.", title="Options"),
    ]
    removed: Annotated[bool | None, Field(title="Removed")] = True
    run_requested: Annotated[bool, Field(title="Run Requested")]
    running: Annotated[bool, Field(description="A run holds it now.", title="Running")]
    stale: Annotated[
        bool,
        Field(
            description="Its last success (or its addition) is older than twice its interval.",
            title="Stale",
        ),
    ]
    state: Annotated[
        Literal["active", "paused", "failing"],
        Field(
            description="`failing` from a failed run until the next success.",
            title="State",
        ),
    ]
    totals: SourceTotals
    url: Annotated[
        str, Field(description="A password in it is shown as `***`.", title="Url")
    ]


class TaskStep(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    note: Annotated[
        str,
        Field(
            max_length=2000,
            min_length=1,
            pattern="^[^\\u0000-\\u0008\\u000B-\\u001F\\u007F]*$",
            title="Note",
        ),
    ]
    type: Annotated[Literal["task"], Field(title="Type")]
    wait: Wait | None = None


class VisitPage(ApiModel):
    next_cursor: Annotated[str | None, Field(title="Next Cursor")]
    visits: Annotated[list[VisitView], Field(title="Visits")]


class WebhookList(ApiModel):
    webhooks: Annotated[list[WebhookView], Field(title="Webhooks")]


class BatchItemResult(ApiModel):
    contact: Annotated[
        RevealedContact | None,
        Field(description="The record for revealed and already_revealed; else null."),
    ]
    contact_id: Annotated[str, Field(title="Contact Id")]
    credits_charged: Annotated[
        Decimal,
        Field(description="Credits, exact to 1/10,000.", title="Credits Charged"),
    ]
    status: Annotated[
        Literal["revealed", "already_revealed", "not_found", "suppressed", "insufficient_credits", "do_not_call"],
        Field(title="Status"),
    ]


class BatchRevealResult(ApiModel):
    """
    The answer without `webhook_url`: one result per distinct id, in request order.
    """

    batch_id: Annotated[str, Field(title="Batch Id")]
    counts: Annotated[dict[str, int], Field(title="Counts")]
    credits_charged: Annotated[
        Decimal,
        Field(
            description="Charged by this request, every item together. An idempotent replay (`Idempotent-Replayed: true`) repeats the first request's figure and charges nothing.",
            title="Credits Charged",
        ),
    ]
    credits_remaining: Annotated[
        Decimal,
        Field(description="Credits, exact to 1/10,000.", title="Credits Remaining"),
    ]
    results: Annotated[list[BatchItemResult], Field(title="Results")]
    status: Annotated[Literal["completed"], Field(title="Status")]


class DecisionMakerFields(ApiModel):
    fields: Annotated[
        dict[str, FieldValue],
        Field(
            description="email, phone, title, linkedin_url found for this person.",
            title="Fields",
        ),
    ]
    name: Annotated[str, Field(title="Name")]
    title: Annotated[
        str | None, Field(description="As the registry gives it.", title="Title")
    ]


class EnrichResult(ApiModel):
    attempts: Annotated[
        list[Attempt],
        Field(
            description="Every provider of the waterfall, asked or not, in order.",
            title="Attempts",
        ),
    ]
    contact_id: Annotated[str, Field(title="Contact Id")]
    credits_charged: Annotated[
        Literal[0],
        Field(description="Enrichment never costs credits.", title="Credits Charged"),
    ] = 0
    decision_makers: Annotated[
        list[DecisionMakerFields], Field(title="Decision Makers")
    ]
    dry_run: Annotated[bool | None, Field(title="Dry Run")] = False
    fields: Annotated[
        dict[str, FieldValue],
        Field(
            description="The business's enriched fields the account holds.",
            title="Fields",
        ),
    ]


class EnrichmentView(ApiModel):
    contact_id: Annotated[str, Field(title="Contact Id")]
    decision_makers: Annotated[
        list[DecisionMakerFields], Field(title="Decision Makers")
    ]
    fields: Annotated[
        dict[str, FieldValue],
        Field(
            description="The business's enriched fields the account holds.",
            title="Fields",
        ),
    ]


class EnrollmentList(ApiModel):
    enrollments: Annotated[list[EnrollmentView], Field(title="Enrollments")]
    next_cursor: Annotated[
        str | None,
        Field(
            description="Pass as `cursor` for the next page; null at the end.",
            title="Next Cursor",
        ),
    ]


class PrivacyRequestList(ApiModel):
    requests: Annotated[
        list[PrivacyRequestView],
        Field(description="Soonest due first.", title="Requests"),
    ]


class PurchasePage(ApiModel):
    limit: Annotated[int, Field(title="Limit")]
    next_cursor: Annotated[str | None, Field(title="Next Cursor")]
    purchases: Annotated[list[PurchaseView], Field(title="Purchases")]


class RevealedContactView(ApiModel):
    """
    A revealed contact as ``GET /contacts/{id}`` shows it: the registry's record and, beside it,
    what this account enriched with its own provider keys.
    """

    address: Address
    bad_fields: Annotated[
        list[Literal["phone", "email", "website", "address"]] | None,
        Field(
            description="Fields whose value was found wrong (buyers' reports, an email that bounced, or the operator): not shown above, and not charged for in later reveals.",
            title="Bad Fields",
        ),
    ] = None
    business_name: Annotated[str, Field(title="Business Name")]
    city: Annotated[str, Field(title="City")]
    credits_charged: Annotated[
        Decimal,
        Field(
            description="Charged by this request; 0 for a contact already revealed. An idempotent replay (`Idempotent-Replayed: true`) repeats the first request's figure and charges nothing.",
            title="Credits Charged",
        ),
    ]
    credits_remaining: Annotated[
        Decimal,
        Field(description="Credits, exact to 1/10,000.", title="Credits Remaining"),
    ]
    email: Annotated[str | None, Field(title="Email")]
    email_checked_at: Annotated[
        AwareDatetime | None,
        Field(
            description="When `email_status` was last worked out; null before.",
            title="Email Checked At",
        ),
    ]
    email_flags: Annotated[
        list[Literal["disposable", "role"]],
        Field(
            description="`disposable`: the domain gives out throwaway addresses; `role`: the address names a function (info@, sales@, support@…), not a person. Empty when neither, or without an email.",
            title="Email Flags",
        ),
    ]
    email_status: Annotated[
        Literal["unknown", "valid_syntax", "invalid_syntax", "no_mx", "mx_found", "bounced"] | None,
        Field(
            description="What is known of the email's deliverability (null without an email): `unknown` not checked yet, or its domain's look-up timed out; `valid_syntax` well formed, its domain not looked up yet; `invalid_syntax` not a well-formed address; `no_mx` its domain takes no mail (no mail exchanger, a null MX, or no such domain); `mx_found` its domain has a mail exchanger; `bounced` an email to it bounced for good in a sequence of any account. No mail server is ever contacted to find out.",
            title="Email Status",
        ),
    ]
    enrichment: Annotated[
        EnrichmentView | None,
        Field(
            description="Values this account's enrichment found, each with its provider; null when it enriched nothing. The registry's own fields above are never overwritten."
        ),
    ] = None
    id: Annotated[str, Field(title="Id")]
    industry: Annotated[str, Field(title="Industry")]
    license: License
    phone: Annotated[str | None, Field(description="E.164.", title="Phone")]
    phone_dnc: Annotated[
        PhoneDnc | None,
        Field(
            description="The phone's do-not-call state: whether the national registry lists it and which version says so, and whether the person asked not to be called. Null without a phone."
        ),
    ] = None
    preview: Annotated[Literal[False], Field(title="Preview")] = False
    revealed_at: Annotated[AwareDatetime, Field(title="Revealed At")]
    sources: Annotated[list[SourceRef], Field(title="Sources")]
    specialty: Annotated[str | None, Field(title="Specialty")]
    state: Annotated[str, Field(title="State")]
    suppressed: Annotated[
        SuppressionMark | None,
        Field(
            description="Set when the contact has been put on the suppression list since you revealed it: stop contacting it and delete it from your systems (also announced by `contact.suppressed`). Null otherwise."
        ),
    ] = None
    website: Annotated[str | None, Field(title="Website")]


class SequenceCreate(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    mailbox_id: Annotated[str, Field(max_length=40, title="Mailbox Id")]
    name: Annotated[
        str,
        Field(
            max_length=200,
            min_length=1,
            pattern="^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$",
            title="Name",
        ),
    ]
    send_window: SendWindow | None = None
    steps: Annotated[
        list[Annotated[EmailStep | TaskStep, Field(discriminator="type")]],
        Field(max_length=20, min_length=1, title="Steps"),
    ]


Steps1 = TypeAliasType(
    "Steps1",
    Annotated[
        list[Annotated[EmailStep | TaskStep, Field(discriminator="type")]],
        Field(max_length=20, min_length=1, title="Steps"),
    ],
)


class SequenceUpdate(ApiModel):
    """
    Fields given replace the sequence's; new steps or a new window make a new version (running
    enrollments finish on theirs).
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    mailbox_id: Annotated[MailboxId | None, Field(title="Mailbox Id")] = None
    name: Annotated[Name3 | None, Field(title="Name")] = None
    send_window: SendWindow | None = None
    steps: Annotated[Steps1 | None, Field(title="Steps")] = None


class SequenceView(ApiModel):
    created_at: Annotated[AwareDatetime, Field(title="Created At")]
    enrollments: Annotated[
        dict[str, int], Field(description="Enrollments by status.", title="Enrollments")
    ]
    id: Annotated[str, Field(examples=["seq_3kTz9aQ1xYb2LmN0"], title="Id")]
    mailbox_id: Annotated[str, Field(title="Mailbox Id")]
    name: Annotated[str, Field(title="Name")]
    pause_reason: Annotated[str | None, Field(title="Pause Reason")]
    send_window: SendWindow | None
    status: Annotated[Literal["active", "paused"], Field(title="Status")]
    steps: Annotated[
        list[Annotated[EmailStep | TaskStep, Field(discriminator="type")]],
        Field(title="Steps"),
    ]
    updated_at: Annotated[AwareDatetime, Field(title="Updated At")]
    version: Annotated[int, Field(title="Version")]


class SignalBatchResponse(ApiModel):
    """
    Results in request order.
    """

    results: Annotated[list[SignalBatchResult], Field(title="Results")]


class SequenceList(ApiModel):
    limit: Annotated[int, Field(description="The page size asked for.", title="Limit")]
    next_cursor: Annotated[
        str | None,
        Field(
            description="Pass as `cursor` for the next page; null at the end.",
            title="Next Cursor",
        ),
    ]
    sequences: Annotated[list[SequenceView], Field(title="Sequences")]
