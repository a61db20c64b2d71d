"""The training state of all partitions, and the waves of work on it.

Partitions are binned once into ``Shard`` objects and bundled into groups,
one per worker, kept by a ``holder.Holder`` (the training set's and the
evaluation sets' partitions of that worker). Every wave is one call per
holder: it applies the wave's ``_group`` functions to its partitions and sums
their histograms, so only one histogram per worker travels to the driver.
Where the holders live is the executor's business: ``LocalExecutor`` keeps one
in this process, ``dask.DaskExecutor`` one Dask Actor per worker.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from typing import NamedTuple

import numpy as np

from ..binning import SAMPLE_ROWS, BinMapper, CandidatePool
from ..inputs.frames import merge_categories
from ..inputs.queries import check_queries_apart
from ..kernels import exact
from ..kernels.compact_histograms import is_compact, summed
from ..kernels.node_search import packed_kind
from ..kernels.sampling import NodeFeatureSampler
from ..trees.tree import trees_from_grown
from . import group as _group
from . import spill
from .executor import Executor
from .group import merge_metrics
from .holder import BOTH, SMALL, STATE, Op
from .input_plan import InputPlan
from .shard import make_shard, scan

logger = logging.getLogger("distboost")

TRAIN = "train"


def eval_key(k: int) -> str:
    return f"eval{k}"


class RoundStarted(NamedTuple):
    """What ``Engine.start_round`` returns."""

    hist: np.ndarray | None
    """(n_trees, n_features, 256, n_stats) the summed root histograms (in
    process: the holder's memory, valid until the next round start); None
    when not asked for."""
    root_counts: np.ndarray
    """(n_trees,) int64: rows in each tree's root."""
    train_metric: list | None
    """One float per ``learner.metrics``: the model before this round on the
    training rows; None when not measured."""
    eval_metrics: list
    """Per evaluation set, a list of float (empty when ``update`` is None)."""
    pending_counts: np.ndarray | None
    """(n_splits, 2) int64: rows in each ``pending`` split's (left, right)
    children; None without ``pending``."""


class Engine:
    """Training data and per-round state, group by group.

    ``timings`` (seconds, accumulated): ``prepare`` (scan + binning),
    ``round_start`` and ``histograms`` (wall time of those waves, seen from the
    driver), ``kernels`` (the slowest group's own compute time in each of those
    waves: the part no transport could remove), and whatever the booster adds.

    The waves' histograms and metrics are summed among the holders on Dask
    (``reduction``): each op's results come back as one.
    """

    def __init__(self, executor: Executor, timings: dict | None = None, out_of_core="auto"):
        self.ex = executor
        self.timings = timings if timings is not None else defaultdict(float)
        self.out_of_core = out_of_core
        self.n_eval_sets = 0
        self.placement: list[dict] = []
        self.n_level_waves = 0  # level waves sent so far (passes over the rows)
        self._features = None  # the features of this round's histograms

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Release the fit's holders and connections (``with Engine(...) as engine:``)."""
        self.ex.close()

    @property
    def groups(self) -> list:
        """The groups (one per worker, or more after a recovery) holding training rows."""
        return [g for g in self.ex.groups if TRAIN in g.sets]

    @property
    def eval_groups(self) -> list:
        """Per evaluation set, the groups holding its rows."""
        return [[g for g in self.ex.groups if eval_key(k) in g.sets] for k in range(self.n_eval_sets)]

    # ---------------------------------------------------------------- data
    def prepare(self, given: InputPlan, regression: bool, max_bins: int):
        """Scan and bin the training and evaluation partitions of ``given``
        (``input_plan.plan``), with its bins and classes where it has them
        (bins given, or a model continued).
        """
        train_parts, eval_parts, schema = given.parts, given.eval_parts, given.schema
        mapper, classes = given.mapper, given.classes
        t0 = time.perf_counter()
        self.ex.check_memory()
        n_samples = SAMPLE_ROWS if mapper is None else 0  # given bins: no sample
        summaries, (_, sample, weights) = self._scan(train_parts, schema, n_samples, regression)
        if "queries" in summaries[0]:
            check_queries_apart([s["queries"] for s in summaries])
        n_rows = [s["n_rows"] for s in summaries]
        if classes is None and not regression:
            classes = np.unique(np.concatenate([s["classes"] for s in summaries]))
        if mapper is None:
            schema.categories = merge_categories([s["categories"] for s in summaries])
            mapper = BinMapper(max_bins).fit(sample, schema.is_categorical, schema.categories, weights)
        first_rows = np.concatenate([[0], np.cumsum(n_rows)[:-1]]).astype(int)
        placement = self._placement(sum(n_rows), schema.n_features, classes)
        self.ex.bin(TRAIN, _shard_args, "bin",
                    [(p, int(f), i) for i, (p, f) in enumerate(zip(train_parts, first_rows))],
                    schema, mapper, classes, "training data", placement)
        for k, parts in enumerate(eval_parts):
            self.ex.bin(eval_key(k), _shard_args, "bin-eval", [(p, 0, i) for i, p in enumerate(parts)],
                        schema, mapper, classes, f"eval_set[{k}]", placement)
        self.ex.place("group")
        self._report_placement()
        self.n_eval_sets = len(eval_parts)
        self.n_rows = int(sum(n_rows))
        self.w_max = max(s["w_max"] for s in summaries)
        self.w_min = min(s["w_min"] for s in summaries)
        self.y_absmax = max(s["y_absmax"] for s in summaries)
        self.max_query_rows = max(s.get("max_query", 0) for s in summaries)  # a ranker's
        self.mapper, self.classes, self.schema = mapper, classes, schema
        self.timings["prepare"] += time.perf_counter() - t0
        return mapper, classes

    def _scan(self, parts, schema, n_samples, regression):
        """First pass over the training partitions: per partition its summary,
        and the binning sample (``binning.CandidatePool``: each scan sends only
        the rows that can still enter it; about one scan per worker at a
        time, so that no worker reads several partitions at once nor holds
        their candidates).

        A scan sends at most its partition's share of the sample, twice over
        (``binning.prior_bound``); a partition whose share proves larger than
        that (partitions of unequal sizes) is asked once more for the rows
        it held back that the sample still needs (``_rescan``).
        """
        summaries, pool = [None] * len(parts), CandidatePool(max(n_samples, 1))
        priors = [None] * len(parts)

        def args_of(i):
            return parts[i], i, schema, n_samples, regression, pool.threshold, len(parts)

        def consume(i, result):
            priors[i] = result.pop("prior")
            summaries[i] = _summary(result)
            if result["candidates"] is not None:
                pool.add(result["candidates"])

        self._stream_scans("scan", len(parts), args_of, consume)
        if not n_samples:
            return summaries, (None, None, None)
        return summaries, self._rescan(parts, schema, n_samples, regression, pool, priors)

    def _rescan(self, parts, schema, n_samples, regression, pool, priors):
        """The sample, once every partition sent the rows it needs from it.

        The sample's largest hash ``last`` (none: it is not full, every row
        belongs) is final unless a partition held rows back below it (its
        prior bound is smaller): those rows, between its bound and ``last``,
        join the pool, and the sample is merged again. Rows of hash at most
        ``last`` are then all in the pool: the sample is the one a single
        pass over every row gives.
        """
        sample = pool.result()
        last = int(sample[0][-1]) if len(sample[0]) == n_samples else None
        short = [i for i, prior in enumerate(priors)
                 if prior is not None and (last is None or prior < last)]
        if not short:
            return sample
        logger.debug("distboost: %d partition(s) asked again for binning candidates", len(short))

        def args_of(k):
            i = short[k]
            return parts[i], i, schema, n_samples, regression, last, None, priors[i]

        self._stream_scans("rescan", len(short), args_of,
                           lambda k, result: pool.add(result["candidates"]))
        return pool.result()

    def _stream_scans(self, name, n_tasks, args_of, consume):
        """Scan tasks, about one per worker at a time (``_scan``)."""
        self.ex.stream(_scan_args, name, n_tasks, args_of, consume, window=self.ex.n_workers() + 1)

    def _placement(self, n_rows: int, n_features: int, classes) -> spill.Placement:
        """Where the bin tasks put partitions: estimated from a worker's share of rows."""
        n_outputs = 1 if classes is None or len(classes) <= 2 else len(classes)
        per_row = spill.in_memory_bytes_per_row(n_features, n_outputs)
        share = n_rows * per_row / max(1, self.ex.n_workers())
        return spill.Placement(self.out_of_core, share, n_outputs, spill.BLOCK_BYTES)

    def _report_placement(self):
        """Record (``placement``) and log which workers keep their rows on disk."""
        (per_group,) = self.ex.run([Op(TRAIN, _group.placement, (), SMALL)], "placement")
        self.placement = [
            {"worker": getattr(g, "address", None) or "local", **counts}
            for g, counts in zip(self.groups, per_group)
        ]
        for p in self.placement:
            if p["disk_rows"]:
                logger.info("distboost: %s keeps %d training rows on local disk (out of core), "
                            "%d in memory", p["worker"], p["disk_rows"], p["memory_rows"])

    # ------------------------------------------------------------ row state
    def exact_sums(self, fn) -> list[float]:
        """Sums over every row of the arrays ``fn(shard)`` returns, exactly."""
        (per_group,) = self.ex.run([Op(TRAIN, _group.exact_sums, (fn,))], "sums")
        parts = [p for group in per_group for p in group]
        return [exact.to_float(sum(col)) for col in zip(*parts)]

    def init_score(self, loss) -> np.ndarray:
        """f_0 from exact sums over every partition (ESL Algorithm 10.3, step 1)."""
        return loss.init_score(self.exact_sums(_InitStatistics(loss)), None)

    def set_rows(self, learner, base_score, update):
        """Row states from scratch, on the training and evaluation sets."""
        args, rows = (learner, base_score, update), _group.RowsFrom(learner, base_score, update)
        ops = [Op(key, _group.set_rows, args, STATE, rows) for key in self._set_keys()]
        self.ex.run(ops, "initial-state")

    # ----------------------------------------------------------- the waves
    def start_round(self, learner, update, train_metric, round_index, features, pending=None,
                    histograms=True):
        """Add the previous round's trees everywhere, start round ``round_index``.

        One wave: every holder adds the trees to its training rows and builds
        the root histograms, and adds them to its evaluation rows too.

        ``pending``: a level of the previous round (``LevelSplits``) still
        to route (``trees.deferred``): the holders route the rows through it
        first, as its own wave would have, and count them; the trees then
        continue from there.
        ``histograms`` False: no root histograms (``hist`` is None), for a
        round whose trees grow where the rows are (``grow_here``).

        Returns
        -------
        RoundStarted
        """
        t0 = time.perf_counter()
        self.ex.set_round(round_index)
        history = None if pending is None else (*self._split_history, pending)
        self._split_history, self._features = [], features
        op = Op(TRAIN, _group.start_round,
                (learner, update, train_metric, round_index, features, history, histograms,
                 self.ex.remote),
                BOTH, _group.TreesAdded(learner, update, round_index),
                _group.CombineRoundStart(learner))
        evals = self._evaluations(learner, update) if update is not None else []
        results, *rest = self.ex.run([op] + evals, "round-start")
        hist = _sum_histograms([r.histograms for r in results]) if histograms else None
        root_counts = sum(r.root_counts for r in results)
        self.timings["kernels"] += max(r.seconds for r in results)
        tm = _finish_metric([r.metric_sums for r in results], learner) if train_metric else None
        metrics = [_finish_metric(sums, learner) for sums in rest]
        pending_counts = None if pending is None else sum(r.pending_counts for r in results)
        self.timings["round_start"] += time.perf_counter() - t0
        return RoundStarted(hist, root_counts, tm, metrics, pending_counts)

    def level(self, splits, n_slots):
        """Route rows through ``splits`` (a ``LevelSplits``); return the
        histograms of the built children over the round's features, as a
        tuple of partial sums (one per holder answering: the grower adds them
        while it subtracts; in process the holder's memory, valid until the
        next level; from a worker, compact where mostly empty:
        ``kernels.compact_histograms``), and the rows in each split's (left, right) children,
        shape (n_splits, 2): the grower's ``build_level``.

        The group states stay those of the round start; every level call
        carries the round's splits so far, so a rebuilt holder can route its
        rows from the roots.
        """
        t0 = time.perf_counter()
        self._split_history.append(splits)
        args = (tuple(self._split_history), n_slots, self._features, self.ex.remote)
        self.n_level_waves += 1
        (results,) = self.ex.run([Op(TRAIN, _group.level, args, combine=_group.combine_level)],
                                 "histogram")
        counts = sum(r.counts for r in results)
        self.timings["kernels"] += max(r.seconds for r in results)
        self.timings["histograms"] += time.perf_counter() - t0
        return tuple(r.histograms for r in results), counts

    def grows_here(self, criterion, growth, node_features) -> bool:
        """Whether a round's trees can grow in one compiled call where the rows
        are (``kernels.local_grower``): in process, the training rows one
        partition in memory, and a criterion, growth and per-node features it
        knows. ``dask.config.set({"distboost.local-grower": False})`` grows
        them level by level as on Dask (the same trees)."""
        import dask.config

        return (dask.config.get("distboost.local-grower", True) is not False
                and self.ex.single_partition(TRAIN)
                and packed_kind(criterion) is not None
                and growth.monotonic_cst is None and growth.interaction_cst is None
                and (node_features is None or isinstance(node_features, NodeFeatureSampler)))

    def grow_here(self, spec, growth) -> list:
        """The round's trees, grown where the rows are (``grows_here``); the
        round was started without root histograms."""
        t0 = time.perf_counter()
        sampler = spec.node_features
        sampling = None
        if sampler is not None and sampler.max_features is not None \
                and sampler.max_features < self.schema.n_features:
            sampling = (sampler.max_features, sampler.seed, sampler.first_tree)
        (grown,) = self.apply(_group.grow, "grow", spec.criterion, self.mapper, spec.masks,
                              spec.features, growth, sampling)
        trees = trees_from_grown(grown, spec.criterion, self.mapper, growth.learning_rate)
        self.timings["kernels"] += time.perf_counter() - t0
        return trees

    def finish(self, learner, update, train_metric):
        """Add the last round's trees; metrics of the final model."""
        op = Op(TRAIN, _group.finish, (learner, update, train_metric), BOTH,
                _group.TreesAdded(learner, update), _group.CombineMetrics(learner))
        results, *rest = self.ex.run([op] + self._evaluations(learner, update), "finish")
        tm = _finish_metric(results, learner) if train_metric else None
        return tm, [_finish_metric(sums, learner) for sums in rest]

    def measure(self, learner, set_key: str) -> list[float]:
        """``learner``'s metrics of the set ``set_key`` (``TRAIN``, ``eval_key(k)``) at
        its current margins, e.g. of f_0 before the first round."""
        op = Op(set_key, _group.measure, (learner,), SMALL, None, _group.CombineMetrics(learner))
        (sums,) = self.ex.run([op], "measure")
        return _finish_metric(sums, learner)

    def apply(self, fn, name, *args) -> list:
        """Run ``fn(state, *args) -> (state, small)`` on every training group;
        return the smalls, one per group.

        The extension point for learners that need other passes (line
        searches, exact quantiles, AdaBoost's weighted error, out-of-bag estimates).
        """
        (out,) = self.ex.run([Op(TRAIN, _group.apply, (fn, *args), BOTH)], name)
        return out

    def apply_sets(self, fn, name, *args) -> dict:
        """``apply`` on the training set and every evaluation set at once:
        ``{"train": smalls, "eval0": smalls, ...}`` (e.g. checks of every set's rows)."""
        keys = self._set_keys()
        outs = self.ex.run([Op(key, _group.apply, (fn, *args), BOTH) for key in keys], name)
        return dict(zip(keys, outs))

    def each_partition(self, fn, name, *args) -> list:
        """Run ``fn(shard, row_state, *args) -> small`` on every training
        partition; return the smalls, those of each group in turn.

        For a learner's passes over its rows that change nothing (AdaBoost's
        weighted error, out-of-bag estimates): the learner writes what one
        partition computes, the engine walks the partitions.
        """
        return [small for group in self.apply(_group.each_partition, name, fn, *args)
                for small in group]

    def _set_keys(self):
        return [TRAIN] + [eval_key(k) for k in range(self.n_eval_sets)]

    def _evaluations(self, learner, update):
        return [Op(eval_key(k), _group.evaluate, (learner, update), BOTH,
                   _group.TreesAdded(learner, update), _group.CombineMetrics(learner))
                for k in range(self.n_eval_sets)]


class _InitStatistics:
    """Picklable ``shard -> loss.init_statistics(y, w)``."""

    def __init__(self, loss):
        self.loss = loss

    def __call__(self, shard):
        return self.loss.init_statistics(shard.target, shard.w)


def _scan_args(part, index, schema, n_samples, regression, below=None, n_parts=None, above=None):
    X, y, w, qid, upper = (*part, None, None)[:5]  # (X, y, w), a ranker's qid, AFT's upper
    _release_arrow_memory()
    try:
        return scan(X, y, w, schema, n_samples, regression, index, below=below, n_parts=n_parts,
                    above=above, qid=qid, upper=upper)
    finally:
        del X, y, w, qid, upper, part
        _release_arrow_memory()


def _shard_args(part, first_row, index, schema, mapper, classes, what="training data",
                placement=None):
    X, y, w, qid, upper = (*part, None, None)[:5]
    _release_arrow_memory()
    try:
        return make_shard(X, y, w, schema, mapper, classes, first_row, index, what, placement,
                          qid, upper)
    finally:
        del X, y, w, qid, upper, part
        _release_arrow_memory()


def _release_arrow_memory():
    """Hand back what pyarrow's allocator keeps from partitions read before.

    Its default pool (mimalloc or jemalloc) holds on to freed memory for
    reuse; on a worker reading partition after partition that is 100 MB or
    more of resident memory that Dask's monitor counts against the limit.
    """
    import sys

    pa = sys.modules.get("pyarrow")
    if pa is not None:
        pa.default_memory_pool().release_unused()
        _small_worker_arrow_pool()


def _small_worker_arrow_pool():
    """On a worker with little memory to spare, pyarrow allocates from the
    system allocator (``dask.DaskExecutor.check_memory`` does this at fit
    start; a worker restarted since is a new process)."""
    try:
        from distributed import get_worker

        worker = get_worker()
    except ValueError:
        return
    from .watch import use_system_arrow_pool, wants_system_arrow_pool, worker_memory

    m = worker_memory(worker)
    if (m["memory_limit"] and m["pause"]
            and wants_system_arrow_pool(m, m["memory_limit"], m["pause"])):
        use_system_arrow_pool()


def _summary(scan: dict) -> dict:
    """The small part of a scan result (everything but the sample rows)."""
    return {k: v for k, v in scan.items() if k != "candidates"}


def _sum_histograms(arrays):
    """Sum of a list of histograms, dense or compact (exact: integers); a lone
    dense one as it is. The arrays are left as they are (they may be a
    message's read-only memory)."""
    if len(arrays) == 1 and not is_compact(arrays[0]):
        return arrays[0]
    return summed(arrays, np.empty(arrays[0].shape, arrays[0].dtype))


def _finish_metric(partials, learner) -> list[float]:
    """The metrics' values from the groups' partials (``metrics`` module)."""
    return [m.value(merged) for m, merged in zip(learner.metrics, merge_metrics(learner, partials))]
