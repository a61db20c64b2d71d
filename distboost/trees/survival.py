"""Survival objectives as losses: XGBoost's ``survival:aft`` (Barnwal, Cho &
Hocking 2022) and ``survival:cox`` (Cox 1972, Breslow 1974 for ties), and
their metrics ``aft-nloglik``, ``cox-nloglik`` and Harrell's ``cindex``.

Targets, row by row:

- AFT reads ``IntervalTarget(lower, upper)``: lower == upper uncensored,
  upper = +inf right-censored, lower = 0 left-censored, else interval-censored
  (XGBoost's ``label_lower_bound`` / ``label_upper_bound``).
- Cox reads y as XGBoost does: |y| the time, y > 0 an event, y < 0 censored
  at -y.

AFT is pointwise: each row's g, h need only its own label and margin. Cox's
need the risk sets R_k = sum over rows still at risk at event time t_k of
exp(f), which span every partition. ``CoxLoss`` holds the fit's distinct
event times (found once, before the first round) and, for a round, the
cumulative sums A_k = sum_{j <= k} d_j / R_j and B_k = sum_{j <= k}
d_j / R_j^2 that ``training.survival.cox_round`` computes from every
partition's fixed-point bin sums; a row's g and h then need only A and B
at its own time (``kernels.survival.cox_gradients``).
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..kernels import exact
from ..kernels import survival as ks
from .losses import Loss

DISTRIBUTIONS = {"normal": ks.NORMAL, "logistic": ks.LOGISTIC, "extreme": ks.EXTREME}
OBJECTIVES = ("survival:aft", "survival:cox")
METRICS = ("aft-nloglik", "cox-nloglik", "cindex")


class IntervalTarget(NamedTuple):
    """An AFT target, row by row: the bounds of each row's time."""

    lower: np.ndarray  # (n_rows,) float64, >= 0
    upper: np.ndarray  # (n_rows,) float64, >= lower, +inf: right-censored


def times_events(y) -> tuple[np.ndarray, np.ndarray]:
    """(time, event) of a target: Cox's signed y, or an AFT interval (time: the
    lower bound, or the upper for a left-censored row; event: lower == upper)."""
    if isinstance(y, IntervalTarget):
        lower, upper = np.asarray(y.lower, np.float64), np.asarray(y.upper, np.float64)
        time = np.where(lower > 0, lower, upper)
        return time, (lower == upper).astype(np.float64)
    y = np.asarray(y, np.float64)
    return np.abs(y), (y > 0).astype(np.float64)


_ROW_BINS: dict[int, tuple] = {}
"""id(y) -> (weak reference to y, event times, bins, events): each label array's
rows' event-time bins, kept while the array lives (a shard's ``y``)."""


def row_event_bins(y, event_times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(bin, event) of each row of Cox's signed ``y``: the index of the last event
    time <= the row's time (-1: before the first; ``kernels.survival.event_bins``)
    and 1.0 for an event, else 0.0.

    A fit's rounds ask for the same rows' bins at the same event times; they are
    searched once and kept while ``y`` lives (a shard's labels), checked against
    the event times asked for each time."""
    hit = _ROW_BINS.get(id(y))
    if hit is not None and hit[0]() is y and (
            hit[1] is event_times or np.array_equal(hit[1], event_times)):
        return hit[2], hit[3]
    time, event = times_events(y)
    bins = np.empty(len(time), np.int64)
    ks.event_bins(time, event_times, bins)
    if isinstance(y, np.ndarray):
        key = id(y)
        ref = weakref.ref(y, lambda _, key=key: _ROW_BINS.pop(key, None))
        _ROW_BINS[key] = (ref, event_times, bins, event)
    return bins, event


class AFTLoss(Loss):
    """``survival:aft``: the negative log-likelihood of log T = f(x) + sigma Z
    (Barnwal, Cho & Hocking 2022, eqs. 2-5), g and h as XGBoost's (eqs. 6-8,
    its limits and clipping: ``kernels.survival``). Its metric
    ``aft-nloglik`` is the mean of this loss at the model's sigma (XGBoost's
    own metric evaluates at sigma 1 unless told otherwise).

    Parameters
    ----------
    distribution : {"normal", "logistic", "extreme"}
        Z's distribution (XGBoost's ``aft_loss_distribution``).
    sigma : float > 0
        Its scale (``aft_loss_distribution_scale``).
    """

    name, metric_name = "survival:aft", "aft-nloglik"
    gradient_range_pass = False

    def __init__(self, distribution: str = "normal", sigma: float = 1.0):
        if distribution not in DISTRIBUTIONS:
            raise ValueError(f"aft_loss_distribution must be one of {tuple(DISTRIBUTIONS)}, "
                             f"got {distribution!r}")
        if not (isinstance(sigma, (int, float)) and math.isfinite(sigma) and sigma > 0):
            raise ValueError(f"aft_loss_distribution_scale must be a finite number > 0, got "
                             f"{sigma!r}")
        self.distribution, self.sigma = distribution, float(sigma)

    def __reduce__(self):
        return AFTLoss, (self.distribution, self.sigma)

    def _rows(self, y: IntervalTarget, f, w):
        n = len(f)
        loss, g, h = np.empty(n), np.empty(n), np.empty(n)
        ks.aft_rows(DISTRIBUTIONS[self.distribution], np.ascontiguousarray(y.lower, np.float64),
                    np.ascontiguousarray(y.upper, np.float64), np.ascontiguousarray(f, np.float64),
                    self.sigma, np.ascontiguousarray(w, np.float64), loss, g, h)
        return loss, g, h

    def gradients(self, y, raw, w):
        _, g, h = self._rows(y, raw[0], w)
        return g[None, :], h[None, :]

    def gradient_bounds(self, y_absmax, w_max, margin_absmax):
        """|g| <= 15 w and h <= 15 w (XGBoost's clipping)."""
        return ks.MAX_GRAD * w_max, ks.MAX_HESS * w_max

    def pointwise(self, y, raw):
        return self._rows(y, raw[0], np.ones(len(raw[0])))[0]

    def prediction(self, raw):
        """The predicted time exp(f)."""
        return np.exp(raw[0])


class CoxLoss(Loss):
    """``survival:cox``: the negative log partial likelihood with Breslow's ties.

    Parameters
    ----------
    event_times : ndarray of float64, sorted, distinct
        The training rows' event times (y > 0), once each.
    event_counts : ndarray of int64
        d_k: the events at each of them.
    tables : (f_max, A, B) or None
        This round's: the largest margin (exp(f - f_max) <= 1) and the
        cumulative sums of d_k / R~_k and d_k / R~_k^2, R~_k = R_k exp(-f_max).

    Sample weights multiply each row's g and h; the risk sets count every
    row once (XGBoost's convention). g and h are the exact derivatives of
    Breslow's partial likelihood: a row's sums A, B include every event at
    its own time. XGBoost's loop (``CoxRegression::GetGradient``) adds 1/R
    event by event in sorted order, so among rows with tied times it gives
    the earlier-sorted ones partial sums; without ties the two agree.
    """

    name, metric_name = "survival:cox", "cox-nloglik"
    gradient_range_pass = True
    risk_sets = True

    def __init__(self, event_times=None, event_counts=None, tables=None):
        self.event_times = (np.zeros(0) if event_times is None
                            else np.ascontiguousarray(event_times, np.float64))
        self.event_counts = (np.zeros(len(self.event_times), np.int64) if event_counts is None
                             else np.asarray(event_counts, np.int64))
        self.tables = tables

    def __reduce__(self):
        return CoxLoss, (self.event_times, self.event_counts, self.tables)

    def with_tables(self, f_max: float, a: np.ndarray, b: np.ndarray) -> CoxLoss:
        return CoxLoss(self.event_times, self.event_counts, (float(f_max), a, b))

    def gradients(self, y, raw, w, where: str = "", row_offset: int = 0):
        if self.tables is None:
            raise RuntimeError("CoxLoss.gradients needs the round's risk-set tables "
                               "(training.survival.cox_round)")
        f_max, a, b = self.tables
        bins, event = row_event_bins(y, self.event_times)
        f = np.ascontiguousarray(raw[0], np.float64)
        g, h = np.empty((1, len(f))), np.empty((1, len(f)))
        ks.cox_gradients(bins, event, f, f_max, a, b, np.ascontiguousarray(w, np.float64),
                         g[0], h[0])
        return g, h

    def pointwise(self, y, raw):
        raise NotImplementedError("Cox's loss is a sum over risk sets (CoxNLogLik)")

    def prediction(self, raw):
        """The hazard ratio exp(f)."""
        return np.exp(raw[0])


def cox_tables(sums: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A, B from the risk-set bins: ``sums`` (K, N_LIMBS) fixed-point sums of
    exp(f - f_max) per event-time bin, ``counts`` d_k. The suffix sums of the
    bins are R~_k, added as integers (exact), then converted to float once."""
    risk = ks.fixed_to_float(np.cumsum(np.asarray(sums)[::-1], axis=0)[::-1])
    d = np.asarray(counts, np.float64)
    empty = (d > 0) & (risk <= 0)
    if empty.any():
        raise FloatingPointError(
            f"Cox's risk set at event time index {int(np.flatnonzero(empty)[0])} sums to 0 at "
            f"the fixed point's resolution: its rows' margins lie more than 133 below the "
            f"largest (hazard ratios beyond e^133); lower learning_rate or raise reg_lambda / "
            f"min_child_weight")
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(d > 0, d / risk, 0.0)
        b = np.where(d > 0, d / (risk * risk), 0.0)
    return np.cumsum(a), np.cumsum(b)


# ---------------------------------------------------------------- metrics
def _rows_partial(time, event, f, w):
    keep = np.asarray(w) > 0
    order = np.lexsort((w[keep], f[keep], event[keep], time[keep]))
    return tuple(np.asarray(a)[keep][order] for a in (time, event, f, w))


@dataclass(frozen=True)
class _WholeSetMetric:
    """A metric of every row at once: partial = each row's (time, event, f, w),
    kept rows with w > 0, sorted, so the value depends on the rows only (as
    ``metrics.AUC``); meant for evaluation sets of moderate size."""

    name: str
    higher_is_better = False

    def partial(self, y, raw, w):
        time, event = times_events(y)
        return _rows_partial(time, event, np.asarray(raw[0], np.float64), np.asarray(w))

    def merge(self, partials):
        cat = [np.concatenate([p[i] for p in partials]) for i in range(4)]
        return _rows_partial(*cat[:3], cat[3])


@dataclass(frozen=True)
class CoxNLogLik(_WholeSetMetric):
    """``cox-nloglik``: -(1/D) sum over events i of [f_i - log sum_{j: t_j >= t_i}
    exp(f_j)] (Breslow), D the number of events (XGBoost's ``EvalCox``)."""

    name: str = "cox-nloglik"

    def value(self, partial) -> float:
        time, event, f, _ = partial
        if not event.any():
            return float("nan")
        f_max = float(f.max())
        e = np.exp(f - f_max)
        starts = np.searchsorted(time, time, side="left")  # rows sorted by time
        risk = np.cumsum(e[::-1])[::-1][starts]  # each row's risk-set sum (time >= its own)
        ev = event > 0
        total = exact.exact_sum(f[ev] - f_max - np.log(risk[ev]))
        return -exact.to_float(total) / int(ev.sum())


@dataclass(frozen=True)
class ConcordanceIndex(_WholeSetMetric):
    """``cindex``: Harrell's C (Harrell et al. 1982) of the risk score; for Cox
    the risk is f, for AFT -f (a longer predicted time is a lower risk).
    Comparable pairs: time_i < time_j with an event at time_i; weight w_i w_j."""

    name: str = "cindex"
    higher_is_better = True
    risk_sign: float = 1.0

    def value(self, partial) -> float:
        time, event, f, w = partial
        num, den = ks.concordance(time, event, self.risk_sign * f, w)
        return float(num / den) if den > 0 else float("nan")
