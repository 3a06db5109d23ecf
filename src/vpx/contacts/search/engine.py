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
from array import array
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeVar

from pyroaring import BitMap
from rapidfuzz.distance import OSA
from sqlalchemy import Select, or_
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.contacts.normalise import words
from vpx.contacts.search import postings
from vpx.contacts.search.caches import AnswerCache
from vpx.contacts.search.corrections import Candidates, closest, max_edits, one_edit
from vpx.contacts.search.matching import (
    Ranked,
    Terms,
    all_of,
    apply_pending,
    clause_ids,
    needs_fewer_words,
    page,
    rank,
    up_to,
    wanted_terms,
    whole_terms,
)
from vpx.contacts.search.memory import Answer, Answers, BitmapMemory, Horizons
from vpx.contacts.search.places import (
    Reading,
    city_name,
    city_names,
    city_states,
    place_readings,
    spellings,
    zip_places,
)
from vpx.contacts.search.plan import FREQUENT_NAME, Clause, Option, Plan, plan_filter, plan_words
from vpx.contacts.search.query import PREVIEW_COLUMNS, Interpreted, Reader, SearchPage, SearchQuery
from vpx.contacts.search.terms import (
    DO_NOT_CALL,
    DO_NOT_CALL_STATES,
    EVERY_CONTACT,
    NAME,
    city_term,
    email_term,
    industry_term,
    state_term,
)
from vpx.contacts.search.vocabulary import Vocabulary, built_in

# What callers take from here: the contract's types (vpx.contacts.search.query).
__all__ = ["PREVIEW_COLUMNS", "BaseBackend", "Interpreted", "Reader", "SearchBackend", "SearchPage", "SearchQuery"]
from vpx.models import Contact

if TYPE_CHECKING:
    from vpx.db import Database

AnySelect = TypeVar("AnySelect", bound="Select[*tuple[Any, ...]]")
# The first matches of an answer remembered (four pages of 25): later pages are worked out again.
KEPT_IDS = 100
# Folds committing between a search's view and its bitmaps before it takes the bitmaps as they come.
MOVES_TOLERATED = 4
# The city of a filter that can match nothing (a ZIP code not in use): no city term is this.
NO_CITY = "-"
NOTHING = "#none"
T = TypeVar("T")


class _Moved(Exception):
    """The postings moved on (a fold committed) between reading the view and reading bitmaps."""


class SearchBackend(Protocol):
    async def search(self, session: Reader, query: SearchQuery) -> SearchPage: ...

    async def matching_condition(self, session: Reader, query: SearchQuery) -> Any:
        """A WHERE condition on ``contacts`` selecting what the query's words match (with their
        forms, corrections and vocabulary, the filters too), or None when it has no words."""
        ...

    async def add_terms(self, session: AsyncSession, terms: set[str]) -> None: ...

    def refresh_from(self, database: Database) -> SearchBackend: ...


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
        city_names()  # the ZIP list read once, at start, not by the first question that names a place
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
        await postings.add_words(session, terms)

    # --- planning ------------------------------------------------------------------------------

    async def plan(self, session: Reader, query: SearchQuery, view: postings.View | None = None) -> Plan:
        view = view if view is not None else await postings.read_view(session)

        async def corrections(word: str) -> tuple[str, ...]:
            return await self._corrections(session, word, view)

        async def names(word: str) -> bool:
            held = await self._read(session, view, {NAME + word}, set())
            return len(held.term(NAME + word)) >= FREQUENT_NAME

        place_name = tuple(Clause(typed=(Option((word,)),), words=(word,)) for word in query.place_words)
        return Plan(
            clauses=await plan_words(query.text, self.vocabulary, corrections, names),
            specialty=plan_filter(query.specialty),
            license_type=plan_filter(query.license_type),
            place_name=place_name,
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
        the view was read: the caller reads the view again); what is not remembered is read in one
        statement."""
        terms = Terms()
        missing = []
        for term in exact:
            remembered = self.bitmaps.get(term, view.generation)
            if remembered is None:
                missing.append(term)
            else:
                terms.exact[term] = remembered
        unread = []
        for prefix in prefixes:
            remembered = self.bitmaps.get(prefix + "*", view.generation)
            if remembered is None:
                unread.append(prefix)
            else:
                terms.prefixed[prefix] = remembered
        if missing or unread:
            missing.sort()
            unread.sort()
            read = await postings.read_postings(session, missing, unread)
            if view.strict and read.generation not in (-1, view.generation):
                raise _Moved
            for term in missing:
                bitmap = read.exact.get(term, BitMap())
                self.bitmaps.put(term, view.generation, bitmap)
                terms.exact[term] = bitmap
            for prefix in unread:
                bitmap = read.prefixed.get(prefix, BitMap())
                self.bitmaps.put(prefix + "*", view.generation, bitmap)
                terms.prefixed[prefix] = bitmap
        if view.pending:
            apply_pending(terms, view)
        return terms

    async def _matches(self, session: Reader, query: SearchQuery, plan: Plan, view: postings.View) -> Ranked:
        """The tiers of a question (one when it has no words), all its matches, unclamped, and the
        words it left out (vpx.contacts.search.matching)."""
        typed = await self._plan(session, _as_typed(query), view) if query.as_typed else None
        exact, prefixes = wanted_terms(plan)
        if typed is not None:
            more_exact, more_prefixes = wanted_terms(typed)
            exact |= more_exact
            prefixes |= more_prefixes
        facets, place = _facet_terms(query)
        exact.update(facets + place)
        # Every active contact only where nothing else bounds the answer (a text term holds active
        # contacts only): no words, or the contacts to leave out of it.
        if not plan.clauses or query.exclude_dnc:
            exact.add(EVERY_CONTACT)
        if query.exclude_dnc:
            exact.add(DO_NOT_CALL)
        terms = await self._read(session, view, exact, prefixes)
        filters = [clause_ids(terms, c, ("s:",)) for c in plan.specialty]
        filters += [clause_ids(terms, c, ("l:",)) for c in plan.license_type]
        if query.exclude_dnc:
            filters.append(terms.term(EVERY_CONTACT) - terms.term(DO_NOT_CALL))
        unplaced = [terms.term(t) for t in facets] + filters
        restrict = unplaced + [terms.term(t) for t in place]
        if not plan.clauses:
            everything = all_of(restrict, terms.term(EVERY_CONTACT))
            return Ranked([everything], everything)
        if needs_fewer_words(terms, plan, restrict):
            # Which words are whole words too decides which to leave out: read only then.
            wanted = whole_terms(plan) | (whole_terms(typed) if typed is not None else set())
            more = await self._read(session, view, wanted - set(terms.exact), set())
            terms.add(more.exact)
        ranked = rank(terms, plan, restrict, unplaced if query.as_typed else None)
        if typed is None or not typed.clauses:
            return ranked
        # A place read without "in" or "near": the words as typed answer too (they may be a name, and
        # the place's words are in its contacts' city), after the place's own answer, unless they
        # could not all be matched.
        as_words = rank(terms, typed, unplaced, None)
        if set(as_words.dropped) - {w for c in typed.clauses if c.filler for w in c.words}:
            return ranked
        return Ranked([*ranked.tiers, *as_words.tiers], ranked.everything | as_words.everything, ranked.dropped)

    # --- answering -----------------------------------------------------------------------------

    async def interpret(
        self, session: Reader, query: SearchQuery, view: postings.View | None = None
    ) -> tuple[SearchQuery, Interpreted | None]:
        """The question with a place in its words read into the filters (explicit filters win), and
        how it was read; a place the catalogue does not know is left in the words."""
        if query.postal_code and not query.city:
            view = view if view is not None else await postings.read_view(session)
            query = await self._postal_place(session, view, query)
        if not query.text:
            return query, None
        text = query.text
        tokens = words(text)
        view = view if view is not None else await postings.read_view(session)
        readings = place_readings(tokens)
        if query.city:
            # The city parameter wins: a place the words mark ("in …", a ZIP code) is left out of them.
            marked = next((r for r in readings if r.marked), None)
            if marked is not None:
                text_ = " ".join(marked.rest)
                query = dataclasses.replace(query, text=text_)
            return query, Interpreted(
                q=query.text or "", city=query.city, state=query.state, postal_code=query.postal_code
            )
        reading = await self._place(session, view, readings, query.state)
        if reading is None:
            return query, Interpreted(q=text, city=query.city, state=query.state, postal_code=query.postal_code)
        place, city = reading
        text_ = " ".join(place.rest)
        state = query.state or place.state
        as_typed = text if place.named and not query.state else None
        where = place.named[: len(place.city)] if place.city else place.named
        query = dataclasses.replace(
            query, text=text_, state=state, city=city, as_typed=as_typed, place_words=where if as_typed else ()
        )
        postal_code = place.postal_code or query.postal_code
        return query, Interpreted(q=text_, city=city, state=state, postal_code=postal_code)

    async def _postal_place(self, session: Reader, view: postings.View, query: SearchQuery) -> SearchQuery:
        """The query with the ``postal_code`` filter's city and state (the state when the catalogue
        holds none of its city); one that names no ZIP code in use, or another state than ``state``,
        matches nothing."""
        code = (query.postal_code or "")[:5]
        place = zip_places().get(code)
        if place is None or (query.state and query.state != place[1]):
            return dataclasses.replace(query, city=NO_CITY)
        reading = Reading(rest=(), city=tuple(words(place[0])), state=place[1], postal_code=code)
        found = await self._place(session, view, [reading], None)
        city = found[1] if found is not None else None
        return dataclasses.replace(query, city=city, state=place[1])

    async def _place(
        self, session: Reader, view: postings.View, readings: list[Reading], state: str | None
    ) -> tuple[Reading, str | None] | None:
        """The first reading whose place the catalogue holds (a city in its state, or a state), with
        the city as the catalogue spells it; a ZIP code whose city it does not hold is its state. A
        city named without its state is every city of that name, and in the state of them all when
        the catalogue holds it in one state only."""
        readings = [r for r in readings if not (state and r.state and r.state != state)]
        if not readings:
            return None
        wanted = {city_term(" ".join(s)) for r in readings for s in spellings(r.city) if r.city}
        wanted |= {state_term(r.state) for r in readings if r.state}
        terms = await self._read(session, view, wanted, set())
        for reading in readings:
            where = reading.state or state
            in_state = terms.term(state_term(where)) if where else None
            if not reading.city:
                if in_state:
                    return reading, None
                continue
            for spelling in spellings(reading.city):
                held = terms.term(city_term(" ".join(spelling)))
                if held and (in_state is None or held.intersect(in_state)):
                    if where is None:
                        reading = await self._one_state(session, view, reading, spelling, held)
                    return reading, city_name(spelling)
            if reading.postal_code and in_state:
                return reading, None
        return None

    async def _one_state(
        self, session: Reader, view: postings.View, reading: Reading, city: tuple[str, ...], held: BitMap
    ) -> Reading:
        """The reading with its city's state, when the catalogue holds the city in one state only."""
        states = sorted(city_states().get(city, frozenset()))
        if not states:
            return reading
        terms = await self._read(session, view, {state_term(s) for s in states}, set())
        holding = [s for s in states if held.intersect(terms.term(state_term(s)))]
        if len(holding) == 1 and len(held & terms.term(state_term(holding[0]))) == len(held):
            return dataclasses.replace(reading, state=holding[0])
        return reading

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
            ranked = await self._matches(session, query, plan, view)
            tiers, everything = ranked.tiers, ranked.everything
            if horizon is not None:
                tiers = [up_to(tier, horizon) for tier in tiers]
                everything = up_to(everything, horizon)
            kept = max(KEPT_IDS, end)
            ids = page(tiers, kept)
            total = len(everything)
            highest = ranked.everything.max() if ranked.everything else 0
            answer = Answer(array("q", ids), total, len(ids) == total, highest, ranked.dropped)
            if kept == KEPT_IDS:
                self.answers.put(remembered, answer)
        if query.offset == 0 and answer.highest:
            self.horizons.put(key, answer.highest)
        ids = list(answer.ids[query.offset : end])
        by_id = {row.id: row for row in await self.rows_by_id(session, ids)} if ids else {}
        if interpreted is not None and answer.dropped:
            interpreted = dataclasses.replace(interpreted, dropped=answer.dropped)
        return SearchPage(
            rows=[by_id[i] for i in ids if i in by_id], total=answer.total, interpreted=interpreted, exact=view.complete
        )

    async def _plan(self, session: Reader, query: SearchQuery, view: postings.View) -> Plan:
        """The question's plan, remembered for the postings and the changes waiting (its words'
        corrections depend on the vocabulary, and whether a word is a frequent name on the names)."""

        async def compute(reader: Reader) -> Plan:
            return await self.plan(reader, query, view)

        key = (query.text, query.specialty, query.license_type, query.place_words, view.stamp)
        return await self.plans.get(key, compute, session)

    async def matching_ids(self, session: Reader, query: SearchQuery) -> BitMap | None:
        """Every contact the question matches (words, place, filters), None when it has no words."""

        async def work(view: postings.View) -> BitMap | None:
            interpreted, _ = await self.interpret(session, query, view)
            plan = await self._plan(session, interpreted, view)
            if plan.empty:
                return None
            return (await self._matches(session, interpreted, plan, view)).everything

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
        if query.exclude_dnc:
            statement = statement.where(
                or_(Contact.phone_dnc.is_(None), Contact.phone_dnc.not_in(sorted(DO_NOT_CALL_STATES)))
            )
        return statement


def _facet_terms(query: SearchQuery) -> tuple[list[str], list[str]]:
    """The filters' terms, and the place's when it was read from the words without "in" or "near"."""
    terms: list[str] = []
    place: list[str] = []
    if query.state:
        (place if query.as_typed else terms).append(state_term(query.state))
    if query.industry:
        terms.append(industry_term(query.industry))
    if query.city:
        (place if query.as_typed else terms).append(NOTHING if query.city == NO_CITY else city_term(query.city))
    if query.email_status:
        terms.append(email_term(query.email_status))
    return terms, place


def _as_typed(query: SearchQuery) -> SearchQuery:
    """The question as typed, without the place read from its words."""
    return dataclasses.replace(query, text=query.as_typed, state=None, city=None, as_typed=None, place_words=())
