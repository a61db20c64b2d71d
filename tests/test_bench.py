"""Fast checks of bench/: the W1 generator, timings, the report and run.py on a tiny W1."""

from __future__ import annotations

import importlib
import importlib.util
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


class _FakeModel:
    """Stands in for a distboost estimator: fit sets ``fit_timings_`` (or not)."""

    def __init__(self, timings: dict[str, float] | None) -> None:
        self.timings = timings

    def fit(self, X: object, y: object) -> _FakeModel:
        if self.timings is not None:
            self.fit_timings_ = self.timings
        return self


def test_fit_timings_give_train_prepare_and_breakdown(bench: SimpleNamespace) -> None:
    timings = {"prepare": 1.5, "train": 4.0, "kernel": 3.0, "scheduling": 0.5, "engine": "numba"}
    timing = bench.systems._fit_and_time(_FakeModel(timings), None, None)
    assert timing == {"train_s": 4.0, "prepare_s": 1.5,
                      "breakdown": {"kernel": 3.0, "scheduling": 0.5}, "notes": []}


def test_missing_fit_timings_fall_back_to_wall_time(bench: SimpleNamespace) -> None:
    timing = bench.systems._fit_and_time(_FakeModel(None), None, None)
    assert timing["prepare_s"] is None and timing["breakdown"] == {}
    assert timing["train_s"] >= 0 and "wall time of fit" in timing["notes"][0]


def _record(system: str, train_s: float, auc: float, **extra: object) -> dict:
    """A successful run's record as ``_systems.py`` prints it."""
    return {"system": system, "status": "ok", "version": "0", "train_s": train_s,
            "prepare_s": 1.0, "read_s": None, "peak_rss_mb": 100.0, "auc": auc,
            "logloss": 0.5, "worker_peak_rss_mb": [], "breakdown": {}, "notes": [], **extra}


def test_report_ratios_breakdown_and_targets(bench: SimpleNamespace) -> None:
    records = [
        _record("distboost.dask", 10.0, 0.840, worker_peak_rss_mb=[300.0, 350.0],
                breakdown={"kernel": 6.0}),
        _record("distboost.dask", 12.0, 0.840, worker_peak_rss_mb=[320.0, 340.0],
                breakdown={"kernel": 8.0}),
        _record("xgboost.dask", 22.0, 0.841, worker_peak_rss_mb=[450.0, 459.0]),
        {"system": "lightgbm.dask", "status": "skipped", "error": "lightgbm is not installed"},
    ]
    systems = ["distboost.dask", "xgboost.dask", "lightgbm.dask"]
    text = bench.report.render(bench.report.summarize(records, systems), "W1", "tiny")
    assert "| distboost.dask | ok | 11.00 [10.00–12.00] |" in text
    assert "| 320 / 350 |" in text  # largest peak per worker over the repeats
    assert "| 2.00 | — |" in text  # xgboost.dask takes 2x distboost.dask's time
    assert "| distboost.dask | kernel | 7.000 | 64 % |" in text
    assert "| distboost.dask vs xgboost.dask | 0.500 | ≤ 1.0 (goal 0.7) | yes |" in text
    assert "| distboost vs xgboost | — | ≤ 1.5 (goal 1.0) | not measured |" in text
    assert "| lightgbm.dask | skipped |" in text
    assert "lightgbm is not installed" in text


def _distboost_skip_reason() -> str | None:
    """Why the distboost system cannot run yet, or None if it can."""
    try:
        distboost = importlib.import_module("distboost")
    except ImportError as error:
        return f"distboost is not importable: {error}"
    if not hasattr(distboost, "GradientBoostingClassifier"):
        return "distboost has no GradientBoostingClassifier yet"
    return None


@pytest.mark.parametrize("system", ["sklearn", "distboost", "distboost.dask.disk"])
def test_run_prints_the_table(system: str, tiny: Path, cache_dir: Path) -> None:
    pytest.importorskip("sklearn", reason="bench/run.py computes AUC with scikit-learn")
    if system.startswith("distboost") and (reason := _distboost_skip_reason()):
        pytest.skip(reason)
    command = [sys.executable, str(BENCH_DIR / "run.py"), "--rows", str(ROWS),
               "--partitions", str(PARTITIONS), "--repeats", "1", "--systems", system,
               "--threads", "1", "--cache-dir", str(cache_dir), "--rounds", "5",
               "--memory-limit", "2GB"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    assert "| system | status | train s, median [min–max] |" in result.stdout
    assert f"| {system} | ok |" in result.stdout, result.stdout + result.stderr
    assert "memory_limit 2GB); 5 rounds" in result.stdout


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
