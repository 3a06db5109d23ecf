"""lawful to operate: DROP's batches and work items, the Do-Not-Call registry, privacy requests, the
audit trail; contacts carry DROP's hashes of their email and phone and their phone's Do-Not-Call state

- ``contacts.email_hash`` / ``phone_hash``: DROP's unsalted SHA-256/Base64 hashes (on SQLite through
  the SQL functions every connection of vpx registers, vpx.compliance.hashing; on PostgreSQL through
  ``vpx_email_hash()`` / ``vpx_phone_hash()`` defined here), filled for the contacts there are;
- ``contacts.phone_dnc``: null without a phone, else unknown, listed, clear or requested;
- the covering trigger (20261202_suppressed_contacts's, replaced): it computes the hashes and the
  phone's state, and a suppression entry by hash covers a contact as one by phone or email does; a
  contact whose hash a deletion entry holds (DROP's, or a deletion request's) is erased when it is
  written (its personal fields emptied, an entry for the contact itself added, so that every later
  write is erased too: a person deleted stays deleted whatever import brings them back);
- decision-makers of an erased contact are not written;
- the search change log's triggers (as 20261202_suppressed_contacts defines them) follow ``phone_dnc``
  too and log its old value, for the search's exclude_dnc term;
- ``compliance_events`` refuses updates and deletes;
- batch reveals and auto-buy rules take ``exclude_dnc``;
- ``unsubscribe_links``: the unsubscribe links of enrollments deleted with their sequence, mailbox or
  account, kept 31 days (an email's opt-out works at least 30 days after it was sent).

Revision ID: 20261203_compliance
Revises: 20261202_search_checks
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261203_compliance"
down_revision: str | Sequence[str] | None = "20261202_search_checks"
branch_labels: str | Sequence[str] | None = None
# auto_buy_rules and the sequences' tables come from another branch (the sequences' newest revision
# descends from the auto-buy one). batch_reveals' column is 20261203_compliance_batches: one revision
# depending on both other branches could not be downgraded and upgraded again by Alembic (nor could
# one naming 20261122_autobuy beside a revision that descends from it).
depends_on: str | Sequence[str] | None = ("20261129_unsubscribe_digests",)

WHEN = sa.DateTime(timezone=True)
SEARCHED = ("business_name", "specialty", "license_type", "industry", "city", "state")
ERASING = "('drop_deletion', 'deletion_request')"
TOMBSTONE = "Deleted at the person''s request"  # a SQL literal's text
ERASED_NOTE = "Erased when written: its email or phone was deleted at the person's request"
PERSONAL = ("street", "postal_code", "phone", "email", "website", "website_domain", "license_number", "identifiers")
WATCHED = ("phone", "email", "business_name", "name_key", *PERSONAL[:2], *PERSONAL[4:])
US_PHONE = {"sqlite": "GLOB '+1" + "[0-9]" * 10 + "'", "postgresql": "~ '^\\+1[0-9]{10}$'"}
NUMBER = {"sqlite": "INTEGER", "postgresql": "bigint"}


def _covering(row: str, *, hashes: bool = True, email_hash: str = "", phone_hash: str = "") -> str:
    """An entry that covers the contact ``row``, as the reveal's check matches them; by hash too (the
    row's hash columns, or the expressions given for them)."""
    found = (
        f"(s.kind = 'contact' AND s.value = 'ct_' || {row}.id) "
        f"OR (s.kind = 'phone' AND s.value = {row}.phone) "
        f"OR (s.kind = 'email' AND s.value = lower({row}.email))"
    )
    if hashes:
        found += (
            f" OR (s.kind = 'email_hash' AND s.value = {email_hash or row + '.email_hash'})"
            f" OR (s.kind = 'phone_hash' AND s.value = {phone_hash or row + '.phone_hash'})"
        )
    return f"EXISTS (SELECT 1 FROM suppressions s WHERE {found})"


def _phone_dnc(row: str, dialect: str) -> str:
    """The phone's Do-Not-Call state (nested CASEs: PostgreSQL evaluates them in order, so the cast
    only ever sees a US number)."""
    digits = f"CAST(substr({row}.phone, 3) AS {NUMBER[dialect]})"
    return (
        f"CASE WHEN {row}.phone IS NULL THEN NULL "
        f"WHEN EXISTS (SELECT 1 FROM suppressions d WHERE d.kind = 'do_not_call' AND d.value = {row}.phone) "
        "THEN 'requested' "
        f"WHEN {row}.phone {US_PHONE[dialect]} THEN (CASE WHEN EXISTS (SELECT 1 FROM dnc_area_codes a "
        f"WHERE a.area_code = substr({row}.phone, 3, 3) AND a.fresh) THEN (CASE WHEN EXISTS "
        f"(SELECT 1 FROM dnc_numbers n WHERE n.number = {digits}) THEN 'listed' ELSE 'clear' END) "
        "ELSE 'unknown' END) ELSE 'unknown' END"
    )


def _hash_entry(email_hash: str, phone_hash: str) -> str:
    """The first deletion entry by one of these hashes (its reason), as a subquery's WHERE."""
    return (
        f"((s.kind = 'email_hash' AND s.value = {email_hash}) OR (s.kind = 'phone_hash' AND s.value = {phone_hash})) "
        f"AND s.reason IN {ERASING}"
    )


def _erased(row: str) -> str:
    return (
        "EXISTS (SELECT 1 FROM suppressions e WHERE e.kind = 'contact' "
        f"AND e.value = 'ct_' || {row}.id AND e.reason IN {ERASING})"
    )


def _sqlite_scrub() -> str:
    emptied = ", ".join(f"{name} = NULL" for name in PERSONAL)
    left = " OR ".join(f"{name} IS NOT NULL" for name in PERSONAL)
    return (
        f"UPDATE contacts SET business_name = '{TOMBSTONE}', name_key = '', {emptied}, email_hash = NULL, "
        f"phone_hash = NULL, phone_dnc = NULL, suppressed = 1 WHERE id = new.id AND {_erased('contacts')} "
        f"AND ({left} OR business_name IS NOT '{TOMBSTONE}' OR email_hash IS NOT NULL OR phone_hash IS NOT NULL)"
    )


NOTE_SQL = ERASED_NOTE.replace("'", "''")


def _sqlite_body(changed: str) -> str:
    """One trigger body for inserts and updates (SQLite fires its triggers in no promised order, so
    one body does it all, in order): an erasing entry for the contact when a deletion entry holds
    its hash; its hashes, whether an entry covers it and its phone's state, in one statement; then,
    for an erased contact, its personal fields emptied. ``changed``: when the phone or email was
    written (the insert's ``1``)."""
    email_hash, phone_hash = "vpx_email_hash(new.email)", "vpx_phone_hash(new.phone)"
    now = "strftime('%Y-%m-%d %H:%M:%S', 'now') || '.000000'"
    covering = _covering("contacts", email_hash=email_hash, phone_hash=phone_hash)
    return f"""
        INSERT OR IGNORE INTO suppressions (kind, value, reason, note, created_at)
            SELECT 'contact', 'ct_' || new.id, s.reason, '{NOTE_SQL}', {now} FROM suppressions s
            WHERE {changed} AND {_hash_entry(email_hash, phone_hash)} ORDER BY s.id LIMIT 1;
        UPDATE contacts SET email_hash = {email_hash}, phone_hash = {phone_hash}, suppressed = {covering},
            phone_dnc = {_phone_dnc("contacts", "sqlite")} WHERE id = new.id AND {changed};
        {_sqlite_scrub()};
    """


SQLITE_COMPLIANCE = (
    # The insert is logged for the search first, whichever of this trigger and the log's own insert
    # trigger SQLite fires first: else this one's update would log the new contact as though the
    # postings already held it (and a fold would never add it).
    "CREATE TRIGGER contacts_compliance_ai AFTER INSERT ON contacts BEGIN "
    f"INSERT INTO search_changes (contact_id, was_active) VALUES (new.id, 0); {_sqlite_body('1')} END",
    f"""CREATE TRIGGER contacts_compliance_au AFTER UPDATE OF {", ".join(WATCHED)} ON contacts BEGIN
        {_sqlite_body("(old.phone IS NOT new.phone OR old.email IS NOT new.email)")} END""",
    f"""CREATE TRIGGER decision_makers_erased BEFORE INSERT ON decision_makers
    WHEN {_erased("new").replace("new.id", "new.contact_id")} BEGIN SELECT RAISE(IGNORE); END""",
    """CREATE TRIGGER compliance_events_no_update BEFORE UPDATE ON compliance_events BEGIN
        SELECT RAISE(ABORT, 'the audit trail is append-only'); END""",
    """CREATE TRIGGER compliance_events_no_delete BEFORE DELETE ON compliance_events BEGIN
        SELECT RAISE(ABORT, 'the audit trail is append-only'); END""",
)
SQLITE_DROPPED = ("contacts_compliance_ai", "contacts_compliance_au", "decision_makers_erased")
SQLITE_AUDIT = ("compliance_events_no_update", "compliance_events_no_delete")


def _postgres_compliance() -> tuple[str, ...]:
    changed = "(TG_OP = 'INSERT' OR NEW.phone IS DISTINCT FROM OLD.phone OR NEW.email IS DISTINCT FROM OLD.email)"
    emptied = " ".join(f"NEW.{name} := NULL;" for name in PERSONAL)
    return (
        r"""CREATE OR REPLACE FUNCTION vpx_email_hash(value text) RETURNS text LANGUAGE sql IMMUTABLE STRICT
        PARALLEL SAFE AS $$ SELECT CASE WHEN s = '' THEN NULL ELSE encode(sha256(convert_to(s, 'UTF8')), 'base64') END
        FROM (SELECT lower(regexp_replace(value, '\s', '', 'g')) AS s) AS standard $$""",
        r"""CREATE OR REPLACE FUNCTION vpx_phone_hash(value text) RETURNS text LANGUAGE sql IMMUTABLE STRICT
        PARALLEL SAFE AS $$ SELECT CASE WHEN s = '' THEN NULL ELSE encode(sha256(convert_to(s, 'UTF8')), 'base64') END
        FROM (SELECT right(regexp_replace(value, '\D', '', 'g'), 10) AS s) AS standard $$""",
        f"""CREATE OR REPLACE FUNCTION vpx_contact_suppressed() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            erasing text;
        BEGIN
            IF {changed} THEN
                NEW.email_hash := vpx_email_hash(NEW.email);
                NEW.phone_hash := vpx_phone_hash(NEW.phone);
                SELECT s.reason INTO erasing FROM suppressions s
                    WHERE {_hash_entry("NEW.email_hash", "NEW.phone_hash")} ORDER BY s.id LIMIT 1;
                IF erasing IS NOT NULL THEN
                    INSERT INTO suppressions (kind, value, reason, note, created_at)
                    VALUES ('contact', 'ct_' || NEW.id, erasing, '{NOTE_SQL}', now())
                    ON CONFLICT (kind, value) DO NOTHING;
                END IF;
            END IF;
            IF {_erased("NEW")} THEN
                NEW.business_name := '{TOMBSTONE}';
                NEW.name_key := '';
                {emptied}
                NEW.email_hash := NULL;
                NEW.phone_hash := NULL;
            END IF;
            IF {changed} THEN
                NEW.suppressed := {_covering("NEW")};
                NEW.phone_dnc := {_phone_dnc("NEW", "postgresql")};
            END IF;
            RETURN NEW;
        END $$""",
        "DROP TRIGGER IF EXISTS contacts_suppressed ON contacts",
        f"CREATE TRIGGER contacts_suppressed BEFORE INSERT OR UPDATE OF {', '.join(WATCHED)} ON contacts "
        "FOR EACH ROW EXECUTE FUNCTION vpx_contact_suppressed()",
        f"""CREATE FUNCTION vpx_decision_maker_erased() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF {_erased("NEW").replace("NEW.id", "NEW.contact_id")} THEN
                RETURN NULL;
            END IF;
            RETURN NEW;
        END $$""",
        "CREATE TRIGGER decision_makers_erased BEFORE INSERT ON decision_makers "
        "FOR EACH ROW EXECUTE FUNCTION vpx_decision_maker_erased()",
        """CREATE FUNCTION vpx_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION 'the audit trail is append-only';
        END $$""",
        "CREATE TRIGGER compliance_events_append_only BEFORE UPDATE OR DELETE ON compliance_events "
        "FOR EACH ROW EXECUTE FUNCTION vpx_append_only()",
    )


# 20261202_suppressed_contacts's covering trigger, put back by the downgrade.
def _previous_covering(dialect: str) -> tuple[str, ...]:
    if dialect == "sqlite":
        covering = _covering("new", hashes=False)
        return (
            f"""CREATE TRIGGER contacts_suppressed_ai AFTER INSERT ON contacts
            WHEN {covering} BEGIN
                UPDATE contacts SET suppressed = 1 WHERE id = new.id;
            END""",
            f"""CREATE TRIGGER contacts_suppressed_au AFTER UPDATE OF phone, email ON contacts
            WHEN old.phone IS NOT new.phone OR old.email IS NOT new.email BEGIN
                UPDATE contacts SET suppressed = {covering} WHERE id = new.id;
            END""",
        )
    return (
        f"""CREATE OR REPLACE FUNCTION vpx_contact_suppressed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'INSERT' OR NEW.phone IS DISTINCT FROM OLD.phone OR NEW.email IS DISTINCT FROM OLD.email THEN
                NEW.suppressed := {_covering("NEW", hashes=False)};
            END IF;
            RETURN NEW;
        END $$""",
        "DROP TRIGGER IF EXISTS contacts_suppressed ON contacts",
        "CREATE TRIGGER contacts_suppressed BEFORE INSERT OR UPDATE OF phone, email ON contacts "
        "FOR EACH ROW EXECUTE FUNCTION vpx_contact_suppressed()",
    )


def _search_triggers(dialect: str, *, with_dnc: bool) -> tuple[str, ...]:
    """The search change log's update and delete triggers as 20261202_suppressed_contacts defines
    them, following ``phone_dnc`` (and logging its old value) when asked."""
    columns = f"contact_id, was_active, {', '.join(SEARCHED)}, email_status" + (", phone_dnc" if with_dnc else "")
    if dialect == "sqlite":
        active = "old.status = 'active' AND NOT old.suppressed"
        old = ", ".join(f"old.{name}" for name in SEARCHED)
        old += ", CASE WHEN old.email IS NULL THEN NULL ELSE old.email_status END"
        changed = " OR ".join(f"old.{name} IS NOT new.{name}" for name in (*SEARCHED, "status"))
        changed += " OR (old.email IS NULL) IS NOT (new.email IS NULL) OR old.email_status IS NOT new.email_status"
        watched = ", ".join((*SEARCHED, "status", "email", "email_status"))
        changed += " OR old.suppressed IS NOT new.suppressed"
        watched += ", suppressed"
        if with_dnc:
            old += ", old.phone_dnc"
            changed += " OR old.phone_dnc IS NOT new.phone_dnc"
            watched += ", phone_dnc"
        return (
            f"""CREATE TRIGGER search_changes_au AFTER UPDATE OF {watched} ON contacts
            WHEN {changed} BEGIN
                INSERT INTO search_changes ({columns}) VALUES (old.id, {active}, {old});
            END""",
            f"""CREATE TRIGGER search_changes_ad AFTER DELETE ON contacts BEGIN
                INSERT INTO search_changes ({columns}) VALUES (old.id, {active}, {old});
            END""",
        )
    active = "OLD.status = 'active' AND NOT OLD.suppressed"
    old = ", ".join(f"OLD.{name}" for name in SEARCHED)
    old += ", CASE WHEN OLD.email IS NULL THEN NULL ELSE OLD.email_status END"
    changed = " OR ".join(f"OLD.{name} IS DISTINCT FROM NEW.{name}" for name in (*SEARCHED, "status"))
    changed += (
        " OR (OLD.email IS NULL) IS DISTINCT FROM (NEW.email IS NULL)"
        " OR OLD.email_status IS DISTINCT FROM NEW.email_status"
    )
    changed += " OR OLD.suppressed IS DISTINCT FROM NEW.suppressed"
    if with_dnc:
        old += ", OLD.phone_dnc"
        changed += " OR OLD.phone_dnc IS DISTINCT FROM NEW.phone_dnc"
    return (
        f"""CREATE OR REPLACE FUNCTION vpx_search_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'INSERT' THEN
                INSERT INTO search_changes (contact_id, was_active) VALUES (NEW.id, false);
            ELSIF TG_OP = 'DELETE' OR ({changed}) THEN
                INSERT INTO search_changes ({columns}) VALUES (OLD.id, {active}, {old});
            END IF;
            RETURN NULL;
        END $$""",
    )


def _tables() -> None:
    op.create_table(
        "drop_state",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("api_key_sealed", sa.Text(), nullable=True),
        sa.Column("last_pull_at", WHEN, nullable=True),
        sa.Column("last_attempt_at", WHEN, nullable=True),
        sa.Column("retry_at", WHEN, nullable=True),
        sa.Column("last_error", sa.String(length=500), nullable=True),
        sa.Column("warned_at", WHEN, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_drop_state")),
    )
    op.create_table(
        "drop_batches",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("file_name", sa.String(length=200), nullable=False),
        sa.Column("downloaded_at", WHEN, nullable=False),
        sa.Column("deadline", WHEN, nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("items", sa.Integer(), nullable=False),
        sa.Column("removed", sa.Integer(), nullable=False),
        sa.Column("processed_at", WHEN, nullable=True),
        sa.Column("reported_at", WHEN, nullable=True),
        sa.Column("upload_attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.String(length=500), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_drop_batches")),
    )
    op.create_table(
        "drop_items",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("batch_id", sa.String(length=32), nullable=False),
        sa.Column("list_type", sa.String(length=16), nullable=False),
        sa.Column("file_name", sa.String(length=120), nullable=False),
        sa.Column("item_id", sa.String(length=12), nullable=False),
        sa.Column("hash", sa.String(length=44), nullable=False),
        sa.Column("status", sa.SmallInteger(), nullable=True),
        sa.Column("matched", sa.Integer(), nullable=True),
        sa.Column("decided_at", WHEN, nullable=True),
        sa.Column("exempt_reason", sa.String(length=500), nullable=True),
        sa.Column("entry_ids", sa.Text(), nullable=True),
        sa.Column("lifted_at", WHEN, nullable=True),
        sa.ForeignKeyConstraint(
            ["batch_id"], ["drop_batches.id"], name=op.f("fk_drop_items_batch_id_drop_batches"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_drop_items")),
        sa.UniqueConstraint("batch_id", "item_id", name=op.f("uq_drop_items_batch_id_item_id")),
    )
    op.create_index(op.f("ix_drop_items_item_id"), "drop_items", ["item_id"])
    op.create_index(op.f("ix_drop_items_hash"), "drop_items", ["hash"])
    op.create_table(
        "dnc_area_codes",
        sa.Column("area_code", sa.String(length=3), nullable=False),
        sa.Column("version_date", sa.Date(), nullable=False),
        sa.Column("imported_at", WHEN, nullable=False),
        sa.Column("numbers", sa.Integer(), nullable=False),
        sa.Column("last_kind", sa.String(length=8), nullable=False),
        sa.Column("fresh", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("area_code", name=op.f("pk_dnc_area_codes")),
    )
    op.create_table(
        "dnc_numbers",
        sa.Column("number", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.PrimaryKeyConstraint("number", name=op.f("pk_dnc_numbers")),
    )
    op.create_table(
        "privacy_requests",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("received_at", WHEN, nullable=False),
        sa.Column("expected_by", WHEN, nullable=False),
        sa.Column("email", sa.String(length=320), nullable=True),
        sa.Column("phone", sa.String(length=20), nullable=True),
        sa.Column("name", sa.String(length=300), nullable=True),
        sa.Column("postal_code", sa.String(length=10), nullable=True),
        sa.Column("npi", sa.String(length=10), nullable=True),
        sa.Column("details", sa.Text(), nullable=True),
        sa.Column("contact_ids", sa.Text(), nullable=True),
        sa.Column("matched", sa.String(length=100), nullable=True),
        sa.Column("verified", sa.Boolean(), nullable=False),
        sa.Column("handled_as", sa.String(length=16), nullable=True),
        sa.Column("decided_at", WHEN, nullable=True),
        sa.Column("decided_by", sa.String(length=100), nullable=True),
        sa.Column("deny_reason", sa.String(length=32), nullable=True),
        sa.Column("note", sa.String(length=1000), nullable=True),
        sa.Column("resolution", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_privacy_requests")),
    )
    op.create_index(op.f("ix_privacy_requests_received_at"), "privacy_requests", ["received_at"])
    op.create_index(op.f("ix_privacy_requests_status_expected_by"), "privacy_requests", ["status", "expected_by"])
    op.create_table(
        "compliance_events",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("occurred_at", WHEN, nullable=False),
        sa.Column("kind", sa.String(length=40), nullable=False),
        sa.Column("subject", sa.String(length=64), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.Column("previous_hash", sa.String(length=64), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_compliance_events")),
    )
    op.create_table(
        "unsubscribe_links",
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("sender", sa.String(length=320), nullable=False),
        sa.Column("kept_until", WHEN, nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_unsubscribe_links_account_id_accounts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("digest", name=op.f("pk_unsubscribe_links")),
    )
    op.create_index(op.f("ix_unsubscribe_links_kept_until"), "unsubscribe_links", ["kept_until"])


HASH_INDEXES = (("ix_contacts_email_hash", "email_hash"), ("ix_contacts_phone_hash", "phone_hash"))
TABLES = ("compliance_events", "privacy_requests", "dnc_numbers", "dnc_area_codes", "drop_items", "drop_batches")


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    false = "0" if dialect == "sqlite" else "false"
    _tables()
    # Columns added in place (no batch copy of the table, which would drop its triggers).
    for name in ("email_hash", "phone_hash"):
        op.add_column("contacts", sa.Column(name, sa.String(length=44), nullable=True))
    op.add_column("contacts", sa.Column("phone_dnc", sa.String(length=10), nullable=True))
    op.add_column("search_changes", sa.Column("phone_dnc", sa.String(length=10), nullable=True))
    op.add_column(
        "auto_buy_rules", sa.Column("exclude_dnc", sa.Boolean(), server_default=sa.text(false), nullable=False)
    )
    if dialect == "postgresql":
        for statement in _postgres_compliance()[:2]:  # the hash functions, for the fill below
            op.execute(statement)
    # The contacts there are: their hashes, and their phones unknown (no registry data yet). Before
    # the triggers change, so the search's change log does not take a million rows.
    op.execute(
        "UPDATE contacts SET email_hash = vpx_email_hash(email), phone_hash = vpx_phone_hash(phone), "
        "phone_dnc = CASE WHEN phone IS NULL THEN NULL ELSE 'unknown' END "
        "WHERE email IS NOT NULL OR phone IS NOT NULL"
    )
    for name, column in HASH_INDEXES:
        where = sa.text(f"{column} IS NOT NULL")
        op.create_index(name, "contacts", [column], sqlite_where=where, postgresql_where=where)
    if dialect == "sqlite":
        for name in ("search_changes_au", "search_changes_ad", "contacts_suppressed_ai", "contacts_suppressed_au"):
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        for statement in SQLITE_COMPLIANCE:
            op.execute(statement)
    else:
        for statement in _postgres_compliance()[2:]:
            op.execute(statement)
    for statement in _search_triggers(dialect, with_dnc=True):
        op.execute(statement)


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for name in ("search_changes_au", "search_changes_ad", *SQLITE_DROPPED, *SQLITE_AUDIT):
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
    else:
        op.execute("DROP TRIGGER IF EXISTS compliance_events_append_only ON compliance_events")
        op.execute("DROP FUNCTION IF EXISTS vpx_append_only()")
        op.execute("DROP TRIGGER IF EXISTS decision_makers_erased ON decision_makers")
        op.execute("DROP FUNCTION IF EXISTS vpx_decision_maker_erased()")
    for statement in _previous_covering(dialect):
        op.execute(statement)
    for statement in _search_triggers(dialect, with_dnc=False):
        op.execute(statement)
    if dialect == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS vpx_email_hash(text)")
        op.execute("DROP FUNCTION IF EXISTS vpx_phone_hash(text)")
    for name, _ in HASH_INDEXES:
        op.drop_index(name, table_name="contacts")
    for table, column in (
        ("contacts", "email_hash"),
        ("contacts", "phone_hash"),
        ("contacts", "phone_dnc"),
        ("search_changes", "phone_dnc"),
        ("auto_buy_rules", "exclude_dnc"),
    ):
        op.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    op.drop_index(op.f("ix_privacy_requests_status_expected_by"), table_name="privacy_requests")
    op.drop_index(op.f("ix_privacy_requests_received_at"), table_name="privacy_requests")
    op.drop_index(op.f("ix_drop_items_hash"), table_name="drop_items")
    op.drop_index(op.f("ix_drop_items_item_id"), table_name="drop_items")
    op.drop_index(op.f("ix_unsubscribe_links_kept_until"), table_name="unsubscribe_links")
    op.drop_table("unsubscribe_links")
    for table in TABLES:
        op.drop_table(table)
    op.drop_table("drop_state")
