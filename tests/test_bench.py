"""Checks of bench/: the W1 and spam-like generators, the shapes, timings, the reports, and
real runs of run.py (every shape), predict.py, threads.py and small.py on tiny data.

The real runs start together (``runs`` fixture) and the tests read their outputs:
on a 2-core machine most of a tiny run is processes and Dask workers starting up,
which overlap.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pyarrow.parquet as pq
import pytest

BENCH_DIR = Path(__file__).resolve().parents[1] / "bench"
ROWS, PARTITIONS = 5_000, 2


@pytest.fixture(scope="module")
def bench() -> SimpleNamespace:
    """The bench/ modules, imported the way ``python bench/run.py`` imports them."""
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(BENCH_DIR))
        yield SimpleNamespace(
            w1=importlib.import_module("w1"),
            report=importlib.import_module("_report"),
            systems=importlib.import_module("_systems"),
            shapes=importlib.import_module("_shapes"),
            threads=importlib.import_module("threads"),
            small=importlib.import_module("small"),
            spam_like=importlib.import_module("spam_like"),
        )


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A W1 cache root shared by the tests of this module."""
    return tmp_path_factory.mktemp("w1-cache")


@pytest.fixture(scope="module")
def tiny(bench: SimpleNamespace, cache_dir: Path) -> Path:
    """A tiny W1: 5,000 training rows in 2 partitions, 1,000 test rows."""
    return bench.w1.generate(ROWS, PARTITIONS, cache_dir=cache_dir)


def _read(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    """X of shape (n, 28) float32 and labels of shape (n,) from a W1 split."""
    table = pq.read_table(folder)
    return table.drop(["label"]).to_pandas().to_numpy(), table.column("label").to_numpy()


def test_layout_and_dtypes(bench: SimpleNamespace, tiny: Path) -> None:
    files = sorted(path.name for path in (tiny / "train").iterdir())
    assert files == ["part-000.parquet", "part-001.parquet"]
    table = pq.read_table(tiny / "train")
    assert table.num_rows == ROWS
    assert table.column_names == [*bench.w1.FEATURES, "label"]
    assert {str(table.schema.field(name).type) for name in bench.w1.FEATURES} == {"float"}
    assert set(np.unique(table.column("label").to_numpy())) == {0, 1}
    assert pq.read_table(tiny / "test").num_rows == 1_000


def test_same_seed_gives_identical_data(bench: SimpleNamespace, tiny: Path, tmp_path: Path) -> None:
    again = bench.w1.generate(ROWS, PARTITIONS, cache_dir=tmp_path)
    for name in ["train/part-000.parquet", "train/part-001.parquet", "test/part-000.parquet"]:
        assert pq.read_table(again / name).equals(pq.read_table(tiny / name))


def test_rows_do_not_depend_on_partitioning(
    bench: SimpleNamespace, tiny: Path, tmp_path: Path
) -> None:
    single = bench.w1.generate(ROWS, 1, cache_dir=tmp_path)
    assert pq.read_table(single / "train").equals(pq.read_table(tiny / "train"))


def test_other_seed_gives_other_data(bench: SimpleNamespace, tiny: Path, tmp_path: Path) -> None:
    other = bench.w1.generate(ROWS, PARTITIONS, seed=1, cache_dir=tmp_path)
    assert not pq.read_table(other / "train").equals(pq.read_table(tiny / "train"))


def test_cache_is_reused(bench: SimpleNamespace, tiny: Path, cache_dir: Path) -> None:
    written = (tiny / "train" / "part-000.parquet").stat().st_mtime_ns
    assert bench.w1.generate(ROWS, PARTITIONS, cache_dir=cache_dir) == tiny
    assert (tiny / "train" / "part-000.parquet").stat().st_mtime_ns == written


def test_regression_target_has_the_same_features(
    bench: SimpleNamespace, tiny: Path, tmp_path: Path
) -> None:
    folder = bench.w1.generate(ROWS, PARTITIONS, task="regression", cache_dir=tmp_path)
    regression, binary = pq.read_table(folder / "train"), pq.read_table(tiny / "train")
    assert regression.column_names == [*bench.w1.FEATURES, "target"]
    assert regression.select(bench.w1.FEATURES).equals(binary.select(bench.w1.FEATURES))
    # The target is the log-odds plus noise, so it separates the labels.
    labels = binary.column("label").to_numpy().astype(bool)
    target = regression.column("target").to_numpy()
    assert target[labels].mean() > target[~labels].mean() + 0.5


def test_label_rate_is_balanced(tiny: Path) -> None:
    _, y = _read(tiny / "train")
    assert 0.3 < y.mean() < 0.7


def test_simple_model_is_good_but_not_perfect(tiny: Path) -> None:
    ensemble = pytest.importorskip("sklearn.ensemble")
    metrics = pytest.importorskip("sklearn.metrics")
    threadpoolctl = pytest.importorskip("threadpoolctl")
    X, y = _read(tiny / "train")
    X_test, y_test = _read(tiny / "test")
    # One OpenMP thread: spinning threads on a busy 2-CPU machine cost seconds per fit.
    with threadpoolctl.threadpool_limits(limits=1, user_api="openmp"):
        model = ensemble.HistGradientBoostingClassifier(max_iter=50, random_state=0).fit(X, y)
    auc = metrics.roc_auc_score(y_test, model.predict_proba(X_test)[:, 1])
    assert 0.6 < auc < 0.95


def test_shape_parameters(bench: SimpleNamespace) -> None:
    shapes = bench.shapes.SHAPES
    assert list(shapes) == ["w1", "best-first", "multiclass", "wide", "shallow"]
    assert (shapes["w1"].rows, shapes["w1"].partitions, shapes["w1"].rounds) == (1_000_000, 8, 100)
    best = shapes["best-first"]
    assert best.rounds == 50
    assert best.xgboost_params() | {"grow_policy": "lossguide", "max_leaves": 63,
                                    "max_depth": 0} == best.xgboost_params()
    assert best.distboost_params(50)["max_leaf_nodes"] == 63
    assert best.distboost_params(50)["max_depth"] is None
    assert best.sklearn_params(50)["max_leaf_nodes"] == 63
    assert best.sklearn_params(50)["max_depth"] is None
    assert best.lightgbm_params(50)["num_leaves"] == 63
    multi = shapes["multiclass"]
    assert (multi.rows, multi.rounds, multi.n_classes) == (300_000, 30, 10)
    assert multi.xgboost_params()["objective"] == "multi:softprob"
    assert multi.xgboost_params()["num_class"] == 10
    wide = shapes["wide"]
    assert (wide.rows, wide.rounds, len(wide.features)) == (100_000, 50, 500)
    for shape in (shapes["w1"], multi, wide):
        assert shape.distboost_params(2)["max_depth"] == 6
        assert shape.xgboost_params()["max_depth"] == 6
        assert "grow_policy" not in shape.xgboost_params()
        assert shape.lightgbm_params(2)["num_leaves"] == 63
    shallow = shapes["shallow"]
    assert (shallow.rows, shallow.partitions, shallow.rounds) == (1_000_000, 8, 300)
    assert shallow.features == shapes["w1"].features and shallow.task == "binary"
    assert shallow.distboost_params(300) == {**shapes["w1"].distboost_params(300), "max_depth": 3}
    assert shallow.xgboost_params() == {**shapes["w1"].xgboost_params(), "max_depth": 3}
    assert shallow.sklearn_params(300) == {**shapes["w1"].sklearn_params(300), "max_depth": 3}
    assert shallow.lightgbm_params(300) == {**shapes["w1"].lightgbm_params(300), "num_leaves": 7}


class _FakeModel:
    """Stands in for a distboost estimator: fit sets ``fit_timings_`` (or not)."""

    def __init__(self, timings: dict[str, float] | None) -> None:
        self.timings = timings

    def fit(self, X: object, y: object) -> _FakeModel:
        if self.timings is not None:
            self.fit_timings_ = self.timings
        return self


def test_fit_timings_give_prepare_rounds_and_breakdown(bench: SimpleNamespace) -> None:
    timings = {"prepare": 1.5, "train": 4.0, "kernels": 3.0, "fit": 5.6, "engine": "numba"}
    timing = bench.systems.fit_and_time(_FakeModel(timings), None, None)
    assert timing.pop("whole_s") >= 0  # the wall time of this (instant) fit
    assert timing == {"prepare_s": 1.5, "rounds_s": 4.0,
                      "breakdown": {"kernels": 3.0, "fit": 5.6}, "notes": []}


def test_missing_fit_timings_leave_prepare_and_rounds_unknown(bench: SimpleNamespace) -> None:
    timing = bench.systems.fit_and_time(_FakeModel(None), None, None)
    assert timing["prepare_s"] is None and timing["rounds_s"] is None
    assert timing["breakdown"] == {} and timing["whole_s"] >= 0
    assert timing["notes"] == ["fit_timings_ lacks 'prepare', 'train'"]


def _record(system: str, whole_s: float, auc: float, **extra: object) -> dict:
    """A successful run's record as ``_systems.py`` prints it."""
    return {"system": system, "status": "ok", "version": "0", "whole_s": whole_s,
            "prepare_s": 1.0, "rounds_s": whole_s - 1.5, "read_s": 0.5, "peak_rss_mb": 100.0,
            "auc": auc, "logloss": 0.5, "worker_peak_rss_mb": [], "breakdown": {},
            "notes": [], **extra}


def test_report_ratios_breakdown_and_targets(bench: SimpleNamespace) -> None:
    records = [
        _record("distboost.dask", 10.0, 0.840, worker_peak_rss_mb=[300.0, 350.0],
                breakdown={"kernels": 6.0}),
        _record("distboost.dask", 12.0, 0.840, worker_peak_rss_mb=[320.0, 340.0],
                breakdown={"kernels": 8.0}),
        _record("xgboost.dask", 22.0, 0.841, rounds_s=21.0, worker_peak_rss_mb=[450.0, 459.0]),
        {"system": "lightgbm.dask", "status": "skipped", "error": "lightgbm is not installed"},
    ]
    systems = ["distboost.dask", "xgboost.dask", "lightgbm.dask"]
    text = bench.report.render(bench.report.summarize(records, systems), "W1", "tiny")
    assert "| whole fit s, median [min–max] | prepare s | rounds s | read s |" in text
    assert "| distboost.dask | ok | 11.00 [10.00–12.00] | 1.00 | 9.50 | 0.50 |" in text
    assert "| 320 / 350 |" in text  # largest peak per worker over the repeats
    assert "| 2.00 | — |" in text  # xgboost.dask takes 2x distboost.dask's whole fit
    assert "| distboost.dask | kernels | 7.000 | 64 % |" in text
    assert "| distboost.dask | outside prepare and rounds | 0.500 | 5 % |" in text
    assert "| distboost.dask vs xgboost.dask | 0.500 | ≤ 1.0 (goal 0.7) | yes |" in text
    assert "| distboost vs xgboost | — | ≤ 1.0 (goal 0.8) | not measured |" in text
    assert "| lightgbm.dask | skipped |" + " — |" * 10 in text
    assert "lightgbm is not installed" in text


def test_targets_depend_on_the_shape(bench: SimpleNamespace) -> None:
    records = [_record("distboost.dask", 9.0, 0.0, mlogloss=1.25, accuracy=0.5),
               _record("xgboost.dask", 10.0, 0.0, mlogloss=1.20, accuracy=0.52)]
    summaries = bench.report.summarize(records, ["distboost.dask", "xgboost.dask"], "multiclass")
    text = "\n".join(bench.report.targets_table(summaries, "multiclass", "multiclass", 300_000))
    assert "| whole fit ÷ peer's | distboost.dask vs xgboost.dask | 0.900 | ≤ 1.0 (goal 0.7) |" \
        " yes |" in text
    assert "| test mlogloss − peer's | distboost.dask vs xgboost.dask | 0.050 | reported | — |" \
        in text
    assert "| test accuracy − peer's | distboost.dask vs xgboost.dask | -0.020 | reported |" in text
    assert "AUC" not in text and "worker" not in text
    binary = bench.report.summarize(records, ["distboost.dask", "xgboost.dask"])
    ten_million = "\n".join(bench.report.targets_table(binary, "w1", "binary", 10_000_000))
    assert "| 0.900 | ≤ 0.8 (goal 0.6) | NO |" in ten_million


def _distboost_skip_reason() -> str | None:
    """Why the distboost system cannot run yet, or None if it can."""
    try:
        distboost = importlib.import_module("distboost")
    except ImportError as error:
        return f"distboost is not importable: {error}"
    if not hasattr(distboost, "GradientBoostingClassifier"):
        return "distboost has no GradientBoostingClassifier yet"
    return None


# Each shape runs a few systems (every system in at least one shape, each run a new
# process, the Dask ones with a LocalCluster of 2 workers): all of them on every
# shape would take minutes here. "wide" runs with --lazy (distboost on Dask fits the
# lazy read_parquet frame).
SHAPE_SYSTEMS = {
    "w1": ["distboost.dask", "xgboost.dask", "distboost", "xgboost"],
    "best-first": ["distboost.dask", "xgboost.dask"],
    "multiclass": ["distboost", "xgboost", "sklearn", "lightgbm.dask"],
    "wide": ["distboost.dask.disk", "sklearn"],
    "shallow": ["distboost", "lightgbm"],
}
TINY_ROWS, TINY_PARTITIONS, TINY_ROUNDS, REPEATS = 3_000, 2, 2, 2
THREADS, THREADS_SYSTEMS = (1, 2), ("distboost", "xgboost")
# One task with two peers (so a best peer); every system fits in process below.
SMALL_SYSTEMS = ("gb-distboost", "gb-xgboost", "gb-lightgbm")
PEER_MODULES = {"xgboost": "xgboost", "xgboost.dask": "xgboost", "lightgbm.dask": "lightgbm",
                "sklearn": "sklearn", "lightgbm": "lightgbm"}


def _installed(system: str) -> bool:
    """Whether a system's library is importable here (distboost always is)."""
    module = PEER_MODULES.get(system)
    return module is None or importlib.util.find_spec(module) is not None


def _commands(cache_dir: Path, results: Path) -> dict[str, list[str]]:
    """The command line of every real run: one run.py per shape, predict.py, threads.py
    and small.py."""
    tiny = ["--cache-dir", str(cache_dir), "--results-dir", str(results)]
    commands = {
        shape: [sys.executable, str(BENCH_DIR / "run.py"), "--shape", shape, "--rows",
                str(TINY_ROWS), "--partitions", str(TINY_PARTITIONS), "--rounds",
                str(TINY_ROUNDS), "--repeats", "1", "--threads", "1", "--systems",
                ",".join(systems), "--memory-limit", "2GB", "--out", shape, *tiny,
                *(["--lazy"] if shape == "wide" else [])]
        for shape, systems in SHAPE_SYSTEMS.items()
    }
    commands["predict"] = [sys.executable, str(BENCH_DIR / "predict.py"), "--rows",
                           str(TINY_ROWS), "--train-rows", "1000", "--partitions",
                           str(TINY_PARTITIONS), "--trees", "3", "--repeats", str(REPEATS),
                           "--out", "predict", *tiny]
    commands["threads"] = [sys.executable, str(BENCH_DIR / "threads.py"), "--threads",
                           ",".join(map(str, THREADS)), "--systems", ",".join(THREADS_SYSTEMS),
                           "--rows", str(TINY_ROWS), "--partitions", str(TINY_PARTITIONS),
                           "--dask", "1x2", "--dask-rows", str(TINY_ROWS), "--dask-partitions",
                           str(TINY_PARTITIONS), "--rounds", str(TINY_ROUNDS), "--repeats", "1",
                           "--memory-limit", "2GB", "--budget", "600", "--out", "threads", *tiny]
    commands["small"] = [sys.executable, str(BENCH_DIR / "small.py"), "--systems",
                         ",".join(SMALL_SYSTEMS), "--rows-scale", "0.2", "--rounds", "3",
                         "--trees", "3", "--stumps", "3", "--busy", "0,1", "--repeats", "1",
                         "--threads", "1", "--out", "small", "--results-dir", str(results)]
    return commands


@pytest.fixture(scope="module")
def runs(bench: SimpleNamespace, cache_dir: Path,
         tmp_path_factory: pytest.TempPathFactory) -> dict[str, SimpleNamespace]:
    """Run every shape and the prediction bench at once; per run: ``returncode``,
    ``stdout``, ``stderr``, the JSON ``payload`` and the markdown ``report`` of --out."""
    pytest.importorskip("sklearn", reason="the bench computes its metrics with scikit-learn")
    if reason := _distboost_skip_reason():
        pytest.skip(reason)
    # W1 is written here, not by the w1 run and predict.py racing for one folder.
    bench.w1.generate(TINY_ROWS, TINY_PARTITIONS, cache_dir=cache_dir)
    results = tmp_path_factory.mktemp("results")
    started = {}
    for name, command in _commands(cache_dir, results).items():
        with open(results / f"{name}.stdout", "w") as out, \
                open(results / f"{name}.stderr", "w") as err:
            started[name] = subprocess.Popen(command, stdout=out, stderr=err)
    outcome = {}
    for name, process in started.items():
        returncode = process.wait(timeout=600)
        payload = results / f"{name}.json"
        outcome[name] = SimpleNamespace(
            returncode=returncode, stdout=(results / f"{name}.stdout").read_text(),
            stderr=(results / f"{name}.stderr").read_text(),
            payload=json.loads(payload.read_text()) if payload.exists() else None,
            report=(results / f"{name}.md").read_text() if payload.exists() else "")
    return outcome


def _check_times(record: dict, lazy: bool) -> None:
    """What each system's whole fit, prepare and rounds are."""
    system = record["system"]
    assert record["whole_s"] > 0
    if lazy and system.startswith("distboost.dask"):
        assert record["read_s"] is None and "(--lazy)" in record["notes"][-1]
    else:
        assert record["read_s"] > 0
    if system.startswith("xgboost"):
        # In memory: QuantileDMatrix + train; on Dask: rounds = whole - (0-round train).
        assert record["prepare_s"] > 0
        assert record["prepare_s"] + record["rounds_s"] == pytest.approx(record["whole_s"])
    elif system.startswith("distboost"):
        # fit_timings_' prepare and train lie within the wall time of fit.
        assert 0 < record["prepare_s"] and 0 < record["rounds_s"]
        assert record["prepare_s"] + record["rounds_s"] <= record["whole_s"]
        assert record["breakdown"]["fit"] <= record["whole_s"]
    else:
        assert record["prepare_s"] is None and record["rounds_s"] is None
    workers = 2 if ".dask" in system else 0
    assert len(record["worker_peak_rss_mb"]) == workers


def _check_metrics(record: dict, task: str) -> None:
    """The task's test metrics, in range."""
    if task == "multiclass":
        assert 0 < record["mlogloss"] < 5 and 0 <= record["accuracy"] <= 1
        assert "auc" not in record
    else:
        assert 0.5 < record["auc"] < 1 and 0 < record["logloss"] < 1
        assert "mlogloss" not in record


@pytest.mark.parametrize("shape", list(SHAPE_SYSTEMS))
def test_shape_runs_end_to_end(shape: str, bench: SimpleNamespace,
                               runs: dict[str, SimpleNamespace]) -> None:
    run = runs[shape]
    assert run.returncode == 0, run.stderr
    task = bench.shapes.SHAPES[shape].task
    assert run.payload["meta"]["shape"] == shape
    assert run.payload["meta"]["lazy"] == (shape == "wide")
    assert (run.payload["meta"]["rows"], run.payload["meta"]["rounds"]) == (TINY_ROWS, TINY_ROUNDS)
    assert run.report in run.stdout
    assert run.report.startswith(f"## {bench.shapes.SHAPES[shape].title}\n")
    assert f"Shape `{shape}`: 3,000 training rows × {len(bench.shapes.SHAPES[shape].features)}" \
        in run.report
    assert bench.report.main_header(task)[0] in run.report
    records = {record["system"]: record for record in run.payload["records"]}
    assert list(records) == SHAPE_SYSTEMS[shape]
    for system, record in records.items():
        assert record["status"] == ("ok" if _installed(system) else "skipped"), record
        if record["status"] == "ok":
            _check_times(record, run.payload["meta"]["lazy"])
            _check_metrics(record, task)


def _row(report: str, system: str) -> list[str]:
    """The cells of ``system``'s row of the main table."""
    line = next(line for line in report.splitlines() if line.startswith(f"| {system} | "))
    return [cell.strip() for cell in line.strip("|").split("|")]


@pytest.mark.parametrize("shape", list(SHAPE_SYSTEMS))
def test_shape_report_columns_and_ratios(shape: str, bench: SimpleNamespace,
                                         runs: dict[str, SimpleNamespace]) -> None:
    run = runs[shape]
    ok = {r["system"]: r for r in run.payload["records"] if r["status"] == "ok"}

    def ratio(system: str, reference: str) -> str:
        if reference not in ok:
            return "—"
        return f"{ok[system]['whole_s'] / ok[reference]['whole_s']:.2f}"

    for system, record in ok.items():
        cells = _row(run.report, system)
        none = "—"
        assert cells[2] == f"{record['whole_s']:.2f} [{record['whole_s']:.2f}–" \
            f"{record['whole_s']:.2f}]"
        assert cells[3:6] == [none if record[key] is None else f"{record[key]:.2f}"
                              for key in ("prepare_s", "rounds_s", "read_s")]
        metrics = bench.shapes.METRICS[bench.shapes.SHAPES[shape].task]
        assert cells[8:10] == [f"{record[key]:.4f}" for key, _ in metrics]
        assert cells[10:] == [ratio(system, "distboost.dask"), ratio(system, "distboost")]
    if {"distboost.dask", "xgboost.dask"} <= set(ok):
        value = ok["distboost.dask"]["whole_s"] / ok["xgboost.dask"]["whole_s"]
        assert f"| whole fit ÷ peer's | distboost.dask vs xgboost.dask | {value:.3f} |" \
            in run.report


def test_predict_end_to_end(runs: dict[str, SimpleNamespace]) -> None:
    pytest.importorskip("xgboost", reason="predict.py compares with xgboost")
    run = runs["predict"]
    assert run.returncode == 0, run.stderr
    assert run.report in run.stdout
    seconds = run.payload["seconds"]
    assert list(seconds) == ["in process, 2 threads", "Dask LocalCluster(2 workers × 1 thread)"]
    for where, timings in seconds.items():
        assert [len(timings["distboost"]), len(timings["xgboost"])] == [REPEATS, REPEATS]
        ratio = statistics.median(timings["distboost"]) / statistics.median(timings["xgboost"])
        cells = _row(run.report, where)
        assert cells[1].startswith(f"{statistics.median(timings['distboost']):.3f} [")
        assert cells[3] == f"{ratio:.2f}"
    meta = run.payload["meta"]
    assert meta["dask_difference"] == 0  # distboost predicts the same on Dask as in process
    assert 0.5 < meta["auc"]["distboost"] < 1 and 0.5 < meta["auc"]["xgboost"] < 1


def test_the_tweedie_sampler_has_the_tweedie_mean_and_variance():
    """Compound Poisson-gamma draws: mean mu, variance phi mu^p (bench/losses_log_link.py)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(BENCH_DIR))
        bench = importlib.import_module("losses_log_link")
    rng = np.random.default_rng(0)
    for mu in (0.3, 2.0):
        y = bench.tweedie_sample(rng, np.full(400_000, mu), 1.5, phi=1.2)
        assert abs(y.mean() / mu - 1) < 0.01 and abs(y.var() / (1.2 * mu**1.5) - 1) < 0.02
        assert (y == 0).mean() == pytest.approx(np.exp(-mu**0.5 / (1.2 * 0.5)), abs=0.005)


def test_shap_benchmark_on_a_tiny_w1(bench: SimpleNamespace, cache_dir: Path) -> None:
    """bench/shap.py times the three systems and checks them against each other (loaded
    from its file: the name ``shap`` belongs to the shap package)."""
    pytest.importorskip("xgboost")
    spec = importlib.util.spec_from_file_location("bench_shap", BENCH_DIR / "shap.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = module.run(3_000, 1, cache_dir=cache_dir, rounds=10)
    assert result["max_abs_difference_same_trees"] < 1e-4
    assert set(result["times"]) == {"distboost shap_values", "xgboost pred_contribs (own trees)",
                                    "xgboost pred_contribs (distboost's trees)"}
    table = module.render(result)
    assert table.count("\n| ") == 4 and "3,000 rows x 10 trees of depth 6" in table


def _part(report: str, heading: str) -> str:
    """The report's text from the ``### HEADING...`` line to the next heading."""
    start = report.index(f"\n### {heading}")
    end = report.find("\n### ", start + 1)
    return report[start:end if end >= 0 else None]


def _cells(text: str, *first: str) -> list[str]:
    """The cells of the table row in ``text`` whose first cells are ``first``."""
    prefix = "| " + " | ".join(first) + " |"
    line = next(line for line in text.splitlines() if line.startswith(prefix))
    return [cell.strip() for cell in line.strip("|").split("|")]


def _whole_cell(seconds: float, digits: int = 2) -> str:
    """Median [min–max] of one run."""
    return f"{seconds:.{digits}f} [{seconds:.{digits}f}–{seconds:.{digits}f}]"


def test_default_thread_counts(bench: SimpleNamespace) -> None:
    default_threads = bench.threads.default_threads
    assert default_threads(16) == [1, 2, 4, 8, 16]
    assert default_threads(12) == [1, 2, 4, 8, 12]
    assert default_threads(2) == [1, 2] and default_threads(1) == [1]


def test_runs_go_repeat_by_repeat_with_systems_rotated(bench: SimpleNamespace) -> None:
    threads = bench.threads
    points = [threads.Config("in-process", 100, 1, 1), threads.Config("dask", 100, 1, 2, 4)]
    runs = threads.plan(points, lambda config: ["a", "b", "c"], 2)
    assert [(run.repeat, run.config.threads, run.system) for run in runs] == [
        (0, 1, "a"), (0, 1, "b"), (0, 1, "c"), (0, 2, "a"), (0, 2, "b"), (0, 2, "c"),
        (1, 1, "b"), (1, 1, "c"), (1, 1, "a"), (1, 2, "b"), (1, 2, "c"), (1, 2, "a")]
    assert runs[3].describe() == "dask 4 × 2: a, repeat 1"


def test_estimates_come_from_the_runs_so_far(bench: SimpleNamespace) -> None:
    threads = bench.threads
    one, two = (threads.Config("in-process", 100, 1, t) for t in (1, 2))
    records = [{"system": "a", **dataclasses.asdict(one), "wall_s": wall} for wall in (4, 20, 6)]
    assert threads.estimate_s(threads.Run(one, "a", 3), records) == 6  # the point's median
    assert threads.estimate_s(threads.Run(two, "a", 0), records) == 6  # the section's latest
    assert threads.estimate_s(threads.Run(two, "b", 0), records) == 0  # nothing to go by


def test_budget_skips_the_rest_once_a_run_would_overrun_it(
    bench: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads, now = bench.threads, [0.0]

    def execute(run: object, data_dir: Path, args: object, timeout: float) -> dict:
        """Every run takes 10 s of the fake clock."""
        now[0] += 10.0
        return {"system": run.system, "status": "ok", "whole_s": 9.0, "auc": 0.8,
                **dataclasses.asdict(run.config), "wall_s": 10.0, "timeout": timeout}

    monkeypatch.setattr(threads, "execute", execute)
    points = [threads.Config("in-process", 100, 1, t) for t in (1, 2)]
    runs = threads.plan(points, lambda config: ["distboost", "xgboost"], 2)
    data = threads.Data(None)
    data.folders[(100, 1)] = Path("unused")
    records, skipped = threads.run_all(runs, SimpleNamespace(timeout=3600.0), data,
                                       threads.Budget(35.0, 0.0, lambda: now[0]))
    # Two first runs (nothing to go by), then distboost at 2 threads (10 s, 15 s left);
    # xgboost at 2 threads would take 10 s with 5 s left: it and the rest are skipped.
    assert [(r["system"], r["threads"]) for r in records] == [
        ("distboost", 1), ("xgboost", 1), ("distboost", 2)]
    assert [r["timeout"] for r in records] == [35.0, 25.0, 15.0]  # killed when it is spent
    assert skipped == runs[3:]
    no_budget = threads.Budget(None, 0.0, lambda: now[0])
    assert len(threads.run_all(runs, SimpleNamespace(timeout=60.0), data, no_budget)[0]) == 8


def test_threads_end_to_end(runs: dict[str, SimpleNamespace]) -> None:
    pytest.importorskip("xgboost", reason="threads.py compares with xgboost")
    run = runs["threads"]
    assert run.returncode == 0, run.stderr
    assert run.report in run.stdout
    meta = run.payload["meta"]
    assert meta["cpu_count"] == os.cpu_count() and meta["skipped"] == []
    assert {"cpu_model", "usable_cpus", "memory_gb", "commit", "date", "load_average_before",
            "load_average_after", "generation_s", "settings"} <= set(meta)
    assert f"{meta['cpu_model']}, {meta['cpu_count']} CPUs" in run.report
    assert meta["settings"]["threads"] == list(THREADS) and meta["elapsed_s"] < 600
    records = run.payload["records"]
    assert all(record["status"] == "ok" for record in records), records
    whole = {(r["section"], r["workers"], r["threads"], r["system"]): r["whole_s"]
             for r in records}
    dask_systems = ("distboost.dask", "xgboost.dask")
    assert set(whole) == {("in-process", 0, t, s) for t in THREADS for s in THREADS_SYSTEMS} \
        | {("dask", 1, 2, system) for system in dask_systems}
    part = _part(run.report, "In process")
    for threads in THREADS:
        for system in THREADS_SYSTEMS:
            seconds = whole[("in-process", 0, threads, system)]
            speed_up = whole[("in-process", 0, 1, system)] / seconds
            cells = _cells(part, str(threads), system)
            assert cells[2:5] == ["ok", "1", _whole_cell(seconds)]
            assert cells[5:7] == [f"{speed_up:.2f}", f"{speed_up / threads:.2f}"]
        distboost, xgboost = (whole[("in-process", 0, threads, s)] for s in THREADS_SYSTEMS)
        assert _cells(part, str(threads), f"{distboost:.2f}")[2:] == [
            f"{distboost / xgboost:.2f}", "—"]  # distboost ÷ xgboost, ÷ lightgbm (not run)
    distboost, xgboost = (whole[("dask", 1, 2, system)] for system in dask_systems)
    part = _part(run.report, "On Dask")
    cells = _cells(part, "1 × 2", "2", "distboost.dask")
    assert cells[5] == _whole_cell(distboost) and cells[-1] == f"{distboost / xgboost:.2f}"
    assert _cells(part, "1 × 2", "2", "xgboost.dask")[-1] == "—"
    assert "Weak scaling" not in run.report


def test_weak_scaling_table(bench: SimpleNamespace) -> None:
    """Efficiency against the fewest workers; distboost.dask ÷ xgboost.dask at each."""
    threads = bench.threads
    points = [threads.Config("weak", 1000 * w, 2 * w, 2, w) for w in (2, 4)]
    seconds = {(2, "distboost.dask"): 10.0, (2, "xgboost.dask"): 20.0,
               (4, "distboost.dask"): 12.5, (4, "xgboost.dask"): 40.0}
    records = [{"system": system, "status": "ok", "version": "0", "whole_s": value,
                "peak_rss_mb": 1.0, "auc": 0.8, "logloss": 0.5,
                **dataclasses.asdict(points[workers // 4])}
               for (workers, system), value in seconds.items()]
    summaries = threads.summarize(records, points, lambda config: list(threads.ON_DASK))
    table = "\n".join(threads.weak_table(summaries))
    assert "| efficiency t(W=2) ÷ t | distboost.dask ÷ xgboost.dask |" in table
    assert "| 4 × 2 | 4,000 | distboost.dask | ok | 1 | 12.50 [12.50–12.50] | 0.80 | 0.31 |" \
        in table
    assert "| 4 × 2 | 4,000 | xgboost.dask | ok | 1 | 40.00 [40.00–40.00] | 0.50 | — |" in table
    assert "| 2 × 2 | 2,000 | distboost.dask | ok | 1 | 10.00 [10.00–10.00] | 1.00 | 0.50 |" \
        in table


def test_spam_like_data_are_shaped_like_spambase(bench: SimpleNamespace) -> None:
    spam = bench.spam_like
    X_train, y_train, X_test, y_test = spam.train_test()
    assert X_train.shape == (3_065, 57) and X_test.shape == (1_536, 57)
    names = spam.FEATURES
    assert sum(name.startswith("word_freq_") for name in names) == 48
    assert sum(name.startswith("char_freq_") for name in names) == 6
    X, y = np.vstack([X_train, X_test]), np.concatenate([y_train, y_test])
    frequencies = X[:, :54]
    nonzero = (frequencies > 0).mean(axis=0)
    assert 0.05 <= nonzero.min() and nonzero.max() <= 0.42
    assert np.array_equal(frequencies, np.round(frequencies, 2)) and frequencies.max() <= 100
    average, longest, total = X[:, 54:].T
    assert np.array_equal(average, np.round(average, 3)) and average.min() >= 1
    assert np.array_equal(longest, np.round(longest)) and np.array_equal(total, np.round(total))
    assert (longest >= average).all() and (total >= longest).all()
    assert 0.36 < y.mean() < 0.42
    again = spam.generate()
    assert np.array_equal(again[0], X) and np.array_equal(again[1], y)
    assert [len(part) for part in spam.train_test(0.2)] == [613, 613, 307, 307]


def test_spam_like_data_give_boosting_a_test_error_of_5_to_7_percent(
    bench: SimpleNamespace
) -> None:
    ensemble = pytest.importorskip("sklearn.ensemble")
    threadpoolctl = pytest.importorskip("threadpoolctl")
    X_train, y_train, X_test, y_test = bench.spam_like.train_test()
    with threadpoolctl.threadpool_limits(limits=1, user_api="openmp"):
        model = ensemble.HistGradientBoostingClassifier(
            max_iter=200, max_depth=4, max_leaf_nodes=None, early_stopping=False
        ).fit(X_train, y_train)
    assert 0.05 <= 1 - model.score(X_test, y_test) <= 0.07


def test_every_small_system_fits_in_process(bench: SimpleNamespace) -> None:
    for system in bench.small.SYSTEMS:
        record = bench.small.fit_one(system, 2, 1, 0.05)
        assert record["status"] in ("ok", "skipped"), record
        if record["status"] == "ok":
            assert record["whole_s"] > 0 and 0 <= record["test_error"] <= 1
            assert (record["train_rows"], record["test_rows"]) == (153, 77)


def test_small_end_to_end(runs: dict[str, SimpleNamespace]) -> None:
    run = runs["small"]
    assert run.returncode == 0, run.stderr
    assert run.report in run.stdout
    meta = run.payload["meta"]
    assert (meta["train_rows"], meta["test_rows"]) == (613, 307)
    assert meta["cpu_count"] == os.cpu_count() and "load_average_after" in meta
    records = run.payload["records"]
    assert sorted((r["system"], r["busy"]) for r in records) == sorted(
        (system, busy) for system in SMALL_SYSTEMS for busy in (0, 1))
    ok = {(r["system"], r["busy"]): r for r in records if r["status"] == "ok"}
    assert all(_installed(system) for system, _ in ok)  # only missing peers are skipped
    ratios = {}
    for busy, heading in ((0, "Quiet"), (1, "Beside 1 busy process")):
        part = _part(run.report, heading)
        for (system, level), record in ok.items():
            task, _, library = system.partition("-")
            if level != busy:
                continue
            distboost = ok[(f"{task}-distboost", busy)]["whole_s"]
            cells = _cells(part, task, library)
            assert cells[4:6] == [_whole_cell(record["whole_s"], 3), f"{record['test_error']:.4f}"]
            ratio = distboost / record["whole_s"]
            assert cells[6] == ("—" if library == "distboost" else f"{ratio:.2f}")
            if library != "distboost":
                ratios[(task, library, busy)] = ratio
        for task in ("gb",):
            peers = {lib: r for (t, lib, b), r in ratios.items() if (t, b) == (task, busy)}
            best = max(peers, key=peers.get)  # the fastest peer: distboost's largest ratio
            assert f"| {task} | {best} | {peers[best]:.2f} |" in part
    part = _part(run.report, "Busy 1 ÷ quiet")
    assert "| gb | best peer (" in part
    for (task, library, busy), quiet in ratios.items():
        if busy == 0:
            loaded = ratios[(task, library, 1)]
            verdict = "yes" if loaded / quiet <= 1 else "NO"
            assert f"| {task} | {library} | {quiet:.2f} | {loaded:.2f} | {loaded / quiet:.2f} | " \
                f"{verdict} |" in part
    for (system, busy), record in ok.items():
        if busy == 1:
            task, _, library = system.partition("-")
            quiet = ok[(system, 0)]["whole_s"]
            assert f"| {task} | {library} | {quiet:.3f} | {record['whole_s']:.3f} | " \
                f"{record['whole_s'] / quiet:.2f} |" in part
