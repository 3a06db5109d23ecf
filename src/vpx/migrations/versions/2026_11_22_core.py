"""core: accounts, keys, ledger, contacts, reveals, suppression, idempotency, search

Revision ID: 20261122_core
Revises:
Create Date: 2026-11-22 01:34:02.001820
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261122_core"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=True),
        sa.Column("plan", sa.String(length=32), nullable=False),
        sa.Column("free_credits", sa.BigInteger(), nullable=False),
        sa.Column("free_period", sa.String(length=7), nullable=False),
        sa.Column("paid_credits", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_accounts")),
        sa.UniqueConstraint("email", name=op.f("uq_accounts_email")),
    )
    op.create_table(
        "idempotency_records",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("response_status", sa.Integer(), nullable=True),
        sa.Column("response_body", sa.Text(), nullable=True),
        sa.Column("response_headers", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_idempotency_records")),
        sa.UniqueConstraint("account_id", "key", name=op.f("uq_idempotency_records_account_id_key")),
    )
    with op.batch_alter_table("idempotency_records", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_idempotency_records_created_at"), ["created_at"], unique=False)

    op.create_table(
        "search_terms",
        sa.Column("term", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("term", name=op.f("pk_search_terms")),
    )
    op.create_table(
        "suppressions",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("value", sa.String(length=320), nullable=False),
        sa.Column("reason", sa.String(length=32), nullable=False),
        sa.Column("note", sa.String(length=500), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_suppressions")),
        sa.UniqueConstraint("kind", "value", name=op.f("uq_suppressions_kind_value")),
    )
    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("key_type", sa.String(length=8), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("display_prefix", sa.String(length=24), nullable=False),
        sa.Column("secret_hash", sa.String(length=64), nullable=False),
        sa.Column("ip_allowlist", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("rotate_by", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_api_keys_account_id_accounts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_keys")),
        sa.UniqueConstraint("secret_hash", name=op.f("uq_api_keys_secret_hash")),
    )
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_api_keys_account_id_revoked_at"), ["account_id", "revoked_at"], unique=False
        )

    op.create_table(
        "contacts",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("business_name", sa.String(length=300), nullable=False),
        sa.Column("name_key", sa.String(length=300), nullable=False),
        sa.Column("street", sa.String(length=300), nullable=True),
        sa.Column("city", sa.String(length=120), nullable=False),
        sa.Column("city_key", sa.String(length=120), nullable=False),
        sa.Column("state", sa.String(length=2), nullable=False),
        sa.Column("postal_code", sa.String(length=10), nullable=True),
        sa.Column("country", sa.String(length=2), nullable=False),
        sa.Column("phone", sa.String(length=20), nullable=True),
        sa.Column("email", sa.String(length=320), nullable=True),
        sa.Column("website", sa.String(length=300), nullable=True),
        sa.Column("industry", sa.String(length=40), nullable=False),
        sa.Column("specialty", sa.String(length=200), nullable=True),
        sa.Column("specialty_key", sa.String(length=200), nullable=True),
        sa.Column("license_type", sa.String(length=120), nullable=True),
        sa.Column("license_type_key", sa.String(length=120), nullable=True),
        sa.Column("license_number", sa.String(length=64), nullable=True),
        sa.Column("license_state", sa.String(length=2), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("origin", sa.String(length=16), nullable=False),
        sa.Column("intent_level", sa.String(length=8), nullable=True),
        sa.Column("publisher_account_id", sa.String(length=32), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["publisher_account_id"],
            ["accounts.id"],
            name=op.f("fk_contacts_publisher_account_id_accounts"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_contacts")),
    )
    with op.batch_alter_table("contacts", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_contacts_industry_state"), ["industry", "state"], unique=False)
        batch_op.create_index(batch_op.f("ix_contacts_license_type_key"), ["license_type_key"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_contacts_name_key_state_city_key"), ["name_key", "state", "city_key"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_contacts_phone"), ["phone"], unique=False)
        batch_op.create_index(batch_op.f("ix_contacts_publisher_account_id"), ["publisher_account_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_contacts_specialty_key"), ["specialty_key"], unique=False)
        batch_op.create_index(batch_op.f("ix_contacts_state_city_key"), ["state", "city_key"], unique=False)

    op.create_table(
        "ledger_entries",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("balance_after", sa.BigInteger(), nullable=False),
        sa.Column("reference", sa.String(length=64), nullable=True),
        sa.Column("description", sa.String(length=500), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_ledger_entries_account_id_accounts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ledger_entries")),
    )
    with op.batch_alter_table("ledger_entries", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_ledger_entries_account_id_id"), ["account_id", "id"], unique=False)

    op.create_table(
        "contact_sources",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("contact_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("registry", sa.String(length=32), nullable=False),
        sa.Column("record_id", sa.String(length=64), nullable=False),
        sa.Column("file_date", sa.Date(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["contact_id"],
            ["contacts.id"],
            name=op.f("fk_contact_sources_contact_id_contacts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_contact_sources")),
        sa.UniqueConstraint("registry", "record_id", name=op.f("uq_contact_sources_registry_record_id")),
    )
    with op.batch_alter_table("contact_sources", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_contact_sources_contact_id"), ["contact_id"], unique=False)

    op.create_table(
        "reveals",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("contact_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("credits_charged", sa.BigInteger(), nullable=False),
        sa.Column("channel", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_reveals_account_id_accounts"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["contact_id"], ["contacts.id"], name=op.f("fk_reveals_contact_id_contacts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reveals")),
        sa.UniqueConstraint("account_id", "contact_id", name=op.f("uq_reveals_account_id_contact_id")),
    )
    with op.batch_alter_table("reveals", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_reveals_contact_id"), ["contact_id"], unique=False)

    op.create_table(
        "suppression_hits",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("contact_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("suppression_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_suppression_hits_account_id_accounts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["contact_id"],
            ["contacts.id"],
            name=op.f("fk_suppression_hits_contact_id_contacts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["suppression_id"],
            ["suppressions.id"],
            name=op.f("fk_suppression_hits_suppression_id_suppressions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_suppression_hits")),
    )
    with op.batch_alter_table("suppression_hits", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_suppression_hits_account_id"), ["account_id"], unique=False)

    statements = SQLITE_SEARCH if op.get_bind().dialect.name == "sqlite" else POSTGRES_SEARCH
    for statement in statements:
        op.execute(statement)


# The dialect-specific search indexes (see vpx/contacts/search/): FTS5 tables kept in step by
# triggers on SQLite; a generated tsvector column and trigram indexes on PostgreSQL.
_FTS_COLUMNS = "business_name, specialty, license_type, industry, city, search_facets"
_NEW = ", ".join(f"new.{c}" for c in _FTS_COLUMNS.split(", "))
_OLD = ", ".join(f"old.{c}" for c in _FTS_COLUMNS.split(", "))
SQLITE_SEARCH = [
    # Filters as index terms ("stca", "inhomeservices", "ctsanfrancisco"), so that a filtered search
    # is answered, and counted, by the full-text index alone.
    """ALTER TABLE contacts ADD COLUMN search_facets TEXT GENERATED ALWAYS AS (
        'st' || lower(state) || ' in' || replace(industry, '-', '') || ' ct' || replace(city_key, ' ', '')
    ) VIRTUAL""",
    f"""CREATE VIRTUAL TABLE contacts_fts USING fts5({_FTS_COLUMNS},
        content='contacts', content_rowid='id',
        tokenize='unicode61 remove_diacritics 2', prefix='2 3')""",
    # Only active contacts are indexed, so a match needs no look at the contacts table to count.
    f"""CREATE TRIGGER contacts_fts_ai AFTER INSERT ON contacts WHEN new.status = 'active' BEGIN
        INSERT INTO contacts_fts(rowid, {_FTS_COLUMNS}) VALUES (new.id, {_NEW}); END""",
    f"""CREATE TRIGGER contacts_fts_ad AFTER DELETE ON contacts WHEN old.status = 'active' BEGIN
        INSERT INTO contacts_fts(contacts_fts, rowid, {_FTS_COLUMNS}) VALUES ('delete', old.id, {_OLD}); END""",
    f"""CREATE TRIGGER contacts_fts_au AFTER UPDATE OF {_FTS_COLUMNS}, status ON contacts BEGIN
        INSERT INTO contacts_fts(contacts_fts, rowid, {_FTS_COLUMNS})
            SELECT 'delete', old.id, {_OLD} WHERE old.status = 'active';
        INSERT INTO contacts_fts(rowid, {_FTS_COLUMNS})
            SELECT new.id, {_NEW} WHERE new.status = 'active'; END""",
    "CREATE VIRTUAL TABLE search_terms_trgm USING fts5(term, tokenize='trigram')",
    """CREATE TRIGGER search_terms_ai AFTER INSERT ON search_terms BEGIN
        INSERT INTO search_terms_trgm(term) VALUES (new.term); END""",
]


def _pg_words(column: str) -> str:
    # The same words as vpx.contacts.normalise.words(): accents folded, every run of
    # non-alphanumerics a separator (so "C-36" is "c 36", not a signed number).
    return f"regexp_replace(vpx_fold(coalesce({column}, '')), '[^[:alnum:]]+', ' ', 'g')"


POSTGRES_SEARCH = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE EXTENSION IF NOT EXISTS unaccent",
    # unaccent() is only STABLE; pinned to its dictionary it is safe to declare IMMUTABLE.
    """CREATE OR REPLACE FUNCTION vpx_fold(text) RETURNS text
        LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
        AS $$ SELECT lower(public.unaccent('public.unaccent'::regdictionary, $1)) $$""",
    # Weights: A business_name, B specialty, C license_type, D industry and city (see search/postgres.py).
    f"""ALTER TABLE contacts ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('simple', {_pg_words("business_name")}), 'A') ||
        setweight(to_tsvector('simple', {_pg_words("specialty")}), 'B') ||
        setweight(to_tsvector('simple', {_pg_words("license_type")}), 'C') ||
        setweight(to_tsvector('simple', {_pg_words("industry")} || ' ' || {_pg_words("city")}), 'D') ||
        -- Filters as lexemes no query word can spell ("§stca", "§inhomeservices", "§ctsanfrancisco"),
        -- so the GIN index intersects words and filters before any row is read.
        array_to_tsvector(ARRAY['§st' || lower(state), '§in' || replace(industry, '-', ''),
                                '§ct' || replace(city_key, ' ', '')])) STORED""",
    "CREATE INDEX ix_contacts_search_vector ON contacts USING gin (search_vector)",
    # On the text cast: the column is varchar, and `term % :word` compares text.
    "CREATE INDEX ix_search_terms_term_trgm ON search_terms USING gin ((term::text) gin_trgm_ops)",
    "CREATE INDEX ix_search_terms_term_pattern ON search_terms (term text_pattern_ops)",
]


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for name in ("search_terms_ai", "contacts_fts_au", "contacts_fts_ad", "contacts_fts_ai"):
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        op.execute("DROP TABLE IF EXISTS search_terms_trgm")
        op.execute("DROP TABLE IF EXISTS contacts_fts")
    with op.batch_alter_table("suppression_hits", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_suppression_hits_account_id"))

    op.drop_table("suppression_hits")
    with op.batch_alter_table("reveals", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_reveals_contact_id"))

    op.drop_table("reveals")
    with op.batch_alter_table("contact_sources", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_contact_sources_contact_id"))

    op.drop_table("contact_sources")
    with op.batch_alter_table("ledger_entries", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_ledger_entries_account_id_id"))

    op.drop_table("ledger_entries")
    with op.batch_alter_table("contacts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_contacts_state_city_key"))
        batch_op.drop_index(batch_op.f("ix_contacts_specialty_key"))
        batch_op.drop_index(batch_op.f("ix_contacts_publisher_account_id"))
        batch_op.drop_index(batch_op.f("ix_contacts_phone"))
        batch_op.drop_index(batch_op.f("ix_contacts_name_key_state_city_key"))
        batch_op.drop_index(batch_op.f("ix_contacts_license_type_key"))
        batch_op.drop_index(batch_op.f("ix_contacts_industry_state"))

    op.drop_table("contacts")
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_api_keys_account_id_revoked_at"))

    op.drop_table("api_keys")
    op.drop_table("suppressions")
    op.drop_table("search_terms")
    with op.batch_alter_table("idempotency_records", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_idempotency_records_created_at"))

    op.drop_table("idempotency_records")
    op.drop_table("accounts")
