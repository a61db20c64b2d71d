"""Several target columns through the command line and the flows (multi-output):
``distboost prepare SOURCE --out DIR --target A --target B ...``.

The prepared schema lists the k targets (``PreparedSchema.targets``; ``target``
is the first). The task, picked as for one target (``flows._schema._target_kind``)
but for what the library fits with k columns (``distboost.estimators.multi_output``):

- ``--task auto``: multi-label classification when every target holds only
  0 and 1 in the first rows (k independent logistic outputs of
  ``GradientBoostingClassifier``); otherwise regression of k numeric targets
  (``GradientBoostingRegressor``, squared error summed over the targets);
- ``--task classification``: every target must hold 0/1 labels (refused else,
  naming the column and its values); ``--task regression``: numbers;
- a target that is not numeric, a target also given as ``--group``, ``--id``,
  ``--drop``, ``--categorical`` or ``--feature``, and a target named twice are
  refused, each naming the column; ranking takes one target.

Predictions (``distboost predict``, the evaluation's ``predictions.parquet``)
have one column per target, ``prediction_<target>`` (and with ``--proba``
``proba_<label>``, P(label = 1)); the evaluation reports each target's
metrics and their mean over the targets (``multi_output_metrics``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from flows._tabular import DataError

if TYPE_CHECKING:
    from flows._prepared import PreparedSchema

LABELS = {0.0, 1.0}


# ------------------------------------------------------------------- prepare
def target_list(target: str | list[str], categorical=(), drop=(), ids=(), told=(),
                group: str | None = None) -> list[str]:
    """The target column(s) given (``--target``, once or more), each once;
    several, none of them also a feature, an identifier or dropped
    (``check_target_roles``: the other options' columns)."""
    names = [target] if isinstance(target, str) else [str(t) for t in target]
    if not names:
        raise DataError("no target column given: pass --target COLUMN (once per target)")
    twice = list(dict.fromkeys(n for n in names if names.count(n) > 1))
    if twice:
        raise DataError(f"target column(s) {twice} given more than once (--target); name each "
                        f"target once")
    if len(names) > 1:
        check_target_roles(names, list(categorical), list(drop), list(ids), list(told), group)
    return names


def one_or_list(names: list[str]) -> str | list[str]:
    """The command line's ``--target`` values as the flows take them: one
    column's name as before, several as a list."""
    return names[0] if len(names) == 1 else list(names)


def check_target_roles(names: list[str], categorical: list[str], drop: list[str],
                       ids: list[str], told: list[str], group: str | None) -> None:
    """No target of several is also a feature, an identifier or dropped, and
    several targets make no ranking task."""
    roles = (("--group", [group] if group else []), ("--id", ids), ("--drop", drop),
             ("--categorical", categorical), ("--feature", told))
    for option, given in roles:
        both = [n for n in names if n in given]
        if both:
            raise DataError(f"target column {both[0]!r} is also given as {option} {both[0]}; a "
                            f"column is a target or a feature or an identifier, not both: "
                            f"remove it from {option} or from the --target columns")
    if group is not None:
        raise DataError(f"a ranking task (--group {group}) has one target (the relevance); got "
                        f"{len(names)} --target columns {names}")


def _values(column: pd.Series) -> np.ndarray:
    return pd.to_numeric(column.dropna(), errors="coerce").to_numpy(np.float64)


def multi_target_task(head: pd.DataFrame, names: list[str], task: str,
                      source: str) -> tuple[str, str]:
    """(task, target_kind) of k > 1 target columns, from the first rows
    (see the module's docstring).

    Raises
    ------
    DataError
        Naming the column: not numeric (with its dtype and a value), or not
        0/1 labels for ``task="classification"``.
    """
    labels = True
    for name in names:
        column = head[name]
        values = _values(column)
        if np.isnan(values).any():
            example = column.dropna()[pd.to_numeric(column.dropna(), errors="coerce").isna()]
            raise DataError(
                f"target column {name!r} is not numeric (dtype {column.dtype}, e.g. "
                f"{example.iloc[0]!r} in {source}); several targets are numbers (regression) "
                f"or 0/1 labels (multi-label classification): encode it as numbers, or make it "
                f"a feature (--categorical {name}) instead of a target")
        if not set(np.unique(values).tolist()) <= LABELS:
            labels = False
            if task == "classification":
                shown = np.unique(values)[:6].tolist()
                raise DataError(
                    f"task='classification' with several targets is multi-label: every target "
                    f"holds 0/1 labels, but target column {name!r} holds {shown} (in the first "
                    f"rows of {source}); pass --task regression for numeric targets, or fit "
                    f"one model per target for several classes")
    if task == "auto":
        task = "classification" if labels else "regression"
    return task, "integer" if task == "classification" else "float"


def label_problems(schema: PreparedSchema, stats: dict) -> list[str]:
    """A multi-label target holding a value other than 0 and 1 in any file."""
    if schema.task != "classification" or not schema.targets:
        return []
    problems = []
    for name in schema.targets:
        values = stats_of(stats, schema, name).get("values") or {}
        other = [v for v in values if v not in ("0", "1")]
        if other:
            problems.append(f"target {name!r} of a multi-label task holds values other than 0 "
                            f"and 1: {other[:6]} ({sum(values[v] for v in other)} row(s)); fix "
                            f"those rows, or prepare with --task regression")
    return problems


def stats_of(stats: dict, schema: PreparedSchema, name: str) -> dict:
    """The statistics of target ``name`` (the first's are ``stats["target"]``)."""
    return stats["target"] if name == schema.target else stats["targets"][name]


def target_views(schema: PreparedSchema, stats: dict, per_file: list[dict]):
    """(schema, stats, per_file) as the one-target checks read them, once per
    target: for a target after the first, its statistics in the place of the
    first's."""
    yield schema, stats, per_file
    for name in schema.target_names[1:]:
        yield (schema.model_copy(update={"target": name}),
               {**stats, "target": stats["targets"][name]},
               [{**f, "target": f["targets"][name]} for f in per_file])


# ------------------------------------------------------------- predictions
def output_names(est: Any) -> list[str]:
    """What a multi-output model's k outputs are called: the target columns it
    was fitted on (``target_names_``), else 0..k-1."""
    names = getattr(est, "target_names_", None)
    return [str(n) for n in names] if names is not None else \
        [str(j) for j in range(est.n_targets_)]


def is_multi(est: Any) -> bool:
    return getattr(est, "n_targets_", None) is not None


def prediction_columns(est: Any, proba: bool) -> list[str]:
    """``prediction_<target>`` per target, and (a multi-label classifier, with
    ``proba``) ``proba_<label>``: P(label = 1)."""
    names = output_names(est)
    columns = [f"prediction_{n}" for n in names]
    if proba and hasattr(est, "predict_proba"):
        columns += [f"proba_{n}" for n in names]
    return columns


def prediction_frame(est: Any, X: pd.DataFrame, proba: bool) -> pd.DataFrame:
    """One row per row of ``X``, the columns of ``prediction_columns``."""
    pred = np.asarray(est.predict(X))
    names = output_names(est)
    frame = pd.DataFrame({f"prediction_{n}": pred[:, j] for j, n in enumerate(names)})
    if proba and hasattr(est, "predict_proba"):
        p = np.asarray(est.predict_proba(X))
        for j, n in enumerate(names):
            frame[f"proba_{n}"] = p[:, j]
    return frame


def split_frame(client: Any, est: Any, X: Any, y: Any) -> pd.DataFrame:
    """The evaluated split's ``target_<name>``, ``prediction_<name>`` and (labels)
    ``proba_<name>`` columns, computed on the workers."""
    names = output_names(est)
    predicted = est.predict_proba(X) if hasattr(est, "predict_proba") else est.predict(X)
    y_true, out = client.compute([y.to_dask_array(), predicted], sync=True)
    y_true, out = np.asarray(y_true, np.float64), np.asarray(out, np.float64)
    frame = pd.DataFrame({f"target_{n}": y_true[:, j] for j, n in enumerate(names)})
    for j, n in enumerate(names):
        if hasattr(est, "predict_proba"):
            frame[f"prediction_{n}"] = (out[:, j] > 0.5).astype(np.int64)
            frame[f"proba_{n}"] = out[:, j]
        else:
            frame[f"prediction_{n}"] = out[:, j]
    return frame


# ----------------------------------------------------------------- metrics
def multi_output_metrics(frame: pd.DataFrame, est: Any) -> dict:
    """Each target's metrics (``flows.metrics``: RMSE, MAE, R² of a numeric
    target; accuracy, log loss, AUC of a 0/1 label, P(label = 1) > 0.5 its
    prediction) and their unweighted mean over the k targets, with the
    baselines' means; for labels also the subset accuracy (every label of a
    row right, scikit-learn's ``accuracy_score`` of the indicator matrix)."""
    from flows.metrics import classification_metrics, regression_metrics

    names = output_names(est)
    labels = hasattr(est, "predict_proba")
    keys = ("accuracy", "log_loss", "auc") if labels else ("rmse", "mae", "r2")
    per_target = []
    for n in names:
        y = frame[f"target_{n}"].to_numpy()
        if labels:
            p = frame[f"proba_{n}"].to_numpy()
            m = classification_metrics(y.astype(np.int64), np.column_stack([1 - p, p]), [0, 1])
            m["positives"] = int(np.sum(y == 1))
        else:
            m = regression_metrics(y, frame[f"prediction_{n}"].to_numpy())
        per_target.append({"target": n, **{k: m[k] for k in keys},
                           **({"positives": m["positives"]} if labels else {}),
                           "baseline": {k: m["baseline"][k] for k in keys}})
    out: dict[str, Any] = {
        "n": len(frame),
        "targets": names,
        **{k: float(np.mean([t[k] for t in per_target])) for k in keys},
        "baseline": {k: float(np.mean([t["baseline"][k] for t in per_target])) for k in keys},
        "per_target": per_target,
        "average": f"unweighted mean over the {len(names)} targets",
    }
    if labels:
        y = frame[[f"target_{n}" for n in names]].to_numpy()
        pred = frame[[f"prediction_{n}" for n in names]].to_numpy()
        out["subset_accuracy"] = float(np.mean(np.all(y == pred, axis=1)))
    return out


METRIC_LABELS = {"rmse": "RMSE", "mae": "MAE", "r2": "R²", "accuracy": "accuracy",
                 "log_loss": "log loss", "auc": "AUC", "positives": "rows of label 1"}


def per_target_rows(metrics: dict) -> list[dict[str, str]]:
    """The report's table: one row per target, then their mean."""
    rows = []
    for t in metrics["per_target"]:
        row = {"target": t["target"]}
        for key, value in t.items():
            if key in METRIC_LABELS:
                row[METRIC_LABELS[key]] = f"{value:,}" if isinstance(value, int) else \
                    f"{value:.4f}"
        rows.append(row)
    mean = {"target": "mean"}
    for key in rows[0] if rows else {}:
        if key != "target":
            name = next(k for k, v in METRIC_LABELS.items() if v == key)
            mean[key] = "" if name == "positives" else f"{metrics[name]:.4f}"
    return rows + [mean]


def plot_per_target(metrics: dict) -> Any:
    """Bars of each target's metrics beside its baseline's: RMSE and R²
    (regression), or AUC and log loss (labels)."""
    from matplotlib.figure import Figure

    labels = "auc" in metrics
    keys = ("auc", "log_loss") if labels else ("rmse", "r2")
    names = [t["target"] for t in metrics["per_target"]]
    fig = Figure(figsize=(9.6, 3.6), layout="constrained")
    x = np.arange(len(names))
    for ax, key in zip(fig.subplots(1, 2), keys):
        ax.bar(x - 0.2, [t[key] for t in metrics["per_target"]], 0.4, color="tab:blue",
               label="model")
        ax.bar(x + 0.2, [t["baseline"][key] for t in metrics["per_target"]], 0.4,
               color="tab:gray", label="baseline")
        ax.axhline(metrics[key], color="tab:red", lw=1, label="mean over targets")
        ax.set_xticks(x, names, rotation=30 if len(names) > 6 else 0)
        ax.set_title(f"{METRIC_LABELS[key]} per target")
        ax.grid(alpha=0.3, axis="y")
        ax.legend(loc="best", fontsize="small")
    return fig


PER_TARGET_FIGURE = ("per_target", "metrics", "Per target",
                     ("Each target's metrics (blue) beside its baseline's (grey); red: their "
                     "mean over the targets."))
"""The per-target figure's file name, report section, title and caption."""


def metrics_note(metrics: dict) -> str:
    """What the headline numbers of a multi-output evaluation are."""
    labels = "auc" in metrics
    base = ("each label's frequency in the evaluated rows as its probability (majority "
            "label predicted, AUC 0.5)" if labels else "each target's mean on the evaluated rows")
    subset = " Subset accuracy: rows whose every label is right." if labels else ""
    return (f"{len(metrics['targets'])} targets: the headline metrics are the unweighted means "
            f"over the targets of each target's own metric (table below). Baseline: {base}."
            f"{subset}")


# --------------------------------------------------------------- data section
def target_summary(y: Any, schema: PreparedSchema) -> Any:
    """A lazy per-target summary of one split's k-column target: the rows of
    label 1 (classification), or the targets' ``describe`` (regression)."""
    return y.sum() if schema.task == "classification" else y.describe()


def summary_values(computed: dict, schema: PreparedSchema, splits: list[str],
                   statistics: tuple) -> dict:
    """The computed ``target_summary`` as JSON: per split, per target."""
    if schema.task == "classification":
        return {s: {n: int(computed[s][2][n]) for n in schema.target_names} for s in splits}
    return {s: {n: {k: float(computed[s][2].loc[k, n]) for k in statistics}
                for n in schema.target_names} for s in splits}


def target_table(summary: dict) -> tuple[str, str, list[dict[str, str]]]:
    """The data section's table of the k targets, one row per target."""
    splits, rows = summary["splits"], summary["rows"]
    first = summary["target"][splits[0]] if splits else {}
    if summary["task"] == "classification":
        table = [{"label": n, **{s: f"{summary['target'][s][n]:,} "
                                    f"({100 * summary['target'][s][n] / max(rows[s], 1):.1f}%)"
                                 for s in splits}} for n in first]
        return "Labels", "Rows of label 1 of each target (share of the split).", table
    table = [{"target": n, **{s: f"{summary['target'][s][n]['mean']:.4g} ± "
                                 f"{summary['target'][s][n]['std']:.4g}" for s in splits}}
             for n in first]
    return "Targets", "Mean ± standard deviation of each target.", table


# -------------------------------------------------------------------- train
def check_multi_output(cfg: Any, schema: PreparedSchema) -> None:
    """A multi-output task trains gradient boosting (the estimators that take a
    y of k columns): refused at once, before any cluster starts. What
    multi-output training does not support (line-search leaves, monotone
    constraints, ``eval_metric``, DART with vector leaves...) the library
    refuses as ``fit`` starts, naming the parameter."""
    if not schema.targets or cfg.estimator.startswith("GradientBoosting"):
        return
    suited = "GradientBoostingClassifier" if schema.task == "classification" else \
        "GradientBoostingRegressor"
    raise ValueError(f"{cfg.estimator} takes one target, but the prepared data have "
                     f"{len(schema.targets)} ({schema.targets}): train {suited} (multi-output "
                     f"gradient boosting), or prepare one target per model")

