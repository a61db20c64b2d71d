"""Small data in process: the size of ESL's spam data, quiet and beside busy processes.

On a spam-shaped data set (``spam_like.py``: 3,065 training and 1,536 test rows × 57
columns; a stand-in, not the real data) three tasks, each system in a fresh process
that first fits a tiny warm-up model (200 rows, 2 rounds or trees; imports, compiled
code and thread pools start there) and then times one whole fit:

- gradient boosting, ``--rounds`` (200) rounds of depth 4, learning rate 0.1: distboost
  ``GradientBoostingClassifier``, scikit-learn ``HistGradientBoostingClassifier``,
  xgboost ``XGBClassifier(tree_method="hist")``, LightGBM ``LGBMClassifier(num_leaves=16,
  max_depth=4)``;
- random forest, ``--trees`` (100) fully grown trees, sqrt(d) features per node:
  distboost and scikit-learn ``RandomForestClassifier(random_state=0)``;
- AdaBoost (SAMME), ``--stumps`` (400) stumps: distboost ``AdaBoostClassifier`` and
  scikit-learn ``AdaBoostClassifier(DecisionTreeClassifier(max_depth=1))``.

``--threads`` (2) is every system's ``n_jobs`` and its process's OpenMP and numba
pools. ``--busy 0,1`` measures the whole set quiet and again beside 1 busy process (a
tight loop, started before and killed after each set); the report gives distboost's
time over each peer's at every level, and how those ratios move when the machine is
busy (the target: no worse than quiet).

    python bench/small.py                                # busy 0 and 1, 3 repeats
    python bench/small.py --busy 0,2 --repeats 5 --out small-busy2
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import _machine
import numpy as np
import spam_like
from _report import Record, Summary
from _systems import Skipped, _import_peer, timer
from run import RESULTS_DIR, git_commit, run_command, thread_environment, write_results

TASKS = {"gb": "gradient boosting", "rf": "random forest", "ada": "AdaBoost (SAMME)"}
LEARNING_RATE, DEPTH, LEAVES = 0.1, 4, 16
WARM_ROWS, WARM_SIZE = 200, 2
NONE = "—"


def _gb_distboost(size: int, threads: int) -> Any:
    """distboost gradient boosting: ``size`` rounds of depth 4."""
    db = importlib.import_module("distboost")
    return db.GradientBoostingClassifier(n_estimators=size, max_depth=DEPTH,
                                         learning_rate=LEARNING_RATE, n_jobs=threads)


def _gb_sklearn(size: int, threads: int) -> Any:
    """scikit-learn's histogram gradient boosting (threads: its OpenMP pool, from the
    process's OMP_NUM_THREADS)."""
    ensemble = _import_peer("sklearn.ensemble")
    return ensemble.HistGradientBoostingClassifier(max_iter=size, max_depth=DEPTH,
                                                   learning_rate=LEARNING_RATE,
                                                   early_stopping=False, max_leaf_nodes=None)


def _gb_xgboost(size: int, threads: int) -> Any:
    """xgboost ``hist``: ``size`` rounds of depth 4."""
    xgb = _import_peer("xgboost")
    return xgb.XGBClassifier(n_estimators=size, max_depth=DEPTH, learning_rate=LEARNING_RATE,
                             tree_method="hist", n_jobs=threads)


def _gb_lightgbm(size: int, threads: int) -> Any:
    """LightGBM: ``size`` rounds of at most 16 leaves and depth 4."""
    lgb = _import_peer("lightgbm")
    return lgb.LGBMClassifier(n_estimators=size, num_leaves=LEAVES, max_depth=DEPTH,
                              learning_rate=LEARNING_RATE, n_jobs=threads, verbose=-1)


def _rf_distboost(size: int, threads: int) -> Any:
    """distboost's random forest of ``size`` fully grown trees."""
    db = importlib.import_module("distboost")
    return db.RandomForestClassifier(n_estimators=size, n_jobs=threads, random_state=0)


def _rf_sklearn(size: int, threads: int) -> Any:
    """scikit-learn's random forest of ``size`` fully grown trees."""
    ensemble = _import_peer("sklearn.ensemble")
    return ensemble.RandomForestClassifier(n_estimators=size, n_jobs=threads, random_state=0)


def _ada_distboost(size: int, threads: int) -> Any:
    """distboost's AdaBoost: ``size`` SAMME rounds of stumps."""
    db = importlib.import_module("distboost")
    return db.AdaBoostClassifier(n_estimators=size, max_depth=1, algorithm="SAMME",
                                 n_jobs=threads)


def _ada_sklearn(size: int, threads: int) -> Any:
    """scikit-learn's AdaBoost (SAMME) of ``size`` stumps (one thread: it has no n_jobs)."""
    ensemble = _import_peer("sklearn.ensemble")
    tree = _import_peer("sklearn.tree")
    return ensemble.AdaBoostClassifier(tree.DecisionTreeClassifier(max_depth=1),
                                       n_estimators=size)


SYSTEMS: dict[str, Callable[[int, int], Any]] = {
    "gb-distboost": _gb_distboost, "gb-sklearn": _gb_sklearn, "gb-xgboost": _gb_xgboost,
    "gb-lightgbm": _gb_lightgbm, "rf-distboost": _rf_distboost, "rf-sklearn": _rf_sklearn,
    "ada-distboost": _ada_distboost, "ada-sklearn": _ada_sklearn,
}
"""Each system's model of a given size (rounds, trees or stumps) and thread count; the
name is TASK-LIBRARY."""


def task_of(system: str) -> str:
    """"gb", "rf" or "ada"."""
    return system.partition("-")[0]


def library_of(system: str) -> str:
    """"distboost", "sklearn", "xgboost" or "lightgbm"."""
    return system.partition("-")[2]


def fit_one(system: str, size: int, threads: int, scale: float) -> Record:
    """In this process: a warm-up fit, then the timed whole fit and the test error.

    ``status`` is "ok", "skipped" (peer not installed) or "failed" (with ``error`` and
    ``traceback``); an "ok" record has ``whole_s``, ``warm_s``, ``test_error`` and the
    library's ``version``.
    """
    record: Record = {"system": system, "task": task_of(system), "status": "ok"}
    try:
        X_train, y_train, X_test, y_test = spam_like.train_test(scale)
        make = SYSTEMS[system]
        with timer() as warm:
            make(WARM_SIZE, threads).fit(X_train[:WARM_ROWS], y_train[:WARM_ROWS])
        model = make(size, threads)
        with timer() as whole:
            model.fit(X_train, y_train)
        error = float(np.mean(np.asarray(model.predict(X_test)) != y_test))
        version = importlib.import_module(library_of(system)).__version__
        record.update(version=version, whole_s=whole[0], warm_s=warm[0], test_error=error,
                      train_rows=len(y_train), test_rows=len(y_test))
    except Skipped as error:
        record.update(status="skipped", error=str(error))
    except Exception as error:  # noqa: BLE001 - any failure is reported, not raised
        record.update(status="failed", error=f"{type(error).__name__}: {error}",
                      traceback=traceback.format_exc())
    return record


def size_of(system: str, args: argparse.Namespace) -> int:
    """Rounds, trees or stumps of ``system``'s task."""
    return {"gb": args.rounds, "rf": args.trees, "ada": args.stumps}[task_of(system)]


def run_child(system: str, args: argparse.Namespace) -> Record:
    """Fit ``system`` in a fresh process (``python bench/small.py --child SYSTEM``), its
    thread pools sized to ``--threads``."""
    command = [sys.executable, str(Path(__file__).resolve()), "--child", system,
               "--size", str(size_of(system, args)), "--threads", str(args.threads),
               "--rows-scale", str(args.rows_scale)]
    return run_command(system, command, thread_environment(args.threads), args.timeout)


@contextmanager
def busy_processes(count: int) -> Iterator[list[int]]:
    """``count`` processes, each a tight CPU loop, for the duration of the block; yields
    their process ids."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
             for _ in range(count)]
    try:
        yield [loop.pid for loop in loops]
    finally:
        for loop in loops:
            loop.kill()
        for loop in loops:
            loop.wait()


def _rotated(systems: list[str], repeat: int) -> list[str]:
    """The task's systems, their order rotated by the repeat."""
    shift = repeat % len(systems)
    return systems[shift:] + systems[:shift]


def run_all(args: argparse.Namespace) -> list[Record]:
    """Per repeat and busy level, one measured set: every task's systems, alternating,
    beside that many busy processes."""
    records: list[Record] = []
    for repeat in range(args.repeats):
        for busy in args.busy:
            with busy_processes(busy):
                for task in TASKS:
                    systems = [system for system in args.systems if task_of(system) == task]
                    for system in _rotated(systems, repeat) if systems else []:
                        records.append({**run_child(system, args), "busy": busy,
                                        "repeat": repeat})
                        _progress(records[-1], repeat, args.repeats)
    return records


def _progress(record: Record, repeat: int, repeats: int) -> None:
    """One line per run on stderr."""
    if record["status"] == "ok":
        outcome = f"whole fit {record['whole_s']:.3f} s, test error {record['test_error']:.4f}"
    else:
        outcome = f"{record['status']}: {record.get('error', '')}"
    print(f"[{repeat + 1}/{repeats}] busy {record['busy']}, {record['system']}: {outcome}",
          file=sys.stderr, flush=True)


def summarize(records: list[Record], system: str, busy: int) -> Summary:
    """One system's runs at one busy level: medians of the whole fit and test error."""
    runs = [r for r in records if r["system"] == system and r["busy"] == busy]
    ok = [r for r in runs if r["status"] == "ok"]
    summary: Summary = {"system": system, "task": task_of(system), "busy": busy,
                        "runs": len(ok), "status": _status(runs, ok),
                        "errors": _unique(r["error"] for r in runs if "error" in r)}
    if ok:
        whole = [r["whole_s"] for r in ok]
        summary.update(version=ok[0]["version"], whole_median_s=statistics.median(whole),
                       whole_min_s=min(whole), whole_max_s=max(whole),
                       warm_median_s=statistics.median(r["warm_s"] for r in ok),
                       test_error=statistics.median(r["test_error"] for r in ok))
    return summary


def _status(runs: list[Record], ok: list[Record]) -> str:
    """ok, skipped, failed, not run, or "k/n ok" for a mix."""
    if not runs:
        return "not run"
    if len(ok) == len(runs):
        return "ok"
    return f"{len(ok)}/{len(runs)} ok" if ok else runs[-1]["status"]


def _median(summaries: list[Summary], system: str, busy: int) -> float | None:
    """Median whole fit of ``system`` at ``busy``, or None if it did not run."""
    for summary in summaries:
        if summary["system"] == system and summary["busy"] == busy:
            return summary.get("whole_median_s")
    return None


def _peers(summaries: list[Summary], task: str, busy: int) -> dict[str, float]:
    """Median whole fit of each of ``task``'s peers that ran at ``busy``, by library."""
    return {library_of(s["system"]): s["whole_median_s"] for s in summaries
            if s["task"] == task and s["busy"] == busy and s.get("whole_median_s")
            and library_of(s["system"]) != "distboost"}


def best_peer(summaries: list[Summary], task: str, busy: int) -> str | None:
    """The library of ``task``'s fastest peer at ``busy`` (None if none ran)."""
    peers = _peers(summaries, task, busy)
    return min(peers, key=peers.__getitem__) if peers else None


def ratios(summaries: list[Summary], task: str, busy: int) -> dict[str, float]:
    """distboost's median whole fit over the fastest peer's (key "best peer") and over
    each peer's that ran (key: its library), for ``task`` at ``busy``."""
    distboost = _median(summaries, f"{task}-distboost", busy)
    peers = _peers(summaries, task, busy)
    if distboost is None or not peers:
        return {}
    best = peers[best_peer(summaries, task, busy)]
    return {"best peer": distboost / best,
            **{peer: distboost / seconds for peer, seconds in peers.items()}}


def _fmt(value: float | None, digits: int) -> str:
    """A number with fixed decimals, or an em dash."""
    return NONE if value is None else f"{value:.{digits}f}"


def _whole(summary: Summary) -> str:
    """Median [min–max] whole fit."""
    if not summary["runs"]:
        return NONE
    return (f"{summary['whole_median_s']:.3f} [{summary['whole_min_s']:.3f}–"
            f"{summary['whole_max_s']:.3f}]")


def level_table(summaries: list[Summary], busy: int) -> list[str]:
    """Per task and system at one busy level: whole fit, test error, distboost ÷ it;
    then distboost ÷ the best peer per task."""
    lines = [("| task | system | status | runs | whole fit s, median [min–max] | test error "
              "| distboost ÷ this |"), "|---|---|---|---|---|---|---|"]
    for summary in (s for s in summaries if s["busy"] == busy):
        task, library = summary["task"], library_of(summary["system"])
        ratio = ratios(summaries, task, busy).get(library)
        lines.append(f"| {task} | {library} | {summary['status']} | {summary['runs']} | "
                     f"{_whole(summary)} | {_fmt(summary.get('test_error'), 4)} | "
                     f"{_fmt(ratio, 2)} |")
    lines += ["", "| task | best peer | distboost ÷ best peer |", "|---|---|---|"]
    for task in TASKS:
        if ratio := ratios(summaries, task, busy).get("best peer"):
            lines.append(f"| {task} | {best_peer(summaries, task, busy)} | {ratio:.2f} |")
    return lines


def busy_table(summaries: list[Summary], busy: int) -> list[str]:
    """Each of distboost's ratios quiet and at ``busy``, busy ÷ quiet; then each system's
    own slowdown."""
    lines = [(f"| task | distboost ÷ | quiet | busy {busy} | busy ÷ quiet | "
              "no worse busy |"), "|---|---|---|---|---|---|"]
    for task in TASKS:
        quiet, loaded = ratios(summaries, task, 0), ratios(summaries, task, busy)
        for peer, value in loaded.items():
            before = quiet.get(peer)
            change = None if before is None else value / before
            verdict = NONE if change is None else ("yes" if change <= 1.0 else "NO")
            lines.append(f"| {task} | {_peer_label(summaries, task, peer, busy)} | "
                         f"{_fmt(before, 2)} | {value:.2f} | {_fmt(change, 2)} | {verdict} |")
    lines += ["", f"| task | system | quiet s | busy {busy} s | busy ÷ quiet |",
              "|---|---|---|---|---|"]
    for summary in (s for s in summaries if s["busy"] == busy and s["runs"]):
        quiet = _median(summaries, summary["system"], 0)
        change = None if quiet is None else summary["whole_median_s"] / quiet
        lines.append(f"| {summary['task']} | {library_of(summary['system'])} | "
                     f"{_fmt(quiet, 3)} | {summary['whole_median_s']:.3f} | "
                     f"{_fmt(change, 2)} |")
    return lines


def _peer_label(summaries: list[Summary], task: str, peer: str, busy: int) -> str:
    """A peer's name, or "best peer (QUIET'S / BUSY'S)" naming the fastest peers."""
    if peer != "best peer":
        return peer
    names = _unique([best_peer(summaries, task, 0), best_peer(summaries, task, busy)])
    return f"best peer ({' / '.join(str(name) for name in names)})"


def _unique(values: Any) -> list[Any]:
    """The values without repeats, in first-seen order."""
    return list(dict.fromkeys(values))


def _level_title(busy: int) -> str:
    """"Quiet" or "Beside N busy process(es)"."""
    return "Quiet (no busy process)" if busy == 0 else \
        f"Beside {busy} busy process{'es' * (busy != 1)}"


def render(summaries: list[Summary], meta: dict[str, Any]) -> str:
    """The markdown report: context, one table per busy level, busy ÷ quiet, notes."""
    settings = meta["settings"]
    lines = [(f"## Small data: spam-shaped, {meta['train_rows']:,} training rows × "
              f"{len(spam_like.FEATURES)} features"), "", _context(meta), ""]
    for busy in settings["busy"]:
        lines += [f"### {_level_title(busy)}", "", *level_table(summaries, busy), ""]
    for busy in (b for b in settings["busy"] if b and 0 in settings["busy"]):
        lines += [f"### Busy {busy} ÷ quiet", "", *busy_table(summaries, busy), ""]
    return "\n".join([*lines, "### Notes", "", *notes(summaries), ""])


def _context(meta: dict[str, Any]) -> str:
    """What was fitted, how, where and when."""
    settings = meta["settings"]
    return (f"Data: `spam_like.py`, a stand-in shaped like ESL's spam data (not the real "
            f"data): {meta['train_rows']:,} training and {meta['test_rows']:,} test rows "
            f"(rows scale {settings['rows_scale']:g}). Gradient boosting {settings['rounds']} "
            f"rounds of depth 4, learning rate 0.1; random forest {settings['trees']} fully "
            f"grown trees, √d features per node; AdaBoost (SAMME) {settings['stumps']} "
            f"stumps. n_jobs = {settings['threads']} thread(s) for every system (and its "
            f"process's OMP_NUM_THREADS, NUMBA_NUM_THREADS); {settings['repeats']} repeat(s), "
            f"each fit a fresh process after a warm-up fit ({WARM_ROWS} rows, {WARM_SIZE} "
            f"rounds or trees), systems alternating; busy levels {settings['busy']}. "
            f"Whole fit = `fit`, in seconds. {_machine.sentence(meta)} Commit "
            f"{meta['commit']}; {meta['date']}.")


NOTES = [
    ("- distboost ÷ this: distboost's median whole fit over this system's, same task and "
     "busy level (< 1: distboost is faster); best peer: the task's fastest peer at that level."),
    ("- busy ÷ quiet of a ratio > 1: distboost lost ground to that peer when the machine was "
     "busy; of a system's time: its own slowdown."),
    "- scikit-learn's AdaBoostClassifier has no n_jobs: it runs in one thread.",
]


def notes(summaries: list[Summary]) -> list[str]:
    """Definitions, errors (once) and library versions."""
    errors = _unique(f"- {s['system']}: {error}" for s in summaries for error in s["errors"])
    versions = _unique(f"{library_of(s['system'])} {s['version']}"
                       for s in summaries if s.get("version"))
    return [*NOTES, *errors, f"- versions: {', '.join(versions) or NONE}"]


def _int_list(text: str) -> list[int]:
    """Parse "0,1": non-negative integers."""
    values = [int(value) for value in text.split(",") if value.strip()]
    if not values or min(values) < 0:
        raise argparse.ArgumentTypeError(f"expected counts like 0,1, got {text!r}")
    return values


def _system_list(text: str) -> list[str]:
    """Parse ``--systems``: known system names."""
    systems = [name.strip() for name in text.split(",") if name.strip()]
    if not systems or set(systems) - set(SYSTEMS):
        raise argparse.ArgumentTypeError(f"choose from {','.join(SYSTEMS)}, got {text!r}")
    return systems


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options; see ``python bench/small.py --help``."""
    parser = argparse.ArgumentParser(description="Small data (spam-shaped), quiet and busy.")
    parser.add_argument("--systems", type=_system_list, default=list(SYSTEMS),
                        help=f"comma-separated subset of {','.join(SYSTEMS)}")
    parser.add_argument("--threads", type=int, default=2, help="n_jobs of every system")
    parser.add_argument("--busy", type=_int_list, default=[0, 1],
                        help="busy processes beside the runs, e.g. 0,1 (default)")
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per system")
    parser.add_argument("--rounds", type=int, default=200, help="gradient boosting rounds")
    parser.add_argument("--trees", type=int, default=100, help="random forest trees")
    parser.add_argument("--stumps", type=int, default=400, help="AdaBoost stumps")
    parser.add_argument("--rows-scale", type=float, default=1.0,
                        help="shrink (or grow) the training and test rows by this factor")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    parser.add_argument("--out", nargs="?", const="", default=None, metavar="NAME",
                        help="also write bench/results/NAME.md and NAME.json "
                             "(NAME defaults to small-DATE)")
    parser.add_argument("--results-dir", type=Path, default=RESULTS_DIR,
                        help="folder of --out (default bench/results)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, default=0, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Run every set, print the report, optionally save it (``--child``: one fit)."""
    args = _parse_args(argv)
    if args.child:
        print(json.dumps(fit_one(args.child, args.size, args.threads, args.rows_scale)),
              flush=True)
        return
    load_before = os.getloadavg()[0]
    records = run_all(args)
    summaries = [summarize(records, system, busy) for busy in args.busy
                 for system in args.systems]
    X_train, _, X_test, _ = spam_like.train_test(args.rows_scale)
    meta = {"settings": {key: value for key, value in vars(args).items()
                         if key not in ("results_dir", "out", "child", "size")},
            "train_rows": len(X_train), "test_rows": len(X_test), **_machine.describe(),
            "commit": git_commit(), "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
            "load_average_before": load_before, "load_average_after": os.getloadavg()[0]}
    report = render(summaries, meta)
    print(report)
    if args.out is not None:
        name = args.out or f"small-{time.strftime('%Y%m%d-%H%M%S')}"
        payload = {"meta": meta, "summaries": summaries, "records": records}
        print(f"wrote {write_results(name, report, payload, args.results_dir)}",
              file=sys.stderr)


if __name__ == "__main__":
    main()
