"""Calibration of a survival model on held-out data: its predicted survival
against the Kaplan-Meier estimate (Kaplan & Meier 1958), group by group of
predicted risk, the check Royston & Altman (2013, "External validation of a
Cox prognostic model: principles and methods", BMC Med. Res. Methodol. 13:33)
describe: rows split into quantile groups of the risk, and in each group the
observed (Kaplan-Meier) and the mean predicted survival compared over time.
Public as ``distboost.inspection.survival_by_risk_group``.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
import pandas as pd

from ..inputs import survival as labels
from ..trees.survival_curves import check_times, kaplan_meier

DEFAULT_QUANTILES = np.linspace(0.1, 0.9, 9)
"""Default time grid: these quantiles of the held-out event times."""


def survival_by_risk_group(est, X, y, event=None, *, n_groups: int = 4,
                           times=None) -> pd.DataFrame:
    """Predicted survival against Kaplan-Meier by quantile group of predicted risk.

    Parameters
    ----------
    est : fitted GradientBoostingSurvivalRegressor
        Cox or AFT; the risk is f(x) for Cox and -f(x) for AFT (a longer
        predicted time is a lower risk).
    X : array-like of shape (n, d), in memory
        Held-out rows.
    y : array-like of shape (n,)
        Their times; with ``event`` omitted, XGBoost's signed form (y < 0:
        censored at -y). Right-censored or exact times only, as Kaplan-Meier's.
    event : array-like of shape (n,), optional
        1: the event happened at y, 0: censored at y.
    n_groups : int >= 1, default 4
        Rows sorted by risk (stable) and split into this many groups of equal
        size (the first ``n % n_groups`` one row larger); group 0 is the lowest
        risk.
    times : array-like of times >= 0, optional
        The grid; default: the 10 %, 20 %, ..., 90 % quantiles of the held-out
        event times.

    Returns
    -------
    pandas.DataFrame
        One row per (group, time): ``group``, ``time``, ``n`` (rows in the
        group), ``events`` (events in the group), ``at_risk`` (rows of the
        group with time >= this time), ``km`` (the group's Kaplan-Meier
        estimate) and ``predicted`` (the mean over the group's rows of
        ``est.predict_survival_function``).
    """
    if not hasattr(est, "predict_survival_function"):
        raise TypeError(f"survival_by_risk_group needs a fitted survival model "
                        f"(GradientBoostingSurvivalRegressor); got {type(est).__name__}")
    signed = (labels.check_cox_target(y, " (held-out)") if event is None
              else labels.cox_signed_time(y, event, " (held-out)"))
    time, observed = np.abs(signed), signed > 0
    if (not isinstance(n_groups, Integral) or isinstance(n_groups, bool) or n_groups < 1
            or n_groups > len(time)):
        raise ValueError(f"n_groups must be an integer from 1 to the number of rows "
                         f"({len(time)}); got {n_groups!r}")
    if times is None:
        if not observed.any():
            raise ValueError("the held-out rows have no event; give times=... explicitly")
        times = np.unique(np.quantile(time[observed], DEFAULT_QUANTILES))
    grid = check_times(times)
    f = np.asarray(est.predict(X, output_margin=True), np.float64)
    if len(f) != len(time):
        raise ValueError(f"X has {len(f)} rows but y has {len(time)}; give one label per row")
    risk = -f if est.objective == "survival:aft" else f
    surv = est.predict_survival_function(X, grid)
    frames = []
    for g, rows in enumerate(np.array_split(np.argsort(risk, kind="stable"), n_groups)):
        km, at_risk = kaplan_meier(time[rows], observed[rows], grid)
        frames.append(pd.DataFrame({
            "group": g, "time": grid, "n": len(rows), "events": int(observed[rows].sum()),
            "at_risk": at_risk, "km": km, "predicted": surv[rows].mean(axis=0)}))
    return pd.concat(frames, ignore_index=True)
