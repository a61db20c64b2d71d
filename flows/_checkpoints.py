"""Checkpoints of a training run: the files, their metric history, the callback
that writes them while the estimator fits, and early stopping over the run.

A checkpoint of ``n`` rounds is ``checkpoints/round-NNNNN.json`` (a model
file; written atomically, after its ``round-NNNNN.history.json``). Early
stopping looks at the history of the whole run, resumed parts included, so a
resumed run stops where an uninterrupted one does.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from distboost.callbacks import TrainingCheckPoint
from distboost.metrics import higher_is_better
from flows._cluster import run_logger, say

CHECKPOINT = re.compile(r"round-(\d{5})\.json$")

History = dict[str, dict[str, list[float]]]
"""Metrics by round: ``{"validation_0": {"logloss": [...]}, "training": {...}}``."""


# ---------------------------------------------------------------------- files
def last_checkpoint(output: Path) -> tuple[int, Path | None]:
    """The highest round with a saved checkpoint (0, None if there is none)."""
    found = [
        (int(m.group(1)), p)
        for p in (output / "checkpoints").glob("round-*.json")
        if (m := CHECKPOINT.search(p.name))
    ]
    return max(found) if found else (0, None)


def last_good_checkpoint(output: Path) -> tuple[int, Path | None]:
    """The highest checkpoint that loads; damaged ones (e.g. truncated when the
    machine went down) are renamed ``*.damaged`` and the one before is used."""
    from distboost import ModelFileError, load_model

    while True:
        done, checkpoint = last_checkpoint(output)
        if checkpoint is None:
            return done, None
        try:
            load_model(checkpoint)
            return done, checkpoint
        except ModelFileError as exc:
            damaged = checkpoint.with_name(checkpoint.name + ".damaged")
            os.replace(checkpoint, damaged)
            say(f"checkpoint {checkpoint.name} is damaged ({exc}); kept as {damaged.name}, "
                f"falling back to the previous checkpoint")
            run_logger().warning("damaged checkpoint %s renamed to %s", checkpoint, damaged)


def history_path(checkpoint: Path) -> Path:
    return checkpoint.with_name(checkpoint.name.replace(".json", ".history.json"))


def load_history(checkpoint: Path | None) -> History:
    if checkpoint is None or not history_path(checkpoint).is_file():
        return {}
    return json.loads(history_path(checkpoint).read_text())


def merge_history(history: History, new: dict, n_rounds: int) -> History:
    """Append the last ``n_rounds`` values of each metric in ``new``."""
    merged = {k: {m: list(v) for m, v in d.items()} for k, d in history.items()}
    for name, metrics in (new or {}).items():
        for metric, values in metrics.items():
            merged.setdefault(name, {}).setdefault(metric, []).extend(list(values)[-n_rounds:])
    return merged


def save_checkpoint(est: Any, output: Path, rounds: int, history: History) -> Path:
    """Write the model and its history; the model file appears last, atomically."""
    path = output / "checkpoints" / f"round-{rounds:05d}.json"
    history_path(path).write_text(json.dumps(history) + "\n")
    est.save_model(path)  # atomic: a temporary file renamed into place
    return path


# -------------------------------------------------------------- early stopping
def watched_metric(history: History) -> list[float]:
    """The values early stopping watches: the last metric of the last validation
    set (the library's rule for ``eval_metric`` lists)."""
    return _watched(history)[1]


def _watched(history: History) -> tuple[str | None, list[float]]:
    """(name, values) of the watched metric; (None, []) without a validation set."""
    sets = sorted((n for n in history if n.startswith("validation_") and history[n]),
                  key=lambda n: int(n.rsplit("_", 1)[1]))
    if not sets:
        return None, []
    name = list(history[sets[-1]])[-1]
    return name, history[sets[-1]][name]


def best_round(history: History, greater_is_better: bool | None = None) -> int | None:
    """0-based round of the best watched metric (the lowest, the highest for AUC
    or for a metric of the user's that says so, ``greater_is_better``; the
    first if tied), or None."""
    name, values = _watched(history)
    if not values:
        return None
    greater = higher_is_better(name) if greater_is_better is None else greater_is_better
    sign = -1.0 if greater else 1.0
    return min(range(len(values)), key=lambda i: sign * values[i])


def patience_exhausted(history: History, patience: int | None,
                       greater_is_better: bool | None = None) -> bool:
    """Whether ``patience`` rounds have passed without improving on the best
    (the library's rule for ``early_stopping_rounds``, over the whole run)."""
    best = best_round(history, greater_is_better)
    return bool(patience) and best is not None and len(watched_metric(history)) - 1 - best >= patience


def run_model(model: Any, n_estimators: int, history: History, best: int | None = None) -> Any:
    """The model a run ends with: its last checkpoint's ``model`` with the run's
    ``n_estimators`` and whole metric history (a resumed run's own fit knew
    only its part), and with early stopping only the rounds up to ``best``."""
    from distboost.model_file import model_from_dict, model_to_dict

    d = model_to_dict(model)
    d["params"]["n_estimators"] = n_estimators
    d["evals_result"] = history
    if best is not None:
        d["trees"] = d["trees"][: best + 1]
        d["best_iteration"] = best
    return model_from_dict(d)


# ------------------------------------------------------------------ callback
class RunCheckpoints(TrainingCheckPoint):
    """Writes a run's checkpoints while the estimator fits (a distboost
    ``TrainingCallback``): every ``every`` rounds, at the run's last round, and
    at the round early stopping stops, each with the history so far.

    Parameters
    ----------
    output : Path
        The run folder (checkpoints go to ``output / "checkpoints"``).
    every : int
        Rounds between checkpoints.
    total : int
        Rounds of the whole run.
    history : dict
        Metrics of the rounds before this fit (from the resumed checkpoint).
    patience : int, optional
        Early stopping rounds, counted over the whole run.
    on_round : callable ``(epoch, history)``, optional
    on_checkpoint : callable ``(path, n_rounds)``, optional
    greater_is_better : bool, optional
        The watched metric's direction when it is the user's (``best_round``).

    Attributes
    ----------
    last : Path or None
        The last checkpoint written.
    """

    def __init__(self, output: Path, every: int, total: int, history: History,
                 patience: int | None = None,
                 on_round: Callable[[int, History], None] | None = None,
                 on_checkpoint: Callable[[Path, int], None] | None = None,
                 greater_is_better: bool | None = None):
        super().__init__(output / "checkpoints", name="round", interval=every)
        self.greater_is_better = greater_is_better
        self.total, self.history, self.patience = total, history, patience
        self.on_round, self.on_checkpoint = on_round, on_checkpoint
        self.last: Path | None = None

    def after_iteration(self, model: Any, epoch: int, evals_log: dict) -> bool:
        self.history = merge_history(self.history, evals_log, 1)
        stop = patience_exhausted(self.history, self.patience, self.greater_is_better)
        if self.on_round is not None:
            self.on_round(epoch, self.history)
        n_rounds = epoch + 1
        if n_rounds % self.interval == 0 or n_rounds == self.total or stop:
            self.save(model, n_rounds)
        return stop

    def save(self, model: Any, n_rounds: int) -> Path:
        path = self.path(n_rounds)
        path.parent.mkdir(parents=True, exist_ok=True)
        history_path(path).write_text(json.dumps(self.history) + "\n")
        super().save(model, n_rounds)
        self.last = path
        if self.on_checkpoint is not None:
            self.on_checkpoint(path, n_rounds)
        return path
