"""The training state of all partitions, and the waves of work on it.

An ``Engine`` keeps, per partition, the binned shard, the margins and the
round's statistics and node positions, and offers the operations the booster
and the tree grower need: exact sums, histogram waves, and adding trees. Where
the work runs is the executor's business: ``LocalExecutor`` calls the
per-partition functions in this process, ``dask_engine.DaskExecutor`` submits
them as Dask tasks so that the data stay on the workers and only histograms,
split tables and trees travel.
"""

from __future__ import annotations

import time
from collections import defaultdict

import numpy as np

from . import _exact, _partition
from ._input import Schema, merge_categories
from .binning import BinMapper, merge_candidates

N_BINNING_SAMPLES = 200_000


class LocalExecutor:
    """Runs per-partition functions in this process (numba uses ``n_jobs`` threads)."""

    def __init__(self, n_jobs: int | None = None):
        self.n_jobs = n_jobs

    def map(self, fn, name, per_part, *common):
        return [fn(*args, *common) for args in per_part]

    def getitem(self, values, i, name):
        return [v[i] for v in values]

    def gather(self, values):
        return list(values)

    def reduce(self, values, combine, name, *args):
        return combine(list(values), *args)

    def release(self, values):
        pass

    def next_wave(self, round_index=None):
        pass

    def placed(self, shards):
        pass


class Engine:
    """Training data and per-round state, partition by partition."""

    def __init__(self, executor, timings: dict | None = None):
        self.ex = executor
        self.timings = timings if timings is not None else defaultdict(float)

    # ---------------------------------------------------------------- data
    def prepare(self, train_parts, eval_parts, schema: Schema, regression: bool, max_bins: int,
                mapper: BinMapper | None = None, classes=None):
        """Scan and bin the training (and evaluation) partitions.

        Parameters
        ----------
        train_parts : list of (X, y, w) per partition (values, or lazy pieces
            for the Dask executor)
        eval_parts : list (one per eval set) of such lists
        mapper, classes : given when continuing a model (reuse its bins)
        """
        t0 = time.perf_counter()
        scans = self.ex.map(
            _scan_args, "scan", [(p, i) for i, p in enumerate(train_parts)],
            schema, N_BINNING_SAMPLES, regression,
        )
        summaries = self.ex.gather(self.ex.map(_summary, "summary", [(s,) for s in scans]))
        n_rows = [s["n_rows"] for s in summaries]
        if classes is None and not regression:
            classes = np.unique(np.concatenate([s["classes"] for s in summaries]))
        if mapper is None:
            schema.categories = merge_categories([s["categories"] for s in summaries])
            candidates = self.ex.getitem(scans, "candidates", "candidates")
            sample = self.ex.reduce(candidates, merge_candidates, "merge-sample", N_BINNING_SAMPLES)[1]
            mapper = BinMapper(max_bins).fit(sample, schema.is_categorical, schema.categories)
        self.ex.release(scans)
        first_rows = np.concatenate([[0], np.cumsum(n_rows)[:-1]]).astype(int)
        self.shards = self.ex.map(
            _shard_args, "bin", [(p, int(f), i) for i, (p, f) in enumerate(zip(train_parts, first_rows))],
            schema, mapper, classes,
        )
        self.ex.placed(self.shards)
        self.eval_shards = [
            self.ex.map(
                _shard_args, "bin-eval", [(p, 0, i) for i, p in enumerate(parts)],
                schema, mapper, classes, f"eval_set[{k}]",
            )
            for k, parts in enumerate(eval_parts)
        ]
        self.n_rows = int(sum(n_rows))
        self.mapper, self.classes, self.schema = mapper, classes, schema
        self.timings["prepare"] += time.perf_counter() - t0
        return mapper, classes

    # -------------------------------------------------------------- margins
    def init_score(self, loss) -> np.ndarray:
        """f_0 from exact sums over every partition (ESL Algorithm 10.3, step 1)."""
        parts = self.ex.gather(self.ex.map(_partition.init_sums, "init-sums", [(s,) for s in self.shards], loss))
        sums = [_exact.to_float(sum(col)) for col in zip(*parts)]
        return loss.init_score(sums, None)

    def set_margins(self, base_score, packed_trees):
        self.margins = self.ex.map(
            _partition.initial_margin, "margin", [(s,) for s in self.shards], base_score, packed_trees
        )
        self.eval_margins = [
            self.ex.map(_partition.initial_margin, "margin-eval", [(s,) for s in shards], base_score, packed_trees)
            for shards in self.eval_shards
        ]

    def advance(self, packed_trees, loss, want_gradients=True, train_metric=False):
        """Add trees to all margins; next gradients; metrics.

        Returns
        -------
        maxabs : tuple (max |g|, max |h|) over all rows, or None
        train_metric : float or None
        eval_metrics : list of float
        """
        t0 = time.perf_counter()
        self.ex.next_wave()
        out = self.ex.map(
            _partition.advance, "update-margin", list(zip(self.shards, self.margins)),
            packed_trees, loss, want_gradients, train_metric,
        )
        self.ex.release(self.margins)
        self.margins = self.ex.getitem(out, 0, "margin")
        self.grad = self.ex.getitem(out, 1, "gradient") if want_gradients else None
        infos = self.ex.getitem(out, 2, "info")
        eval_infos = []
        new_eval_margins = []
        for shards, margins in zip(self.eval_shards, self.eval_margins):
            o = self.ex.map(
                _partition.advance, "update-margin-eval", list(zip(shards, margins)),
                packed_trees, loss, False, True,
            )
            self.ex.release(margins)
            new_eval_margins.append(self.ex.getitem(o, 0, "margin-eval"))
            eval_infos.append(self.ex.getitem(o, 2, "info-eval"))
        self.eval_margins = new_eval_margins
        gathered = self.ex.gather(infos + [i for group in eval_infos for i in group])
        train_infos, rest = gathered[: len(infos)], gathered[len(infos):]
        maxabs = None
        if want_gradients:
            maxabs = tuple(max(i["maxabs"][j] for i in train_infos) for j in range(2))
        tm = _finish_metric(train_infos, loss) if train_metric else None
        evals, k = [], 0
        for group in eval_infos:
            evals.append(_finish_metric(rest[k: k + len(group)], loss))
            k += len(group)
        self.timings["update"] += time.perf_counter() - t0
        return maxabs, tm, evals

    # ----------------------------------------------------------- histograms
    def root(self, scales, seed, round_index, subsample, features):
        """Start a tree batch; return the summed root histograms."""
        t0 = time.perf_counter()
        self.ex.next_wave(round_index)
        out = self.ex.map(
            _partition.root_histograms, "histogram", list(zip(self.shards, self.grad)),
            scales, seed, round_index, subsample, features,
        )
        self.stats = self.ex.getitem(out, 0, "stats")
        self.positions = self.ex.getitem(out, 1, "positions")
        hist = self.ex.reduce(self.ex.getitem(out, 2, "root-hist"), _partition.sum_arrays, "sum-histogram")
        self.timings["histograms"] += time.perf_counter() - t0
        return hist

    def level(self, split_arrays, slot_of_node, n_slots, features):
        """Apply splits; return the summed histograms of the nodes to build."""
        t0 = time.perf_counter()
        self.ex.next_wave()
        out = self.ex.map(
            _partition.level_histograms, "histogram", list(zip(self.shards, self.stats, self.positions)),
            split_arrays, slot_of_node, n_slots, features,
        )
        self.ex.release(self.positions)
        self.positions = self.ex.getitem(out, 0, "positions")
        hist = self.ex.reduce(self.ex.getitem(out, 1, "level-hist"), _partition.sum_arrays, "sum-histogram")
        self.timings["histograms"] += time.perf_counter() - t0
        return hist

    def end_tree(self):
        self.ex.release(self.positions)
        self.ex.release(self.stats)
        self.positions = self.stats = None


def _scan_args(part, index, schema, n_samples, regression):
    X, y, w = part
    return _partition.scan(X, y, w, schema, n_samples, regression, index)


def _shard_args(part, first_row, index, schema, mapper, classes, what="training data"):
    X, y, w = part
    return _partition.make_shard(X, y, w, schema, mapper, classes, first_row, index, what)


def _summary(scan: dict) -> dict:
    """The small part of a scan result (everything but the sample rows)."""
    return {k: v for k, v in scan.items() if k != "candidates"}


def _finish_metric(infos, loss) -> float:
    total = _exact.to_float(sum(i["metric"][0] for i in infos))
    weight = _exact.to_float(sum(i["metric"][1] for i in infos))
    return loss.finish_metric(total / weight)
