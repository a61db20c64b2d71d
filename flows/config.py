"""Validated configuration of the flows (pydantic).

A training configuration names the estimator class and its parameters, so any
distboost estimator can be trained by the same flow::

    estimator: GradientBoostingClassifier
    params: {n_estimators: 200, learning_rate: 0.1, max_depth: 4}
    checkpoint_every: 20
    early_stopping_rounds: 10   # the default; null turns early stopping off
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

if TYPE_CHECKING:
    from flows._prepared import PreparedSchema

DEFAULT_ESTIMATOR = {
    "classification": "GradientBoostingClassifier",
    "regression": "GradientBoostingRegressor",
    "ranking": "GradientBoostingRanker",
    "survival": "GradientBoostingSurvivalRegressor",
}
ESTIMATORS = (
    "GradientBoostingClassifier",
    "GradientBoostingRegressor",
    "GradientBoostingRanker",
    "GradientBoostingSurvivalRegressor",
    "AdaBoostClassifier",
    "RandomForestClassifier",
    "RandomForestRegressor",
    "BaggingClassifier",
    "BaggingRegressor",
)


class ClusterConfig(BaseModel):
    """Where the Dask work runs.

    With ``scheduler`` set the flows connect to that Dask scheduler; otherwise
    they start a LocalCluster with the other settings.
    """

    model_config = ConfigDict(extra="forbid")

    scheduler: str | None = Field(None, description="address of a running Dask scheduler")
    n_workers: int = Field(2, ge=1)
    threads_per_worker: int = Field(1, ge=1)
    processes: bool = True
    memory_limit: str = "auto"
    dashboard_address: str | None = ":8787"


DEFAULT_PATIENCE = 10
"""The pipeline's ``early_stopping_rounds`` unless the configuration says otherwise."""

RUN_SETTINGS = ("estimator", "checkpoint_every", "early_stopping_rounds")
"""Settings of a training run beside the estimator's ``params``; among ``params``
(e.g. ``--param checkpoint_every=5``) they are moved to their place."""


class TrainConfig(BaseModel):
    """What to train and how often to checkpoint.

    ``params`` are the estimator's constructor parameters (``n_estimators``
    is the total number of rounds; ``random_state`` defaults to 0 so that a
    resumed run draws the same random numbers). ``early_stopping_rounds``
    (gradient boosting with a validation split; 10 by default, ``null`` for
    off) watches the validation metric over the whole run, resumed parts
    included: training stops after that many rounds without a new best, and
    the model keeps the rounds up to the best. The settings beside ``params``
    (``early_stopping_rounds``, ``checkpoint_every``, ``estimator``) may also
    be given among ``params`` (``--param early_stopping_rounds=20``): they are
    moved to their place (``RUN_SETTINGS``).
    """

    model_config = ConfigDict(extra="forbid")

    estimator: str = "GradientBoostingClassifier"
    params: dict[str, Any] = Field(default_factory=dict)
    checkpoint_every: int = Field(10, ge=1, description="save a checkpoint every N rounds")
    early_stopping_rounds: int | None = Field(DEFAULT_PATIENCE, ge=1)

    @field_validator("estimator")
    @classmethod
    def _known_estimator(cls, name: str) -> str:
        if name not in ESTIMATORS:
            raise ValueError(f"unknown estimator {name!r}; choose one of {', '.join(ESTIMATORS)}")
        return name

    @model_validator(mode="after")
    def _no_reserved_params(self) -> TrainConfig:
        reserved = {"client"} & set(self.params)
        if reserved:
            raise ValueError(f"params may not set {sorted(reserved)}: the flow provides it")
        check_estimator_params(self.estimator, self.params)
        if (self.early_stopping_rounds is not None and not self.stops_early()
                and "early_stopping_rounds" in self.model_fields_set):
            raise ValueError(f"early_stopping_rounds: {self.estimator} has no early stopping "
                             f"(gradient boosting has); remove it or set it to null")
        return self

    def stops_early(self) -> bool:
        """Whether the estimator can stop early (gradient boosting)."""
        return self.estimator.startswith("GradientBoosting")

    @property
    def n_estimators(self) -> int:
        return int(self.params.get("n_estimators", 100))

    def is_classifier(self) -> bool:
        return self.estimator.endswith("Classifier")


def check_estimator_params(estimator: str, params: dict[str, Any]) -> None:
    """Check ``params`` as ``estimator.fit`` would, before any cluster or flow starts.

    Raises
    ------
    ValueError
        Naming the estimator, the parameter and its value (with the closest
        valid name for a misspelled one).
    """
    from distboost.model_file import estimator_classes

    cls = estimator_classes()[estimator]
    valid = cls._param_names()
    for key in params:
        if key not in valid:
            close = difflib.get_close_matches(key, valid, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            hint += CONSTRAINT_HINTS.get(key, "")
            if key in COMMAND_OPTIONS:
                hint += (f" ({key} is a setting of the command, not of the estimator: give it "
                         f"as --{key.replace('_', '-')})")
            raise ValueError(f"{estimator} has no parameter {key!r}{hint}; its parameters are "
                             f"{', '.join(valid)}")
    cls(**estimator_params(params))._validate_params()


CONSTRAINT_HINTS = {
    "monotonic_cst": " (monotone constraints: GradientBoostingRegressor, "
                     "GradientBoostingClassifier, RandomForestRegressor, RandomForestClassifier)",
    "interaction_cst": " (interaction constraints: GradientBoostingRegressor, "
                       "GradientBoostingClassifier)",
}


COMMAND_OPTIONS = ("target", "task", "categorical", "drop", "test_fraction", "seed",
                   "batch_rows", "shap_rows", "scheduler", "workers", "threads_per_worker")
"""Options of the ``distboost`` commands that a ``--param`` might be mistaken for."""


def estimator_params(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` as the estimator takes them: a ``loss`` or an ``eval_metric`` entry
    written ``"module:function"`` is that function, imported (a user-defined
    objective or metric, e.g. one made with ``distboost.metrics.make_metric``).
    The workers import it too, so the module must be installed there."""
    out = dict(params)
    if isinstance(out.get("loss"), str) and ":" in out["loss"]:
        out["loss"] = import_function(out["loss"], "params.loss")
    metrics = out.get("eval_metric")
    if isinstance(metrics, str) and ":" in metrics:
        out["eval_metric"] = import_function(metrics, "params.eval_metric")
    elif isinstance(metrics, list):
        out["eval_metric"] = [import_function(m, f"params.eval_metric[{k}]")
                              if isinstance(m, str) and ":" in m else m
                              for k, m in enumerate(metrics)]
    return out


def import_function(reference: str, where: str) -> Any:
    """The object ``"package.module:name"`` names; a clear error if it cannot be imported."""
    import importlib

    module_name, _, attribute = reference.partition(":")
    try:
        obj = importlib.import_module(module_name)
        for part in attribute.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ValueError(f"{where}: cannot import {reference!r} ({type(exc).__name__}: {exc}); "
                         f"write 'package.module:function' for a function of a module that "
                         f"is installed here and on the Dask workers") from None
    if not (callable(obj) or hasattr(obj, "rowwise")):
        raise ValueError(f"{where}: {reference!r} is {type(obj).__name__}, not a function")
    return obj


def _clean_error(exc: ValidationError, source: str) -> ValueError:
    """pydantic's report as one line per problem: where in the configuration, and what."""
    lines = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"])
        message = err["msg"].removeprefix("Value error, ")
        lines.append(f"{where}: {message}" if where else message)
    return ValueError(f"training configuration {source}: " + "; ".join(lines))


def load_config_file(path: str | Path) -> dict[str, Any]:
    """Read a YAML or JSON mapping; say which file is wrong if it is not one."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"configuration file {path} does not exist")
    text = path.read_text()
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ValueError(f"{path} is not valid {path.suffix.lstrip('.') or 'YAML'}: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise TypeError(f"{path} must hold a mapping of settings, not {type(data).__name__}")
    return data


def config_mapping(config: str | Path | dict | TrainConfig | None) -> dict[str, Any]:
    """The settings of a configuration given as a file path, a mapping or a model."""
    if isinstance(config, TrainConfig):
        return config.model_dump(exclude_unset=True)  # a default stays a default
    if isinstance(config, dict):
        return dict(config)
    if config is None:
        return {}
    return load_config_file(config)


def train_config(config: str | Path | dict | TrainConfig | None = None, **overrides) -> TrainConfig:
    """A :class:`TrainConfig` from a file path, a mapping or nothing, plus overrides.

    ``overrides`` with value ``None`` are ignored; ``params`` overrides are
    merged into the file's ``params``.
    """
    data = config_mapping(config)
    for key, value in overrides.items():
        if value is None:
            continue
        if key == "params":
            data["params"] = {**data.get("params", {}), **value}
        else:
            data[key] = value
    data = lift_run_settings(data)
    source = str(config) if isinstance(config, (str, Path)) else "(given)"
    try:
        return TrainConfig.model_validate(data)
    except ValidationError as exc:
        raise _clean_error(exc, source) from None


def lift_run_settings(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the ``RUN_SETTINGS`` found among its ``params`` moved beside them
    (where they win over the same key's value there)."""
    params = data.get("params")
    if not isinstance(params, dict) or not set(RUN_SETTINGS) & set(params):
        return data
    params = dict(params)
    lifted = {key: params.pop(key) for key in RUN_SETTINGS if key in params}
    return {**data, **lifted, "params": params}


def resolve_train_config(
    schema: PreparedSchema, config: str | Path | dict | TrainConfig | None = None, **overrides
) -> TrainConfig:
    """The configuration a training run uses: the estimator suited to the prepared
    data's task unless one is named, ``random_state`` 0 unless set (a resumed run
    draws the same numbers), every parameter checked."""
    mapping = config_mapping(config)
    if overrides.get("estimator") is None and "estimator" not in mapping:
        overrides["estimator"] = DEFAULT_ESTIMATOR[schema.task]
    cfg = train_config(mapping if not isinstance(config, (str, Path)) else config, **overrides)
    if "random_state" not in cfg.params:
        cfg = cfg.model_copy(update={"params": {**cfg.params, "random_state": 0}})
    check_task(cfg, schema)
    if schema.task == "survival":  # the objective the labels call for (flows._survival)
        from flows._survival import survival_config

        cfg = survival_config(cfg, schema)
    check_constraint_columns(cfg, schema)
    from flows._targets import check_multi_output

    check_multi_output(cfg, schema)  # several targets: gradient boosting, what it supports
    return cfg


def check_constraint_columns(cfg: TrainConfig, schema: PreparedSchema) -> None:
    """``monotonic_cst`` / ``interaction_cst`` name columns of the prepared data
    (checked as ``fit`` will, before any cluster starts)."""
    from distboost import constraints

    names, categorical = schema.feature_names, schema.is_categorical
    if "monotonic_cst" in cfg.params:
        constraints.monotonic_constraints(cfg.params["monotonic_cst"], names, True,
                                          categorical, cfg.estimator)
    if "interaction_cst" in cfg.params:
        constraints.interaction_constraints(cfg.params["interaction_cst"], names, True,
                                            cfg.estimator)


def check_task(cfg: TrainConfig, schema: PreparedSchema) -> None:
    """The estimator suits the prepared data's task."""
    kind = {"classification": "Classifier", "ranking": "Ranker",
            "survival": "SurvivalRegressor"}.get(schema.task, "Regressor")
    if not cfg.estimator.endswith(kind) or (kind == "Regressor" and "Survival" in cfg.estimator):
        raise ValueError(
            f"{cfg.estimator} does not fit a {schema.task} target ({schema.target!r}); "
            f"use a {kind}"
        )
