"""distboost: boosted and bagged tree ensembles on partitioned data with Dask."""

from . import binning, callbacks
from .engine.disk import DiskSpaceError
from .engine.lost_scheduler import SchedulerLostError, quiet_dask_noise
from .engine.sources import SourceChangedError, SourceError
from .estimators.adaboost import AdaBoostClassifier
from .estimators.bagging import BaggingClassifier, BaggingRegressor
from .estimators.forest import RandomForestClassifier, RandomForestRegressor
from .estimators.gradient_boosting import GradientBoostingClassifier, GradientBoostingRegressor
from .estimators.ranking import GradientBoostingRanker
from .estimators.survival import GradientBoostingSurvivalRegressor
from .estimators.voting import VotingClassifier, VotingRegressor
from .inputs import constraints
from .inputs.checks import InvalidParameterError, NotFittedError
from .model_file import ModelFileError, load_model
from .trees.tree import Tree

__version__ = "0.1.0"

__all__ = [
    "AdaBoostClassifier",
    "BaggingClassifier",
    "BaggingRegressor",
    "DiskSpaceError",
    "GradientBoostingClassifier",
    "GradientBoostingRanker",
    "GradientBoostingRegressor",
    "GradientBoostingSurvivalRegressor",
    "InvalidParameterError",
    "ModelFileError",
    "NotFittedError",
    "RandomForestClassifier",
    "RandomForestRegressor",
    "SchedulerLostError",
    "SourceChangedError",
    "SourceError",
    "Tree",
    "VotingClassifier",
    "VotingRegressor",
    "binning",
    "callbacks",
    "constraints",
    "load_model",
    "quiet_dask_noise",
]
