"""Training callbacks of the gradient boosting estimators.

The interface is XGBoost's (``xgboost.callback.TrainingCallback``): after
every round ``fit`` calls ``after_iteration(model, epoch, evals_log)`` of each
callback object in its ``callbacks`` list. ``model`` is an estimator holding
the rounds fitted so far, as a fitted estimator would (``trees_``,
``base_score_``, ``bin_mapper_``...): ``model.save_model(path)`` writes them,
``model.predict(X)`` uses them. It is a copy made for the callbacks; the
estimator being fitted changes only when ``fit`` returns.

Plain functions ``cb(round_index, train_metric, eval_metrics)`` are still
accepted in the same list.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["TrainingCallback", "TrainingCheckPoint"]


class TrainingCallback:
    """Base class of the callbacks ``fit(callbacks=[...])`` calls after each round.

    Subclass it and override :meth:`after_iteration`.
    """

    def after_iteration(self, model, epoch: int, evals_log: dict) -> bool:
        """Called after round ``epoch``; return True to stop training.

        Parameters
        ----------
        model : estimator
            The model of rounds ``0 .. epoch`` (a continued model's rounds
            included): a fitted estimator of the class being trained.
        epoch : int
            The round just fitted, 0-based and numbered across continued
            training (``init_model``, ``warm_start``), so ``epoch + 1`` is
            the number of rounds ``model`` holds.
        evals_log : dict
            The metrics of this ``fit`` so far, as ``evals_result_`` holds
            them: ``{"validation_0": {"logloss": [...]}, "training": {...}}``.
            With ``init_model`` the lists start at the first new round.

        Returns
        -------
        bool
            True stops training after this round (all rounds so far are
            kept, unless ``early_stopping_rounds`` trims them to the best).
        """
        return False


class TrainingCheckPoint(TrainingCallback):
    """Save the model every ``interval`` rounds, as XGBoost's callback of that name.

    The file of a model of ``n`` rounds is ``directory/{name}-{n:05d}.json``
    (e.g. ``model-00020.json``), a model file that ``distboost.load_model``
    reads and ``fit(init_model=...)`` continues from. Rounds are counted over
    continued training, so checkpoints of a resumed run fall on the same
    rounds as those of an uninterrupted one. Each file is written atomically:
    a crash while saving never leaves a partial file under that name.

    Parameters
    ----------
    directory : str or path-like
        Folder of the checkpoints (created if needed).
    name : str, default "model"
        Prefix of the file names.
    interval : int >= 1, default 100
        Rounds between checkpoints.

    Examples
    --------
    >>> from distboost.callbacks import TrainingCheckPoint
    >>> every_ten = TrainingCheckPoint("checkpoints", interval=10)
    >>> every_ten.path(20).name
    'model-00020.json'
    """

    def __init__(self, directory: str | os.PathLike, name: str = "model", interval: int = 100):
        if not isinstance(interval, int) or isinstance(interval, bool) or interval < 1:
            raise ValueError(f"interval must be an int >= 1; got {interval!r}")
        self.directory = Path(directory)
        self.name = name
        self.interval = interval

    def path(self, n_rounds: int) -> Path:
        """The file of the checkpoint of ``n_rounds`` rounds."""
        return self.directory / f"{self.name}-{n_rounds:05d}.json"

    def after_iteration(self, model, epoch: int, evals_log: dict) -> bool:
        if (epoch + 1) % self.interval == 0:
            self.save(model, epoch + 1)
        return False

    def save(self, model, n_rounds: int) -> Path:
        """Write ``model`` (``n_rounds`` rounds) to :meth:`path` atomically; return the path."""
        path = self.path(n_rounds)
        path.parent.mkdir(parents=True, exist_ok=True)
        model.save_model(path)
        return path
