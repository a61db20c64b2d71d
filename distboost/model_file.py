"""Versioned JSON model files that load without a cluster.

Format ``distboost-model`` version 1: estimator class and parameters, the
schema (feature names, categorical features and their categories), the bin
edges, classes, initial scores, and every tree as columns of its node
records. An estimator with more to keep (e.g. AdaBoost's estimator weights)
defines ``_model_state() -> dict`` and ``_load_model_state(dict)``. Floats are written with Python's shortest round-trip repr, so a
loaded model predicts exactly what the saved one did.

Model files, checkpoints and XGBoost exports are written by ``write_atomic``
(the flows write their JSON files and reports with it too): atomically, and
with the permissions ``open`` would give a new file under the umask.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets

import numpy as np

from .binning import BinMapper
from .inputs.frames import Schema
from .inputs.model_schema import (
    FORMAT,
    VERSION,
    ModelFileError,
    check_model,
    estimator_classes,
)

__all__ = ["FORMAT", "FORMATS", "VERSION", "ModelFileError", "estimator_classes", "load_model",
           "model_from_dict", "model_to_dict", "save_model", "write_atomic", "write_json"]


CUSTOM = "custom"
"""What a model file records for a user's function (a loss or a metric): the
function is not saved; a loaded model predicts without it."""


def _jsonable(value):
    if isinstance(value, np.generic):
        return value.item()
    return value


def _param(value):
    """A parameter as JSON: arrays, tuples and sets as lists (sets sorted), a
    user's function (or ``metrics.make_metric`` object) as ``"custom"``."""
    if isinstance(value, np.ndarray):
        return [_param(v) for v in value.tolist()]
    if isinstance(value, (set, frozenset)):
        return [_param(v) for v in sorted(value, key=lambda v: (str(type(v)), v))]
    if isinstance(value, (list, tuple)):
        return [_param(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _param(v) for k, v in value.items()}
    if callable(value) or hasattr(value, "rowwise"):
        return CUSTOM
    return _jsonable(value)


def _labels(values) -> dict:
    arr = np.asarray(values)
    return {"dtype": arr.dtype.str if arr.dtype.kind != "O" else "object",
            "values": [_jsonable(v) for v in arr.tolist()]}


def _from_labels(d: dict) -> np.ndarray:
    try:
        dtype = object if d["dtype"] == "object" else np.dtype(d["dtype"])
        return np.array(d["values"], dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise ModelFileError(f"key classes: cannot read labels of dtype {d['dtype']!r}: "
                             f"{exc}") from None


def model_to_dict(est) -> dict:
    """Everything needed to predict, as JSON-compatible values."""
    params = {k: v for k, v in est.get_params(deep=False).items() if k not in ("client",)}
    schema = est._schema
    out = {
        "format": FORMAT,
        "version": VERSION,
        "estimator": type(est).__name__,
        "params": {k: _param(v) for k, v in params.items()},
        "feature_names": list(schema.feature_names),
        "is_categorical": schema.is_categorical.tolist(),
        "categories": {str(k): [_jsonable(c) for c in v] for k, v in schema.categories.items()},
        "bin_mapper": est.bin_mapper_.to_dict(),
        "base_score": np.asarray(est.base_score_).tolist(),
        "trees": [[t.to_dict() for t in round_trees] for round_trees in est.trees_],
        "best_iteration": est.best_iteration_,
        "evals_result": est.evals_result_,
    }
    if hasattr(est, "classes_"):
        out["classes"] = _labels(est.classes_)
    if getattr(est, "n_targets_", None) is not None:  # a multi-output model's k targets
        out["n_targets"] = int(est.n_targets_)
    if getattr(est, "target_names_", None) is not None:  # fitted on a DataFrame of k columns
        out["target_names"] = [str(n) for n in est.target_names_]
    state = est._model_state() if hasattr(est, "_model_state") else None
    if state is not None:  # gradient boosting keeps state only as DART (its weights)
        out["state"] = state
    return out


FORMATS = ("distboost", "xgboost")


def check_format(format: str) -> None:
    """``format`` names a model format ``save_model`` writes."""
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(map(repr, FORMATS))}; got "
                         f"{format!r}")


def save_model(est, path, format: str = "distboost", *, xgboost_categories: bool = True) -> None:
    """Write ``est`` to ``path`` atomically (a partial file never replaces a good one).

    ``format="distboost"``: this module's JSON model file; ``"xgboost"``:
    XGBoost's JSON model format (``distboost.xgboost_format``), with the
    training categories unless ``xgboost_categories`` is False.
    """
    check_format(format)
    est._check_fitted()
    if format == "xgboost":
        from .xgboost_format import model_to_xgboost

        write_json(path, model_to_xgboost(est, categories=xgboost_categories))
    else:
        write_json(path, model_to_dict(est))


def write_json(path, d: dict) -> None:
    """Write ``d`` as JSON to ``path`` atomically (``write_atomic``)."""
    write_atomic(path, json.dumps(d, allow_nan=False))


def write_atomic(path, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` atomically, as a new file honouring the umask.

    The data go to a hidden temporary file of the same folder
    (``.NAME.XXXXXXXX.tmp``), created as ``open`` creates files (mode 0666
    less the umask: 0644 under umask 022, 0600 under 077), written to disk,
    then renamed over ``path``: a reader sees the old file or the new one,
    never a part of either, and a failed write leaves nothing behind (a
    killed process may leave its temporary file).
    """
    path = os.path.abspath(os.fspath(path))
    fd, tmp = _new_temporary(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _new_temporary(path: str) -> tuple[int, str]:
    """A new file beside ``path``, opened for writing: its descriptor and name.

    Made with ``os.open(..., 0o666)`` and not ``tempfile.mkstemp``, whose files
    are 0600 whatever the umask.
    """
    folder, name = os.path.split(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        tmp = os.path.join(folder, f".{name}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:  # pragma: no cover (a 1 in 4 billion draw)
            continue


def load_model(path):
    """Load a model file written by ``save_model``; no cluster needed.

    The file is user input: everything the prediction kernels rely on is
    checked before an estimator is built (``inputs.model_schema``), so that a
    damaged or hostile file is refused, never walked.

    Raises
    ------
    ModelFileError
        The file is not valid JSON (e.g. truncated), is nested too deeply or
        does not follow the model schema; the message names the file, the
        key and, in a tree, the tree and the node.
    """
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            d = json.load(fh)
    except UnicodeDecodeError:
        raise ModelFileError(f"model file {path} is not text (UTF-8 JSON); it is not a distboost "
                             f"model file, or it is damaged") from None
    except json.JSONDecodeError as exc:
        raise ModelFileError(
            f"model file {path} is not valid JSON ({exc.msg} at line {exc.lineno}, column "
            f"{exc.colno}); it is truncated or not a distboost model file: save the model again"
        ) from None
    except RecursionError:
        raise ModelFileError(f"model file {path} nests lists or objects too deeply to read; it "
                             f"is not a distboost model file") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise ModelFileError(f"model file {path} cannot be read as JSON ({exc}); it is not a "
                             f"distboost model file") from None
    return model_from_dict(d, path)


def model_from_dict(d: dict, source: str = "<dict>"):
    """The estimator a decoded model file describes, after checking it against
    the schema (``inputs.model_schema.check_model``)."""
    return _build(check_model(d, source), d, source)


def _estimator(cls, params: dict, source: str):
    """An unfitted ``cls`` with the file's parameters, checked as ``fit`` checks them."""
    try:
        est = cls(**params)
        est._validate_params()
    except (TypeError, ValueError, RecursionError) as exc:  # InvalidParameterError is both
        raise ModelFileError(f"model file {source}, key params: {exc}") from None
    return est


def _build(checked, d: dict, source: str):
    """The fitted estimator of a checked model file (``check_model``)."""
    cls = checked.cls
    est = _estimator(cls, d["params"], source)
    est._schema = Schema(
        d["feature_names"], np.asarray(d["is_categorical"], bool),
        {int(k): v for k, v in d["categories"].items()},
    )
    est.n_features_in_ = len(d["feature_names"])
    if not all(n == f"f{j}" for j, n in enumerate(d["feature_names"])):
        est.feature_names_in_ = np.array(d["feature_names"], dtype=object)
    est.bin_mapper_ = BinMapper.from_dict(d["bin_mapper"])
    est.base_score_ = np.asarray(d["base_score"], np.float64)
    est.trees_ = checked.trees.build()
    est.n_estimators_ = len(est.trees_)
    est.best_iteration_ = d["best_iteration"]
    est.evals_result_ = d["evals_result"]
    if "classes" in d:
        est.classes_ = _from_labels(d["classes"])
    if "n_targets" in d:
        est.n_targets_ = d["n_targets"]
    if "target_names" in d:
        est.target_names_ = np.array(d["target_names"], dtype=object)
    if "state" in d:
        try:
            est._load_model_state(d["state"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelFileError(f"model file {source}, key state: {exc!r} while loading the "
                                 f"{cls.__name__}'s own state") from None
    return est
