"""Fits as the dashboard sees them: the ``distboost`` events (see ``training.events``)
of each fit, gathered, with the series the page draws. Pure Python, no Bokeh."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

SPLIT = ("compute", "transfer", "driver")
"""Parts of a round's time: the slowest worker's own compute, the rest of the
waves the driver waited for (scheduling and transfer), and the driver's own work."""
_WAVES = ("round_start", "histograms")
_EXTRAS = ("estimator_weight", "trees_grown")
"""Per-round values some learners add (AdaBoost's alpha, a forest's tree count)."""
MAIN_PARAMS = ("n_estimators", "learning_rate", "max_depth", "max_leaf_nodes", "loss",
               "subsample", "colsample_bytree", "reg_lambda", "gamma", "min_child_weight",
               "max_features", "bootstrap", "algorithm", "criterion", "random_state")


@dataclass
class FitView:
    """One fit's events: its start, its rounds in order, and its end."""

    fit: str
    start: dict = field(default_factory=dict)
    rounds: list = field(default_factory=list)
    end: dict | None = None
    stall: dict | None = None  # the last ``stall`` event, until the fit moves on

    def add(self, event: dict) -> None:
        kind = event.get("kind")
        if kind == "fit-start":
            self.start = event
        elif kind == "round":
            self.rounds.append(event)
        elif kind == "fit-end":
            self.end = event
        if kind == "stall":
            self.stall = event
        elif kind in ("fit-start", "round", "fit-end"):
            self.stall = None

    @property
    def label(self) -> str:
        state = "done" if self.end is not None else "running"
        return f"{self.start.get('estimator', 'fit')} {self.fit} ({state})"

    def curves(self) -> dict[str, tuple[list, list]]:
        """``"validation_0 logloss" -> (rounds, values)`` for every named metric."""
        out: dict[str, tuple[list, list]] = {}
        for event in self.rounds:
            for name, metrics in event.items():
                if not isinstance(metrics, dict) or name == "timings":
                    continue
                for metric, value in metrics.items():
                    xs, ys = out.setdefault(f"{name} {metric}", ([], []))
                    xs.append(event["round"])
                    ys.append(value)
        return out

    def extras(self) -> dict[str, tuple[list, list]]:
        """Learner-specific per-round values (``estimator_weight``, ``trees_grown``)."""
        out: dict[str, tuple[list, list]] = {}
        for event in self.rounds:
            for name in _EXTRAS:
                if name in event:
                    xs, ys = out.setdefault(name, ([], []))
                    xs.append(event["round"])
                    ys.append(event[name])
        return out

    def per_round(self) -> dict[str, list]:
        """Columns by round: time and its split (seconds), trees and leaves."""
        cols: dict[str, list] = {k: [] for k in ("round", "round_time", *SPLIT,
                                                 "n_trees", "n_leaves")}
        for event in self.rounds:
            timings = event.get("timings", {})
            waves = sum(timings.get(k, 0.0) for k in _WAVES)
            compute = min(timings.get("kernels", 0.0), waves)
            total = event.get("round_time", 0.0)
            cols["round"].append(event["round"])
            cols["round_time"].append(total)
            cols["compute"].append(compute)
            cols["transfer"].append(waves - compute)
            cols["driver"].append(max(total - waves, 0.0))
            cols["n_trees"].append(event.get("n_trees", 0))
            cols["n_leaves"].append(event.get("n_leaves", 0))
        return cols

    def progress(self) -> dict:
        """Round i of n, elapsed, estimated remaining seconds, best round."""
        n = self.start.get("n_rounds")
        first = self.start.get("first_round", 0)
        done = self.rounds[-1]["round"] + 1 if self.rounds else first
        elapsed = (self.end or (self.rounds[-1] if self.rounds else {})).get("elapsed", 0.0)
        remaining = 0.0 if self.end is not None or not n else math.nan
        if self.end is None and n and done > first:
            remaining = elapsed / (done - first) * (n - done)
        best = (self.end or (self.rounds[-1] if self.rounds else {})).get("best_round")
        return {"round": done, "n_rounds": n, "elapsed": elapsed, "remaining": remaining,
                "best_round": best, "finished": self.end is not None}

    def main_params(self) -> dict:
        params = self.start.get("params", {})
        shown = {k: params[k] for k in MAIN_PARAMS if params.get(k) is not None}
        return shown or params


class FitLog:
    """The fits of a scheduler's ``distboost`` events; ``version`` counts them."""

    def __init__(self):
        self.fits: dict[str, FitView] = {}
        self.version = 0

    def add(self, event: dict) -> None:
        fit = event.get("fit") if isinstance(event, dict) else None
        if fit is not None:
            self.fits.setdefault(fit, FitView(fit)).add(event)
            self.version += 1
