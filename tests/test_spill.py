"""Out-of-core training: partitions binned into files, read block by block.

Small blocks (``spill.BLOCK_BYTES`` lowered) cut even tiny data into many
blocks, so every pass crosses block boundaries; the models must equal those
trained in memory, for every learner.
"""

import mmap

import numpy as np
import pytest

import distboost as db
from distboost.engine import spill as _spill
from distboost.engine.buffers import Buffers, DiskBuffers
from distboost.engine.shard import Shard, disk_blocks


def _status(field: str) -> int:
    """A memory field of /proc/self/status, in bytes."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field}")


def _rss_mb() -> float:
    return _status("VmRSS") / 2**20


def test_block_rows_sizes_a_block_to_its_budget():
    # 28 features: 2 * 28 code bytes + 68 bytes of state = 124 bytes per row
    assert _spill.in_memory_bytes_per_row(28) == 124
    assert _spill.in_memory_bytes_per_row(28, 3) == 56 + 3 * 68
    assert _spill.block_rows(28, 1, 124 * 10_000) == 9216  # a multiple of 1024 below 10 000
    assert _spill.block_rows(28, 1, 100) == 1024  # never fewer


def test_disk_buffers_keep_values_and_hand_pages_back(tmp_path):
    buffers = DiskBuffers(str(tmp_path))
    a = buffers.get("a", (64 * 2**20 // 8,), np.float64)
    assert list(tmp_path.iterdir()) == []  # mapped, then unlinked: nothing left behind
    before = _rss_mb()
    a[:] = np.arange(len(a))
    grown = _rss_mb()
    buffers.release()
    released = _rss_mb()
    assert grown - before > 48 and grown - released > 48
    assert a[12345] == 12345.0 and a[-1] == len(a) - 1  # read back from the page cache
    assert buffers.get("a", a.shape, a.dtype) is a
    assert buffers.get("a", (3,), np.float64) is not a


def test_keep_moves_arrays_into_files_and_leaves_lent_ones(tmp_path):
    buffers = DiskBuffers(str(tmp_path))
    lent = buffers.get("stats", (5,), np.int64)
    assert buffers.keep("stats", lent) is lent
    kept = buffers.keep("rows", (np.arange(4.0), np.ones(2, np.int64)))
    assert isinstance(kept, tuple) and isinstance(kept[0].base, mmap.mmap)
    np.testing.assert_array_equal(kept[0], np.arange(4.0))
    np.testing.assert_array_equal(kept[1], [1, 1])
    assert buffers.keep("x", None) is None
    plain = np.arange(3)
    assert Buffers().keep("rows", plain) is plain


def test_zeros_reuses_its_memory_zeroed_and_grows_when_asked_for_more():
    buffers = Buffers()
    first = buffers.zeros("hist", (2, 3), np.int64)
    first += 7
    smaller = buffers.zeros("hist", (1, 3), np.int64)
    assert np.shares_memory(smaller, first) and smaller.shape == (1, 3)
    assert not smaller.any() and first[1].tolist() == [7, 7, 7]  # only the view is zeroed
    smaller += 1
    larger = buffers.zeros("hist", (4, 3), np.int64)
    assert not np.shares_memory(larger, first) and not larger.any()
    assert np.shares_memory(buffers.zeros("hist", (3, 3), np.int64), larger)
    assert not np.shares_memory(buffers.zeros("hist", (3, 2), np.int64), larger)  # other shape


def test_zeros_skips_the_rows_marked_zero_once():
    buffers = Buffers()
    hist = buffers.zeros("hist", (3, 2), np.int64)
    hist[:] = 5
    hist[:2] = 0  # the caller zeroed rows 0 and 1 itself (compact(clear=True))
    buffers.mark_zero("hist", 2)
    hist[0] = 9  # a row wrongly marked shows which rows zeros skips
    again = buffers.zeros("hist", (3, 2), np.int64)
    assert np.shares_memory(again, hist)
    assert again.tolist() == [[9, 9], [0, 0], [0, 0]]  # row 2 was not marked: zeroed
    again[:] = 4
    assert not buffers.zeros("hist", (3, 2), np.int64).any()  # the mark holds once
    buffers.zeros("hist", (3, 2), np.int64)[:] = 1
    buffers.mark_zero("hist", 3)
    buffers.room("hist", (3, 2), np.int64)  # lent as is: the caller writes it
    assert buffers.zeros("hist", (3, 2), np.int64).tolist() == [[0, 0]] * 3


def test_room_reuses_its_memory_as_is_and_grows_when_asked_for_more():
    buffers = Buffers()
    first = buffers.room("sum", (2, 3), np.int64)
    first[:] = 7
    smaller = buffers.room("sum", (1, 3), np.int64)
    assert np.shares_memory(smaller, first) and smaller.shape == (1, 3)
    assert smaller.tolist() == [[7, 7, 7]]  # not zeroed: the caller writes it all
    larger = buffers.room("sum", (3, 3), np.int64)
    assert not np.shares_memory(larger, first) and larger.shape == (3, 3)
    assert np.shares_memory(buffers.room("sum", (2, 3), np.int64), larger)
    assert not np.shares_memory(buffers.room("sum", (2, 3), np.int32), larger)  # other dtype


def test_disk_blocks_split_a_partition_and_pickle_back_to_disk(tmp_path):
    import pickle

    X = np.random.default_rng(0).normal(size=(2500, 3)).astype(np.float32)
    mapper = db.binning.BinMapper(16).fit(X, np.zeros(3, bool), {})
    y, w = np.arange(2500.0), np.ones(2500)
    blocks = disk_blocks(lambda a, b, out: mapper.transform(X[a:b], out=out), 2500, X.shape[1],
                         y, w, 100, 7, str(tmp_path), 1024)
    assert [b.n_rows for b in blocks] == [1024, 1024, 452]
    assert [b.first_row for b in blocks] == [100, 1124, 2148]
    assert all(b.index == 7 and b.buffers.on_disk for b in blocks)
    np.testing.assert_array_equal(np.concatenate([b.X_binned for b in blocks]), mapper.transform(X))
    np.testing.assert_array_equal(np.concatenate([b.y for b in blocks]), y)
    copy = pickle.loads(pickle.dumps(blocks[2]))
    assert isinstance(copy, Shard) and copy.buffers.on_disk
    assert (copy.first_row, copy.index) == (2148, 7)
    for name in ("X_binned", "y", "w"):
        np.testing.assert_array_equal(getattr(copy, name), getattr(blocks[2], name))
    in_memory = pickle.loads(pickle.dumps(Shard(X[:3], y[:3], w[:3], 5, 1)))
    assert not in_memory.buffers.on_disk and in_memory.first_row == 5


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 1024 rows (the smallest) whatever the data's width."""
    monkeypatch.setattr(_spill, "BLOCK_BYTES", 1)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(5000, 6))
    X[rng.random(X.shape) < 0.03] = np.nan
    score = np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1]) ** 2 + 0.5 * np.nan_to_num(X[:, 2])
    y2 = (score + rng.logistic(size=len(X)) > -0.5).astype(int)
    y3 = np.digitize(score + rng.normal(0, 0.5, len(X)), [-1.5, 0.0])
    return X, y2, y3, score + rng.normal(0, 0.3, len(X))


def _fit_both(make, X, y, **fit):
    memory = make(out_of_core=False).fit(X, y, **fit)
    disk = make(out_of_core=True).fit(X, y, **fit)
    assert memory.data_placement_ == [{"worker": "local", "memory_rows": len(X), "disk_rows": 0}]
    assert disk.data_placement_ == [{"worker": "local", "memory_rows": 0, "disk_rows": len(X)}]
    return memory, disk


CASES = {
    "binary-subsample": (lambda d: d[1], lambda **k: db.GradientBoostingClassifier(
        n_estimators=12, max_depth=4, subsample=0.7, colsample_bynode=0.8, random_state=2, **k)),
    "multiclass": (lambda d: d[2], lambda **k: db.GradientBoostingClassifier(
        n_estimators=6, max_depth=3, **k)),
    "lad-line-search": (lambda d: d[3], lambda **k: db.GradientBoostingRegressor(
        loss="absolute_error", n_estimators=8, max_depth=3, **k)),
    "huber": (lambda d: d[3], lambda **k: db.GradientBoostingRegressor(
        loss="huber", n_estimators=8, max_depth=3, **k)),
    "adaboost-samme": (lambda d: d[2], lambda **k: db.AdaBoostClassifier(
        n_estimators=10, max_depth=2, **k)),
    "forest-oob": (lambda d: d[1], lambda **k: db.RandomForestClassifier(
        n_estimators=8, max_depth=5, oob_score=True, random_state=1, **k)),
    "bagging": (lambda d: d[3], lambda **k: db.BaggingRegressor(
        n_estimators=5, max_depth=4, random_state=4, **k)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_on_disk_in_many_blocks_equals_in_memory(data, small_blocks, case):
    target, make = CASES[case]
    X, y = data[0], target(data)
    memory, disk = _fit_both(make, X, y)
    predict = getattr(memory, "predict_proba", memory.predict)
    np.testing.assert_array_equal(predict(X), getattr(disk, predict.__name__)(X))
    if hasattr(memory, "oob_score_"):
        assert memory.oob_score_ == disk.oob_score_
        np.testing.assert_array_equal(memory.oob_decision_function_, disk.oob_decision_function_)


def test_on_disk_with_early_stopping_on_an_eval_set(data, small_blocks):
    X, y = data[0], data[1]
    fit = {"eval_set": [(X[:1500], y[:1500])], "early_stopping_rounds": 3}
    memory, disk = _fit_both(lambda **k: db.GradientBoostingClassifier(
        n_estimators=60, max_depth=5, learning_rate=0.5, **k), X[1500:], y[1500:], **fit)
    assert memory.best_iteration_ == disk.best_iteration_ < 59
    assert memory.evals_result_ == disk.evals_result_
    np.testing.assert_array_equal(memory.predict_proba(X), disk.predict_proba(X))


def test_auto_keeps_in_process_data_in_memory(data):
    X, y = data[0], data[1]
    model = db.GradientBoostingClassifier(n_estimators=2).fit(X, y)
    assert model.data_placement_[0]["disk_rows"] == 0


def test_out_of_core_must_be_auto_or_bool(data):
    with pytest.raises(ValueError, match="out_of_core"):
        db.GradientBoostingClassifier(out_of_core="disk").fit(data[0], data[1])


def test_auto_rule_weighs_the_share_against_the_limit_and_what_the_worker_uses():
    mb = 2**20
    assert not _spill.decide_on_disk(390 * mb, 1000 * mb, 200 * mb)
    assert _spill.decide_on_disk(410 * mb, 1000 * mb, 0)  # over 40 % of the limit
    assert _spill.decide_on_disk(390 * mb, 1000 * mb, 211 * mb)  # 601 MB > 60 % of it
    assert not _spill.decide_on_disk(10**12, None, 0)  # no limit: in memory


def test_auto_decides_on_each_worker_from_its_memory_limit():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, memory_limit="2GB",
                      dashboard_address=None) as cluster, Client(cluster) as client:
        def decide(share):
            return _spill.Placement("auto", share).on_disk()

        assert client.submit(decide, 0.5e9, pure=False).result() is False
        assert client.submit(decide, 0.81e9, pure=False).result() is True
    assert _spill.Placement("auto", 1e18).on_disk() is False  # no worker: in memory
    assert _spill.Placement(True).on_disk() and not _spill.Placement(False).on_disk()


def _peak_rss(reset: bool = False):
    """(peak RSS in bytes since the last reset, pid) of the calling process."""
    import os

    peak = _status("VmHWM")
    if reset:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # start the peak (VmHWM) again from the current RSS
    return peak, os.getpid()


def test_workers_train_twice_their_memory_limit_without_restarts():
    """Each worker's share of the training rows takes about twice its
    ``memory_limit`` in memory; "auto" keeps it on disk, no worker restarts,
    every worker's peak RSS stays under the limit, and the model is the one
    trained in process."""
    import dask.array as da
    from distributed import Client, LocalCluster

    # 600 MB: a worker's baseline is ~300 MiB with numba 0.60 and pandas 2.2 (the floor
    # stack), ~250 MiB with the newest; Dask pauses it at 80 % of its limit
    rows, features, limit = 27_000_000, 10, 600_000_000
    rng = da.random.default_rng(0)
    X = rng.normal(size=(rows, features), chunks=(250_000, features)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] ** 2 + 0.5 * X[:, 2] > 1).astype(np.int64)
    params = {"n_estimators": 3, "max_depth": 3}
    X_local, y_local = X.compute(), y.compute()
    local = db.GradientBoostingClassifier(**params).fit(X_local, y_local)
    with LocalCluster(n_workers=2, threads_per_worker=1, memory_limit=limit,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        db.GradientBoostingClassifier(n_estimators=1, max_depth=2).fit(X[:20_000], y[:20_000])
        before = client.run(_peak_rss, True)
        model = db.GradientBoostingClassifier(**params).fit(X, y)
        after = client.run(_peak_rss)
    assert {w: pid for w, (_, pid) in before.items()} == {w: pid for w, (_, pid) in after.items()}
    for place in model.data_placement_:
        share = place["disk_rows"] * _spill.in_memory_bytes_per_row(features)
        assert place["memory_rows"] == 0 and share > 1.6 * limit, place
    for worker, (peak, _) in after.items():
        assert peak < 0.8 * limit, f"{worker} peaked at {peak / 2**20:.0f} MiB"
    assert [t.nodes.tobytes() for r in local.trees_ for t in r] == \
           [t.nodes.tobytes() for r in model.trees_ for t in r]
    np.testing.assert_array_equal(local.predict_proba(X_local[:50_000]),
                                  model.predict_proba(X_local[:50_000]))


def test_on_disk_on_dask_equals_in_memory_with_an_eval_set(dask_client, dask_classification,
                                                            small_blocks):
    """On a real cluster, with early stopping on a distributed validation set."""
    X, y, X_valid, y_valid = dask_classification
    fit = {"eval_set": [(X_valid, y_valid)], "early_stopping_rounds": 4}
    models = [
        db.GradientBoostingClassifier(n_estimators=40, max_depth=4, learning_rate=0.3,
                                      subsample=0.8, random_state=0, client=dask_client,
                                      out_of_core=ooc).fit(X, y, **fit)
        for ooc in (False, True)
    ]
    assert sum(p["disk_rows"] for p in models[1].data_placement_) == len(y)
    assert sum(p["memory_rows"] for p in models[0].data_placement_) == len(y)
    assert all(p["worker"].startswith("tcp://") for p in models[1].data_placement_)
    assert models[0].evals_result_ == models[1].evals_result_
    X_local = X.compute()
    np.testing.assert_array_equal(models[0].predict_proba(X_local), models[1].predict_proba(X_local))
