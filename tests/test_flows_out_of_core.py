"""Out-of-core flows, run for real (Prefect test server, in-process LocalCluster
whose scheduler counts the tasks it finishes): the train flow reads and bins
the training data once however many checkpoints it writes, with the prepare
flow's bin edges; early stopping over a resumed run; and prepare reads its
input in batches, with the same output whatever the batch size."""

try:
    import _flows_fixtures as fx
except ImportError:  # tests/ imported as a package
    from tests import _flows_fixtures as fx

import json
import re
import shutil

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from distributed import Client, LocalCluster
from distributed.diagnostics.plugin import SchedulerPlugin

import distboost
from distboost.demo_data import hastie_10_2, write_csv_files
from flows._data import load_bin_mapper, load_split
from flows.prepare import prepare
from flows.train import train

GBM = {"max_depth": 3, "learning_rate": 0.3}


class FinishedTasks(SchedulerPlugin):
    """The keys of the tasks the scheduler saw finish, in order."""

    name = "finished-tasks"

    def __init__(self):
        self.keys = []

    def transition(self, key, start, finish, *args, **kwargs):
        if start == "processing" and finish == "memory":
            self.keys.append(key)

    def named(self, name: str) -> list[tuple]:
        """(fit token, partition) of the engine's tasks ``distboost-NAME-rR``."""
        return [(k[1], k[3]) for k in self.keys
                if isinstance(k, tuple) and re.fullmatch(rf"distboost-{name}-r\d+", str(k[0]))]

    def reads(self) -> int:
        """Tasks that read Parquet: Dask's (whatever the graph optimizer fused them
        with), or distboost's own that name a bad file (``engine.sources``)."""
        name = (str(k[0] if isinstance(k, tuple) else k) for k in self.keys)
        return sum("read_parquet" in n.lower().replace("-", "_") or n.startswith("distboost-read-")
                   for n in name)


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(**fx.TEST_CLUSTER) as cluster:
        tasks = FinishedTasks()
        cluster.scheduler.add_plugin(tasks)
        yield cluster.scheduler_address, tasks


@pytest.fixture(scope="module")
def data(prefect_harness, cluster, tmp_path_factory):
    root = tmp_path_factory.mktemp("ooc")
    raw = fx.hastie_csv(root / "raw", n_rows=1500, n_files=3)
    return prepare(source=str(raw), output=str(root / "data"), target="y",
                   categorical=["colour"], scheduler=cluster[0])


def _train(data, output, cluster, **kwargs):
    address, tasks = cluster
    tasks.keys.clear()
    state = train(data=data, output=str(output), scheduler=address, return_state=True, **kwargs)
    return state, list(tasks.keys)


def same_trees(a, b, n_rounds=None):
    """``a``'s trees are ``b``'s (its first ``n_rounds`` rounds, if given)."""
    b_trees = b.trees_ if n_rounds is None else b.trees_[:n_rounds]
    assert len(a.trees_) == len(b_trees)
    assert all(ta == tb for ra, rb in zip(a.trees_, b_trees) for ta, tb in zip(ra, rb))


def _prefect_record(flow_run_id):
    """(task run names, progress artifact values) of one flow run."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        ArtifactFilter,
        ArtifactFilterFlowRunId,
        ArtifactFilterType,
        FlowRunFilter,
        FlowRunFilterId,
    )

    with get_client(sync_client=True) as client:
        runs = client.read_task_runs(
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id])))
        progress = client.read_artifacts(artifact_filter=ArtifactFilter(
            flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id]),
            type=ArtifactFilterType(any_=["progress"])))
    return sorted(r.name for r in runs), [a.data for a in progress]


def test_checkpoints_are_written_during_one_fit_that_bins_once(data, cluster, tmp_path):
    params = {"n_estimators": 10, **GBM}
    state, keys = _train(data, tmp_path / "run", cluster, checkpoint_every=4, params=params)
    tasks = FinishedTasks()
    tasks.keys = keys
    binned, scanned = tasks.named("bin"), tasks.named("scan")
    assert len({token for token, _ in binned}) == 1  # one fit
    assert sorted(binned) == sorted(set(binned)) == sorted(scanned)  # each partition once
    assert len(binned) == load_split(data, "train")[0].npartitions
    assert tasks.named("merge-sample") == []  # bins from bin_edges.json, no sample of its own

    folder = tmp_path / "run" / "checkpoints"
    names = sorted(p.name for p in folder.glob("round-?????.json"))
    assert names == ["round-00004.json", "round-00008.json", "round-00010.json"]
    final = distboost.load_model(tmp_path / "run" / "model.json")
    for name in names:
        n = int(name[6:11])
        model = distboost.load_model(folder / name)
        same_trees(model, final, n)
        history = json.loads((folder / name.replace(".json", ".history.json")).read_text())
        assert len(history["validation_0"]["logloss"]) == len(history["training"]["logloss"]) == n
    assert final.bin_mapper_.to_dict() == _aligned(load_bin_mapper(data), final)

    task_runs, progress = _prefect_record(state.state_details.flow_run_id)
    assert [n for n in task_runs if n.startswith("fit-rounds")] == ["fit-rounds-0-10"]
    assert progress == [100.0]


def test_reads_do_not_grow_with_the_checkpoints(data, cluster, tmp_path):
    params = {"n_estimators": 8, **GBM}
    _, one = _train(data, tmp_path / "one", cluster, checkpoint_every=8, params=params)
    _, four = _train(data, tmp_path / "four", cluster, checkpoint_every=2, params=params)
    counted = [FinishedTasks(), FinishedTasks()]
    counted[0].keys, counted[1].keys = one, four
    assert counted[0].reads() > 0
    assert counted[1].reads() == counted[0].reads()
    assert len(counted[1].named("bin")) == len(counted[0].named("bin"))
    assert len(list((tmp_path / "four" / "checkpoints").glob("round-?????.json"))) == 4
    same_trees(distboost.load_model(tmp_path / "four" / "model.json"),
               distboost.load_model(tmp_path / "one" / "model.json"))


def test_early_stopping_watches_the_whole_run_and_resumes_alike(data, cluster, tmp_path):
    patience, every = 5, 4
    params = {"n_estimators": 80, "max_depth": 6, "learning_rate": 1.0}
    config = {"params": params, "checkpoint_every": every, "early_stopping_rounds": patience}
    _train(data, tmp_path / "whole", cluster, config=config)
    whole = tmp_path / "whole"
    history = json.loads((whole / "history.json").read_text())
    values = history["validation_0"]["logloss"]
    best = int(np.argmin(values))
    assert len(values) == best + 1 + patience < 80  # stopped by patience
    last = max(int(p.name[6:11]) for p in (whole / "checkpoints").glob("round-?????.json"))
    assert last == len(values) // every * every  # the checkpoints before the stop
    model = distboost.load_model(whole / "model.json")
    assert len(model.trees_) == best + 1 and model.best_iteration_ == best
    assert json.loads((whole / "training.json").read_text())["best_iteration"] == best

    # the library's own early stopping, in one fit with the same bins, agrees
    with Client(cluster[0], set_as_default=False) as client:
        X, y = load_split(data, "train")
        library = distboost.GradientBoostingClassifier(**params, random_state=0, client=client)
        library.fit(X, y, eval_set=[load_split(data, "validation")],
                    early_stopping_rounds=patience, bin_mapper=load_bin_mapper(data))
    same_trees(model, library)
    assert library.best_iteration_ == best

    # a crash after a checkpoint past the best round, before patience ran out
    resumed_from = max(r for r in range(every, len(values), every) if r > best)
    crashed = tmp_path / "crashed"
    shutil.copytree(whole, crashed)
    for name in ("model.json", "history.json", "training.json"):
        (crashed / name).unlink()
    for path in (crashed / "checkpoints").glob("round-*"):
        if int(path.name[6:11]) > resumed_from:
            path.unlink()
    _train(data, crashed, cluster, config=config)
    assert json.loads((crashed / "training.json").read_text())["resumed_from_round"] == resumed_from
    same_trees(distboost.load_model(crashed / "model.json"), model)
    assert (crashed / "model.json").read_text() == (whole / "model.json").read_text()
    assert (crashed / "history.json").read_text() == (whole / "history.json").read_text()


def test_early_stopping_on_auc_watches_the_highest_as_the_library(data, cluster, tmp_path):
    params = {"n_estimators": 80, "max_depth": 6, "learning_rate": 1.0,
              "eval_metric": ["logloss", "auc"]}
    config = {"params": params, "checkpoint_every": 4, "early_stopping_rounds": 5}
    _train(data, tmp_path / "auc", cluster, config=config)
    history = json.loads((tmp_path / "auc" / "history.json").read_text())
    auc = history["validation_0"]["auc"]
    best = int(np.argmax(auc))  # the last metric listed, the higher the better
    assert len(auc) == best + 1 + 5 < 80 and len(history["validation_0"]["logloss"]) == len(auc)
    model = distboost.load_model(tmp_path / "auc" / "model.json")
    with Client(cluster[0], set_as_default=False) as client:
        X, y = load_split(data, "train")
        library = distboost.GradientBoostingClassifier(**params, random_state=0, client=client)
        library.fit(X, y, eval_set=[load_split(data, "validation")], early_stopping_rounds=5,
                    bin_mapper=load_bin_mapper(data))
    assert library.best_iteration_ == model.best_iteration_ == best
    same_trees(model, library)


def test_estimators_that_cannot_continue_fit_once_with_the_prepared_bins(data, cluster, tmp_path):
    _, keys = _train(data, tmp_path / "forest", cluster, estimator="RandomForestClassifier",
                     params={"n_estimators": 5, "max_depth": 4}, checkpoint_every=2)
    tasks = FinishedTasks()
    tasks.keys = keys
    assert len({token for token, _ in tasks.named("bin")}) == 1
    names = [p.name for p in (tmp_path / "forest" / "checkpoints").glob("round-?????.json")]
    assert names == ["round-00005.json"]
    forest = distboost.load_model(tmp_path / "forest" / "model.json")
    assert forest.bin_mapper_.to_dict() == _aligned(load_bin_mapper(data), forest)


def _aligned(mapper, model):
    """``mapper`` (by name) in the model's feature order, as ``to_dict`` gives it."""
    from distboost.engine.input_plan import given_bins

    return given_bins(mapper, model._schema).to_dict()


# --------------------------------------------------------------------- prepare
def _read_splits(folder):
    out = {}
    for split in ("train", "validation", "test"):
        files = sorted((folder / split).glob("*.parquet"))
        out[split] = [(f.name, pd.read_parquet(f)) for f in files]
    return out


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_prepare_in_tiny_batches_equals_whole_files(prefect_harness, cluster, tmp_path, fmt):
    frame = hastie_10_2(900, 4).iloc[:, [0, 1, 2, 10]]
    frame["colour"] = np.random.default_rng(4).choice(["red", "green", "blue"], 900)
    frame.loc[frame.index[::17], "x2"] = np.nan
    write_csv_files(frame, tmp_path / "raw", n_files=3)
    if fmt == "parquet":
        for path in sorted((tmp_path / "raw").glob("*.csv")):
            pd.read_csv(path).to_parquet(path.with_suffix(".parquet"), row_group_size=50)
            path.unlink()
    outputs = {}
    for batch_rows in (7, 1_000_000):
        outputs[batch_rows] = tmp_path / f"out-{batch_rows}"
        prepare(source=str(tmp_path / "raw"), output=str(outputs[batch_rows]), target="y",
                categorical=["colour"], scheduler=cluster[0], batch_rows=batch_rows)
    tiny, whole = outputs[7], outputs[1_000_000]
    for name in ("schema.json", "bin_edges.json"):
        assert (tiny / name).read_text() == (whole / name).read_text()
    stats_tiny = json.loads((tiny / "statistics.json").read_text())
    stats_whole = json.loads((whole / "statistics.json").read_text())
    assert _approx_equal(stats_tiny, stats_whole)
    splits_tiny, splits_whole = _read_splits(tiny), _read_splits(whole)
    for split, files in splits_whole.items():
        assert [n for n, _ in splits_tiny[split]] == [n for n, _ in files]
        for (_, a), (_, b) in zip(splits_tiny[split], files):
            pd.testing.assert_frame_equal(a, b)
    row_groups = [pq.ParquetFile(p).metadata for p in tiny.glob("*/*.parquet")]
    assert max(m.row_group(i).num_rows for m in row_groups for i in range(m.num_row_groups)) <= 7


def _approx_equal(a, b) -> bool:
    """Equal, floats up to rounding (sums of batches add in another order)."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_approx_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_approx_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return a == pytest.approx(b, rel=1e-12, abs=1e-12)
    return a == b
