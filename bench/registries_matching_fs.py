"""A probabilistic (Fellegi–Sunter) matcher against vpx's rules, on the labelled pairs of the shared samples.

splink is not a dependency of vpx: run this in a separate virtualenv with vpx and splink installed, so that
the project's own environment stays untouched (splink runs on DuckDB, in memory; nothing goes to the network):

    python3 -m venv /tmp/fsvenv
    /tmp/fsvenv/bin/pip install -e . splink numpy   # numpy: DuckDB's Python functions need it
    /tmp/fsvenv/bin/python bench/registries_matching_fs.py [--shared ../shared/data] [--folds 5]

The pairs are built exactly as bench/registries_matching.py builds them (vpx.registries.evaluation). A splink
model (Fellegi–Sunter, DuckDB backend) runs over the records of those pairs, one record per distinct set of
MatchKeys, and scores every labelled pair (the pairs are registered as the blocked pairs to predict). Its
comparisons, each with a null level (either side missing):

- name: the matching name key exactly (with a term-frequency adjustment, the frequencies taken from the
  sample records), the names equal up to word order or by a DBA name (``aka:``), then the best rapidfuzz
  token-sort ratio of the names (``names_score``, as vpx.registries.matching computes it) >= 92, >= 84,
  >= 70, else;
- city: city and state, the state only, else;
- street: the street key exactly, the same house number on a close street, another house number on the
  same street, else;
- phone: a shared local phone (the record's phone and ``tel:`` identifiers), a shared toll-free line only,
  every phone differs;
- website (registrable domains, the website's and ``web:``), licence (``lic:``, ``ein:``, ``cik:``) and
  npi: a shared one, every one differs.

The rapidfuzz similarities are registered as DuckDB Python functions, so that the model sees the names and
streets as the rules do. u is estimated by random sampling of record pairs and the prior (the probability
that two random records match) by splink's deterministic-rule estimate; neither uses the labels. m three
ways:

- ``em``: expectation maximisation over blocked pairs (unsupervised: the labels are not used at all);
- ``labels``: the share of each comparison level among the labelled positive pairs, add-one smoothed,
  with grouped k-fold cross-validation: each pair is scored by a model whose m comes from the other
  folds, the folds grouping the pairs by the sample record they derive from;
- ``labels+priors``: the same, with m fixed for website, licence and npi (a shared one 0.99, every one
  differs 0.01): no positive pair has two websites or two licences, so the labels cannot teach it what
  the rules' vetoes assume.

A level never observed where its parameter is estimated gets splink's value for that case (1e-6).

Prints the rules' figures; for each model a sweep of match-probability thresholds (precision on positives
+ hard negatives, recall on positives, F1, precision with every negative: the definitions of
bench/registries_matching.py), the best precision at a recall of at least 0.95, the per-category joins at
the best threshold of the sweep and some of the errors; a summary side by side; the time per pair of both.
"""

from __future__ import annotations

import argparse
import copy
import logging
import math
import random
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import splink
import splink.comparison_level_library as cll
import splink.comparison_library as cl
from rapidfuzz import fuzz
from splink import DuckDBAPI, Linker, SettingsCreator, block_on
from splink.internals.comparison_creator import ComparisonCreator

from vpx.contacts.identifiers import kind_of, other_names, registrable_domain
from vpx.registries import evaluation
from vpx.registries import matching as matching_module
from vpx.registries.evaluation import LabelledRecord, Pair, Score
from vpx.registries.evaluation.scores import rules
from vpx.registries.matching import NAME_THRESHOLD, STREET_CLOSE, TOLL_FREE, MatchKeys, house_number, match_name

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
THRESHOLDS = (0.5, 0.8, 0.9, 0.95, 0.99, 0.999, 0.9999)
TARGET_RECALL = 0.95
SEED = 20261122
NOT_OBSERVED = 1e-6  # splink's m or u for a level never observed where the parameter is estimated
PRIORS = {"domains": (0.99, 0.01), "registry_ids": (0.99, 0.01), "npis": (0.99, 0.01)}  # m: shared, differs
COMPARISONS = ("name", "city", "street", "phone", "domains", "registry_ids", "npis")

Model = dict[str, Any]
Ids = tuple[int, int]


# --- records ------------------------------------------------------------------------------------------


def record_row(uid: int, keys: MatchKeys) -> dict[str, Any]:
    """A record as the model sees it: MatchKeys spread into columns (lists of identifiers, None when empty)."""
    names = [keys.name_key, *(match_name(other) for other in other_names(keys.identifiers))]
    by_kind: dict[str, set[str]] = defaultdict(set)
    for token in keys.identifiers:
        kind = kind_of(token)
        family = kind.split(":", 1)[0]
        by_kind[family].add(token if family in ("lic", "ein", "cik") else token[len(kind) + 1 :])
    phones = sorted(({keys.phone} if keys.phone else set()) | by_kind["tel"])
    domains = {keys.website} if keys.website else set()
    domains |= {registrable_domain(web) or web for web in by_kind["web"]}
    street = keys.street_key or None
    number = house_number(street) if street else ""
    return {
        "unique_id": uid,
        "name": keys.name_key or None,
        "names": names,
        "state": keys.state or None,
        "city_state": f"{keys.state}|{keys.city_key}" if keys.city_key else None,
        "street": street,
        "house": number or None,
        "street_rest": street.split(" ", 1)[1] if street and number and " " in street else None,
        "phones": phones or None,
        "local_phones": [p for p in phones if not p.startswith(TOLL_FREE)] or None,
        "domains": sorted(domains) or None,
        "registry_ids": sorted(by_kind["lic"] | by_kind["ein"] | by_kind["cik"]) or None,
        "npis": sorted(by_kind["npi"]) or None,
    }


@dataclass
class Records:
    """The distinct records of the labelled pairs (their keys and rows, the id an index into both), each
    pair as (id, id), and the names' frequencies."""

    keys: list[MatchKeys]
    rows: list[dict[str, Any]]
    pair_ids: list[Ids]
    name_frequencies: list[dict[str, Any]]


def records_of(pairs: Sequence[Pair], samples: Sequence[LabelledRecord]) -> Records:
    ids: dict[MatchKeys, int] = {}
    pair_ids = []
    for pair in pairs:
        left = ids.setdefault(pair.a.keys, len(ids))
        right = ids.setdefault(pair.b.keys, len(ids))
        pair_ids.append((left, right))
    counts = Counter(record.keys.name_key for record in samples)
    total = sum(counts.values())
    return Records(
        list(ids),
        [record_row(uid, keys) for keys, uid in ids.items()],
        pair_ids,
        [{"name": name, "tf_name": count / total} for name, count in counts.items()],
    )


# --- the model ----------------------------------------------------------------------------------------


def names_score(left: list[str] | None, right: list[str] | None) -> float | None:
    """vpx.registries.matching.names_score over name lists (the matching name first, then DBA names)."""
    if not left or not right:
        return None
    if left[0] == right[0]:
        return 100.0
    return max(100.0 if x == y else float(fuzz.token_sort_ratio(x, y)) for x in left for y in right)


def street_ratio(left: str | None, right: str | None) -> float | None:
    return None if left is None or right is None else float(fuzz.ratio(left, right))


def connection() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    text, real = duckdb.sqltypes.VARCHAR, duckdb.sqltypes.DOUBLE
    con.create_function("names_score", names_score, [duckdb.list_type(text), duckdb.list_type(text)], real)
    con.create_function("street_ratio", street_ratio, [text, text], real)
    return con


def comparisons() -> list[ComparisonCreator | dict[str, Any]]:
    def shared(column: str, label: str) -> cll.CustomLevel:
        return cll.CustomLevel(f'list_has_any("{column}_l", "{column}_r")', label)

    def identifier(column: str, label: str) -> cl.CustomComparison:
        return cl.CustomComparison(
            output_column_name=column,
            comparison_levels=[
                cll.NullLevel(column),
                shared(column, f"a shared {label}"),
                cll.ElseLevel().configure(label_for_charts=f"every {label} differs"),
            ],
        )

    def names_at_least(score: float, label: str) -> cll.CustomLevel:
        return cll.CustomLevel(f'names_score("names_l", "names_r") >= {score:g}', label)

    close = f">= {STREET_CLOSE:g}"
    return [
        cl.CustomComparison(
            output_column_name="name",
            comparison_levels=[
                cll.NullLevel("name"),
                cll.ExactMatchLevel("name", term_frequency_adjustments=True),
                names_at_least(100, "word order or DBA name"),
                names_at_least(92, "token sort >= 92"),
                names_at_least(NAME_THRESHOLD, f"token sort >= {NAME_THRESHOLD:g}"),
                names_at_least(70, "token sort >= 70"),
                cll.ElseLevel().configure(label_for_charts="other name"),
            ],
        ),
        cl.CustomComparison(
            output_column_name="city",
            comparison_levels=[
                cll.NullLevel("city_state"),
                cll.ExactMatchLevel("city_state").configure(label_for_charts="same city"),
                cll.CustomLevel('"state_l" = "state_r"', "same state"),
                cll.ElseLevel().configure(label_for_charts="other state"),
            ],
        ),
        cl.CustomComparison(
            output_column_name="street",
            comparison_levels=[
                cll.NullLevel("street"),
                cll.ExactMatchLevel("street").configure(label_for_charts="same street key"),
                cll.CustomLevel(
                    f'"house_l" = "house_r" AND street_ratio("street_l", "street_r") {close}', "same number, close"
                ),
                cll.CustomLevel(
                    f'"house_l" <> "house_r" AND street_ratio("street_rest_l", "street_rest_r") {close}',
                    "other number, same street",
                ),
                cll.ElseLevel().configure(label_for_charts="other street"),
            ],
        ),
        cl.CustomComparison(
            output_column_name="phone",
            comparison_levels=[
                cll.NullLevel("phones"),
                shared("local_phones", "a shared local phone"),
                shared("phones", "a shared toll-free line only"),
                cll.ElseLevel().configure(label_for_charts="every phone differs"),
            ],
        ),
        identifier("domains", "website domain"),
        identifier("registry_ids", "licence"),
        identifier("npis", "npi"),
    ]


def linker_for(records: Records, model: SettingsCreator | Model) -> tuple[Linker, DuckDBAPI]:
    """A linker over the records on a fresh in-memory DuckDB, the names' frequencies registered."""
    db_api = DuckDBAPI(connection())
    linker = Linker(db_api.register(records.rows, table_name="records"), model, log_level=None)
    tf = db_api.register(records.name_frequencies, table_name="tf_name_lookup")
    linker.table_management.register_term_frequency_lookup(tf, "name")
    return linker, db_api


def non_null_levels(comparison: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """(comparison vector value, level) of a comparison's levels, the null level aside."""
    levels = [level for level in comparison["comparison_levels"] if not level.get("is_null_level")]
    return [(len(levels) - 1 - i, level) for i, level in enumerate(levels)]


def completed(model: Model) -> Model:
    """The model with every m and u that was not estimated (a level never observed) set to NOT_OBSERVED."""
    model = copy.deepcopy(model)
    for comparison in model["comparisons"]:
        for _, level in non_null_levels(comparison):
            for key in ("m_probability", "u_probability"):
                if not isinstance(level.get(key), float):
                    level[key] = NOT_OBSERVED
    return model


def trained_u(records: Records, max_pairs: float) -> Model:
    """The model with u estimated by random sampling and the prior by splink's deterministic-rule estimate
    (the same name, city and street, or the same name, city and local phone, taken to find 70% of matches)."""
    settings = SettingsCreator(
        link_type="dedupe_only",
        unique_id_column_name="unique_id",
        comparisons=comparisons(),
        blocking_rules_to_generate_predictions=[block_on("city_state")],
    )
    linker, _ = linker_for(records, settings)
    linker.training.estimate_probability_two_random_records_match(
        [
            block_on("name", "city_state", "street"),
            "l.name = r.name AND l.city_state = r.city_state AND list_has_any(l.local_phones, r.local_phones)",
        ],
        recall=0.7,
    )
    linker.training.estimate_u_using_random_sampling(max_pairs=max_pairs, seed=SEED)
    return linker.misc.save_model_to_json()


def trained_em(records: Records, model: Model) -> Model:
    """m by expectation maximisation, u fixed: blocked on the name (every other comparison's m), then on
    the street key (the name's m among them)."""
    linker, _ = linker_for(records, model)
    linker.training.estimate_parameters_using_expectation_maximisation(block_on("name"))
    linker.training.estimate_parameters_using_expectation_maximisation(block_on("street"))
    return completed(linker.misc.save_model_to_json())


def from_labels(model: Model, levels: Iterable[dict[str, int]], priors: bool) -> Model:
    """m as the add-one smoothed share of each level among labelled positive pairs (their comparison vectors);
    with ``priors``, m of website, licence and npi fixed (PRIORS)."""
    model = copy.deepcopy(model)
    counts: dict[str, Counter[int]] = defaultdict(Counter)
    for gammas in levels:
        for name, gamma in gammas.items():
            if gamma >= 0:
                counts[name][gamma] += 1
    for comparison in model["comparisons"]:
        name = comparison["output_column_name"]
        numbered = non_null_levels(comparison)
        total = sum(counts[name].values())
        for gamma, level in numbered:
            level["m_probability"] = (counts[name][gamma] + 1) / (total + len(numbered))
            if priors and name in PRIORS:
                level["m_probability"] = PRIORS[name][0] if gamma == 1 else PRIORS[name][1]
    return model


@dataclass(frozen=True)
class Prediction:
    weight: float
    probability: float
    gammas: dict[str, int]


def predict(records: Records, model: Model, pair_ids: Iterable[Ids]) -> dict[Ids, Prediction]:
    """The model's match weight, match probability and comparison levels of each pair of ids."""
    linker, db_api = linker_for(records, model)
    wanted = sorted({(min(a, b), max(a, b)) for a, b in pair_ids})
    blocked = db_api.register(
        [{"match_key": "0", "join_key_l": a, "join_key_r": b} for a, b in wanted], table_name="labelled_pairs"
    )
    linker.table_management.register_blocked_pairs_for_predict(blocked)
    out = {}
    for row in linker.inference.predict().as_record_list():
        left, right = row["unique_id_l"], row["unique_id_r"]
        out[(min(left, right), max(left, right))] = Prediction(
            float(row["match_weight"]),
            float(row["match_probability"]),
            {name: int(row[f"gamma_{name}"]) for name in COMPARISONS},
        )
    return out


def key(ids: Ids) -> Ids:
    return (min(ids), max(ids))


# --- evaluation ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scored:
    pair: Pair
    prediction: Prediction

    @property
    def weight(self) -> float:
        return self.prediction.weight

    @property
    def probability(self) -> float:
        return self.prediction.probability


def folds_of(pairs: Sequence[Pair], k: int) -> list[int]:
    """Each pair's fold: the pairs derived from one sample record fall in one fold."""

    def group(pair: Pair) -> str:
        return pair.a.key.split("~", 1)[0]

    groups = sorted({group(p) for p in pairs})
    random.Random(SEED).shuffle(groups)
    fold = {name: i % k for i, name in enumerate(groups)}
    return [fold[group(p)] for p in pairs]


def counts(scored: Iterable[Scored], joined: Callable[[Scored], bool]) -> Score:
    tp = fp = fn = 0
    for s in scored:
        hit = joined(s)
        tp += hit and s.pair.same
        fp += hit and not s.pair.same
        fn += (not hit) and s.pair.same
    return Score(0.0, tp, fp, fn)


def weight_at_least(weight: float) -> Callable[[Scored], bool]:
    return lambda s: s.weight >= weight


def probability_at_least(threshold: float) -> Callable[[Scored], bool]:
    return lambda s: s.probability >= threshold


def focus(scored: Iterable[Scored]) -> list[Scored]:
    """The positives and the hard negatives."""
    return [s for s in scored if s.pair.same or s.pair.category in evaluation.HARD_NEGATIVE]


HEADER = f"{'threshold':>9} {'P':>7} {'R':>7} {'F1':>7} {'P_all':>7} {'FP_hard':>8} {'FP_all':>7} {'FN':>4}"


def line(label: str, part: Score, every: Score, mark: str = "") -> str:
    return (
        f"{label:>9} {part.precision:>7.4f} {part.recall:>7.4f} {part.f1:>7.4f} {every.precision:>7.4f} "
        f"{part.false_positive:>8} {every.false_positive:>7} {part.false_negative:>4}{mark}"
    )


@dataclass(frozen=True)
class Operating:
    """A matcher at one threshold: the scores on positives + hard negatives and on every pair."""

    label: str
    part: Score
    every: Score


def at_recall(scored: Sequence[Scored], target: float) -> Operating:
    """The match weight with the best precision (positives + hard negatives) at a recall of at least ``target``."""
    chosen = focus(scored)
    best: Operating | None = None
    for weight in sorted({s.weight for s in chosen}, reverse=True):
        part = counts(chosen, weight_at_least(weight))
        if part.recall >= target and (best is None or part.precision > best.part.precision):
            probability = 1.0 / (1.0 + 2.0 ** (-weight))
            best = Operating(
                f"weight >= {weight:.2f} (p {probability:.6f})", part, counts(scored, weight_at_least(weight))
            )
    assert best is not None
    return best


def print_categories(joined: Callable[[Pair], bool], pairs: Iterable[Pair]) -> None:
    total: Counter[str] = Counter()
    hits: Counter[str] = Counter()
    for pair in pairs:
        total[pair.category] += 1
        hits[pair.category] += joined(pair)
    for group, names in (
        ("positive", evaluation.POSITIVE),
        ("hard negative", evaluation.HARD_NEGATIVE),
        ("other negative", evaluation.OTHER_NEGATIVE),
    ):
        for name in names:
            print(f"  {group:<15} {name:<22} {total[name]:>5} {hits[name]:>5}")


def report(title: str, scored: list[Scored]) -> tuple[Operating, Operating]:
    """Print a model's sweep, its best precision at the target recall, the per-category joins at the best
    threshold of the sweep (by F1 on positives + hard negatives) and some errors there; return both."""
    print(f"\n== {title}")
    print(HEADER)
    best: Operating | None = None
    threshold = THRESHOLDS[0]
    for t in THRESHOLDS:
        part = counts(focus(scored), probability_at_least(t))
        every = counts(scored, probability_at_least(t))
        print(line(f"{t:g}", part, every))
        if best is None or part.f1 > best.part.f1:
            best, threshold = Operating(f"p >= {t:g}", part, every), t
    assert best is not None
    recall_point = at_recall(scored, TARGET_RECALL)
    print(f"best precision at recall >= {TARGET_RECALL}: {recall_point.label}")
    print(line("", recall_point.part, recall_point.every))
    print(f"per category at match probability >= {threshold:g} (the sweep's best F1): pairs, joined")
    by_pair = {id(s.pair): s for s in scored}
    print_categories(lambda p: by_pair[id(p)].probability >= threshold, [s.pair for s in scored])
    errors = [s for s in scored if (s.probability >= threshold) != s.pair.same]
    shown: Counter[str] = Counter()
    print(f"errors there ({len(errors)}), at most 2 per category: category, match weight, levels, names")
    for s in sorted(errors, key=lambda s: (s.pair.same, s.pair.category, -s.weight)):
        shown[s.pair.category] += 1
        if shown[s.pair.category] <= 2:
            levels = " ".join(f"{name}={s.prediction.gammas[name]}" for name in COMPARISONS)
            names = f"{s.pair.a.keys.name_key!r} ~ {s.pair.b.keys.name_key!r}"
            print(f"  {s.pair.category:<20} {s.weight:>7.2f}  {levels}  {names}")
    return best, recall_point


def print_weights(title: str, model: Model) -> None:
    """The match weight log2(m/u) of each level, null levels aside."""
    print(f"\n{title}: match weight log2(m/u) per level")
    for comparison in model["comparisons"]:
        cells = []
        for _, level in non_null_levels(comparison):
            m, u = level.get("m_probability"), level.get("u_probability")
            ratio = f"{math.log2(m / u):+.1f}" if isinstance(m, float) and isinstance(u, float) else f"m {m}, u {u}"
            cells.append(f"{level.get('label_for_charts', '?')} {ratio}")
        print(f"  {comparison['output_column_name']:<12} " + "; ".join(cells))


# --- timing -------------------------------------------------------------------------------------------


def time_rules(pairs: Sequence[tuple[MatchKeys, MatchKeys]]) -> tuple[float, float]:
    """Seconds per pair of the rules: with their lru caches cleared first, and on a second pass."""
    matcher = rules(NAME_THRESHOLD)
    matching_module.strong_evidence.cache_clear()
    matching_module._names.cache_clear()
    passes = []
    for _ in range(2):
        start = time.perf_counter()
        for a, b in pairs:
            matcher(a, b)
        passes.append((time.perf_counter() - start) / len(pairs))
    return passes[0], passes[1]


def time_predict(records: Records, model: Model, pair_ids: Sequence[Ids]) -> float:
    """Seconds per pair of one splink predict over ``pair_ids`` (registering them and reading the result)."""
    linker, db_api = linker_for(records, model)
    start = time.perf_counter()
    blocked = db_api.register(
        [{"match_key": "0", "join_key_l": a, "join_key_r": b} for a, b in sorted({key(p) for p in pair_ids})],
        table_name="timed_pairs",
    )
    linker.table_management.register_blocked_pairs_for_predict(blocked)
    linker.inference.predict().as_record_list()
    return (time.perf_counter() - start) / len(pair_ids)


def time_score_pair(records: Records, model: Model, pair_ids: Sequence[Ids], n: int = 50) -> float:
    """Seconds per call of splink's score_pair, one pair at a time (the mean of ``n``)."""
    linker, _ = linker_for(records, model)
    by_id = {row["unique_id"]: row for row in records.rows}
    sample = list(pair_ids[:: max(1, len(pair_ids) // n)])[:n]
    linker.inference.score_pair(by_id[sample[0][0]], by_id[sample[0][1]]).as_record_list()  # warm up
    start = time.perf_counter()
    for a, b in sample:
        linker.inference.score_pair(by_id[a], by_id[b]).as_record_list()
    return (time.perf_counter() - start) / len(sample)


def city_pairs(records: Records) -> list[Ids]:
    """Every pair of records in one city and state: a candidate set as blocking would give it."""
    by_city: dict[str, list[int]] = defaultdict(list)
    for row in records.rows:
        by_city[row["city_state"]].append(row["unique_id"])
    return [(a, b) for ids in by_city.values() for i, a in enumerate(ids) for b in ids[i + 1 :]]


# --- main ---------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=SHARED, help="the shared samples' directory")
    parser.add_argument("--folds", type=int, default=5, help="folds of the cross-validation of m from labels")
    parser.add_argument("--u-pairs", type=float, default=2e6, help="record pairs sampled to estimate u")
    args = parser.parse_args()
    logging.getLogger("splink").setLevel(logging.ERROR)
    started = time.perf_counter()

    samples = evaluation.sample_records(args.shared)
    pairs = evaluation.all_pairs(samples)
    positives = [p for p in pairs if p.same]
    hard = [p for p in pairs if p.category in evaluation.HARD_NEGATIVE]
    records = records_of(pairs, samples)
    print(
        f"splink {splink.__version__}, duckdb {duckdb.__version__}; {len(samples)} sample records, {len(pairs)} "
        f"pairs ({len(positives)} positive, {len(hard)} hard negative, {len(pairs) - len(positives) - len(hard)} "
        f"other negative) over {len(records.rows)} distinct records"
    )

    matcher = rules(NAME_THRESHOLD)
    rules_point = Operating(
        f"name >= {NAME_THRESHOLD:g}",
        evaluation.score_with(positives + hard, matcher),
        evaluation.score_with(pairs, matcher),
    )
    print(f"\n== rules (vpx.registries.matching, name threshold {NAME_THRESHOLD:g})")
    print(HEADER)
    print(line(f"{NAME_THRESHOLD:g}", rules_point.part, rules_point.every))
    rules_best: Operating | None = None
    for threshold in range(70, 101, 2):
        part = evaluation.score(positives + hard, threshold=float(threshold))
        if part.recall >= TARGET_RECALL and (rules_best is None or part.precision > rules_best.part.precision):
            rules_best = Operating(f"name >= {threshold}", part, evaluation.score(pairs, threshold=float(threshold)))
    assert rules_best is not None
    print(f"best precision at recall >= {TARGET_RECALL} (name threshold 70-100): {rules_best.label}")
    print(line("", rules_best.part, rules_best.every))
    print("per category: pairs, joined")
    print_categories(lambda p: matcher(p.a.keys, p.b.keys) is not None, pairs)

    base = trained_u(records, args.u_pairs)
    print(f"\nprior (probability two random records match): {base['probability_two_random_records_match']:.3g}")
    levels = predict(records, completed(base), records.pair_ids)  # the comparison vectors, whatever m

    summary: list[tuple[str, Operating, Operating]] = [("rules", rules_point, rules_best)]
    em_model = trained_em(records, base)
    print_weights("em: u by random sampling, m by EM", em_model)
    em_predictions = predict(records, em_model, records.pair_ids)
    em = [Scored(p, em_predictions[key(ids)]) for p, ids in zip(pairs, records.pair_ids, strict=True)]
    summary.append(("em", *report("splink, u by random sampling, m by EM (no labels)", em)))

    folds = folds_of(pairs, args.folds)
    for priors in (False, True):
        name = "labels+priors" if priors else "labels"
        predictions: dict[Ids, Prediction] = {}
        fold_model: Model = {}
        for k in range(args.folds):
            train = (levels[key(ids)].gammas for ids, p, f in zip(records.pair_ids, pairs, folds, strict=True)
                     if f != k and p.same)  # fmt: skip
            fold_model = from_labels(completed(base), train, priors)
            test = [ids for ids, f in zip(records.pair_ids, folds, strict=True) if f == k]
            predictions.update(predict(records, fold_model, test))
        print_weights(f"{name}: u by random sampling, m from labels (the last fold's)", fold_model)
        scored = [Scored(p, predictions[key(ids)]) for p, ids in zip(pairs, records.pair_ids, strict=True)]
        title = f"splink, u by random sampling, m from labels, {args.folds}-fold cross-validated"
        summary.append((name, *report(title + (", website/licence/npi m fixed" if priors else ""), scored)))

    print(f"\n== summary: the sweep's best F1, and the best precision at recall >= {TARGET_RECALL}")
    columns = f"{'P':>7} {'R':>7} {'F1':>7} {'P_all':>7} | {'P@R95':>7} {'R':>7} {'P_all':>7}"
    print(f"{'matcher':<14} {columns}  operating points")
    for name, chosen, recall_point in summary:
        print(
            f"{name:<14} {chosen.part.precision:>7.4f} {chosen.part.recall:>7.4f} {chosen.part.f1:>7.4f} "
            f"{chosen.every.precision:>7.4f} | {recall_point.part.precision:>7.4f} {recall_point.part.recall:>7.4f} "
            f"{recall_point.every.precision:>7.4f}  {chosen.label}; {recall_point.label}"
        )

    candidates = city_pairs(records)
    cold, warm = time_rules([(p.a.keys, p.b.keys) for p in pairs])
    city_cold, _ = time_rules([(records.keys[a], records.keys[b]) for a, b in candidates])
    batch = time_predict(records, em_model, records.pair_ids)
    city_batch = time_predict(records, em_model, candidates)
    single = time_score_pair(records, em_model, records.pair_ids)
    print("\n== time per pair (one process, one core)")
    print(f"  {'':<34} {'rules':>11} {'splink predict':>15}")
    for label, rule_time, model_time in (
        (f"the {len(pairs)} labelled pairs", cold, batch),
        (f"{len(candidates)} same-city pairs", city_cold, city_batch),
    ):
        print(f"  {label:<34} {rule_time * 1e6:>8.1f} µs {model_time * 1e6:>12.1f} µs")
    print(
        f"  rules with warm lru caches {warm * 1e6:.1f} µs; splink score_pair, one pair a call, {single * 1e3:.1f} ms"
    )
    print(f"\ntotal run time {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
