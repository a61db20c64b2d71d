"""Train flow: fit a distboost estimator on prepared data, with checkpoints.

The rounds the run needs are one ``fit``, so the training data are read and
binned once (with the prepare flow's ``bin_edges.json``). While it fits, a
training callback saves the model every ``checkpoint_every`` rounds to
``checkpoints/round-NNNNN.json`` (atomically) with the metric history so far.
Rerun after a crash, the flow finds the last checkpoint and continues from it
(``fit(init_model=...)``, one fit of the remaining rounds); since the library
numbers rounds globally and early stopping watches the whole run's history,
the result equals an uninterrupted run: the library's early stopping carries the
checkpoint's metric history. Estimators that cannot continue a
model (AdaBoost, forests, bagging) fit every round at once and are saved at
the end.

Output folder::

    run.json                  the configuration and the data it was trained on
    checkpoints/round-00010.json, round-00010.history.json, ...
    model.json                the final model (``distboost.load_model``)
    history.json              metrics by round ({"validation_0": {"logloss": [...]}})
    training.json             summary: rounds, best round, time, resumed from
    .distboost.lock           while a training runs: its PID (``_output.locked_output``)

One training at a time per folder: a second is refused at once. Starting
over (``overwrite``, ``--force``) removes these files and nothing else.
"""

# No `from __future__ import annotations` in a flow's module: Prefect 3.4.25 cannot
# resolve a flow parameter's annotation given as text (tests/test_prefect_compat.py).
import contextlib
import hashlib
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.artifacts import create_progress_artifact, update_progress_artifact
from prefect.cache_policies import NO_CACHE

from distboost import SchedulerLostError
from distboost.model_file import write_atomic
from flows._checkpoints import (
    RunCheckpoints,
    last_checkpoint,
    last_good_checkpoint,
    load_history,
    save_checkpoint,
    watched_metric,
)
from flows._cluster import dask_client, run_logger, say
from flows._data import has_split, load_bin_mapper, load_split_queries
from flows._output import claim_output, has_marker, locked_output
from flows._prepared import PreparedSchema, read_schema
from flows._progress import progress_bar
from flows.config import (
    ClusterConfig,
    TrainConfig,
    estimator_params,
    resolve_train_config,
)

__all__ = ["fit_rounds", "last_checkpoint", "last_good_checkpoint", "load_history",
           "run_record", "start_run", "train"]


def estimator_class(name: str) -> type:
    from distboost.model_file import estimator_classes

    classes = estimator_classes()
    if name not in classes:
        raise ValueError(f"this version of distboost has no estimator {name!r}; choose one of "
                         f"{', '.join(sorted(classes))}")
    return classes[name]


def _supports(cls: type, argument: str) -> bool:
    return argument in cls.fit_arguments


def run_record(cfg: TrainConfig, data: str) -> dict[str, Any]:
    """What identifies a training run: the configuration and the data."""
    schema_text = (Path(data) / "schema.json").read_text()
    return {
        "config": cfg.model_dump(mode="json"),
        "data": str(Path(data).resolve()),
        "data_schema_sha256": hashlib.sha256(schema_text.encode()).hexdigest(),
    }


def start_run(output: Path, record: dict, overwrite: bool) -> bool:
    """Create the run folder, or check that it holds the same run (to resume).

    Returns whether a new run was started (False: resuming).
    """
    marker = output / "run.json"
    if marker.is_file():
        if json.loads(marker.read_text()) == record:
            return False
        if not overwrite:
            raise FileExistsError(
                f"{output} holds a training run with another configuration or data; "
                "pass overwrite=True (--force) to start over, or choose another output"
            )
    claim_output(output, "a distboost training run", has_marker(marker.name), overwrite)
    remove_run(output)
    (output / "checkpoints").mkdir(parents=True, exist_ok=True)
    write_atomic(marker, json.dumps(record, indent=2) + "\n")
    return True


_NAMES = r"(?:round-\d{5}(?:\.history)?|run|model|history|training)\.json"
OWN_FILE = re.compile(rf"{_NAMES}(?:\.damaged)?|\.{_NAMES}\.[0-9a-f]{{8}}\.tmp"
                      rf"|\.distboost-\w+\.json")
"""A file a run wrote: its files and checkpoints, damaged checkpoints kept
aside, and the temporary files of writes a crash cut short."""


def remove_run(output: Path) -> None:
    """Remove what a training run wrote in ``output``, and nothing else: a
    folder's other files stay where they are (``checkpoints/`` goes if empty)."""
    checkpoints = output / "checkpoints"
    for folder in (output, checkpoints):
        if folder.is_dir():
            for path in folder.iterdir():
                if path.is_file() and OWN_FILE.fullmatch(path.name):
                    path.unlink()
    with contextlib.suppress(OSError):
        checkpoints.rmdir()


def _eval_set(data: str, schema: PreparedSchema) -> tuple[list, list]:
    """The validation split, as ``eval_set`` and (a ranking task) ``eval_qid``."""
    if not has_split(data, "validation"):
        return [], []
    X, y, qid = load_split_queries(data, "validation", schema)
    return [(X, y)], [qid]


@task(
    name="fit-rounds", task_run_name="fit-rounds-{first_round}-{last_round}", cache_policy=NO_CACHE
)
def fit_rounds(
    scheduler: str,
    data: str,
    cfg: TrainConfig,
    init_model: str | None,
    first_round: int,
    last_round: int,
    callbacks: list | None = None,
    early_stopping_rounds: int | None = None,
) -> Any:
    """Fit rounds ``first_round + 1 .. last_round`` on the workers, in one ``fit``.

    The training data are read and binned once, with the prepare flow's bin
    edges for a new model (``bin_edges.json``) and the model's own bins when
    continuing ``init_model``. ``callbacks`` (``TrainingCallback`` objects,
    e.g. :class:`flows._checkpoints.RunCheckpoints`) go to estimators that
    take them.

    ``early_stopping_rounds`` (with a validation split) is the library's,
    over the whole run: a continued fit carries the checkpoint's history.

    Returns the fitted estimator (a few hundred kB).
    """
    from distributed import Client

    schema = read_schema(data)
    cls = estimator_class(cfg.estimator)
    params = {**cfg.params, "n_estimators": last_round - first_round}
    if "train_metric" in cls().get_params():  # the report plots the training metric too
        params.setdefault("train_metric", True)
    with Client(scheduler, set_as_default=False) as client, client.as_current():
        est = cls(**estimator_params(params), client=client)
        X, y, qid = load_split_queries(data, "train", schema)
        eval_set, eval_qid = _eval_set(data, schema)
        kwargs: dict[str, Any] = {"eval_set": eval_set, "callbacks": list(callbacks or [])}
        if qid is not None:  # a ranking task (prepare --group)
            kwargs.update(qid=qid, eval_qid=eval_qid if eval_set else None)
        if schema.task == "survival":  # Cox's signed time or AFT's bounds (flows._survival)
            from flows._survival import fit_data

            X, y, labels = fit_data(data, schema, est.objective)
            kwargs.update(labels)
        if early_stopping_rounds and kwargs["eval_set"]:
            kwargs["early_stopping_rounds"] = early_stopping_rounds
        if init_model is not None:
            kwargs["init_model"] = init_model
        elif _supports(cls, "bin_mapper"):
            kwargs["bin_mapper"] = _prepared_bins(data, schema, est)
        kwargs = {k: v for k, v in kwargs.items() if _supports(cls, k)}
        return est.fit(X, y, **kwargs)


def _prepared_bins(data: str, schema: PreparedSchema, est: Any) -> Any:
    """The prepare flow's bin edges, if they were made for the estimator's ``max_bins``."""
    mapper = load_bin_mapper(data, schema)
    if mapper is None:
        run_logger().info("%s has no bin_edges.json: the fit computes its own bins", data)
    elif mapper.max_bins != est.max_bins:
        run_logger().info("bin_edges.json has max_bins=%d but the estimator max_bins=%d: the fit "
                          "computes its own bins", mapper.max_bins, est.max_bins)
        return None
    return mapper


@flow(name="distboost-train")
def train(
    data: str,
    output: str,
    config: str | dict | None = None,
    estimator: str | None = None,
    params: dict[str, Any] | None = None,
    checkpoint_every: int | None = None,
    overwrite: bool = False,
    scheduler: str | None = None,
    cluster: ClusterConfig | None = None,
    progress: bool = False,
) -> str:
    """Fit an estimator on a prepared folder, checkpointing and resuming.

    Parameters
    ----------
    data : str
        A folder written by the prepare flow.
    output : str
        The run folder (created; reused to resume an interrupted run).
    config : str or dict, optional
        A YAML/JSON file or a mapping (see :class:`flows.config.TrainConfig`).
    estimator, params, checkpoint_every
        Override the configuration's (``params`` is merged into it).
    overwrite : bool
        Start over in a folder that holds a different run.
    scheduler, cluster
        Dask scheduler address, or LocalCluster settings.
    progress : bool
        A progress bar of rounds on stderr.

    Returns
    -------
    str
        Path of the final model file.
    """
    schema = read_schema(data)
    cfg = resolve_train_config(schema, config, estimator=estimator, params=params,
                               checkpoint_every=checkpoint_every)
    with locked_output(output) as out:
        return _train_locked(out, data, cfg, overwrite, scheduler, cluster, progress)


def _train_locked(out: Path, data: str, cfg: TrainConfig, overwrite: bool, scheduler: str | None,
                  cluster: ClusterConfig | None, progress: bool) -> str:
    """The train flow, in its run folder ``out`` (locked)."""
    logger = run_logger()
    created = start_run(out, run_record(cfg, data), overwrite)
    model_path = out / "model.json"
    if model_path.is_file():
        logger.info("%s is already trained; nothing to do", model_path)
        return str(model_path)
    try:
        with dask_client(scheduler, cluster, training=True) as client:
            _train_run(client.scheduler.address, data, cfg, out, progress)
    except BaseException as exc:
        if created:
            _forget_run(out)
        if isinstance(exc, SchedulerLostError):
            raise SchedulerLostError(f"{exc}. {_rerun_note(out)}") from None
        raise
    return str(model_path)


def _rerun_note(out: Path) -> str:
    """What running the same training again does, from what ``out`` holds."""
    done, checkpoint = last_checkpoint(out)
    if checkpoint is None:
        return "No checkpoint was saved yet: the same command starts the run over"
    return (f"The same command resumes the run from its last checkpoint, {checkpoint} "
            f"(round {done})")


def _forget_run(out: Path) -> None:
    """A run that failed before its first checkpoint leaves nothing behind (so that
    a corrected rerun needs no --force)."""
    if last_checkpoint(out)[1] is not None:
        return
    (out / "run.json").unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        (out / "checkpoints").rmdir()
        out.rmdir()


@dataclass
class _Run:
    """What the steps of one training run share."""

    scheduler: str
    data: str
    cfg: TrainConfig
    out: Path
    patience: int | None  # early stopping rounds, when there is a validation split
    artifact: Any  # the Prefect progress artifact's id
    bar: Any  # the progress bar on stderr


def _train_run(scheduler: str, data: str, cfg: TrainConfig, out: Path, progress: bool) -> None:
    """Fit the rounds the run still needs, from its last good checkpoint (none,
    when it already has every round or its early stopping had stopped: that
    fit only ends the run as the uninterrupted one ended)."""
    logger = run_logger()
    total = cfg.n_estimators
    done, checkpoint = last_good_checkpoint(out)
    if done:
        say(f"resuming from checkpoint {checkpoint} (round {done} of {total})")
        logger.warning("resuming from checkpoint %s (round %d of %d)", checkpoint, done, total)
    patience = _patience(cfg, data)
    artifact = create_progress_artifact(100.0 * done / total, description="boosting rounds")
    started = time.perf_counter()
    with progress_bar("rounds", total, progress, start=done) as bar:
        run = _Run(scheduler, data, cfg, out, patience, artifact, bar)
        fit = _fit_with_checkpoints if _resumable(cfg) else _fit_at_once
        est = fit(run, done, checkpoint)
        stopped = early_stopping_note(est, total, patience)
        if stopped:
            bar.end(stopped[0], f"early stopping at round {stopped[0]} of {total}")
    if stopped:
        say(stopped[1])
        logger.info(stopped[1])
    _finish(out, est, total, done, time.perf_counter() - started)


def _patience(cfg: TrainConfig, data: str) -> int | None:
    """The run's ``early_stopping_rounds``: the configuration's, for gradient
    boosting with a validation split (said when there is none)."""
    if not cfg.stops_early() or cfg.early_stopping_rounds is None:
        return None
    if not has_split(data, "validation"):
        run_logger().info("%s has no validation split: early stopping is off, every round runs",
                          data)
        return None
    return cfg.early_stopping_rounds


def early_stopping_note(est: Any, total: int, patience: int | None) -> tuple[int, str] | None:
    """``(rounds run, what to say)`` when ``est`` stopped before ``total`` rounds
    by early stopping, else None: when, on which metric, since which best round.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> est = SimpleNamespace(best_iteration_=2, evals_result_={
    ...     "validation_0": {"logloss": [0.5, 0.4, 0.3, 0.31, 0.32]}})
    >>> early_stopping_note(est, 100, 2)[1]
    'early stopping at round 5 of 100: validation logloss has not improved for 2 rounds since round 3 (best 0.3); the model keeps rounds 1-3'
    """
    watched = watched_metric(getattr(est, "evals_result_", None) or {})
    if watched is None or len(watched[1]) >= total:
        return None
    name, values = watched
    ran, best = len(values), getattr(est, "best_iteration_", None)
    if best is not None and patience:
        return ran, (f"early stopping at round {ran} of {total}: validation {name} has not "
                     f"improved for {ran - best - 1} rounds since round {best + 1} "
                     f"(best {values[best]:.4g}); the model keeps rounds 1-{best + 1}")
    if not getattr(est, "early_stopping", False):
        return None
    n, tol = est.n_iter_no_change, est.tol
    return ran, (f"early stopping at round {ran} of {total}: validation {name} "
                 f"({values[-1]:.4g}) has not improved by more than tol={tol} in {n} rounds "
                 f"(early_stopping, n_iter_no_change={n}); the model keeps every round")


def _resumable(cfg: TrainConfig) -> bool:
    """Can the estimator continue a checkpoint and save one while it fits?"""
    cls = estimator_class(cfg.estimator)
    return _supports(cls, "init_model") and _supports(cls, "callbacks")


def _fit_with_checkpoints(run: _Run, done: int, checkpoint: Path | None) -> Any:
    """One fit of the remaining rounds; checkpoints are written as it goes."""
    logger, total = run_logger(), run.cfg.n_estimators

    def on_round(epoch: int, history: dict) -> None:
        note = _round_note(history)
        logger.info("round %d: %s", epoch + 1, note)
        run.bar.advance(1, note)

    def on_checkpoint(path: Path, n_rounds: int) -> None:
        update_progress_artifact(run.artifact, 100.0 * n_rounds / total)
        logger.info("checkpoint %s saved", path.name)

    writer = RunCheckpoints(run.out, run.cfg.checkpoint_every, total, on_round, on_checkpoint)
    init = str(checkpoint) if checkpoint else None
    return fit_rounds(run.scheduler, run.data, run.cfg, init, done, total, [writer],
                      run.patience)


def _fit_at_once(run: _Run, done: int, checkpoint: Path | None) -> Any:
    """One fit of every round, saved when it ends (estimators that cannot continue);
    the saved fit itself, when a run stopped after saving it."""
    import distboost

    total = run.cfg.n_estimators
    if checkpoint is not None:
        return distboost.load_model(checkpoint)
    est = fit_rounds(run.scheduler, run.data, run.cfg, None, 0, total)
    fitted = len(getattr(est, "trees_", [])) or total
    checkpoint = save_checkpoint(est, run.out, fitted, getattr(est, "evals_result_", {}))
    update_progress_artifact(run.artifact, 100.0 * fitted / total)
    run.bar.advance(fitted)
    run_logger().info("checkpoint %s saved", checkpoint.name)
    return est


def _round_note(history: dict) -> str:
    """The bar's note: the watched metric, named (``valid logloss 0.2312``)."""
    watched = watched_metric(history)
    return f"valid {watched[0]} {watched[1][-1]:.4g}" if watched and watched[1] else ""


def _finish(out: Path, est: Any, total: int, resumed_from: int, seconds: float) -> None:
    """``model.json`` (the run's fit: with early stopping, the rounds up to the
    best; the same file whether the run was resumed or not), ``history.json``
    and ``training.json``."""
    import distboost

    est.set_params(n_estimators=total)  # a resumed fit was asked for the remaining rounds
    est.save_model(out / "model.json")  # atomic
    history = getattr(est, "evals_result_", {}) or {}
    write_atomic(out / "history.json", json.dumps(history, indent=1) + "\n")
    model = distboost.load_model(str(out / "model.json"))
    summary = {
        "estimator": type(model).__name__,
        "rounds": len(getattr(model, "trees_", [])),
        "best_iteration": getattr(model, "best_iteration_", None),
        "resumed_from_round": resumed_from,
        "seconds_this_run": round(seconds, 3),
    }
    write_atomic(out / "training.json", json.dumps(summary, indent=2) + "\n")
