"""The per-worker holder and the history that rebuilds a lost one (its replay
through a learner: ``test_group``, and a killed worker: ``test_resilience``)."""

from dataclasses import replace

import numpy as np

from distboost.engine.group import RowsFrom, TreesAdded, restore
from distboost.engine.holder import (
    BOTH,
    OUT_OF_BAND_BYTES,
    STATE,
    History,
    Holder,
    Op,
    pack,
    unpack,
)
from distboost.engine.shard import Shard


def _shard(index):
    return Shard(np.zeros((2, 1), np.uint8), np.zeros(2), np.ones(2), 2 * index, index)


def _count(state, k):
    """A state change whose result depends on the order of changes."""
    before = state.rows[0] if state.rows else 0
    return replace(state, rows=(before * 3 + k,))


def _count_and_report(state, k):
    new = _count(state, k)
    return new, new.rows[0]


def _n_shards(state):
    return len(state.shards)


def test_holder_runs_ops_on_their_sets_and_keeps_the_returned_states():
    a, b, c = (_shard(i) for i in range(3))
    holder = Holder([("train", 2), ("eval0", 1)], a, b, c)
    out = holder.run([Op("train", _n_shards), Op("eval0", _n_shards),
                      Op("train", _count, (5,), STATE), Op("eval0", _count_and_report, (7,), BOTH)])
    assert out == [2, 1, None, 7]
    assert holder.states["train"].rows == (5,)
    assert holder.states["train"].shards == (a, b)
    assert holder.states["eval0"].shards == (c,)


def test_history_keeps_how_the_rows_started_the_trees_added_and_the_rounds_passes():
    history, learner = History(), object()
    start = Op("train", _count, (1,), STATE, RowsFrom(learner, 0.5, None))
    add = [Op("train", _count_and_report, (k,), BOTH, TreesAdded(learner, f"trees {k}", k))
           for k in range(3)]
    search = Op("train", _count_and_report, (7,), BOTH)  # a pass that changes the state
    level = Op("train", _n_shards)  # does not: never replayed
    history.record([start, Op("eval0", _count, (9,), STATE, RowsFrom(learner, 0.5, None))])
    history.record([add[0], level, search])
    assert history.replay(["train"]) == [
        Op("train", restore, (start.rows, (add[0].rows,)), STATE), search]
    history.record([add[1]])  # a new round: the passes of the last one are not needed
    history.record([level, add[2], search])
    assert history.replay(["train"]) == [
        Op("train", restore, (start.rows, tuple(op.rows for op in add)), STATE), search]
    assert history.replay(["eval0"]) == [Op("eval0", restore, (start.rows, ()), STATE)]
    assert history.replay(["train", "eval0"])[2:] == history.replay(["eval0"])
    history.record([start])  # the rows from scratch again
    assert history.replay(["train"]) == [Op("train", restore, (start.rows, ()), STATE)]


def test_pack_sends_large_arrays_out_of_band_and_small_ones_in_the_header():
    large = np.arange(OUT_OF_BAND_BYTES // 8, dtype=np.int64)
    small = np.arange(3.0)
    header, buffers = pack([(large, small, 0.5)])
    assert len(buffers) == 1 and np.shares_memory(np.frombuffer(buffers[0], np.int64), large)
    assert len(header) < 1000
    (got_large, got_small, half), = unpack((header, buffers))
    np.testing.assert_array_equal(got_large, large)
    assert np.shares_memory(got_large, large)  # read from the buffer, not copied
    np.testing.assert_array_equal(got_small, small)
    assert half == 0.5


def test_pack_sends_what_plain_pickle_cannot_by_value():
    offset = 3
    header, buffers = pack([lambda v: v + offset])  # a closure: by value (cloudpickle)
    assert unpack((header, buffers))[0](1) == 4


def test_a_holder_answers_packed_calls_as_run_answers_plain_ones():
    holder = Holder([("train", 2)], _shard(0), _shard(1))
    ops = [Op("train", _n_shards)]
    assert unpack(holder.call(pack(ops))) == holder.run(ops) == [2]
