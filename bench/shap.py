"""SHAP values on W1: distboost's ``shap_values`` against xgboost's ``pred_contribs``.

Both systems train 100 rounds of depth-6 trees (learning rate 0.3, 256 bins)
on the same W1 rows, then explain 100,000 rows with 2 threads each:

* ``distboost``: ``distboost.inspection.shap_values`` (numba, 2 threads);
* ``xgboost (own trees)``: ``Booster.predict(pred_contribs=True)`` on xgboost's
  own model (``nthread=2``);
* ``xgboost (distboost's trees)``: the same on distboost's model written with
  ``save_model(format="xgboost")``: exactly the trees distboost explains.

The three are run in turn (alternating, after one warm-up each: numba's
compilation is not timed), ``--repeats`` times, and the table gives the
median, minimum and maximum wall time, and each system's CPU time (which a
busy machine distorts less). The explanations are also checked against each
other. Usage::

    python bench/shap.py                      # 100k rows x 100 trees
    python bench/shap.py --rows 20000 --repeats 3 --out bench/results/shap-w1
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from w1 import FEATURES, generate

THREADS = 2
ROUNDS, DEPTH, LEARNING_RATE = 100, 6, 0.3


def _read(folder: Path, n_rows: int):
    import pyarrow.parquet as pq

    table = pq.read_table(folder)
    X = np.column_stack([table.column(name).to_numpy() for name in FEATURES])
    return np.ascontiguousarray(X[:n_rows], np.float32), table.column("label").to_numpy()[:n_rows]


def _models(X, y, rounds: int):
    """distboost's and xgboost's models of the same rows, and distboost's as xgboost's."""
    import xgboost

    import distboost

    model = distboost.GradientBoostingClassifier(n_estimators=rounds, max_depth=DEPTH,
                                                 learning_rate=LEARNING_RATE, n_jobs=THREADS)
    model.fit(X, y)
    params = {"max_depth": DEPTH, "eta": LEARNING_RATE, "objective": "binary:logistic",
              "tree_method": "hist", "max_bin": 256, "nthread": THREADS}
    own = xgboost.train(params, xgboost.DMatrix(X, y, nthread=THREADS), rounds)
    path = Path(tempfile.mkdtemp()) / "distboost.xgb.json"
    model.save_model(path, format="xgboost")
    exported = xgboost.Booster(model_file=str(path))
    exported.set_param({"nthread": THREADS})
    return model, own, exported


def _leaves(model, own) -> tuple[float, float]:
    """Mean leaves per tree of distboost's and xgboost's models."""
    ours = np.mean([t.n_leaves for r in model.trees_ for t in r])
    dump = own.get_dump()
    return float(ours), float(np.mean([d.count("leaf=") for d in dump]))


def _timed(fn) -> tuple[float, float, np.ndarray]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def run(n_rows: int, repeats: int, cache_dir: Path | None = None, rounds: int = ROUNDS) -> dict:
    import numba
    import xgboost

    from distboost.inspection import shap_values

    numba.set_num_threads(THREADS)
    folder = generate(n_rows, 2, cache_dir=cache_dir)
    X, y = _read(folder / "train", n_rows)
    model, own, exported = _models(X, y, rounds)
    dm = xgboost.DMatrix(X, nthread=THREADS)
    systems = {
        "distboost shap_values": lambda: shap_values(model, X),
        "xgboost pred_contribs (own trees)": lambda: own.predict(dm, pred_contribs=True),
        "xgboost pred_contribs (distboost's trees)":
            lambda: exported.predict(dm, pred_contribs=True),
    }
    results = {name: fn() for name, fn in systems.items()}  # warm-up (numba compiles)
    gap = float(np.abs(results["xgboost pred_contribs (distboost's trees)"]
                       - results["distboost shap_values"]).max())
    times = {name: [] for name in systems}
    for _ in range(repeats):
        for name, fn in systems.items():
            wall, cpu, _ = _timed(fn)
            times[name].append((wall, cpu))
    ours, theirs = _leaves(model, own)
    return {"rows": n_rows, "rounds": rounds, "depth": DEPTH, "threads": THREADS,
            "repeats": repeats, "leaves_per_tree": {"distboost": ours, "xgboost": theirs},
            "max_abs_difference_same_trees": gap, "times": times,
            "load_average": os.getloadavg(), "cpus": os.cpu_count()}


def render(result: dict) -> str:
    """The markdown table of ``run``'s result."""
    walls = {name: [w for w, _ in t] for name, t in result["times"].items()}
    ours = statistics.median(walls["distboost shap_values"])
    leaves = result["leaves_per_tree"]
    lines = [
        (f"## SHAP values on W1: {result['rows']:,} rows x {result['rounds']} trees of depth "
        f"{result['depth']}"),
        "",
        (f"{result['threads']} threads each, {result['repeats']} alternating runs after a "
        f"warm-up; {result['cpus']} CPUs, load average {result['load_average'][0]:.1f} at the "
        f"end. Mean leaves per tree: distboost {leaves['distboost']:.1f}, xgboost "
        f"{leaves['xgboost']:.1f}. On the same trees the values differ by at most "
        f"{result['max_abs_difference_same_trees']:.1e} (xgboost's float32)."),
        "",
        "| system | wall s, median [min-max] | CPU s, median | ÷ distboost |",
        "|---|---|---|---|",
    ]
    for name, runs in result["times"].items():
        wall = [w for w, _ in runs]
        cpu = statistics.median(c for _, c in runs)
        lines.append(f"| {name} | {statistics.median(wall):.2f} [{min(wall):.2f}-{max(wall):.2f}]"
                     f" | {cpu:.2f} | {statistics.median(wall) / ours:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000, help="rows explained (and trained)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each system")
    parser.add_argument("--out", help="write OUT.md and OUT.json")
    args = parser.parse_args(argv)
    result = run(args.rows, args.repeats)
    text = render(result)
    print(text)
    if args.out:
        Path(f"{args.out}.md").write_text(text)
        Path(f"{args.out}.json").write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
