"""Per-group functions: a group is the list of partitions held by one worker
(kept by that worker's ``holder.Holder``). One call per group and wave runs
the per-partition work on each member and sums their histograms, so a wave
costs one call per worker and ships one histogram per worker.

Every function returns a new ``GroupState`` rather than changing one; large
per-row arrays (statistics, row partitions, margins) live in each shard's
reused ``Buffers``, so a state is only valid until the next round starts.
The per-row work itself is the learner's (``learners``).
"""

from __future__ import annotations

import time
import weakref
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np

from ..kernels import exact, local_grower
from ..kernels.common import MAX_BINS, STAT_DTYPE
from ..kernels.compact_histograms import compact, summed
from ..kernels.histogram import (
    RowPartition,
    columns,
    count_children,
    replay,
    root_histograms,
    split_level,
)
from ..kernels.mode_codes import mode_codes
from ..kernels.threads import for_rows
from .buffers import Buffers


class GroupMemory:
    """What a group keeps from wave to wave besides its states.

    ``buffers``: histogram memory every wave reuses (``_histogram_memory``).
    The rows of the trees being grown, partitioned by node after the latest
    level (``remember``, ``partitions``), keyed by the round-start state: only
    a shortcut, since on a miss (a new holder, a recomputed state) the
    partitions are rebuilt from the roots by replaying the round's splits, so
    results never depend on it. Nothing is kept when pickled.
    """

    def __init__(self):
        self.buffers = Buffers()
        # (weak reference to the round-start state, the round's levels, partitions)
        self._partitions = None

    def remember(self, state, split_history, partitions) -> None:
        """The partitions of ``state``'s rows after the levels ``split_history``."""
        self._partitions = (weakref.ref(state), tuple(split_history), partitions)

    def partitions(self, state, depth: int):
        """The partitions remembered for ``state`` after ``depth`` levels, or None."""
        routed = self.routed(state)
        return routed[0] if routed is not None and len(routed[1]) == depth else None

    def routed(self, state):
        """(partitions, split_history) remembered for ``state`` (after its
        round's latest level), or None."""
        if self._partitions is None:
            return None
        ref, split_history, partitions = self._partitions
        return (partitions, split_history) if ref() is state else None

    def forget(self) -> None:
        self._partitions = None

    def __reduce__(self):
        return GroupMemory, ()


@dataclass(frozen=True)
class GroupState:
    shards: tuple
    rows: tuple = ()  # per partition: the learner's row state (e.g. margins)
    stats: tuple = ()
    positions: tuple = ()
    memory: GroupMemory = field(default_factory=GroupMemory, compare=False, repr=False)


def _histogram_memory(state: GroupState, name: str, n_slots: int, n_stats: int):
    """Zeroed histograms for ``n_slots`` nodes, in memory the group reuses.

    A wave's histograms are sent off (or, in process, copied by the grower)
    before the next wave of the same kind starts, so one buffer per kind
    (``"root"``, ``"level"``) serves every round: fresh memory would cost a
    page fault per 4 KiB written, every wave.
    """
    n_features = state.shards[0].X_binned.shape[1]
    return state.memory.buffers.zeros(name, (n_slots, n_features, MAX_BINS, n_stats), STAT_DTYPE)


def _wired(state: GroupState, name: str, hist):
    """``hist`` (in ``_histogram_memory`` ``name``) compact where mostly
    empty, as it leaves the worker; compacting leaves the memory zeroed, so
    the next wave's need not be zeroed again."""
    out = compact(hist, clear=True)
    if out is not hist:
        state.memory.buffers.mark_zero(name, len(hist))
    return out


def bundle(*shards) -> GroupState:
    """A group of binned partitions; a partition kept on disk is a list of block
    shards (``shard.disk_blocks``), and its blocks join the group one by one."""
    flat = []
    for s in shards:
        flat.extend(s if isinstance(s, list) else [s])
    return GroupState(shards=tuple(flat))


def each_shard(shards, *per_shard):
    """``zip(shards, *per_shard)``, releasing each shard's pages after its turn.

    Shards kept on disk hand their mapped pages back to the operating system
    (``Shard.release``) once the loop body is done with them, so a pass over
    a worker's rows holds one block in memory at a time. While the body runs
    on a small shard, its kernels run on one thread (``threads.for_rows``).
    """
    for items in zip(shards, *per_shard):
        with for_rows(items[0].n_rows):
            yield items
        items[0].release()


def placement(state: GroupState) -> dict:
    """Rows of the group kept in memory and on disk."""
    disk = sum(s.n_rows for s in state.shards if s.buffers.on_disk)
    return {"memory_rows": sum(s.n_rows for s in state.shards) - disk, "disk_rows": disk}


def exact_sums(state: GroupState, fn):
    """Per partition: ``fn(shard)`` -> list of arrays, summed exactly."""
    return [exact.exact_sums(fn(s)) for (s,) in each_shard(state.shards)]


def set_rows(state: GroupState, learner, base_score, update) -> GroupState:
    rows = tuple(s.buffers.keep("rows", learner.initial_state(s, base_score, update))
                 for (s,) in each_shard(state.shards))
    return replace(state, rows=rows, stats=(), positions=())


# ----------------------------------------------------- what a set's rows went through
@dataclass(frozen=True)
class RowsFrom:
    """The set's rows from scratch: ``learner.initial_state(shard, base_score, update)``."""

    learner: object
    base_score: object
    update: object


@dataclass(frozen=True)
class TreesAdded:
    """``update`` (None: nothing) added to the set's rows (``learner.update``);
    with ``round_index``, that round's statistics computed after it."""

    learner: object
    update: object
    round_index: int | None = None


def restore(state: GroupState, start: RowsFrom, added: tuple) -> GroupState:
    """A rebuilt holder's state: each partition's rows from scratch with every
    ``TreesAdded`` of ``added`` in turn, then the statistics of the round in
    progress (if the last one started a round). The same learner calls on
    the same rows as the waves made, so the same state bit for bit.
    """
    rows = []
    for (shard,) in each_shard(state.shards):
        row = start.learner.initial_state(shard, start.base_score, start.update)
        row = shard.buffers.keep("rows", row)
        for step in added:
            row = _added(shard, step.learner, row, step.update)
        rows.append(row)
    state = replace(state, rows=tuple(rows), stats=(), positions=())
    if added and added[-1].round_index is not None:
        state = _round_stats(state, added[-1].learner, added[-1].round_index)
    return state


def _round_stats(state: GroupState, learner, round_index) -> GroupState:
    """The round's statistics and node positions (``learner.row_stats``)."""
    stats, positions = zip(*(_row_stats(shard, learner, row, round_index)
                             for shard, row in each_shard(state.shards, state.rows)))
    return replace(state, stats=stats, positions=positions)


def _row_stats(shard, learner, row, round_index):
    """One partition's statistics and node positions for the round, kept in its buffers."""
    st, pos = learner.row_stats(shard, row, round_index)
    return shard.buffers.keep("stats", st), shard.buffers.keep("positions", pos)


def _added(shard, learner, row, update, routed=None):
    """One partition's row state after adding ``update`` (if any); from where
    the round's levels left the rows when they are ``routed`` (partition,
    places: ``_routed``)."""
    if update is None:
        return row
    if routed is not None:
        return shard.buffers.keep("rows", learner.update_routed(shard, row, update, *routed))
    return shard.buffers.keep("rows", learner.update(shard, row, update))


def _routed(state, learner, update):
    """Per partition, (partition, places) of the round ``state`` started,
    whose trees ``update`` holds, where the learner can add trees from there
    (``learners.RoutedLearner``); Nones when that round's rows are not
    remembered (a rebuilt holder, a state recomputed since) or are not the
    trees' rows."""
    nothing = (None,) * len(state.shards)
    remembered = state.memory.routed(state) if update is not None else None
    if remembered is None or not hasattr(learner, "update_routed"):
        return nothing
    partitions, split_history = remembered
    places = learner.routed_places(update, split_history)
    return nothing if places is None else tuple((p, places) for p in partitions)


def _updated(state, learner, update):
    if update is None:
        return state.rows
    return tuple(_added(s, learner, r, update, routed)
                 for s, r, routed in each_shard(state.shards, state.rows,
                                                  _routed(state, learner, update)))


class RoundStart(NamedTuple):
    """What a round start returns from a group (and from several, combined)."""

    histograms: np.ndarray
    """(n_trees, n_features, 256, n_stats) root histograms, summed over the shards."""
    metric_sums: list | None
    """Per metric of the learner, the merged partials of the model before this
    round; None when the round is not measured."""
    seconds: float
    """Time spent in the task (of the slowest group, once combined)."""
    root_counts: np.ndarray
    """(n_trees,) int64: rows in each tree's root."""
    pending_counts: np.ndarray | None = None
    """(n_splits, 2) int64: rows in each (left, right) child of the previous
    round's last level when this wave routed it (``start_round``'s ``pending``)."""

    def wire(self):
        """As it leaves the worker: histograms compact where mostly empty."""
        return self if self.histograms is None else self._replace(
            histograms=compact(self.histograms))


class LevelResult(NamedTuple):
    """What a level returns from a group (and from several, combined)."""

    histograms: np.ndarray
    """(n_slots, n_features, 256, n_stats): the built children's histograms."""
    counts: np.ndarray
    """(n_splits, 2) int64: rows in each split's (left, right) children."""
    seconds: float
    """Time spent in the task (of the slowest group, once combined)."""

    def wire(self):
        """As it leaves the worker: histograms compact where mostly empty."""
        return self._replace(histograms=compact(self.histograms))


def start_round(state: GroupState, learner, update, metric: bool, round_index, features,
                pending=None, histograms=True, wire=False):
    """Add the previous round's trees, then start the next: stats, root histograms.

    Each partition goes through all of it before the next one starts, so that
    its rows are still in cache from one pass to the next.

    ``pending``: the previous round's split history, its last level not
    routed yet (``Engine.start_round``); its children's rows are counted
    first (``_pending_counts``), and the trees are added from the level
    before it, each row one step more.
    ``histograms`` False: no root histograms (the round's trees grow here,
    ``grow``, which makes its own); the result's are None. ``wire``: the
    result leaves the worker (``level``).

    Returns
    -------
    (GroupState, RoundStart)
    """
    t0 = time.perf_counter()
    pending_counts = None if pending is None else _pending_counts(state, pending)
    rows, stats, positions, partitions, hist, sums, counts = [], [], [], [], None, [], 0
    routed = _routed(state, learner, update)
    for shard, row, routed_rows in each_shard(state.shards, state.rows, routed):
        row = _added(shard, learner, row, update, routed_rows)
        rows.append(row)
        if metric:
            sums.append(learner.metric_partials(shard, row))
        st, pos = _row_stats(shard, learner, row, round_index)
        partitions.append(RowPartition.from_positions(pos, shard.buffers))
        if histograms:
            if hist is None:
                hist = _histogram_memory(state, "root", st.shape[0], st.shape[2])
            hist = root_histograms(shard.X_binned, st, partitions[-1], features, hist)
        counts = counts + partitions[-1].stop[:, 0]
        stats.append(st)
        positions.append(pos)
    new = replace(state, rows=tuple(rows), stats=tuple(stats), positions=tuple(positions))
    new.memory.remember(new, (), partitions)
    if wire and hist is not None:
        hist = _wired(state, "root", hist)
    return new, RoundStart(hist, merge_metrics(learner, sums) if metric else None,
                           time.perf_counter() - t0, counts, pending_counts)


def _pending_counts(state, split_history):
    """The rows of each (left, right) child of ``split_history``'s last level,
    counted where the level before left them (``count_children``): not
    moved, since no histogram is built below it and the round's trees are
    added from where the rows are (``routed.add_routed``), which is one
    routing pass less a round."""
    counts = 0
    for shard, part in each_shard(state.shards, _partitions_before(state, split_history)):
        counts = counts + count_children(columns(shard.X_binned, shard.buffers), part,
                                         split_history[-1])
    return counts


def _partitions_before(state, split_history):
    """Each shard's rows partitioned by node after all levels but the last."""
    cached = state.memory.partitions(state, len(split_history) - 1)
    if cached is not None:
        return cached
    return [
        replay(columns(shard.X_binned, shard.buffers), RowPartition.from_positions(pos),
               split_history[:-1])
        for shard, pos in each_shard(state.shards, state.positions)
    ]


def level(state: GroupState, split_history, n_slots, features, wire=False):
    """Route rows through this level's splits and histogram the built children.

    ``state`` is the round-start state, and ``split_history`` holds the
    ``LevelSplits`` of every level of the round so far, the current one last.
    The task returns only the small result, so its output can be gathered
    without another task to pick it out. ``wire``: the result leaves the
    worker, its histograms compact where mostly empty (``_wired``).

    Returns a ``LevelResult``.
    """
    t0 = time.perf_counter()
    counts, splits = 0, split_history[-1]
    if len(splits.slot) and splits.slot.max() >= n_slots:  # the kernel would write past them
        raise ValueError(f"a split builds histogram slot {splits.slot.max()}, "
                         f"but the level has {n_slots} slot(s)")
    partitions = _partitions_before(state, split_history)
    hist = _histogram_memory(state, "level", n_slots, state.stats[0].shape[2])
    for shard, st, part in each_shard(state.shards, state.stats, partitions):
        hist, cc = split_level(shard.X_binned, columns(shard.X_binned, shard.buffers), st, part,
                               splits, n_slots, features, hist)
        counts = counts + cc
    state.memory.remember(state, split_history, partitions)
    if wire:
        hist = _wired(state, "level", hist)
    return LevelResult(hist, counts, time.perf_counter() - t0)


def grow(state: GroupState, criterion, mapper, masks, features, growth, sampling):
    """The round's trees grown here in one compiled call (``kernels.local_grower``),
    from the round start's rows; the group is one partition in memory. Its
    rows stay where the trees sent them, as after the levels of ``level``.

    Returns (state, the ``local_grower.Grown``: the trees' node tables).
    """
    (shard,) = state.shards
    routed = state.memory.routed(state)
    if routed is None or routed[1]:  # not the round start's roots: make them again
        partitions = [RowPartition.from_positions(state.positions[0], shard.buffers)]
    else:
        partitions = routed[0]
    grown = local_grower.grow(shard.X_binned, columns(shard.X_binned, shard.buffers),
                              state.stats[0], partitions[0], criterion, mapper, masks, features,
                              growth, sampling,
                              memory=lambda shape: state.memory.buffers.room("grow", shape,
                                                                             STAT_DTYPE),
                              X_modes=None if sampling else mode_codes(shard.X_binned,
                                                                       shard.buffers))
    state.memory.remember(state, (grown.splits,), partitions)
    return state, grown


def finish(state: GroupState, learner, update, metric: bool):
    """Add the last trees; metric sums of the final model."""
    rows = _updated(state, learner, update)
    sums = [learner.metric_partials(s, r) for s, r in each_shard(state.shards, rows)] if metric else []
    return (replace(state, rows=rows, stats=(), positions=()),
            merge_metrics(learner, sums) if metric else None)


def evaluate(state: GroupState, learner, update):
    """Eval-set groups: add trees, return (state, metric sums)."""
    rows = _updated(state, learner, update)
    sums = [learner.metric_partials(s, r) for s, r in each_shard(state.shards, rows)]
    return replace(state, rows=rows), merge_metrics(learner, sums)


def measure(state: GroupState, learner):
    """The metric sums of the set's rows as they are (no trees added; reads only)."""
    return merge_metrics(learner, [learner.metric_partials(s, r)
                                   for s, r in each_shard(state.shards, state.rows)])


def apply(state: GroupState, fn, *args):
    """Extension point: ``fn(state, *args) -> (state, small)``."""
    return fn(state, *args)


def each_partition(state: GroupState, fn, *args):
    """Extension point: ``fn(shard, row_state, *args) -> small`` for every
    partition in turn (``each_shard``); the state is left as it is."""
    return state, [fn(shard, row, *args) for shard, row in each_shard(state.shards, state.rows)]


def merge_metrics(learner, partials) -> list:
    """Per metric of ``learner.metrics``, its partials (one list per shard or group) merged."""
    return [m.merge([p[i] for p in partials]) for i, m in enumerate(learner.metrics)]


# ------------------------------------------------- results summed among holders
def _summed(arrays, buffers, name):
    """The sum of ``arrays`` (dense, or compact as children deliver them) in
    reused memory (exact: integers); inputs unchanged."""
    if arrays[0] is None:
        return None
    return summed(arrays, buffers.room(name, arrays[0].shape, arrays[0].dtype))


def combine_level(results, buffers):
    """``level`` results of several holders as one: histograms and counts
    summed, the slowest holder's seconds."""
    return LevelResult(_summed([r.histograms for r in results], buffers, "reduce-level"),
                       sum(r.counts for r in results), max(r.seconds for r in results))


class CombineRoundStart:
    """``start_round`` results of several holders as one (a picklable combine)."""

    def __init__(self, learner):
        self.learner = learner

    def __call__(self, results, buffers):
        metrics = [r.metric_sums for r in results]
        pending = None if results[0].pending_counts is None else sum(
            r.pending_counts for r in results)
        return RoundStart(_summed([r.histograms for r in results], buffers, "reduce-root"),
                          None if metrics[0] is None else merge_metrics(self.learner, metrics),
                          max(r.seconds for r in results), sum(r.root_counts for r in results),
                          pending)


class CombineMetrics:
    """Metric partials (``finish``, ``evaluate``) of several holders merged; None stays None."""

    def __init__(self, learner):
        self.learner = learner

    def __call__(self, results, buffers):
        return None if results[0] is None else merge_metrics(self.learner, results)
