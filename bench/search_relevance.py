"""How well search understands people's words for a trade: labelled questions asked of the real
engine on a demo catalogue, on SQLite and PostgreSQL. Two sets:
- `bench/search_relevance.tsv` ("--set written", the default): plurals, agent nouns, abbreviations,
  phrases, typos, with and without a place, written with the trade vocabulary;
- `bench/search_relevance_unseen.tsv` ("--set unseen"): questions from sources the vocabulary was not
  built from (O*NET titles, map-style categories, everyday phrasing with and without places and ZIP
  codes, frequent family names), split once into a part to tune on and a part held out ("--part
  tune", the default, "held" or "all"): the held-out part is asked once, for the figures, never tuned on;
  and a third, "fresh" part, written by another hand after the tuning was done (the first two parts
  were written by the hand that wrote the activity words), asked once; and a fourth, "fresh2", written
  by a third hand without looking at the vocabulary, asked once; and a fifth, "fresh3", written by a
  fourth hand the same way and kept unseen, to be asked once, only after the tuning on the others.

    .venv/bin/python -m bench.search_relevance [--count 100000] [--backends sqlite,postgresql]
        [--set written|unseen] [--part tune|held|fresh|fresh2|fresh3|all] [--rebuild] [--show 20]

The catalogue is built when missing (the seeded demo catalogue of bench/catalogue_build.py, in
var/bench and the PostgreSQL database vpx_bench_catalogue_<count>) and reused afterwards.

Besides the file's questions, one per agent noun of data/trades.txt ("derived": its plural, against
the rule's target word), which nobody wrote for the set.

For each question, against the trade's own words (the reference column, asked without the trade
vocabulary and without typo corrections, in the place the question names, as found in a business's
name, specialty or licence type):
- zero results: the question answers nothing although the reference finds something (the trade is
  held); questions whose trade the catalogue does not hold are left out of this and of recall;
- recall: the share of the reference's matches that the question matches too;
- precision of the first page (25): the share of its contacts whose business name, specialty or
  licence type holds one of the question's "about" words (as word prefixes), among questions that
  show something; R-precision: the same over the first R, R the reference's matches if under 25;
- the same contacts on both databases: the same total, first page and set of matches;
- places read right (questions that name a place): the city and state searched are the place meant
  (the reference is worked out in the place meant, whatever the engine read).
Goals (docs/search.md): no zero results for a held trade (the unseen set: at most 3 %), recall ≥ 0.9,
precision ≥ 0.9, places read right ≥ 95 %.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import dataclasses
import json
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

from pyroaring import BitMap
from sqlalchemy import func, select

from bench.common import catalogue_name, catalogue_urls, fresh_database
from vpx.config import Settings
from vpx.contacts.normalise import words
from vpx.contacts.search import Reader, SearchQuery, backend_for, postings
from vpx.contacts.search.engine import BaseBackend
from vpx.contacts.search.language import plural
from vpx.contacts.search.places import spellings
from vpx.contacts.search.plan import Clause, Option, Plan
from vpx.contacts.search.vocabulary import Vocabulary
from vpx.db import Database
from vpx.demo.bulk import bulk_load_demo
from vpx.models import Contact

QUESTIONS = Path(__file__).resolve().parent / "search_relevance.tsv"
UNSEEN = Path(__file__).resolve().parent / "search_relevance_unseen.tsv"
PAGE = 25
GOAL = 0.9


@dataclass(frozen=True)
class Question:
    text: str
    kind: str
    trade: str
    reference: tuple[str, ...]
    about: tuple[tuple[str, ...], ...]
    exact: bool = False  # the reference's words as whole words, not as prefixes
    place: tuple[str, str] | None = None  # the city and state meant ("" for none), when it names one
    part: str = "tune"


@dataclass
class Answer:
    total: int
    page: list[int]
    matched: BitMap
    reference: BitMap
    relevant: list[bool]  # the first page's contacts, in order: about the trade or not
    place: tuple[str | None, str | None]
    place_right: bool | None = None  # the place meant was searched (None: the question names none)
    dropped: tuple[str, ...] = ()

    @property
    def held(self) -> bool:
        return len(self.reference) > 0

    @property
    def recall(self) -> float:
        return len(self.matched & self.reference) / len(self.reference) if self.reference else 1.0

    @property
    def precision(self) -> float | None:
        """Of the first page (up to 25), the share about the trade; None when it is empty."""
        return sum(self.relevant) / len(self.relevant) if self.relevant else None

    @property
    def r_precision(self) -> float | None:
        """Of the first R results, R the number of reference matches (at most a page): whether what
        the catalogue holds of the trade comes first when it holds less than a page of it."""
        if not self.relevant:
            return None
        cut = min(len(self.relevant), max(1, len(self.reference)))
        return sum(self.relevant[:cut]) / cut


@dataclass
class Figures:
    questions: int = 0
    held: int = 0
    zero: int = 0
    recall: list[float] = field(default_factory=list)
    precision: list[float] = field(default_factory=list)
    r_precision: list[float] = field(default_factory=list)
    same: int = 0
    places: list[bool] = field(default_factory=list)

    def add(self, answer: Answer) -> None:
        self.questions += 1
        if answer.place_right is not None:
            self.places.append(answer.place_right)
        if answer.held:
            self.held += 1
            self.zero += answer.total == 0
            self.recall.append(answer.recall)
        if answer.precision is not None:
            self.precision.append(answer.precision)
        if answer.r_precision is not None:
            self.r_precision.append(answer.r_precision)


def read_questions(path: Path = QUESTIONS, part: str = "all") -> list[Question]:
    with path.open(encoding="utf-8") as handle:
        lines = [line for line in handle if not line.startswith("#")]
    questions = []
    for row in csv.DictReader(lines, delimiter="\t"):
        if part != "all" and row.get("part", "tune") != part:
            continue
        city, state = row.get("city") or "", row.get("state") or ""
        questions.append(
            Question(
                text=row["question"],
                kind=row["kind"],
                trade=row["trade"],
                reference=tuple(part.strip() for part in row["reference"].split("|")),
                about=tuple(tuple(words(part)) for part in row["about"].split("|")),
                exact=row["kind"] == "name",
                place=(city, state) if city or state else None,
                part=row.get("part", "tune"),
            )
        )
    return questions


def same_place(meant: tuple[str, str], city: str | None, state: str | None) -> bool:
    """Whether the city and state searched are the place meant (St/Saint, Ft/Fort spelt either way)."""
    wanted_city = tuple(words(meant[0]))
    city_right = (not wanted_city and city is None) or (
        city is not None and tuple(words(city)) in spellings(wanted_city)
    )
    return city_right and (state or "") == meant[1]


def derived_questions(known: set[str]) -> list[Question]:
    """A question for each agent noun the build derived from the published lists (data/trades.txt),
    as its plural ("roofers"), against its trade's own word as a whole word (a made-up family name
    that starts with "hunting" holds no hunting): questions nobody wrote for this set."""
    trades = resources.files("vpx.contacts.search").joinpath("data/trades.txt").read_text(encoding="utf-8")
    questions = []
    for line in trades.splitlines():
        rule = line.split("#", 1)[0]
        if "=>" not in rule:
            continue
        left, target = (part.strip() for part in rule.split("=>"))
        for term in (part.strip() for part in left.split(",")):
            text = plural(term)
            if " " not in term and text not in known:
                about = (tuple(words(target)), (term,))  # the trade's word, or the people-word itself
                questions.append(Question(text, "derived", target, (target,), about, exact=True))
    return questions


def is_about(about: tuple[tuple[str, ...], ...], *fields: str | None) -> bool:
    """Whether a field's words hold one of the ``about`` phrases, each word as a prefix, in order."""
    for text in fields:
        found = words(text or "")
        for phrase in about:
            for start in range(len(found) - len(phrase) + 1):
                if all(found[start + i].startswith(word) for i, word in enumerate(phrase)):
                    return True
    return False


async def ensure_catalogue(backend: str, count: int, rebuild: bool) -> str:
    url = catalogue_urls(count)[backend]
    if not rebuild:
        try:
            database = Database(Settings(database_url=url), pool=False)
            async with database.read_sessions() as session:
                held = await session.scalar(select(func.count()).select_from(Contact))
            await database.dispose()
            if held == count:
                return url
        except Exception:  # a missing or old database is built afresh
            pass
    name = catalogue_name(count)
    url = await asyncio.to_thread(fresh_database, backend, f"vpx_bench_{name}" if backend == "postgresql" else name)
    database = Database(Settings(database_url=url), pool=False)
    started = time.perf_counter()
    await bulk_load_demo(database, count=count, seed=42, now=datetime.now(UTC))
    await database.dispose()
    print(f"  built the {backend} catalogue of {count:,} contacts in {time.perf_counter() - started:.0f} s")
    return url


async def answer_all(url: str, questions: list[Question]) -> dict[str, Answer]:
    database = Database(Settings(database_url=url))
    engine = backend_for(database.dialect)
    literal = literal_backend(database.dialect)
    answers: dict[str, Answer] = {}
    async with database.read_engine.connect() as connection:
        for question in questions:
            page = await engine.search(connection, SearchQuery(text=question.text, limit=PAGE))
            matched = await engine.matching_ids(connection, SearchQuery(text=question.text)) or BitMap()
            city = page.interpreted.city if page.interpreted else None
            state = page.interpreted.state if page.interpreted else None
            where = (question.place[0] or None, question.place[1] or None) if question.place else (city, state)
            reference = BitMap()
            view = await postings.read_view(connection)
            for words_ in question.reference:
                query = SearchQuery(text=words_, city=where[0], state=where[1])
                plan = await literal.plan(connection, query, view)
                # Every word as written: role words ("repair", "service") are the trade's own words here.
                plan = dataclasses.replace(
                    plan, clauses=tuple(dataclasses.replace(c, optional=c.filler) for c in plan.clauses)
                )
                if question.exact:
                    plan = Plan(clauses=(Clause(typed=(Option(tuple(words(words_))),)),))
                ranked = await literal._matches(connection, query, plan, view)
                if set(ranked.dropped) - {w for c in plan.clauses if c.filler for w in c.words}:
                    continue  # not all the trade's words together: none of its businesses
                for tier in ranked.tiers[:-1]:  # in the name, specialty or licence type
                    reference |= tier
            ids = [row.id for row in page.rows]
            about: dict[int, bool] = {}
            if ids:
                rows = await connection.execute(
                    select(Contact.id, Contact.business_name, Contact.specialty, Contact.license_type).where(
                        Contact.id.in_(ids)
                    )
                )
                about = {row[0]: is_about(question.about, *row[1:]) for row in rows}
            relevant = [about.get(i, False) for i in ids]
            right = same_place(question.place, city, state) if question.place else None
            dropped = page.interpreted.dropped if page.interpreted else ()
            answers[question.text] = Answer(
                page.total, ids, matched, reference, relevant, (city, state), right, tuple(dropped)
            )
    await database.dispose()
    return answers


def literal_backend(dialect: str) -> BaseBackend:
    """The engine without the trade vocabulary and without typo corrections: what the trade's own
    words find as written (with their plurals and as prefixes)."""
    literal = backend_for(dialect)
    literal.vocabulary = Vocabulary()

    def no_vocabulary_typos(word: str, budget: int, *, also: Iterable[str] = ()) -> tuple[str, ...]:
        return ()

    async def no_corrections(session: Reader, word: str, view: postings.View) -> tuple[str, ...]:
        return ()

    literal.vocabulary.nearest = no_vocabulary_typos  # type: ignore[method-assign]
    literal._corrections = no_corrections  # type: ignore[method-assign]
    return literal


def report(
    backend: str, questions: list[Question], answers: dict[str, Answer], same: dict[str, bool]
) -> dict[str, Figures]:
    by_kind: dict[str, Figures] = defaultdict(Figures)
    for question in questions:
        answer = answers[question.text]
        for kind in (question.kind, "all"):
            by_kind[kind].add(answer)
            by_kind[kind].same += same.get(question.text, True)
    print(f"\n{backend}: {len(questions)} questions")
    print(
        f"  {'kind':<13} {'questions':>9} {'held':>5} {'zero':>6} {'recall':>7} {'precision':>9} {'R-prec.':>8} "
        f"{'places':>8} {'same on both':>12}"
    )
    for kind in sorted(by_kind, key=lambda k: (k == "all", k)):
        f = by_kind[kind]
        zero = f"{f.zero / f.held:.1%}" if f.held else "-"
        places = f"{sum(f.places)}/{len(f.places)}" if f.places else "-"
        print(
            f"  {kind:<13} {f.questions:>9} {f.held:>5} {zero:>6} {_mean(f.recall):>7.3f} {_mean(f.precision):>9.3f} "
            f"{_mean(f.r_precision):>8.3f} {places:>8} {f.same:>6}/{f.questions}"
        )
    return by_kind


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def failures(questions: list[Question], answers: dict[str, Answer], show: int) -> None:
    bad = []
    for question in questions:
        answer = answers[question.text]
        precision = answer.precision
        if (
            (answer.held and (answer.total == 0 or answer.recall < GOAL))
            or (precision is not None and precision < GOAL)
            or answer.place_right is False
        ):
            bad.append((question, answer))
    print(f"  below the goal: {len(bad)}")
    for question, answer in bad[:show]:
        shown = "-" if answer.precision is None else f"{answer.precision:.2f}"
        r_precision = "-" if answer.r_precision is None else f"{answer.r_precision:.2f}"
        print(
            f"    {question.text!r:<36} {question.kind:<12} total {answer.total:>6,}  "
            f"reference {len(answer.reference):>6,}  recall {answer.recall:.2f}  "
            f"precision {shown} (R {r_precision})  place {answer.place}"
            + (f" (meant {question.place})" if answer.place_right is False else "")
            + (f"  dropped {list(answer.dropped)}" if answer.dropped else "")
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100_000, help="the demo catalogue's size")
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--rebuild", action="store_true", help="build the catalogue afresh")
    parser.add_argument("--show", type=int, default=20, help="how many questions below the goal to list")
    parser.add_argument("--json", type=Path, help="also write the per-question figures here")
    parser.add_argument("--set", choices=("written", "unseen"), default="written", help="which labelled set")
    parser.add_argument(
        "--part",
        choices=("tune", "held", "fresh", "fresh2", "fresh3", "all"),
        default="tune",
        help="of the unseen set: which part",
    )
    args = parser.parse_args()
    if args.set == "unseen":
        questions = read_questions(UNSEEN, args.part)
    else:
        questions = read_questions()
        questions += derived_questions({question.text for question in questions})
    print(f"search relevance: {len(questions)} questions, catalogue of {args.count:,} demo contacts")
    results: dict[str, dict[str, Answer]] = {}
    for backend in args.backends.split(","):
        url = asyncio.run(ensure_catalogue(backend, args.count, args.rebuild))
        started = time.perf_counter()
        results[backend] = asyncio.run(answer_all(url, questions))
        print(f"  {backend}: answered in {time.perf_counter() - started:.1f} s")
    first, *others = results.values()
    same = {
        q.text: all(
            (o[q.text].total, o[q.text].page, o[q.text].matched)
            == (first[q.text].total, first[q.text].page, first[q.text].matched)
            for o in others
        )
        for q in questions
    }
    for backend, answers in results.items():
        report(backend, questions, answers, same)
        failures(questions, answers, args.show)
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    backend: {
                        text: {
                            "total": a.total,
                            "reference": len(a.reference),
                            "recall": a.recall,
                            "precision": a.precision,
                            "r_precision": a.r_precision,
                            "place": a.place,
                            "place_right": a.place_right,
                            "dropped": a.dropped,
                        }
                        for text, a in answers.items()
                    }
                    for backend, answers in results.items()
                },
                indent=1,
            )
        )


if __name__ == "__main__":
    main()
