"""The training state of all partitions, and the waves of work on it.

Partitions are binned once into ``Shard`` objects and bundled into groups,
one per worker (``_group``). Every wave runs one task per group: the group
applies the wave's function to each of its partitions and sums their
histograms, so only one histogram per worker travels to the driver. Where the
work runs is the executor's business: ``LocalExecutor`` runs it in this
process, ``dask_engine.DaskExecutor`` as Dask tasks on the workers holding the
data.
"""

from __future__ import annotations

import time
from collections import defaultdict

import numpy as np

from . import _exact, _group, _partition
from ._input import Schema, merge_categories
from .binning import BinMapper, merge_candidates

N_BINNING_SAMPLES = 200_000


class LocalExecutor:
    """Runs everything in this process, all partitions in one group."""

    rebase_every = None  # no task lineage to cut

    def __init__(self, n_jobs: int | None = None):
        self.n_jobs = n_jobs

    def map(self, fn, name, per_part, *common):
        return [fn(*args, *common) for args in per_part]

    def call(self, groups, fn, name, *common):
        return [fn(g, *common) for g in groups]

    def getitem(self, values, item, name):
        return [v[item] for v in values]

    def gather(self, values):
        return list(values)

    def reduce(self, values, combine, name, *args):
        return combine(list(values), *args)

    def bundle(self, shards, name):
        return [_group.bundle(*shards)] if shards else []

    def set_round(self, round_index):
        pass


class Engine:
    """Training data and per-round state, group by group.

    ``timings`` (seconds, accumulated): ``prepare`` (scan + binning),
    ``round_start`` and ``histograms`` (wall time of those waves, seen from the
    driver), ``kernels`` (the slowest group's own compute time in each of those
    waves: the part no scheduler could remove), and whatever the booster adds.
    """

    def __init__(self, executor, timings: dict | None = None):
        self.ex = executor
        self.timings = timings if timings is not None else defaultdict(float)

    # ---------------------------------------------------------------- data
    def prepare(self, train_parts, eval_parts, schema: Schema, regression: bool, max_bins: int,
                mapper: BinMapper | None = None, classes=None):
        """Scan and bin the training and evaluation partitions.

        Parameters
        ----------
        train_parts : list of (X, y, w) per partition (values, or lazy pieces
            for the Dask executor)
        eval_parts : list (one per eval set) of such lists
        mapper, classes : given when continuing a model (its bins and classes)
        """
        t0 = time.perf_counter()
        scans = self.ex.map(_scan_args, "scan", [(p, i) for i, p in enumerate(train_parts)],
                            schema, N_BINNING_SAMPLES, regression)
        summaries = self.ex.gather(self.ex.map(_summary, "scan-summary", [(s,) for s in scans]))
        n_rows = [s["n_rows"] for s in summaries]
        if classes is None and not regression:
            classes = np.unique(np.concatenate([s["classes"] for s in summaries]))
        if mapper is None:
            schema.categories = merge_categories([s["categories"] for s in summaries])
            candidates = self.ex.getitem(scans, "candidates", "sample")
            _, sample, weights = self.ex.reduce(candidates, merge_candidates, "merge-sample",
                                                N_BINNING_SAMPLES)
            mapper = BinMapper(max_bins).fit(sample, schema.is_categorical, schema.categories, weights)
        del scans
        first_rows = np.concatenate([[0], np.cumsum(n_rows)[:-1]]).astype(int)
        shards = self.ex.map(
            _shard_args, "bin", [(p, int(f), i) for i, (p, f) in enumerate(zip(train_parts, first_rows))],
            schema, mapper, classes,
        )
        self.groups = self.ex.bundle(shards, "group")
        self.eval_groups = []
        for k, parts in enumerate(eval_parts):
            eval_shards = self.ex.map(_shard_args, "bin-eval", [(p, 0, i) for i, p in enumerate(parts)],
                                      schema, mapper, classes, f"eval_set[{k}]")
            self.eval_groups.append(self.ex.bundle(eval_shards, "group-eval"))
        self.n_rows = int(sum(n_rows))
        self.w_max = max(s["w_max"] for s in summaries)
        self.y_absmax = max(s["y_absmax"] for s in summaries)
        self.mapper, self.classes, self.schema = mapper, classes, schema
        self.timings["prepare"] += time.perf_counter() - t0
        return mapper, classes

    # ------------------------------------------------------------ row state
    def rebase_due(self, rounds_done: int) -> bool:
        """Time to rebuild row states from the model (``set_rows``)?

        On Dask every round's state is computed from the last, so a lost
        worker's data would be recomputed along that whole chain; rebuilding
        from the model every ``rebase_every`` rounds bounds it. In process
        there is nothing to bound.
        """
        every = self.ex.rebase_every
        return bool(every) and rounds_done > 0 and rounds_done % every == 0

    def exact_sums(self, fn) -> list[float]:
        """Sums over every row of the arrays ``fn(shard)`` returns, exactly."""
        per_group = self.ex.gather(self.ex.call(self.groups, _group.exact_sums, "sums", fn))
        parts = [p for group in per_group for p in group]
        return [_exact.to_float(sum(col)) for col in zip(*parts)]

    def init_score(self, loss) -> np.ndarray:
        """f_0 from exact sums over every partition (ESL Algorithm 10.3, step 1)."""
        return loss.init_score(self.exact_sums(_InitStatistics(loss)), None)

    def set_rows(self, learner, base_score, packed_trees):
        """Row states from scratch (also cuts the chain of tasks behind them)."""
        self.groups = self.ex.call(self.groups, _group.set_rows, "initial-state", learner,
                                   base_score, packed_trees)
        self.eval_groups = [
            self.ex.call(groups, _group.set_rows, "initial-state-eval", learner, base_score,
                         packed_trees)
            for groups in self.eval_groups
        ]

    # ----------------------------------------------------------- the waves
    def start_round(self, learner, packed_trees, train_metric, round_index, features):
        """Add the previous round's trees everywhere, start round ``round_index``.

        Returns
        -------
        hist : ndarray (n_trees, n_features, 256, n_stats), the summed root histograms
        train_metric : float or None, metric of the model before this round
        eval_metrics : list of float (empty when ``packed_trees`` is None)
        """
        t0 = time.perf_counter()
        self.ex.set_round(round_index)
        self._split_history = []
        out = self.ex.call(self.groups, _group.start_round, "round-start", learner, packed_trees,
                           train_metric, round_index, features)
        self.groups = out  # (state, result) pairs: the next wave takes the state itself
        small = self.ex.getitem(out, 1, "root-histogram")
        eval_small = self._evaluate(learner, packed_trees) if packed_trees is not None else []
        gathered = self.ex.gather(small + [s for group in eval_small for s in group])
        results, rest = gathered[: len(small)], gathered[len(small):]
        hist = _partition.sum_arrays([r[0] for r in results])
        self.timings["kernels"] += max(r[2] for r in results)
        tm = _finish_metric([r[1] for r in results], learner) if train_metric else None
        evals = _split_metrics(rest, eval_small, learner)
        self.timings["round_start"] += time.perf_counter() - t0
        return hist, tm, evals

    def level(self, splits, n_slots, features):
        """Route rows through ``splits`` (a ``LevelSplits``); return the summed
        histograms of the built children.

        The group states stay those of the round start: each level task
        returns only its histograms (one hop less per wave) and gets the
        round's earlier splits to rebuild its row partition should its worker have
        lost them.
        """
        t0 = time.perf_counter()
        self._split_history.append(splits)
        out = self.ex.call(self.groups, _group.level, "histogram", tuple(self._split_history),
                           n_slots, features)
        results = self.ex.gather(out)
        hist = _partition.sum_arrays([r[0] for r in results])
        self.timings["kernels"] += max(r[1] for r in results)
        self.timings["histograms"] += time.perf_counter() - t0
        return hist

    def finish(self, learner, packed_trees, train_metric):
        """Add the last round's trees; metrics of the final model."""
        out = self.ex.call(self.groups, _group.finish, "finish", learner, packed_trees, train_metric)
        self.groups = self.ex.getitem(out, 0, "state")
        small = self.ex.getitem(out, 1, "metric") if train_metric else []
        eval_small = self._evaluate(learner, packed_trees)
        gathered = self.ex.gather(small + [s for group in eval_small for s in group])
        tm = _finish_metric(gathered[: len(small)], learner) if train_metric else None
        return tm, _split_metrics(gathered[len(small):], eval_small, learner)

    def apply(self, fn, name, *args, eval_sets: bool = False):
        """Run ``fn(state, *args) -> (state, small)`` on every group; gather the smalls.

        The extension point for learners that need other passes (line
        searches, out-of-bag estimates). With ``eval_sets`` it also runs on the
        evaluation groups and returns ``(train_smalls, [eval_smalls per set])``.
        """
        out = self.ex.call(self.groups, _group.apply, name, fn, *args)
        self.groups = self.ex.getitem(out, 0, "state")
        small = self.ex.getitem(out, 1, name + "-result")
        if not eval_sets:
            return self.ex.gather(small)
        evals = []
        for k, groups in enumerate(self.eval_groups):
            o = self.ex.call(groups, _group.apply, name + "-eval", fn, *args)
            self.eval_groups[k] = self.ex.getitem(o, 0, "state-eval")
            evals.append(self.ex.getitem(o, 1, name + "-eval-result"))
        gathered = self.ex.gather(small + [s for group in evals for s in group])
        train, rest, out_evals, k = gathered[: len(small)], gathered[len(small):], [], 0
        for group in evals:
            out_evals.append(rest[k: k + len(group)])
            k += len(group)
        return train, out_evals

    def _evaluate(self, learner, packed_trees):
        smalls = []
        for k, groups in enumerate(self.eval_groups):
            out = self.ex.call(groups, _group.evaluate, "eval-metric", learner, packed_trees)
            self.eval_groups[k] = self.ex.getitem(out, 0, "state-eval")
            smalls.append(self.ex.getitem(out, 1, "metric-eval"))
        return smalls


class _InitStatistics:
    """Picklable ``shard -> loss.init_statistics(y, w)``."""

    def __init__(self, loss):
        self.loss = loss

    def __call__(self, shard):
        return self.loss.init_statistics(shard.y, shard.w)


def _scan_args(part, index, schema, n_samples, regression):
    X, y, w = part
    return _partition.scan(X, y, w, schema, n_samples, regression, index)


def _shard_args(part, first_row, index, schema, mapper, classes, what="training data"):
    X, y, w = part
    return _partition.make_shard(X, y, w, schema, mapper, classes, first_row, index, what)


def _summary(scan: dict) -> dict:
    """The small part of a scan result (everything but the sample rows)."""
    return {k: v for k, v in scan.items() if k != "candidates"}


def _finish_metric(sums, learner) -> float:
    total = _exact.to_float(sum(s[0] for s in sums))
    weight = _exact.to_float(sum(s[1] for s in sums))
    return learner.finish_metric(total / weight)


def _split_metrics(values, groups_per_set, learner):
    out, k = [], 0
    for group in groups_per_set:
        out.append(_finish_metric(values[k: k + len(group)], learner))
        k += len(group)
    return out
