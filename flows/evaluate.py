"""Evaluate flow: metrics, plots, an HTML report and Prefect artifacts.

Output folder::

    predictions.parquet    target, prediction (and class probabilities) of the split
    figures/*.png          learning curves, importance, partial dependence, SHAP, ROC ...
    evaluation.json        metrics, importance table, mean |SHAP|, figure list, details
    report.html            self-contained report (images embedded)

Artifacts (stable keys, ``{artifact_key}-...``): a markdown summary
(``-evaluation``), the metrics table (``-metrics``), the importance table
(``-importance``) and mean |SHAP| per feature (``-shap``).
"""

# No `from __future__ import annotations` in a flow's module: Prefect 3.4.25 cannot
# resolve a flow parameter's annotation given as text (tests/test_prefect_compat.py).
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from prefect import flow, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE

from distboost.model_file import write_atomic
from flows._cluster import check_functions, dask_client, run_logger
from flows._dart import booster_details
from flows._data import empty_like, load_split, load_split_queries, shap_columns, with_shap
from flows._output import claim_output, has_marker
from flows._prepared import read_schema
from flows._progress import progress_bar
from flows._survival import survival_figures
from flows._targets import (
    PER_TARGET_FIGURE,
    is_multi,
    multi_output_metrics,
    output_names,
    plot_per_target,
    split_frame,
)
from flows.config import ClusterConfig
from flows.data_summary import rounded_seconds, summarize_data
from flows.metrics import classification_metrics, headline_rows, regression_metrics
from flows.report import markdown_summary, render_report

MARKER = "evaluation.json"


def check_output(output: str | Path) -> Path:
    """An evaluation folder is regenerated; any other non-empty folder is left
    alone (``_output.claim_output``)."""
    out = claim_output(output, "a distboost evaluation folder", has_marker(MARKER), True)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    for old in (out / "figures").glob("*.png"):  # the last evaluation's; nothing else
        old.unlink()
    return out


def _load_model(model: str) -> Any:
    import distboost

    if not Path(model).is_file():
        raise FileNotFoundError(f"model file {model} does not exist; train one first")
    return distboost.load_model(model)


@task(name="predict-split", cache_policy=NO_CACHE)
def predict_split(client: Any, est: Any, data: str, split: str, output: str) -> str:
    """Predict the split on the workers; write target and predictions to Parquet."""
    schema = read_schema(data)
    if schema.task == "survival":  # bounds, predicted time and margin (flows._survival)
        from flows import _survival

        path = Path(output) / "predictions.parquet"
        _survival.predict_split(client, est, data, split).to_parquet(path, index=False)
        return str(path)
    X, y, qid = load_split_queries(data, split, schema)
    with client.as_current():
        if is_multi(est):  # k targets (flows._targets): target_<name>, prediction_<name>
            frame = split_frame(client, est, X, y)
        elif qid is not None:  # a ranker: its queries beside the scores
            y_true, pred, ids = client.compute([y.to_dask_array(), est.predict(X),
                                                qid.to_dask_array()], sync=True)
            frame = pd.DataFrame({"qid": np.asarray(ids, np.int64),
                                  "prediction": np.asarray(pred, dtype=np.float64)})
        elif hasattr(est, "predict_proba"):
            y_true, proba = client.compute([y.to_dask_array(), est.predict_proba(X)], sync=True)
            frame = pd.DataFrame(np.asarray(proba), columns=[f"proba_{c}" for c in est.classes_])
            frame.insert(0, "prediction", np.asarray(est.classes_)[np.argmax(proba, axis=1)])
        else:
            y_true, pred = client.compute([y.to_dask_array(), est.predict(X)], sync=True)
            frame = pd.DataFrame({"prediction": np.asarray(pred, dtype=np.float64)})
    if not is_multi(est):
        frame.insert(0, "target", np.asarray(y_true))
    path = Path(output) / "predictions.parquet"
    frame.to_parquet(path, index=False)
    return str(path)


@task(name="summarize-data", cache_policy=NO_CACHE)
def describe_data(client: Any, data: str) -> dict:
    """Rows, missing rates and the target of every split, on the workers."""
    with client.as_current():
        return summarize_data(data, read_schema(data))


@task(name="compute-metrics", cache_policy=NO_CACHE)
def compute_metrics(predictions: str, est: Any) -> dict:
    frame = pd.read_parquet(predictions)
    if is_multi(est):
        return multi_output_metrics(frame, est)
    if "y_upper" in frame.columns:  # survival: C-index, likelihood, Kaplan-Meier
        from flows._survival import survival_metrics

        return survival_metrics(frame, est)
    if "qid" in frame.columns:
        from flows._ranking import ranking_metrics

        return ranking_metrics(frame["target"].to_numpy(), frame["prediction"].to_numpy(),
                               frame["qid"].to_numpy(), getattr(est, "ndcg_exp_gain", True))
    if hasattr(est, "classes_"):
        proba = frame[[f"proba_{c}" for c in est.classes_]].to_numpy()
        return classification_metrics(frame["target"].to_numpy(), proba, list(est.classes_))
    return regression_metrics(frame["target"].to_numpy(), frame["prediction"].to_numpy())


def _save(fig: Any, output: Path, name: str, section: str, title: str, caption: str) -> dict:
    from distboost.plotting import save_png

    save_png(fig, output / "figures" / f"{name}.png")
    return {"file": f"figures/{name}.png", "section": section, "title": title, "caption": caption}


def _history(model: str, est: Any) -> dict:
    path = Path(model).with_name("history.json")
    if path.is_file():
        return json.loads(path.read_text())
    return dict(getattr(est, "evals_result_", None) or {})


@task(name="draw-diagnostics", cache_policy=NO_CACHE)
def draw_diagnostics(predictions: str, model: str, est: Any, metrics: dict,
                     output: str) -> list[dict]:
    """Learning curves (the history beside the ``model`` file, else the
    model's own); ROC, calibration and confusion matrix, or residuals."""
    from flows import plots

    out = Path(output)
    figures = []
    history = _history(model, est)
    if history:
        fig = plots.plot_learning_curve(
            history, best_iteration=getattr(est, "best_iteration_", None)
        )
        figures.append(
            _save(
                fig,
                out,
                "learning_curve",
                "learning",
                "Learning curves",
                "Loss on the training and validation splits after each round.",
            )
        )
    frame = pd.read_parquet(predictions)
    if is_multi(est):  # several targets: their metrics (flows._targets)
        return figures + [_save(plot_per_target(metrics), out, *PER_TARGET_FIGURE)]
    if hasattr(est, "classes_"):
        classes = list(est.classes_)
        proba = frame[[f"proba_{c}" for c in classes]].to_numpy()
        y = frame["target"].to_numpy()
        figures += [
            _save(
                plots.plot_roc(y, proba, classes),
                out,
                "roc",
                "diagnostics",
                "ROC curve",
                "True against false positive rate as the decision threshold varies"
                + (" (one vs rest: each class against the others)." if len(classes) > 2
                   else f" (class {classes[1]} against class {classes[0]})."),
            ),
            _save(
                plots.plot_calibration(y, proba, classes),
                out,
                "calibration",
                "diagnostics",
                "Calibration",
                "Observed class frequency against the predicted probability.",
            ),
            _save(
                plots.plot_confusion_matrix(np.array(metrics["confusion_matrix"]), classes),
                out,
                "confusion_matrix",
                "metrics",
                "Confusion matrix",
                "Rows: true class; columns: predicted class (most probable).",
            ),
        ]
    elif "y_upper" in frame.columns:  # survival
        figures += [_save(fig, out, *labels) for fig, *labels in survival_figures(metrics)]
    elif "qid" in frame.columns:
        from flows._ranking import ranking_figures

        figures += [_save(fig, out, *labels) for fig, *labels in ranking_figures(metrics)]
    else:
        fig = plots.plot_residuals(frame["target"].to_numpy(), frame["prediction"].to_numpy())
        figures.append(
            _save(
                fig,
                out,
                "residuals",
                "diagnostics",
                "Residuals",
                "Observed minus predicted; a good fit scatters evenly around 0.",
            )
        )
    return figures


def _importance(est: Any) -> pd.DataFrame | None:
    """Relative importance table, or None for a model without trees (voting)."""
    from distboost import inspection

    try:
        return inspection.importance_frame(est)
    except (TypeError, AttributeError, ValueError):
        return None


def _output_names(est: Any) -> list[str]:
    """What the K outputs of partial dependence are (see inspection._raw_output)."""
    if is_multi(est):  # k targets (flows._targets)
        what = "log-odds of label" if hasattr(est, "predict_proba") else "prediction of"
        return [f"{what} {n}" for n in output_names(est)]
    classes = list(getattr(est, "classes_", []))
    if not classes:
        return ["prediction"]
    if not hasattr(est, "decision_function"):
        return [f"probability of class {c}" for c in classes]
    boosting = type(est).__name__.startswith("GradientBoosting")
    if len(classes) == 2:
        what = "log-odds" if boosting else "decision function"
        return [f"{what} of class {classes[1]}"]
    return [f"class {c} score" for c in classes]


def _shown_names(names: list[str], shown: int | None) -> str:
    if shown is not None:
        return names[shown]
    return ", ".join(names[:3]) + ("..." if len(names) > 3 else "")


def _shown_output(est: Any, names: list[str]) -> int | None:
    """Which output the partial dependence plots draw (None: all of them)."""
    if len(names) == 1:
        return 0
    if len(names) == 2 and not hasattr(est, "decision_function") and not is_multi(est):
        return 1  # P(class 1) says it all for two classes
    return None


def _importance_section(est, out: Path):
    """Importance table rows and bar chart; the frame ranks the features."""
    from distboost import plotting

    frame = _importance(est)
    if frame is None:
        frame = pd.DataFrame({"gain": 1.0}, index=[str(n) for n in est.feature_names_in_])
        return frame, [], []
    table = [
        {
            "feature": str(name),
            "gain": round(float(r.gain), 2),
            "splits": int(r.n_splits),
            "cover": round(float(r.cover), 2),
        }
        for name, r in frame.iterrows()
    ]
    figure = _save(
        plotting.plot_importance(frame["gain"].to_numpy(), list(frame.index)),
        out,
        "importance",
        "importance",
        "Relative importance",
        "Total squared improvement of the splits on each input, averaged over "
        "trees, largest = 100 (ESL eq. 10.42-10.43).",
    )
    return frame, table, [figure]


def _dependence_figures(est, X, top, n_features, out: Path):
    """1-D partial dependence (with ICE) of the top features and a 2-D one.

    Returns the figures and whether tree recursion was exact for this model.
    """
    from distboost import inspection, plotting

    names = _output_names(est)
    shown = _shown_output(est, names)
    multi = shown is None
    sample = X.partitions[: max(1, min(X.npartitions, 8))].compute().head(5000)
    exact = inspection.supports_recursion(est, sample)
    over = sample if exact else X  # brute force averages over the whole split
    figures = []
    for rank, feature in enumerate(top[:n_features]):
        pd_ = inspection.partial_dependence(est, over, feature, method="auto")
        ice = None if multi else inspection.ice_curves(
            est, sample, feature, n_samples=50, grid=pd_.grid_values[0]
        )
        fig = plotting.plot_partial_dependence(
            pd_,
            output=shown,
            ice=ice,
            output_names=names,
            ylabel=("each target's output (partial dependence)" if is_multi(est) else
                    "raw class score (partial dependence)") if multi else names[shown],
        )
        caption = ("One bar per category." if pd_.categorical[0]
                   else "Red ticks along the bottom: deciles of the input.")
        figures.append(_save(fig, out, f"pd_{rank}", "dependence",
                             f"Partial dependence on {feature}{_constraint_note(est, feature)}",
                             caption))
    if len(top) >= 2:
        pd2 = inspection.partial_dependence(est, over, tuple(top[:2]), grid_resolution=15)
        fig = plotting.plot_partial_dependence_2d(pd2, output=shown or 0, output_names=names)
        figures.append(_save(fig, out, "pd_2d", "dependence",
                             f"Joint partial dependence on {top[0]} and {top[1]}",
                             f"Colour: {names[shown or 0]}."))
    return figures, exact


def _dependence_note(est, exact: bool, split: str) -> str:
    names = _output_names(est)
    shown = _shown_output(est, names)
    method = (
        "exact tree recursion (ESL eq. 10.47), averaging over the training data"
        if exact
        else f"brute force over the {split} split"
    )
    ice = (
        ""
        if shown is None
        else " Grey lines: ICE curves of 50 rows of the split, centred (each drawn from where "
        "the partial dependence starts) to show how the effect varies between rows."
    )
    return (
        f"Partial dependence of the model's output ({_shown_names(names, shown)}) on its "
        f"most important inputs, computed by {method}.{ice}"
    )


@task(name="draw-interpretation", cache_policy=NO_CACHE)
def draw_interpretation(
    client: Any, est: Any, data: str, split: str, output: str, n_features: int
) -> tuple[list[dict], list[dict], str]:
    """Importance bars and partial dependence plots of the top features."""
    out = Path(output)
    frame, table, figures = _importance_section(est, out)
    top = [f for f in frame.index[: max(n_features, 2)] if frame.loc[f, "gain"] > 0]
    # the monotone features are shown too, after the most important ones
    shown = top[:n_features] + [f for f in model_constraints(est).get("monotonic_cst", {})
                                if f not in top[:n_features]]
    X, _ = load_split(data, split, read_schema(data))
    with client.as_current():
        dependence, exact = _dependence_figures(est, X, shown + top[n_features:], len(shown), out)
    return figures + dependence, table, _dependence_note(est, exact, split)


def model_constraints(est: Any) -> dict:
    """The model's monotone and interaction constraints by column name:
    ``{"monotonic_cst": {name: -1 or 1}, "interaction_cst": [[names], ...]}``
    (the sets as the model used them: unlisted features form the last one);
    empty keys left out."""
    from distboost import constraints

    schema = getattr(est, "_schema", None)
    if schema is None:
        return {}
    names, owner, out = list(schema.feature_names), type(est).__name__, {}
    monotonic = constraints.monotonic_constraints(
        getattr(est, "monotonic_cst", None), names, True, schema.is_categorical, owner)
    if monotonic is not None:
        out["monotonic_cst"] = {n: int(c) for n, c in zip(names, monotonic) if c}
    sets = constraints.interaction_constraints(getattr(est, "interaction_cst", None), names,
                                               True, owner)
    if sets is not None:
        out["interaction_cst"] = [[n for n, keep in zip(names, s) if keep] for s in sets]
    return out


def _constraint_note(est: Any, feature: str) -> str:
    """" (monotone increasing)" for a constrained feature, else ""."""
    direction = model_constraints(est).get("monotonic_cst", {}).get(feature)
    return {1: " (monotone increasing)", -1: " (monotone decreasing)"}.get(direction, "")


def _sample(X: Any, n_rows: int, total: int | None, seed: int = 0) -> Any:
    """About ``n_rows`` rows of the Dask DataFrame ``X`` (of ``total`` rows),
    drawn in every partition where it lives."""
    if not total or total <= n_rows:
        return X
    return X.sample(frac=n_rows / total, random_state=seed)


MAX_SHAP_CLASSES = 6
"""At most this many classes get a SHAP summary plot of their own."""


def _explained_outputs(est: Any, values: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """(what it explains, its (n_rows, n_features + 1) SHAP values) per output
    the report draws: the one output, P(class 1) of two-class forests, or each
    class's score (probability for forests) on its own, never mixing classes."""
    names = _output_names(est)
    if values.ndim == 2:
        return [(names[0], values)]
    shown = _shown_output(est, names)
    if shown is not None:
        return [(names[shown], values[:, shown])]
    return [(name, values[:, k]) for k, name in enumerate(names)]


def _mean_abs_shap(values: np.ndarray, names: list[str],
                   outputs: list[str] | None = None) -> list[dict]:
    """Mean |SHAP| per feature (averaged over the outputs too), largest first;
    with ``outputs`` (K > 1 of them), also each output's own mean |SHAP|."""
    per_feature = np.abs(values[..., :-1]).reshape(-1, values.shape[-1] - 1).mean(axis=0)
    order = np.argsort(-per_feature, kind="stable")
    rows = [{"feature": names[j], "mean |SHAP|": float(per_feature[j])} for j in order]
    if outputs and values.ndim == 3:
        per_output = np.abs(values[..., :-1]).mean(axis=0)  # (K, n_features)
        for row, j in zip(rows, order):
            row.update({name: float(per_output[k, j]) for k, name in enumerate(outputs)})
    return rows


def _feature_matrix(rows: pd.DataFrame) -> np.ndarray:
    """The sampled rows as numbers: categories as their codes, NaN missing."""
    columns = [rows[c].cat.codes.where(rows[c].notna()).astype(np.float64)
               if isinstance(rows[c].dtype, pd.CategoricalDtype)
               else rows[c].astype(np.float64) for c in rows.columns]
    return np.column_stack(columns) if columns else np.zeros((len(rows), 0))


@task(name="draw-shap", cache_policy=NO_CACHE)
def draw_shap(
    client: Any, est: Any, data: str, split: str, output: str, n_rows: int, n_features: int
) -> tuple[list[dict], dict | None]:
    """SHAP values of a sample of the split, computed on the workers: the
    beeswarm summary, dependence plots of the top features and mean |SHAP|."""
    from distboost import plotting

    out = Path(output)
    if n_rows <= 0 or not hasattr(est, "_additive_trees"):
        return [], None  # voting ensembles: explain their members
    schema = read_schema(data)
    X, _ = load_split(data, split, schema)
    sample = _sample(X, n_rows, schema.split_rows.get(split))
    n_outputs = len(_output_names(est))
    columns = shap_columns(est, n_outputs)
    meta = pd.concat([empty_like(sample), pd.DataFrame(columns=columns, dtype=np.float64)], axis=1)
    with client.as_current():
        check_functions(client, with_shap)
        joined = client.compute(sample.map_partitions(with_shap, est, meta=meta), sync=True)
    rows = joined[list(sample.columns)]
    names = [str(c) for c in rows.columns]
    values = joined[columns].to_numpy(np.float64).reshape(len(joined), -1, len(names) + 1)
    values = values[:, 0] if n_outputs == 1 else values
    explained = _explained_outputs(est, values)
    multi = len(explained) > 1
    table = _mean_abs_shap(values, names, [w for w, _ in explained] if multi else None)
    features = _feature_matrix(rows)
    figures = []
    for k, (what, shown) in enumerate(explained[:MAX_SHAP_CLASSES]):
        fig = plotting.plot_shap_summary(shown[:, :-1], features, names,
                                         xlabel=f"SHAP value (effect on the {what})")
        figures.append(_save(fig, out, f"shap_summary_{k}" if multi else "shap_summary", "shap",
                             f"SHAP summary: {what}" if multi else "SHAP summary",
                             "Each point is a row: its SHAP value for the feature, coloured by "
                             "the feature's value (red high, blue low, grey missing); features "
                             "by mean |SHAP|."))
    for rank, name in enumerate(r["feature"] for r in table[:n_features]):
        j = names.index(name)
        categories = list(rows[name].cat.categories) \
            if isinstance(rows[name].dtype, pd.CategoricalDtype) else None
        fig = plotting.plot_shap_dependence(
            features[:, j], np.column_stack([v[:, j] for _, v in explained]), name,
            categories=categories, ylabel="SHAP value" if multi else f"SHAP value ({what})",
            labels=[w for w, _ in explained] if multi else None)
        figures.append(_save(fig, out, f"shap_dependence_{rank}", "shap",
                             f"SHAP dependence on {name}",
                             "Its SHAP value against its value"
                             + (", one colour per class" if multi else "")
                             + "; the spread at one value comes from its interactions with "
                             "the other inputs."))
    kind = "score" if hasattr(est, "decision_function") else "probability"
    what = f"{kind} of each class (each class on its own)" if multi else explained[0][0]
    if multi and is_multi(est):
        what = "output of each target (each on its own)"
    bias = None if multi else float(explained[0][1][0, -1])
    summary = {"rows": len(rows), "sampled": sample is not X, "split": split, "explained": what,
               "bias": bias, "mean_abs": table}
    return figures, summary


@task(name="publish-artifacts", cache_policy=NO_CACHE)
def publish_artifacts(evaluation: dict, report: str, key: str) -> None:
    """Markdown summary and tables in the Prefect database, under stable keys."""
    create_markdown_artifact(
        markdown_summary(evaluation, report),
        key=f"{key}-evaluation",
        description="distboost evaluation summary",
    )
    create_table_artifact(
        headline_rows(evaluation["metrics"]), key=f"{key}-metrics", description="evaluation metrics"
    )
    if evaluation.get("importance"):
        create_table_artifact(
            evaluation["importance"][:30],
            key=f"{key}-importance",
            description="relative importance (largest = 100)",
        )
    if evaluation.get("shap"):
        create_table_artifact(
            [{"feature": r["feature"], "mean |SHAP|": round(r["mean |SHAP|"], 6)}
             for r in evaluation["shap"]["mean_abs"][:30]],
            key=f"{key}-shap",
            description=f"mean |SHAP| per feature ({evaluation['shap']['rows']} rows, "
                        f"{evaluation['shap']['explained']})",
        )


TRAINING_LABELS = {
    "estimator": "estimator",
    "rounds": "boosting rounds",
    "best_iteration": "best round (early stopping)",
    "resumed_from_round": "resumed from round",
    "seconds_this_run": "training time",
}


def _details(data: str, model: str, split: str) -> tuple[dict, Any]:
    schema = read_schema(data)
    run = Path(model).with_name("run.json")
    summary = Path(model).with_name("training.json")
    details = {
        "source": schema.source,
        "prepared data": str(Path(data).resolve()),
        "target": ", ".join(schema.target_names),
        "task": schema.task + (f" ({len(schema.target_names)} targets)" if schema.targets
                               else ""),
        "rows (train / validation / test)": " / ".join(
            f"{schema.split_rows.get(s, 0):,}" for s in ("train", "validation", "test")
        ),
        "features": len(schema.features),
        "evaluated split": split,
        "model": str(Path(model).resolve()),
    }
    if summary.is_file():
        training = json.loads(summary.read_text())
        for key, label in TRAINING_LABELS.items():
            if training.get(key) is not None:
                value = training[key]
                details[label] = rounded_seconds(value) if key == "seconds_this_run" else value
    config = json.loads(run.read_text())["config"] if run.is_file() else None
    return details, config


def _with_details(evaluation: dict, data: str, model: str, split: str, est: Any) -> dict:
    """``evaluation`` with its title, the run's details and configuration and
    the model's constraints."""
    details, config = _details(data, model, split)
    details.update(booster_details(est))  # DART: its parameters and tree weights
    est_name = json.loads(Path(model).read_text()).get("estimator", "model")
    n = evaluation["metrics"]["n"]
    return {
        "title": f"distboost evaluation: {est_name} predicting {details['target']!r}",
        "subtitle": f"{details['task']} of {details['target']!r}, {split} split "
        f"({n:,} rows); generated {time.strftime('%Y-%m-%d %H:%M:%S')}",
        **evaluation,
        "details": details,
        "training_config": config,
        "constraints": model_constraints(est),
    }


def _slug(text: str) -> str:
    slug = "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")
    return "-".join(filter(None, slug.split("-"))) or "distboost"


STEPS = ("predicting the split", "metrics", "the data section", "diagnostics",
         "importance and partial dependence", "SHAP values")
"""The evaluation's steps, as its progress bar names them."""


@flow(name="distboost-evaluate")
def evaluate(
    data: str,
    model: str,
    output: str,
    split: str = "test",
    artifact_key: str = "distboost",
    n_features: int = 4,
    shap_rows: int = 2000,
    scheduler: str | None = None,
    cluster: ClusterConfig | None = None,
    progress: bool = False,
) -> str:
    """Evaluate a model on a split of prepared data; write the HTML report.

    Parameters
    ----------
    data : str
        A prepared folder.
    model : str
        A model file (``model.json`` of a training run).
    output : str
        Report folder (created, or regenerated if it holds an earlier report).
    split : {"test", "validation", "train"}
    artifact_key : str
        Prefix of the Prefect artifact keys (lowercase letters, digits, dashes).
    n_features : int
        Partial dependence and SHAP dependence plots for this many of the most
        important inputs.
    shap_rows : int
        SHAP values (computed on the workers) of about this many rows of the
        split, drawn at random; 0: no SHAP section.
    scheduler, cluster
        Dask scheduler address, or LocalCluster settings.
    progress : bool
        A bar on stderr of the evaluation's steps, naming the one under way.

    Returns
    -------
    str
        Path of ``report.html``.
    """
    logger = run_logger()
    started = time.perf_counter()
    est = _load_model(model)  # once: every task gets it, and the flow's one client
    out = check_output(output)
    key = _slug(artifact_key)
    with dask_client(scheduler, cluster) as client, \
            progress_bar("evaluate", len(STEPS), progress) as bar:
        bar.advance(0, note=STEPS[0])
        predictions = predict_split(client, est, data, split, str(out))
        bar.advance(note=STEPS[1])
        metrics = compute_metrics(predictions, est)
        bar.advance(note=STEPS[2])
        data_summary = describe_data(client, data)
        bar.advance(note=STEPS[3])
        figures = draw_diagnostics(predictions, model, est, metrics, str(out))
        bar.advance(note=STEPS[4])
        more, importance, note = draw_interpretation(client, est, data, split, str(out),
                                                     n_features)
        bar.advance(note=STEPS[5])
        shap_figures, shap_summary = draw_shap(client, est, data, split, str(out), shap_rows,
                                               n_features)
        bar.advance(note="writing the report")
    evaluation = {"data": data_summary, "metrics": metrics, "figures": figures + more + shap_figures,
                  "importance": importance, "shap": shap_summary, "dependence_note": note}
    evaluation = _with_details(evaluation, data, model, split, est)
    write_atomic(out / MARKER, json.dumps(evaluation, indent=1) + "\n")
    report = render_report(out)
    publish_artifacts(evaluation, str(report), key)
    logger.info("report written to %s in %.1f s", report, time.perf_counter() - started)
    return str(report)
