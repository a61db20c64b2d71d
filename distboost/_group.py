"""Per-group task functions: a group is the list of partitions held by one
worker. One task per group and wave runs the per-partition functions of
``_partition`` on each member and sums their histograms in place, so a wave
costs one task per worker and ships one histogram per worker.

Group states are immutable: every function returns a new ``GroupState``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from . import _partition
from .tree import predict_binned


@dataclass(frozen=True)
class GroupState:
    shards: tuple
    margins: tuple = ()
    stats: tuple = ()
    positions: tuple = ()


def bundle(*shards) -> GroupState:
    return GroupState(shards=tuple(shards))


def init_sums(state: GroupState, loss):
    return [_partition.init_sums(s, loss) for s in state.shards]


def set_margins(state: GroupState, base_score, packed_trees) -> GroupState:
    margins = tuple(_partition.initial_margin(s, base_score, packed_trees) for s in state.shards)
    return replace(state, margins=margins, stats=(), positions=())


def _add_trees(state, packed_trees):
    if packed_trees is None:
        return state.margins
    out = []
    for shard, margin in zip(state.shards, state.margins):
        margin = margin.copy()
        predict_binned(shard.X_binned, *packed_trees, margin)
        out.append(margin)
    return tuple(out)


def start_round(state: GroupState, packed_trees, loss, metric: bool, scales, seed, round_index,
                subsample, features):
    """Add the previous round's trees, then start the next: stats, root histograms.

    Returns
    -------
    (GroupState, small) where small = (root histogram sum, metric sums or None)
    """
    margins = _add_trees(state, packed_trees)
    stats, positions, hist, sums = [], [], None, []
    for shard, margin in zip(state.shards, margins):
        if metric:
            sums.append(_partition.metric_sums(shard, margin, loss))
        g, h = loss.gradients(shard.y, margin, shard.w)
        st, pos, hh = _partition.root_histograms(shard, (g, h), scales, seed, round_index,
                                                 subsample, features)
        stats.append(st)
        positions.append(pos)
        hist = hh if hist is None else _add(hist, hh)
    new = replace(state, margins=margins, stats=tuple(stats), positions=tuple(positions))
    return new, (hist, _sum_metric(sums) if metric else None)


def level(state: GroupState, split_arrays, slot_of_node, n_slots, features):
    """Apply splits and histogram the requested nodes on every member."""
    positions, hist = [], None
    for shard, st, pos in zip(state.shards, state.stats, state.positions):
        pos, hh = _partition.level_histograms(shard, st, pos, split_arrays, slot_of_node,
                                              n_slots, features)
        positions.append(pos)
        hist = hh if hist is None else _add(hist, hh)
    return replace(state, positions=tuple(positions)), hist


def finish(state: GroupState, packed_trees, loss, metric: bool):
    """Add the last trees; metric sums of the final model."""
    margins = _add_trees(state, packed_trees)
    sums = [_partition.metric_sums(s, m, loss) for s, m in zip(state.shards, margins)] if metric else []
    return replace(state, margins=margins, stats=(), positions=()), (_sum_metric(sums) if metric else None)


def evaluate(state: GroupState, packed_trees, loss):
    """Eval-set groups: add trees, return (state, metric sums)."""
    margins = _add_trees(state, packed_trees)
    sums = [_partition.metric_sums(s, m, loss) for s, m in zip(state.shards, margins)]
    return replace(state, margins=margins), _sum_metric(sums)


def _add(total, other):
    total += other
    return total


def _sum_metric(sums):
    return (sum(s[0] for s in sums), sum(s[1] for s in sums))
