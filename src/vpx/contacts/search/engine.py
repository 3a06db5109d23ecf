"""The search contract, answered from the postings the same way on both databases.

A question is read (a trailing place becomes filters: vpx.contacts.search.language), planned into
clauses (vpx.contacts.search.plan), and answered by set operations on the bitmaps of its terms
(vpx.contacts.search.postings): the total is exact whatever the number of matches, and any page is
as cheap as the first. Relevance comes in three tiers, each in contact id order:

1. the business name holds the question's words as typed (or their other forms, or a typo's
   corrections): a business literally named so comes first;
2. the name, specialty or licence type holds them or the trade vocabulary's words for them;
3. anything else that matches (the words found only in the industry or the city).

Pages of one result set stop at the highest matching contact id there was when its first page was
read (remembered per process for a few minutes), so contacts added between two page requests shift
nothing.
"""

from __future__ import annotations

import dataclasses
import time
from array import array
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeVar

from pyroaring import BitMap
from rapidfuzz.distance import OSA
from sqlalchemy import Select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from vpx.contacts.normalise import fold, words
from vpx.contacts.search import postings
from vpx.contacts.search.caches import AnswerCache
from vpx.contacts.search.language import read_place
from vpx.contacts.search.plan import Clause, Option, Plan, plan_filter, plan_words
from vpx.contacts.search.terms import (
    EVERY_CONTACT,
    NAME,
    TEXT_FIELDS,
    TRADE_FIELDS,
    city_term,
    email_term,
    industry_term,
    state_term,
)
from vpx.contacts.search.vocabulary import Vocabulary, built_in
from vpx.models import Contact

if TYPE_CHECKING:
    from vpx.db import Database

AnySelect = TypeVar("AnySelect", bound="Select[*tuple[Any, ...]]")
MAX_CORRECTIONS = 3
# Bytes of bitmaps each process remembers (the most used terms: states, common words).
BITMAP_MEMORY = 64 * 1024 * 1024
# How long a result set's horizon is remembered for its later pages.
HORIZON_SECONDS = 300.0
# The first matches of an answer remembered (four pages of 25): later pages are worked out again.
KEPT_IDS = 100
# Folds committing between a search's view and its bitmaps before it takes the bitmaps as they come.
MOVES_TOLERATED = 4
T = TypeVar("T")

# Searches read through an ORM session or a bare connection (the API's search uses the latter: it
# has nothing to load into a session).
Reader = AsyncSession | AsyncConnection


@dataclass(frozen=True)
class SearchQuery:
    text: str | None = None
    state: str | None = None
    city: str | None = None
    industry: str | None = None
    specialty: str | None = None
    license_type: str | None = None
    limit: int = 25
    offset: int = 0
    # The email's deliverability status (vpx.deliverability.checks.STATUSES); contacts with an email only.
    email_status: str | None = None

    def count_key(self) -> tuple[Any, ...]:
        return (self.text, self.state, self.city, self.industry, self.specialty, self.license_type, self.email_status)


@dataclass(frozen=True)
class Interpreted:
    """How a question was read: its words, and the city and state searched (from the filters, or
    from a trailing "in PLACE" of the words)."""

    q: str
    city: str | None
    state: str | None

    def as_dict(self) -> dict[str, str | None]:
        return {"q": self.q, "city": self.city, "state": self.state}


@dataclass
class SearchPage:
    rows: list[Any]
    total: int
    interpreted: Interpreted | None = None
    # False only when more changes wait to be folded in than a search applies (vpx.contacts.search.
    # postings.PENDING_APPLIED): the answer is then the postings' with the first of them applied.
    exact: bool = True


class _Moved(Exception):
    """The postings moved on (a fold committed) between reading the view and reading bitmaps."""


PREVIEW_COLUMNS = (
    Contact.id,
    Contact.business_name,
    Contact.city,
    Contact.state,
    Contact.industry,
    Contact.intent_level,
    Contact.email,
    Contact.email_status,
    Contact.phone,
    Contact.website,
    Contact.street,
    Contact.bad_fields,
)


def max_edits(word: str) -> int:
    return 1 if len(word) < 8 else 2


_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def one_edit(word: str) -> set[str]:
    """Every string one edit from ``word``: a letter deleted, two neighbours swapped, a letter
    replaced or inserted (the optimal string alignment distance 1)."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    deleted = {a + b[1:] for a, b in splits if b}
    swapped = {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    replaced = {a + c + b[1:] for a, b in splits if b for c in _LETTERS}
    inserted = {a + c + b for a, b in splits for c in _LETTERS}
    return (deleted | swapped | replaced | inserted) - {word}


def closest(word: str, candidates: list[str]) -> tuple[str, ...]:
    """Candidates within the edit budget, nearest first (optimal string alignment distance)."""
    budget = max_edits(word)
    scored = []
    for term in candidates:
        if term == word:
            continue
        distance = OSA.distance(word, term, score_cutoff=budget)
        if distance <= budget:
            scored.append((distance, abs(len(term) - len(word)), term))
    scored.sort()
    return tuple(term for _, _, term in scored[:MAX_CORRECTIONS])


class SearchBackend(Protocol):
    async def search(self, session: Reader, query: SearchQuery) -> SearchPage: ...

    async def matching_condition(self, session: Reader, query: SearchQuery) -> Any:
        """A WHERE condition on ``contacts`` selecting what the query's words match (with their
        forms, corrections and vocabulary, the filters too), or None when it has no words."""
        ...

    async def add_terms(self, session: AsyncSession, terms: set[str]) -> None: ...

    def refresh_from(self, database: Database) -> SearchBackend: ...


class BitmapMemory:
    """The bitmaps a process remembers, by term (or prefix), each of the generation it was read in;
    at most ``capacity`` bytes, the least recently used forgotten first."""

    def __init__(self, capacity: int = BITMAP_MEMORY) -> None:
        self.capacity = capacity
        self.items: OrderedDict[str, tuple[int, int, BitMap]] = OrderedDict()
        self.size = 0

    def get(self, key: str, generation: int) -> BitMap | None:
        hit = self.items.get(key)
        if hit is None or hit[0] != generation:
            return None
        self.items.move_to_end(key)
        return hit[2]

    def put(self, key: str, generation: int, bitmap: BitMap) -> None:
        statistics = bitmap.get_statistics()
        weight = 64 + (
            statistics["n_bytes_array_containers"]
            + statistics["n_bytes_run_containers"]
            + statistics["n_bytes_bitset_containers"]
        )
        old = self.items.pop(key, None)
        if old is not None:
            self.size -= old[1]
        if weight > self.capacity // 4:
            return
        self.items[key] = (generation, weight, bitmap)
        self.size += weight
        while self.size > self.capacity:
            _, (_, dropped, _) = self.items.popitem(last=False)
            self.size -= dropped


class Horizons:
    """Each recent result set's highest contact id, for its later pages."""

    def __init__(self, capacity: int = 8192, clock: Callable[[], float] = time.monotonic) -> None:
        self.capacity, self.clock = capacity, clock
        self.items: OrderedDict[Any, tuple[float, int]] = OrderedDict()

    def get(self, key: Any) -> int | None:
        hit = self.items.get(key)
        if hit is None or self.clock() - hit[0] > HORIZON_SECONDS:
            return None
        return hit[1]

    def put(self, key: Any, horizon: int) -> None:
        self.items.pop(key, None)
        self.items[key] = (self.clock(), horizon)
        while len(self.items) > self.capacity:
            self.items.popitem(last=False)


@dataclass(frozen=True)
class Answer:
    """A question's first matches in page order (at least KEPT_IDS of them), how many there are,
    whether these are all, and the highest matching id (its result set's horizon)."""

    ids: array[int]
    total: int
    complete: bool
    highest: int


class Answers:
    """Recent answers, each for the postings' generation and pending changes it was worked out from
    (any change to the catalogue makes a new one): a popular question costs the page's rows only."""

    def __init__(self, capacity: int = 8192) -> None:
        self.capacity = capacity
        self.items: OrderedDict[Any, Answer] = OrderedDict()

    def get(self, key: Any) -> Answer | None:
        hit = self.items.get(key)
        if hit is not None:
            self.items.move_to_end(key)
        return hit

    def put(self, key: Any, answer: Answer) -> None:
        self.items.pop(key, None)
        self.items[key] = answer
        while len(self.items) > self.capacity:
            self.items.popitem(last=False)


@dataclass
class Terms:
    """The bitmaps one question needs, read (or remembered) and brought up to date with the changes
    pending in its view."""

    exact: dict[str, BitMap] = field(default_factory=dict)
    prefixed: dict[str, BitMap] = field(default_factory=dict)

    def term(self, term: str) -> BitMap:
        return self.exact.get(term) or BitMap()

    def word(self, fields: Iterable[str], word: str, prefix: bool) -> BitMap:
        source = self.prefixed if prefix else self.exact
        found = [source[f + word] for f in fields if f + word in source]
        return BitMap.union(*found) if found else BitMap()


def _option(terms: Terms, option: Option, fields: tuple[str, ...]) -> BitMap:
    last = len(option.words) - 1
    if last == 0:
        return terms.word(fields, option.words[0], option.prefix)
    per_field = []
    for f in fields:
        parts = [terms.word((f,), w, option.prefix and i == last) for i, w in enumerate(option.words)]
        per_field.append(BitMap.intersection(*parts))
    return BitMap.union(*per_field)


def _clause(terms: Terms, clause: Clause, fields: tuple[str, ...], *, typed_only: bool = False) -> BitMap:
    """Contacts that satisfy a clause in these fields: its words as typed anywhere in them, the
    vocabulary's words only where a trade shows itself (name, specialty, licence): "real estate" for
    "realtors" is not every business of the real-estate industry."""
    found = [_option(terms, option, fields) for option in clause.typed]
    trade = tuple(f for f in fields if f in TRADE_FIELDS)
    if not typed_only and trade:
        found += [_option(terms, option, trade) for option in clause.related]
    return BitMap.union(*found)


def _all_of(parts: list[BitMap], base: BitMap) -> BitMap:
    result = base
    for part in sorted(parts, key=len):
        result = result & part
        if not result:
            break
    return result


class BaseBackend:
    """Planning, reading the postings and paging, shared by both databases; the dialect parts look
    words up in the vocabulary (typo corrections) and read rows by id."""

    def __init__(self, vocabulary: Vocabulary | None = None) -> None:
        self.vocabulary = vocabulary or built_in()
        # What the vocabulary has for a query word, by the postings' generation it was read in (the
        # vocabulary grows only when a fold adds words): whether a word starts with it, and the words
        # near it. Never by time: a word added is seen by the next question.
        self.candidates: AnswerCache[Candidates] = AnswerCache(capacity=8192, ttl=float("inf"))
        # A question's plan, by the generation and the words of changes not folded in yet.
        self.plans: AnswerCache[Plan] = AnswerCache(capacity=8192, ttl=float("inf"))
        self.bitmaps = BitmapMemory()
        self.horizons = Horizons()
        self.answers = Answers()
        self.database: Database | None = None
        # Called when a search finds more changes waiting than it applies (the process folds them).
        self.on_backlog: Callable[[], None] | None = None

    def refresh_from(self, database: Database) -> Self:
        """Reads the operator's vocabulary (VPX_SEARCH_SYNONYMS) and recomputes stale corrections on a
        connection of its own."""
        self.database = database
        extra = getattr(database.settings, "search_synonyms", None)
        if extra is not None:
            from vpx.contacts.search.vocabulary import load

            self.vocabulary = load(extra)
        return self

    def _background(self) -> Callable[[], AbstractAsyncContextManager[Reader]] | None:
        return self.database.read_engine.connect if self.database is not None else None

    # --- the dialect parts -------------------------------------------------------------------

    async def has_prefix(self, session: Reader, word: str) -> bool:
        raise NotImplementedError

    async def similar_terms(self, session: Reader, word: str) -> list[str]:
        """Vocabulary words sharing trigrams with ``word`` (candidates two edits away)."""
        raise NotImplementedError

    async def known_words(self, session: Reader, candidates: list[str]) -> list[str]:
        """Which of ``candidates`` are vocabulary words."""
        raise NotImplementedError

    async def rows_by_id(self, session: Reader, ids: list[int]) -> list[Any]:
        """The preview columns of the active contacts among ``ids``, in any order."""
        raise NotImplementedError

    def ids_condition(self, ids: list[int]) -> Any:
        raise NotImplementedError

    async def add_terms(self, session: AsyncSession, terms: set[str]) -> None:
        raise NotImplementedError

    # --- planning ------------------------------------------------------------------------------

    async def plan(self, session: Reader, query: SearchQuery, view: postings.View | None = None) -> Plan:
        view = view if view is not None else await postings.read_view(session)

        async def corrections(word: str) -> tuple[str, ...]:
            return await self._corrections(session, word, view)

        return Plan(
            clauses=await plan_words(query.text, self.vocabulary, corrections),
            specialty=plan_filter(query.specialty),
            license_type=plan_filter(query.license_type),
        )

    async def _corrections(self, session: Reader, word: str, view: postings.View) -> tuple[str, ...]:
        """Nearest vocabulary words for a word that no catalogue word starts with (else none). The
        vocabulary counts the words of the changes not folded in yet, as it will once they are."""

        async def compute(reader: Reader) -> Candidates:
            if await self.has_prefix(reader, word):
                return Candidates(prefixed=True, near=())
            # Every word one edit away, looked up exactly (a few hundred index probes), finds what
            # most typos are; for a long word with none, words two edits away are found through
            # shared trigrams.
            near = await self.known_words(reader, sorted(one_edit(word)))
            if not near and max_edits(word) > 1:
                return Candidates(prefixed=False, near=(), far=tuple(await self.similar_terms(reader, word)))
            return Candidates(prefixed=False, near=tuple(near))

        pending = view.words
        if pending and any(other.startswith(word) for other in pending):
            return ()  # a word waiting to be folded starts with it: no typo, and nothing to look up
        found = await self.candidates.get((word, view.generation), compute, session)
        if found.prefixed:
            return ()
        if not pending:
            return closest(word, list(found.near or found.far))
        budget = max_edits(word)
        # A set: a word both in the vocabulary and waiting counts once (else it could crowd out others).
        near = {*found.near, *(other for other in pending if OSA.distance(word, other, score_cutoff=1) <= 1)}
        if not near and budget > 1:
            near = {*found.far, *(other for other in pending if OSA.distance(word, other, score_cutoff=2) <= 2)}
        return closest(word, sorted(near))

    # --- reading the postings ------------------------------------------------------------------

    async def _read(self, session: Reader, view: postings.View, exact: set[str], prefixes: set[str]) -> Terms:
        """The bitmaps of the terms, of the view's generation (_Moved when a fold committed after
        the view was read: the caller reads the view again)."""
        terms = Terms()
        missing = []
        for term in exact:
            remembered = self.bitmaps.get(term, view.generation)
            if remembered is None:
                missing.append(term)
            else:
                terms.exact[term] = remembered
        if missing:
            found = _of_generation(await postings.read_terms(session, sorted(missing)), view)
            for term in missing:
                bitmap = found.get(term, BitMap())
                self.bitmaps.put(term, view.generation, bitmap)
                terms.exact[term] = bitmap
        for prefix in prefixes:
            key = prefix + "*"
            remembered = self.bitmaps.get(key, view.generation)
            if remembered is None:
                found = _of_generation(await postings.read_prefixed(session, prefix), view)
                remembered = BitMap.union(*found.values()) if found else BitMap()
                self.bitmaps.put(key, view.generation, remembered)
            terms.prefixed[prefix] = remembered
        if view.pending:
            _apply_pending(terms, view)
        return terms

    async def _matches(
        self, session: Reader, query: SearchQuery, plan: Plan, view: postings.View
    ) -> tuple[list[BitMap], BitMap]:
        """The tiers of a question (one when it has no words) and all its matches, unclamped."""
        exact: set[str] = set()
        prefixes: set[str] = set()
        for clause, fields in self._clause_fields(plan):
            shown = tuple(f for f in fields if f in TRADE_FIELDS)
            for option, where in [(o, fields) for o in clause.typed] + [(o, shown) for o in clause.related]:
                for i, word in enumerate(option.words):
                    target = prefixes if option.prefix and i == len(option.words) - 1 else exact
                    target.update(f + word for f in where)
        facets = _facet_terms(query)
        exact.update(facets)
        if not facets and not plan.clauses:
            exact.add(EVERY_CONTACT)
        terms = await self._read(session, view, exact, prefixes)
        base = _all_of([terms.term(t) for t in facets], terms.term(facets[0]) if facets else BitMap())
        filters = [_clause(terms, c, ("s:",)) for c in plan.specialty]
        filters += [_clause(terms, c, ("l:",)) for c in plan.license_type]
        if not plan.clauses:
            start = base if facets else terms.term(EVERY_CONTACT)
            everything = _all_of(filters, start) if filters else start
            return [everything], everything
        required = plan.required
        first, *rest = [_clause(terms, c, TEXT_FIELDS) for c in required]
        everything = _all_of(rest + filters + ([base] if facets else []), first)
        if not everything:
            return [everything, BitMap(), BitMap()], everything
        trade = _all_of([_clause(terms, c, TRADE_FIELDS) for c in required], everything)
        named = _all_of([_clause(terms, c, (NAME,), typed_only=True) for c in plan.clauses], everything)
        return [named, trade - named, everything - trade - named], everything

    @staticmethod
    def _clause_fields(plan: Plan) -> Iterable[tuple[Clause, tuple[str, ...]]]:
        for clause in plan.clauses:
            yield clause, TEXT_FIELDS
        for clause in plan.specialty:
            yield clause, ("s:",)
        for clause in plan.license_type:
            yield clause, ("l:",)

    # --- answering -----------------------------------------------------------------------------

    async def interpret(
        self, session: Reader, query: SearchQuery, view: postings.View | None = None
    ) -> tuple[SearchQuery, Interpreted | None]:
        """The question with a trailing place read into the filters (explicit filters win), and how
        it was read; a place the catalogue does not know is left in the words."""
        if not query.text:
            return query, None
        tokens = words(query.text)
        place = read_place(tokens)
        if place is not None:
            state = query.state or place.state
            city = query.city or place.city_name
            view = view if view is not None else await postings.read_view(session)
            if (
                place.city
                and not query.city
                and not await self._knows_city(session, view, place.city_name or "", state)
            ):
                place = None
            else:
                text_ = " ".join(place.rest)
                query = dataclasses.replace(query, text=text_, state=state, city=city)
                return query, Interpreted(q=text_, city=city, state=state)
        return query, Interpreted(q=query.text or "", city=query.city, state=query.state)

    async def _knows_city(self, session: Reader, view: postings.View, city: str, state: str | None) -> bool:
        wanted = {city_term(city)} | ({state_term(state)} if state else set())
        terms = await self._read(session, view, wanted, set())
        return bool(_all_of([terms.term(t) for t in wanted], terms.term(city_term(city))))

    async def _viewed(self, session: Reader, work: Callable[[postings.View], Awaitable[T]]) -> T:
        """``work`` on a view of the postings, again on a fresh view when a fold committed meanwhile
        (its bitmaps must be of the view's generation); the last try takes them as they come."""
        for _ in range(MOVES_TOLERATED):
            try:
                return await work(await postings.read_view(session))
            except _Moved:
                continue
        return await work(dataclasses.replace(await postings.read_view(session), strict=False))

    async def search(self, session: Reader, query: SearchQuery) -> SearchPage:
        page = await self._viewed(session, lambda view: self._search(session, query, view))
        if not page.exact and self.on_backlog is not None:
            self.on_backlog()
        return page

    async def _search(self, session: Reader, query: SearchQuery, view: postings.View) -> SearchPage:
        query, interpreted = await self.interpret(session, query, view)
        plan = await self._plan(session, query, view)
        key = query.count_key()
        horizon = self.horizons.get(key) if query.offset else None
        end = query.offset + query.limit
        remembered = (key, view.stamp, horizon)
        answer = self.answers.get(remembered)
        if answer is None or (end > len(answer.ids) and not answer.complete):
            tiers, everything = await self._matches(session, query, plan, view)
            if horizon is not None:
                tiers = [_up_to(tier, horizon) for tier in tiers]
            kept = max(KEPT_IDS, end)
            ids = _page(tiers, 0, kept)
            total = sum(len(tier) for tier in tiers)
            answer = Answer(array("q", ids), total, len(ids) == total, everything.max() if everything else 0)
            if kept == KEPT_IDS:
                self.answers.put(remembered, answer)
        if query.offset == 0 and answer.highest:
            self.horizons.put(key, answer.highest)
        ids = list(answer.ids[query.offset : end])
        by_id = {row.id: row for row in await self.rows_by_id(session, ids)} if ids else {}
        return SearchPage(
            rows=[by_id[i] for i in ids if i in by_id], total=answer.total, interpreted=interpreted, exact=view.complete
        )

    async def _plan(self, session: Reader, query: SearchQuery, view: postings.View) -> Plan:
        """The question's plan, remembered for the postings' generation and the words waiting to be
        folded in (its words' corrections depend on both)."""

        async def compute(reader: Reader) -> Plan:
            return await self.plan(reader, query, view)

        key = (query.text, query.specialty, query.license_type, view.generation, view.words)
        return await self.plans.get(key, compute, session)

    async def matching_ids(self, session: Reader, query: SearchQuery) -> BitMap | None:
        """Every contact the question matches (words, place, filters), None when it has no words."""

        async def work(view: postings.View) -> BitMap | None:
            interpreted, _ = await self.interpret(session, query, view)
            plan = await self.plan(session, interpreted, view)
            if plan.empty:
                return None
            return (await self._matches(session, interpreted, plan, view))[1]

        return await self._viewed(session, work)

    async def matching_condition(self, session: Reader, query: SearchQuery) -> Any:
        ids = await self.matching_ids(session, query)
        return None if ids is None else self.ids_condition(list(ids))

    @staticmethod
    def filtered(statement: AnySelect, query: SearchQuery) -> AnySelect:
        """The plain filters as SQL (the revealed-contacts export applies them to its own rows)."""
        statement = statement.where(Contact.status == "active")
        if query.state:
            statement = statement.where(Contact.state == query.state)
        if query.city:
            statement = statement.where(Contact.city_key == " ".join(words(query.city)))
        if query.industry:
            statement = statement.where(Contact.industry == query.industry)
        if query.email_status:
            statement = statement.where(Contact.email.is_not(None), Contact.email_status == query.email_status)
        return statement


@dataclass(frozen=True)
class Candidates:
    """What the vocabulary had for a query word: a word it starts (no correction then), the words one
    edit from it, or (none of those and a long word) those sharing trigrams with it."""

    prefixed: bool
    near: tuple[str, ...]
    far: tuple[str, ...] = ()


def _of_generation(read: postings.Read, view: postings.View) -> dict[str, BitMap]:
    if view.strict and read.generation not in (-1, view.generation):
        raise _Moved
    return read.bitmaps


def _facet_terms(query: SearchQuery) -> list[str]:
    terms = []
    if query.state:
        terms.append(state_term(query.state))
    if query.industry:
        terms.append(industry_term(query.industry))
    if query.city:
        terms.append(city_term(query.city))
    if query.email_status:
        terms.append(email_term(query.email_status))
    return terms


def _apply_pending(terms: Terms, view: postings.View) -> None:
    """Brings the bitmaps read up to the pending changes: each changed contact is in a term's bitmap
    exactly when it has the term now (new bitmaps are made, never the remembered ones changed)."""
    changed = view.changed
    for key, bitmap in list(terms.exact.items()):
        members = view.by_term.get(key)
        if members or bitmap.intersect(changed):
            terms.exact[key] = (bitmap - changed) | (members or BitMap())
    for key, bitmap in list(terms.prefixed.items()):
        members = view.having_prefix(key)
        if members or bitmap.intersect(changed):
            terms.prefixed[key] = (bitmap - changed) | members


def _up_to(bitmap: BitMap, highest: int) -> BitMap:
    if not bitmap or bitmap.max() <= highest:
        return bitmap
    kept = bitmap.copy()
    kept.remove_range(highest + 1, postings.MOST_ID + 1)
    return kept


def _page(tiers: list[BitMap], offset: int, limit: int) -> list[int]:
    ids: list[int] = []
    for tier in tiers:
        if len(ids) >= limit:
            break
        if offset >= len(tier):
            offset -= len(tier)
            continue
        end = min(len(tier), offset + limit - len(ids))
        ids.extend(tier[offset:end])
        offset = 0
    return ids


def backend_for(dialect: str) -> BaseBackend:
    if dialect == "sqlite":
        from vpx.contacts.search.sqlite import SqliteSearch

        return SqliteSearch()
    from vpx.contacts.search.postgres import PostgresSearch

    return PostgresSearch()


def folded(text: str) -> str:
    return fold(text)
