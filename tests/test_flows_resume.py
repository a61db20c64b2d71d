"""Kill the train flow's process mid-training, rerun it: it resumes from the
last checkpoint and ends with the same model as an uninterrupted run."""

try:
    import _flows_fixtures as fx
except ImportError:  # tests/ imported as a package
    from tests import _flows_fixtures as fx

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import distboost
from distboost.demo_data import hastie_10_2, write_csv_files
from flows.config import DEFAULT_PATIENCE

ROUNDS = 40
TRAIN = ["--param", f"n_estimators={ROUNDS}", "--param", "max_depth=3",
         "--checkpoint-every", "10", "--workers", "1", "--dashboard-address", ":0"]  # fmt: skip


def uninterrupted(data):
    """The same training in one go, in this process: model and validation loss."""
    from distributed import Client, LocalCluster

    from flows._data import load_bin_mapper, load_split

    with LocalCluster(**fx.TEST_CLUSTER) as cluster, Client(cluster) as client:
        X, y = load_split(data, "train")
        eval_set = [load_split(data, "validation")]
        est = distboost.GradientBoostingClassifier(
            n_estimators=ROUNDS, max_depth=3, random_state=0, client=client
        )
        est.fit(X, y, eval_set=eval_set, bin_mapper=load_bin_mapper(data),  # as the flow does,
                early_stopping_rounds=DEFAULT_PATIENCE)  # its early stopping on by default
    return est, est.evals_result_["validation_0"]["logloss"]


def wait_for(path, proc, timeout=240.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.05)
    return False


@pytest.mark.slow
def test_killed_training_resumes_to_the_uninterrupted_model(tmp_path):
    write_csv_files(hastie_10_2(6000, 3), tmp_path / "raw", n_files=3)
    data = fx.prepared_folder(tmp_path / "raw", tmp_path / "data")

    run = tmp_path / "crashed"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "flows.cli",
            "--no-progress",
            "train",
            str(data),
            "--out",
            str(run),
            *TRAIN,
        ],
        env=fx.subprocess_env(fx.shared_prefect_home()),
        cwd=fx.REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        assert wait_for(run / "checkpoints" / "round-00010.json", proc), "no first checkpoint"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the CLI, its Dask workers, its Prefect server
        proc.wait(timeout=30)
    assert not (run / "model.json").exists(), "training finished before the kill"
    done = max(int(p.name[6:11]) for p in (run / "checkpoints").glob("round-?????.json"))
    assert 10 <= done < ROUNDS

    again = fx.run_cli(["train", str(data), "--out", str(run), *TRAIN])
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip().splitlines()[-1] == str(run / "model.json")
    assert "resuming from checkpoint" in again.stderr
    assert json.loads((run / "training.json").read_text())["resumed_from_round"] == done

    resumed = distboost.load_model(str(run / "model.json"))
    reference, evals = uninterrupted(data)
    assert resumed.bin_mapper_.to_dict() == reference.bin_mapper_.to_dict()  # bin_edges.json
    assert len(resumed.trees_) == len(reference.trees_) <= ROUNDS
    np.testing.assert_array_equal(resumed.base_score_, reference.base_score_)
    for round_a, round_b in zip(resumed.trees_, reference.trees_):
        for a, b in zip(round_a, round_b):
            np.testing.assert_array_equal(a.nodes, b.nodes)
    history = json.loads((run / "history.json").read_text())["validation_0"]["logloss"]
    np.testing.assert_allclose(history, evals)
