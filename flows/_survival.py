"""A survival task through the flows: ``distboost prepare`` with censored
labels, ``train`` fitting ``GradientBoostingSurvivalRegressor``, ``predict``
writing times, margins and survival probabilities, and the report's C-index,
negative log-likelihood and predicted survival against Kaplan-Meier by risk
group.

The labels follow XGBoost's words:

* right-censored times (``survival:cox``): ``--target TIME --event EVENT``, the
  event 1 where it happened at TIME and 0 where the row was censored then; or
  ``--task survival --target Y`` alone, XGBoost's signed time (y > 0 an event
  at y, y < 0 censored at -y);
* interval-censored bounds (``survival:aft``): ``--label-lower-bound L
  --label-upper-bound U`` (XGBoost's ``label_lower_bound`` /
  ``label_upper_bound``): L == U an event at L, U empty or +inf right-censored
  at L, L = 0 left-censored, else the time is between them.

The prepared schema records the task "survival", the time (or the lower
bound) as its target and the event (or upper bound) column beside it as an
identifier, never a feature. Every split's labels are read back as bounds
(``bounds_of``): an event at t is [t, t], a row censored at t is [t, +inf),
from which a Cox model's signed time is t or -t (the same float64 values as
``inputs.survival.cox_signed_time``).

Like ``flows._tabular`` the row checks and ``bounds_of`` run on Dask workers.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pandas as pd

from flows._tabular import DataError, _numeric

OBJECTIVE_OF = {"cox": "survival:cox", "aft": "survival:aft"}
N_GROUPS = 4
"""Risk groups of the report's Kaplan-Meier table (fewer for fewer rows)."""


# ------------------------------------------------------------------ the options
def label_options(target: str | None, event: str | None, lower: str | None,
                  upper: str | None, task: str = "auto",
                  group: str | None = None) -> tuple[str, str | None, str | None]:
    """``(target, event, label_upper_bound)`` of the command line's label options,
    checked: ``--label-lower-bound`` is the target of an AFT task.

    Raises
    ------
    ValueError
        For options that do not go together, saying which to give.
    """
    bounds = lower is not None or upper is not None
    if bounds and event is not None:
        raise ValueError("--event goes with --target TIME (right-censored times, survival:cox); "
                         "--label-lower-bound/--label-upper-bound give interval bounds "
                         "(survival:aft): use one form, not both")
    if bounds and (lower is None or upper is None):
        given, missing = (("--label-lower-bound", "--label-upper-bound") if upper is None
                          else ("--label-upper-bound", "--label-lower-bound"))
        raise ValueError(f"{given} needs {missing} too (XGBoost's label_lower_bound and "
                         f"label_upper_bound; an empty or inf upper bound: right-censored)")
    if bounds and target is not None:
        raise ValueError(f"--target {target} and --label-lower-bound {lower}: with bounds the "
                         f"lower bound is the target; leave out --target")
    target = lower if bounds else target
    if target is None:
        raise ValueError("give the column to predict: --target COLUMN (survival: --target TIME "
                         "--event EVENT, or --label-lower-bound L --label-upper-bound U)")
    survival = bounds or event is not None or task == "survival"
    if survival and task not in ("auto", "survival"):
        raise ValueError(f"survival labels (--event, --label-lower-bound/--label-upper-bound) "
                         f"make a survival task, not {task}: leave out --task, or --task survival")
    if survival and group is not None:
        raise ValueError("--group makes a ranking task; survival labels take no query column")
    return target, event, upper


def schema_labels(head: pd.DataFrame, source: str, target: str, task: str, group: str | None,
                  event: str | None, upper: str | None) -> dict[str, str] | None:
    """A survival task's label columns beside the features, by how each is read
    (``label_columns``), checked; None for another task."""
    if task != "survival" and event is None and upper is None:
        return None
    bounds = upper is not None
    label_options(None if bounds else target, event, target if bounds else None, upper, task,
                  group)
    return label_columns(head, source, target, event, upper)


def label_columns(head: pd.DataFrame, source: str, target: str, event: str | None,
                  upper: str | None) -> dict[str, str]:
    """The label columns carried beside the features (the event, or the upper
    bound) and how each is read: "float" from CSV (so that "inf" or an empty
    upper bound reads), "typed" from Parquet. Checks that the columns are in
    ``head`` (the first rows of the first file), and their values there
    (``check_labels``)."""
    columns = [str(c) for c in head.columns]
    named = {"--label-lower-bound" if upper else "--target": target,
             "--event": event, "--label-upper-bound": upper}
    for option, name in named.items():
        if name is not None and name not in columns:
            raise DataError(f"{option} column {name!r} not found in {source}; its columns are "
                            f"{columns}")
    if event is not None and event == target or upper is not None and upper == target:
        raise DataError(f"column {target!r} cannot be both the time and the "
                        f"{'event' if event else 'upper bound'}")
    check_labels(head, target, event, upper, source)
    from flows._tabular import text_kind

    return {name: ("typed" if text_kind(head[name]) == "typed" else "float")
            for name in (event, upper) if name is not None}


# ------------------------------------------------------------------ row checks
def _refuse(bad: np.ndarray, column: str, raw: pd.Series, path: str, first_row: int,
            what: str, fix: str) -> None:
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        value = raw.iloc[i]
        shown = repr(value) if isinstance(value, str) else str(value)  # 2.0, not np.float64(2.0)
        raise DataError(f"{what} column {column!r} of {path} holds {shown} at data row "
                        f"{first_row + i + 1} ({int(bad.sum())} such row(s) in this batch); "
                        f"{fix}")


def _values(raw: pd.DataFrame, column: str, what: str, path: str, first_row: int) -> np.ndarray:
    values, bad = _numeric(raw[column])
    _refuse(bad, column, raw[column], path, first_row, what, "it is not a number: fix or drop "
            "that row")
    return values


def check_labels(raw: pd.DataFrame, target: str, event: str | None, upper: str | None,
                 path: str, first_row: int = 0) -> None:
    """Refuse survival labels that are not times: naming the column, the file,
    the data row (``first_row`` + 1 for the first row of ``raw``), the value
    and what to do.

    Times with an event: numbers > 0, finite; the event 0 or 1. Signed times
    (neither ``event`` nor ``upper``): finite, not 0. Bounds: the lower a
    finite number >= 0, the upper a number > 0 and >= the lower (empty or
    +inf: right-censored).

    Raises
    ------
    DataError
    """
    names = (target, event, upper)
    raws = [None if c is None else raw[c] for c in names]
    if upper is not None:
        lower = _values(raw, target, "lower bound", path, first_row)
        _refuse(np.isnan(lower), target, raws[0], path, first_row, "lower bound",
                "every row needs its lower bound (0: left-censored): fill it in or drop the row")
        _refuse(~np.isfinite(lower) | (lower < 0), target, raws[0], path, first_row,
                "lower bound", "a lower bound is a finite time >= 0 (0: left-censored)")
        high = _values(raw, upper, "upper bound", path, first_row)
        high = np.where(np.isnan(high), np.inf, high)
        _refuse(high <= 0, upper, raws[2], path, first_row, "upper bound",
                "an upper bound is a time > 0, or empty / inf for a right-censored row")
        _refuse(high < lower, upper, raws[2], path, first_row, "upper bound",
                f"it is below the lower bound {target!r} of that row; each row needs "
                f"lower <= upper (swap them, or fix the data)")
        return
    time = _values(raw, target, "time", path, first_row)
    _refuse(np.isnan(time), target, raws[0], path, first_row, "time",
            "every row needs its time: fill it in or drop the row")
    _refuse(np.isinf(time), target, raws[0], path, first_row, "time",
            "a time is finite (a row still at risk at the end is censored at its last time)")
    if event is None:
        _refuse(time == 0, target, raws[0], path, first_row, "time",
                "a signed time (XGBoost's survival:cox label) is > 0 for an event and < 0 "
                "for a censored row, never 0: drop the row or give it a small time")
        return
    _refuse(time <= 0, target, raws[0], path, first_row, "time",
            "survival times are > 0 (with --event the sign says nothing): fix or drop the row")
    flag = _values(raw, event, "event", path, first_row)
    _refuse(~np.isin(flag, (0.0, 1.0)), event, raws[1], path, first_row, "event",
            "the event indicator is 1 (the event happened at the time) or 0 (censored "
            "then): fix or drop that row")


# ------------------------------------------------------------------ reading
def bounds_of(frame: pd.DataFrame, target: str, event: str | None,
              upper: str | None) -> pd.DataFrame:
    """A partition's labels as bounds ``y_lower`` and ``y_upper`` (float64): an
    event at t is [t, t], censored at t is [t, inf)."""
    time = frame[target].to_numpy(np.float64, na_value=np.nan)
    if upper is not None:
        high = frame[upper].to_numpy(np.float64, na_value=np.nan)
        low, high = time, np.where(np.isnan(high), np.inf, high)
    elif event is not None:
        flag = frame[event].to_numpy(np.float64, na_value=np.nan)
        low, high = time, np.where(flag == 1.0, time, np.inf)
    else:  # XGBoost's signed time
        low, high = np.abs(time), np.where(time > 0, time, np.inf)
    return pd.DataFrame({"y_lower": low, "y_upper": high}, index=frame.index)


def _signed(part: pd.DataFrame) -> pd.Series:
    low, high = part["y_lower"].to_numpy(np.float64), part["y_upper"].to_numpy(np.float64)
    return pd.Series(np.where(high == low, low, -low), index=part.index, name="y")


def signed_time(bounds: Any) -> Any:
    """Cox's signed time of bounds: the time where lower == upper (an event),
    minus it where censored (pandas or Dask, partition by partition)."""
    if isinstance(bounds, pd.DataFrame):
        return _signed(bounds)
    return bounds.map_partitions(_signed, meta=("y", "f8"))


def load_labelled(data: str, split: str, schema: Any) -> tuple[Any, Any]:
    """A split's features (typed as ``flows._data.load_split``'s) and its labels
    as bounds (``bounds_of``), Dask collections of the same partitions."""
    from pathlib import Path

    import dask.dataframe as dd

    from flows._data import _typed, empty_like, has_split

    if not has_split(data, split):
        raise DataError(f"{data} has no {split!r} split (no Parquet files in {Path(data) / split})")
    ddf = dd.read_parquet(str(Path(data) / split), engine="pyarrow")
    names = schema.feature_names
    labels = [c for c in (schema.target, schema.event, schema.label_upper_bound) if c]
    ddf = ddf[names + labels].map_partitions(_typed, schema, meta=_typed(empty_like(
        ddf[names + labels]), schema))
    meta = pd.DataFrame({"y_lower": pd.Series(dtype="f8"), "y_upper": pd.Series(dtype="f8")})
    bounds = ddf[labels].map_partitions(bounds_of, schema.target, schema.event,
                                        schema.label_upper_bound, meta=meta)
    return ddf[names], bounds


def _labels(bounds: Any, objective: str) -> dict[str, Any]:
    """``fit``'s label arguments for ``objective`` from bounds."""
    if objective == "survival:aft":
        return {"y_lower": bounds["y_lower"], "y_upper": bounds["y_upper"]}
    return {"y": signed_time(bounds)}


def fit_data(data: str, schema: Any, objective: str) -> tuple[Any, Any, dict[str, Any]]:
    """``(X, y, kwargs)`` of the training split for ``est.fit(X, y, **kwargs)``:
    Cox's signed time as y, or AFT's bounds as ``y_lower`` / ``y_upper``; the
    validation split (if any) as ``eval_set`` in the same form."""
    from flows._data import has_split

    X, bounds = load_labelled(data, "train", schema)
    labels = _labels(bounds, objective)
    kwargs = {k: v for k, v in labels.items() if k != "y"}
    eval_set = []
    if has_split(data, "validation"):
        Xv, valid = load_labelled(data, "validation", schema)
        eval_set = [(Xv, *_labels(valid, objective).values())]
    return X, labels.get("y"), {**kwargs, "eval_set": eval_set}


# ------------------------------------------------------------------ training
def survival_config(cfg: Any, schema: Any) -> Any:
    """``cfg`` with the objective the labels call for unless one was given:
    ``survival:aft`` for bounds, ``survival:cox`` for times; a Cox objective on
    bounds is refused (its partial likelihood takes exact or right-censored
    times only), an AFT one on times is fine (an event at t is [t, t], a
    censored row [t, inf))."""
    objective = cfg.params.get("objective")
    bounds = schema.label_upper_bound is not None
    if objective is None:
        objective = OBJECTIVE_OF["aft" if bounds else "cox"]
        return cfg.model_copy(update={"params": {**cfg.params, "objective": objective}})
    if objective == "survival:cox" and bounds:
        raise ValueError(f"objective='survival:cox' takes right-censored times, but the data "
                         f"hold interval bounds ({schema.target!r}, {schema.label_upper_bound!r}:"
                         f" --label-lower-bound/--label-upper-bound); use objective="
                         f"'survival:aft', or prepare --target TIME --event EVENT")
    return cfg


# ------------------------------------------------------------------ predicting
def time_columns(times: Any) -> list[str]:
    """``survival_<t>`` for each time of ``--times`` (``1``, ``2.5``)."""
    return [f"survival_{float(t):g}" for t in times]


def parse_times(text: str) -> list[float]:
    """``--times 1,2,5``: times > 0, finite, each once, in the order given."""
    try:
        times = [float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise ValueError(f"--times takes numbers separated by commas (e.g. 1,2,5); got "
                         f"{text!r}") from None
    bad = [t for t in times if not np.isfinite(t) or t < 0]
    if not times or bad:
        raise ValueError(f"--times takes finite times >= 0 (e.g. 1,2,5); got {text!r}")
    names = time_columns(times)
    if len(set(names)) < len(names):
        raise ValueError(f"--times names a time twice: {text!r}")
    return times


def output_columns(est: Any, times: Any) -> list[str]:
    """The columns ``predict`` writes for a survival model; ``times`` refused
    for any other model."""
    if not is_survival(est):
        if times:
            raise ValueError(f"--times gives survival probabilities; a {type(est).__name__} "
                             f"has none (it takes a GradientBoostingSurvivalRegressor)")
        return []
    return ["prediction", "margin", *time_columns(times or [])]


def is_survival(est: Any) -> bool:
    return hasattr(est, "predict_survival_function")


def survival_predictions(est: Any, X: pd.DataFrame, times: Any) -> pd.DataFrame:
    """``prediction`` (``est.predict``: the predicted time for AFT, the hazard
    ratio exp(f) for Cox, as XGBoost's), ``margin`` (f(x), the log hazard ratio
    or the log time) and ``survival_<t>`` (S(t | x)) for each of ``times``
    (a list; anything else: none)."""
    margin = np.asarray(est.predict(X, output_margin=True), np.float64)
    frame = pd.DataFrame({"prediction": np.exp(margin), "margin": margin})
    times = list(times) if isinstance(times, (list, tuple)) else []
    if times and len(X):
        surv = np.asarray(est.predict_survival_function(X, times))
        for k, name in enumerate(time_columns(times)):
            frame[name] = surv[:, k]
    return frame


# ------------------------------------------------------------------ evaluating
def predict_split(client: Any, est: Any, data: str, split: str) -> pd.DataFrame:
    """The split's bounds, ``prediction`` and ``margin``, computed on the workers."""
    from flows._prepared import read_schema

    X, bounds = load_labelled(data, split, read_schema(data))
    with client.as_current():
        low, high, margin = client.compute([bounds["y_lower"].to_dask_array(),
                                            bounds["y_upper"].to_dask_array(),
                                            est.predict(X, output_margin=True)], sync=True)
    margin = np.asarray(margin, np.float64)
    return pd.DataFrame({"y_lower": np.asarray(low, np.float64),
                         "y_upper": np.asarray(high, np.float64),
                         "prediction": np.exp(margin), "margin": margin})


def at_margins(est: Any, margin: np.ndarray) -> Any:
    """A shallow copy of ``est`` whose ``predict`` reads the margins f(x) already
    computed on the workers, by row number: its ``predict_survival_function``
    and ``score`` (functions of f alone) are then ``est``'s own on those rows,
    without the rows' features on this machine."""
    model = copy.copy(est)
    f = np.asarray(margin, np.float64)

    def predict(rows, output_margin=False):
        raw = f[np.asarray(rows, np.int64).ravel()]
        return raw if output_margin else np.exp(raw)

    model.predict = predict
    return model


def survival_metrics(frame: pd.DataFrame, est: Any) -> dict:
    """Harrell's C-index and the objective's negative log-likelihood of the
    evaluated rows (``distboost.metrics.survival_score``, as the model's
    ``evals_result_`` measures them), those of the baseline (every row the
    model's starting value f_0: C 0.5), and the Kaplan-Meier table by risk group
    (``risk_groups``)."""
    from distboost.metrics import survival_score

    low, high = frame["y_lower"].to_numpy(), frame["y_upper"].to_numpy()
    margin = frame["margin"].to_numpy()
    cox = est.objective == "survival:cox"
    if cox and np.any((high != low) & np.isfinite(high) | (low <= 0)):
        raise DataError("a survival:cox model is evaluated on exact or right-censored times; "
                        "these rows hold interval bounds: evaluate it on data prepared with "
                        "--target TIME --event EVENT")
    labels = ({"y": signed_time(frame)} if cox else {"y_lower": low, "y_upper": high})
    nloglik = "cox-nloglik" if cox else "aft-nloglik"
    flat = np.full(len(margin), float(np.ravel(est.base_score_)[0]))  # f_0, the margin
    scores = {name: survival_score(est, margin, metric=name, **labels)
              for name in ("cindex", nloglik)}
    baseline = {name: survival_score(est, flat, metric=name, **labels)
                for name in ("cindex", nloglik)}
    events = int(np.sum(high == low))
    out = {"n": len(margin), "events": events, **scores, "baseline": baseline}
    out.update(risk_groups(est, low, high, margin))
    return out


def risk_groups(est: Any, low: np.ndarray, high: np.ndarray, margin: np.ndarray) -> dict:
    """``by_risk_group``: ``distboost.inspection.survival_by_risk_group`` of the
    rows with an exact or right-censored time > 0 (Kaplan-Meier takes no
    other), as records; ``km_rows_left_out``: how many rows were not."""
    from distboost.inspection import survival_by_risk_group

    usable = (low > 0) & ((high == low) | np.isinf(high))
    time, event = low[usable], (high[usable] == low[usable]).astype(np.float64)
    out = {"km_rows_left_out": int((~usable).sum()), "by_risk_group": []}
    if not event.any():
        return out
    rows = np.arange(int(usable.sum()))
    table = survival_by_risk_group(at_margins(est, margin[usable]), rows, time, event,
                                   n_groups=min(N_GROUPS, len(rows)))
    out["by_risk_group"] = table.to_dict(orient="records")
    return out


def risk_group_rows(metrics: dict) -> tuple[str, str, list[dict[str, str]]]:
    """The report's table of the Kaplan-Meier comparison: (heading, note, rows)."""
    left_out = metrics.get("km_rows_left_out", 0)
    note = ("Rows sorted by predicted risk (Cox: f(x); AFT: -f(x)) and split into groups of "
            "equal size, group 1 the lowest risk; in each, at each time, the Kaplan-Meier "
            "estimate of the group's survival against the mean predicted survival "
            "S(t | x) of its rows (Royston & Altman 2013). At risk: rows of the group still "
            "at risk at that time.")
    if left_out:
        note += (f" {left_out:,} interval- or left-censored row(s) are left out (Kaplan-Meier "
                 f"takes exact or right-censored times).")
    rows = [{"group": str(r["group"] + 1), "time": f"{r['time']:.4g}", "rows": f"{r['n']:,}",
             "events": f"{r['events']:,}", "at risk": f"{r['at_risk']:,}",
             "Kaplan-Meier": f"{r['km']:.3f}", "predicted": f"{r['predicted']:.3f}"}
            for r in metrics["by_risk_group"]]
    return "Survival by risk group", note, rows


def plot_risk_groups(metrics: dict) -> Any:
    """Kaplan-Meier (steps) and mean predicted survival (dashed) of each risk group."""
    from matplotlib.figure import Figure

    table = pd.DataFrame(metrics["by_risk_group"])
    fig = Figure(figsize=(7.2, 4.4), layout="constrained")
    ax = fig.subplots()
    for g, part in table.groupby("group"):
        color = f"C{int(g) % 10}"
        ax.step(part["time"], part["km"], where="post", color=color,
                label=f"group {int(g) + 1}: Kaplan-Meier")
        ax.plot(part["time"], part["predicted"], "o--", color=color, ms=3,
                label=f"group {int(g) + 1}: predicted")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("time")
    ax.set_ylabel("survival probability")
    ax.set_title("Predicted survival against Kaplan-Meier by risk group")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2, loc="lower left")
    return fig


def survival_figures(metrics: dict) -> list[tuple]:
    """The report's survival figure (``plot_risk_groups``) as ``(figure, name,
    section, title, caption)``; none without a Kaplan-Meier table."""
    if not metrics.get("by_risk_group"):
        return []
    return [(plot_risk_groups(metrics), "survival_by_risk_group", "diagnostics",
             "Predicted survival against Kaplan-Meier by risk group",
             ("Rows in groups of equal size by predicted risk (group 1 the lowest): each "
              "group's Kaplan-Meier estimate (steps) and the mean of its rows' predicted "
              "survival (dashed), at the times of the table under Metrics."))]


def metrics_note(metrics: dict) -> str:
    """What the report's survival metrics are."""
    return (f"{metrics['events']:,} of the {metrics['n']:,} rows have an observed event; the "
            f"others are censored. C-index: Harrell's concordance, the share of comparable "
            f"pairs (an event before the other row's time) whose order the predicted risk "
            f"gets right (0.5: chance). Negative log-likelihood: the training objective's, per "
            f"event (Cox, Breslow's ties) or per row (AFT). Baseline: every row given the "
            f"model's starting value f_0.")
