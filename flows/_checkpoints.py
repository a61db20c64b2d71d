"""Checkpoints of a training run: the files, their metric history, and the
callback that writes them while the estimator fits.

A checkpoint of ``n`` rounds is ``checkpoints/round-NNNNN.json`` (a model
file; written atomically, after its ``round-NNNNN.history.json``). Early
stopping is the library's: a fit continued from a checkpoint carries the
checkpoint's metric history, so it stops where an uninterrupted fit does.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from distboost.callbacks import TrainingCheckPoint
from distboost.metrics import watched_set
from distboost.model_file import write_atomic
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


def save_checkpoint(est: Any, output: Path, rounds: int, history: History) -> Path:
    """Write the model and its history; the model file appears last, atomically."""
    path = output / "checkpoints" / f"round-{rounds:05d}.json"
    write_atomic(history_path(path), json.dumps(history) + "\n")
    est.save_model(path)  # atomic: a temporary file renamed into place
    return path


def watched_metric(history: History) -> tuple[str, list[float]] | None:
    """The name and values of the metric early stopping watches (the last metric
    of the last validation set), or None without one."""
    watched = watched_set(history)
    if not watched or not history[watched]:
        return None
    name = list(history[watched])[-1]
    return name, list(history[watched][name])


def watched_values(history: History) -> list[float]:
    """The values early stopping watches (``distboost.metrics.watched_set``:
    the last metric of the last validation set), or [] without one."""
    watched = watched_set(history)
    return list(history[watched].values())[-1] if watched and history[watched] else []


# ------------------------------------------------------------------ callback
class RunCheckpoints(TrainingCheckPoint):
    """Writes a run's checkpoints while the estimator fits (a distboost
    ``TrainingCallback``): every ``every`` rounds and at the run's last round,
    each with the history so far (the whole run's: a continued fit carries
    its checkpoint's).

    Parameters
    ----------
    output : Path
        The run folder (checkpoints go to ``output / "checkpoints"``).
    every : int
        Rounds between checkpoints.
    total : int
        Rounds of the whole run.
    on_round : callable ``(epoch, history)``, optional
    on_checkpoint : callable ``(path, n_rounds)``, optional

    Attributes
    ----------
    last : Path or None
        The last checkpoint written.
    """

    def __init__(self, output: Path, every: int, total: int,
                 on_round: Callable[[int, History], None] | None = None,
                 on_checkpoint: Callable[[Path, int], None] | None = None):
        super().__init__(output / "checkpoints", name="round", interval=every)
        self.total, self.history = total, {}
        self.on_round, self.on_checkpoint = on_round, on_checkpoint
        self.last: Path | None = None

    def after_iteration(self, model: Any, epoch: int, evals_log: dict) -> bool:
        self.history = evals_log
        if self.on_round is not None:
            self.on_round(epoch, self.history)
        n_rounds = epoch + 1
        if n_rounds % self.interval == 0 or n_rounds == self.total:
            self.save(model, n_rounds)
        return False

    def save(self, model: Any, n_rounds: int) -> Path:
        path = self.path(n_rounds)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(history_path(path), json.dumps(self.history) + "\n")
        super().save(model, n_rounds)
        self.last = path
        if self.on_checkpoint is not None:
            self.on_checkpoint(path, n_rounds)
        return path
