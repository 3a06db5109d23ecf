"""Every table, one module per table family. Importing this package registers them all on Base."""

from vpx.models.accounts import Account, AccountAudit, ApiKey
from vpx.models.autobuy import AutoBuyPurchase, AutoBuyRule, AutoBuyRuleKey
from vpx.models.batches import BatchReveal, BatchRevealItem
from vpx.models.compliance import (
    ComplianceEvent,
    DncAreaCode,
    DncNumber,
    DropBatch,
    DropItem,
    DropState,
    PrivacyRequest,
)
from vpx.models.contacts import Contact, ContactSource, Reveal
from vpx.models.credits import LedgerEntry
from vpx.models.dashboard import AccountLogin, DashboardSession, PasswordReset
from vpx.models.deliverability import EmailDomain
from vpx.models.enrichment import (
    EnrichmentBatch,
    EnrichmentBatchItem,
    EnrichmentCacheEntry,
    EnrichmentKey,
    EnrichmentUsage,
    EnrichmentValue,
)
from vpx.models.idempotency import IdempotencyRecord
from vpx.models.operator import OperatorSession
from vpx.models.publishers import ContributionDay
from vpx.models.quality import BadField, ContactReport, DataRefund, ReportAction, SequenceBounce
from vpx.models.registries import (
    Company,
    CompanyTicker,
    DecisionMaker,
    PossibleDuplicate,
    RegistryRecord,
    TaxonomyCode,
)
from vpx.models.search import SearchChange, SearchPosting, SearchState, SearchTerm
from vpx.models.sequences import (
    AccountUnsubscribe,
    Enrollment,
    InboundMessage,
    Mailbox,
    Sequence,
    SequenceMessage,
    SequenceVersion,
    UnsubscribeLink,
)
from vpx.models.signals import Signal, SignalCounter
from vpx.models.sources import DataSource
from vpx.models.suppression import Suppression, SuppressionHit, SuppressionNotice
from vpx.models.topics import TopicActivity
from vpx.models.visitors import IpRange, IpRangeSource, Visit, VisitorAlert, VisitorSite
from vpx.models.webhooks import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from vpx.models.workers import WorkerHeartbeat

__all__ = [
    "Account",
    "AccountAudit",
    "AccountLogin",
    "AccountUnsubscribe",
    "ApiKey",
    "AutoBuyPurchase",
    "AutoBuyRule",
    "AutoBuyRuleKey",
    "BadField",
    "BatchReveal",
    "BatchRevealItem",
    "Company",
    "CompanyTicker",
    "ComplianceEvent",
    "Contact",
    "ContactReport",
    "ContactSource",
    "ContributionDay",
    "DashboardSession",
    "DataRefund",
    "DataSource",
    "DecisionMaker",
    "DncAreaCode",
    "DncNumber",
    "DropBatch",
    "DropItem",
    "DropState",
    "EmailDomain",
    "EnrichmentBatch",
    "EnrichmentBatchItem",
    "EnrichmentCacheEntry",
    "EnrichmentKey",
    "EnrichmentUsage",
    "EnrichmentValue",
    "Enrollment",
    "IdempotencyRecord",
    "InboundMessage",
    "IpRange",
    "IpRangeSource",
    "LedgerEntry",
    "Mailbox",
    "OperatorSession",
    "PasswordReset",
    "PossibleDuplicate",
    "PrivacyRequest",
    "RegistryRecord",
    "ReportAction",
    "Reveal",
    "SearchChange",
    "SearchPosting",
    "SearchState",
    "SearchTerm",
    "Sequence",
    "SequenceBounce",
    "SequenceMessage",
    "SequenceVersion",
    "Signal",
    "SignalCounter",
    "Suppression",
    "SuppressionHit",
    "SuppressionNotice",
    "TaxonomyCode",
    "TopicActivity",
    "UnsubscribeLink",
    "Visit",
    "VisitorAlert",
    "VisitorSite",
    "WebhookAttempt",
    "WebhookDelivery",
    "WebhookEndpoint",
    "WorkerHeartbeat",
]
