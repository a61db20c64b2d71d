"""Train flow: fit a distboost estimator on prepared data, with checkpoints.

The rounds run in chunks of ``checkpoint_every``; after each chunk the model
is saved to ``checkpoints/round-NNNNN.json`` (atomically) with the metric
history so far. Rerun after a crash, the flow finds the last checkpoint and
continues from it (``fit(init_model=...)``); since the library numbers rounds
globally, the result equals an uninterrupted run.

Output folder::

    run.json                  the configuration and the data it was trained on
    checkpoints/round-00010.json, round-00010.history.json, ...
    model.json                the final model (``distboost.load_model``)
    history.json              metrics by round ({"validation_0": {"logloss": [...]}})
    training.json             summary: rounds, best round, time, resumed from
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import io
import json
import os
import re
import shutil
import time
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.artifacts import create_progress_artifact, update_progress_artifact
from prefect.cache_policies import NO_CACHE

from flows._cluster import dask_client, run_logger, say
from flows._data import has_split, load_split, read_schema
from flows._progress import progress_bar
from flows.config import ClusterConfig, TrainConfig, resolve_train_config

CHECKPOINT = re.compile(r"round-(\d{5})\.json$")


def estimator_class(name: str) -> type:
    from distboost._model_schema import estimator_classes

    classes = estimator_classes()
    if name not in classes:
        raise ValueError(f"this version of distboost has no estimator {name!r}; choose one of "
                         f"{', '.join(sorted(classes))}")
    return classes[name]


def _supports(cls: type, argument: str) -> bool:
    return argument in inspect.signature(cls.fit).parameters


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
        shutil.rmtree(output)
    elif output.exists() and any(output.iterdir()):
        if not overwrite:
            raise FileExistsError(
                f"{output} already exists and is not a distboost training run; choose another "
                "output"
            )
        raise FileExistsError(f"refusing to delete {output}: it is not a distboost training run")
    (output / "checkpoints").mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps(record, indent=2) + "\n")
    return True


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


def _history_path(checkpoint: Path) -> Path:
    return checkpoint.with_name(checkpoint.name.replace(".json", ".history.json"))


def load_history(checkpoint: Path | None) -> dict[str, dict[str, list[float]]]:
    if checkpoint is None or not _history_path(checkpoint).is_file():
        return {}
    return json.loads(_history_path(checkpoint).read_text())


def merge_history(history: dict, new: dict, n_rounds: int) -> dict:
    """Append the last ``n_rounds`` values of each metric in ``new``."""
    merged = {k: {m: list(v) for m, v in d.items()} for k, d in history.items()}
    for name, metrics in (new or {}).items():
        for metric, values in metrics.items():
            merged.setdefault(name, {}).setdefault(metric, []).extend(list(values)[-n_rounds:])
    return merged


def save_checkpoint(est: Any, output: Path, rounds: int, history: dict) -> Path:
    """Write the model and its history; the model file appears last, atomically."""
    path = output / "checkpoints" / f"round-{rounds:05d}.json"
    _history_path(path).write_text(json.dumps(history) + "\n")
    tmp = path.with_name(f".tmp-{path.name}")
    est.save_model(str(tmp))
    os.replace(tmp, path)
    return path


def _eval_set(data: str, schema: dict) -> list:
    if not has_split(data, "validation"):
        return []
    return [load_split(data, "validation", schema)]


def _metrics_text(evals: list[float], names: list[str]) -> str:
    return ", ".join(f"{n} {v:.5f}" for n, v in zip(names, evals))


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
    on_round: Any = None,
) -> Any:
    """Fit rounds ``first_round + 1 .. last_round`` on the workers.

    Returns the fitted estimator (a few hundred kB; saved by the caller).
    """
    from distributed import Client

    logger = run_logger()
    schema = read_schema(data)
    cls = estimator_class(cfg.estimator)
    params = {**cfg.params, "n_estimators": last_round - first_round}
    quiet = "verbose" not in params and hasattr(cls(), "verbose")
    if quiet:  # verbose records the training loss; its per-round lines are not wanted
        params["verbose"] = True
    with Client(scheduler, set_as_default=False) as client, client.as_current():
        est = cls(**params, client=client)
        X, y = load_split(data, "train", schema)
        kwargs: dict[str, Any] = {"eval_set": _eval_set(data, schema)}
        if init_model is not None:
            kwargs["init_model"] = init_model
        if cfg.early_stopping_rounds and kwargs["eval_set"]:
            kwargs["early_stopping_rounds"] = cfg.early_stopping_rounds
        if _supports(cls, "callbacks"):

            def log_round(r: int, train_metric: Any, evals: list[float]) -> bool:
                logger.info("round %d: %s", r + 1, _metrics_text(evals, ["validation"] * 9))
                if on_round is not None:
                    on_round(r, evals)
                return False

            kwargs["callbacks"] = [log_round]
        kwargs = {k: v for k, v in kwargs.items() if _supports(cls, k)}
        with contextlib.redirect_stdout(io.StringIO()) if quiet else contextlib.nullcontext():
            return est.fit(X, y, **kwargs)


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
    logger = run_logger()
    schema = read_schema(data)
    cfg = resolve_train_config(schema, config, estimator=estimator, params=params,
                               checkpoint_every=checkpoint_every)
    out = Path(output)
    created = start_run(out, run_record(cfg, data), overwrite)
    model_path = out / "model.json"
    if model_path.is_file():
        logger.info("%s is already trained; nothing to do", model_path)
        return str(model_path)
    try:
        with dask_client(scheduler, cluster) as client:
            _train_chunks(client.scheduler.address, data, cfg, out, progress)
    except BaseException:
        if created:
            _forget_run(out)
        raise
    return str(model_path)


def _forget_run(out: Path) -> None:
    """A run that failed before its first checkpoint leaves nothing behind (so that
    a corrected rerun needs no --force)."""
    if last_checkpoint(out)[1] is not None:
        return
    (out / "run.json").unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        (out / "checkpoints").rmdir()
        out.rmdir()


def _train_chunks(scheduler: str, data: str, cfg: TrainConfig, out: Path, progress: bool) -> None:
    logger = run_logger()
    cls = estimator_class(cfg.estimator)
    total = cfg.n_estimators
    done, checkpoint = last_good_checkpoint(out)
    resumed_from = done
    if done:
        say(f"resuming from checkpoint {checkpoint} (round {done} of {total})")
        logger.warning("resuming from checkpoint %s (round %d of %d)", checkpoint, done, total)
    step = cfg.checkpoint_every if _supports(cls, "init_model") else total
    history = load_history(checkpoint)
    artifact = create_progress_artifact(100.0 * done / total, description="boosting rounds")
    started, est = time.perf_counter(), None
    with progress_bar("rounds", total, progress, start=done) as bar:
        on_round = (
            (lambda r, evals: bar.advance(1, _metrics_text(evals, ["val"]))) if progress else None
        )
        while done < total:
            end = min(done + step, total)
            init = str(checkpoint) if checkpoint else None
            est = fit_rounds(scheduler, data, cfg, init, done, end, on_round)
            history = merge_history(history, getattr(est, "evals_result_", {}), end - done)
            fitted = len(getattr(est, "trees_", [])) or end
            checkpoint = save_checkpoint(est, out, fitted, history)
            update_progress_artifact(artifact, 100.0 * fitted / total)
            logger.info("checkpoint %s saved", checkpoint.name)
            if fitted < end:
                logger.info("early stopping after round %d", fitted)
                break
            done = end
    _finish(out, checkpoint, history, resumed_from, time.perf_counter() - started)


def _finish(out: Path, checkpoint: Path, history: dict, resumed_from: int, seconds: float) -> None:
    import distboost

    shutil.copyfile(checkpoint, out / ".model.json.tmp")
    os.replace(out / ".model.json.tmp", out / "model.json")
    (out / "history.json").write_text(json.dumps(history, indent=1) + "\n")
    model = distboost.load_model(str(out / "model.json"))
    summary = {
        "estimator": type(model).__name__,
        "rounds": len(getattr(model, "trees_", [])),
        "best_iteration": getattr(model, "best_iteration_", None),
        "resumed_from_round": resumed_from,
        "seconds_this_run": round(seconds, 3),
    }
    (out / "training.json").write_text(json.dumps(summary, indent=2) + "\n")
