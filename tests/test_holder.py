"""The per-worker holder and the history that rebuilds a lost one."""

from dataclasses import replace

import numpy as np
import pytest

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


def test_history_keeps_state_changes_since_the_last_reset():
    history = History()
    a, b, c = (Op("train", _count, (k,), STATE) for k in (1, 2, 3))
    history.record([a, Op("train", _n_shards), Op("eval0", _count, (9,), STATE)])
    history.record([b, replace(c, resets=True)])
    assert history.replay(["train"]) == [replace(c, resets=True)]
    assert history.replay(["eval0"]) == [Op("eval0", _count, (9,), STATE)]
    assert history.replay(["train", "eval0"])[1:] == history.replay(["eval0"])


def test_history_replays_a_round_start_lightly_once_a_new_round_replaced_its_statistics():
    history = History()
    light = Op("train", _count, (0,), BOTH)
    start = Op("train", _count_and_report, (1,), BOTH, fresh_round=True, light=light)
    search = Op("train", _count_and_report, (2,), BOTH)  # reads the round's statistics
    history.record([start])
    history.record([search])
    history.record([start])  # after a line search: the first start stays whole
    assert history.replay(["train"]) == [start, search, start]
    history.record([Op("train", _n_shards)])  # a level: not a state change
    history.record([start])
    assert history.replay(["train"]) == [start, search, light, start]


@pytest.mark.parametrize("returns", [STATE, BOTH])
def test_replaying_the_history_rebuilds_the_same_state(returns):
    rng = np.random.default_rng(0)
    ops = [Op("train", _count if returns == STATE else _count_and_report, (int(k),), returns)
           for k in rng.integers(0, 5, 6)]
    shard = _shard(0)
    live, history = Holder([("train", 1)], shard), History()
    for op in ops:
        live.run([op])
        history.record([op])
    rebuilt = Holder([("train", 1)], shard)
    rebuilt.run(history.replay(["train"]))
    assert rebuilt.states == live.states
    assert live.states["train"].rows[0] > 3**4  # every op counted, in order


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
