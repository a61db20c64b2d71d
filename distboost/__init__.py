"""distboost: boosted and bagged tree ensembles on partitioned data with Dask."""

from . import binning, callbacks
from ._validation import InvalidParameterError, NotFittedError
from .ensemble.adaboost import AdaBoostClassifier
from .ensemble.bagging import BaggingClassifier, BaggingRegressor
from .ensemble.forest import RandomForestClassifier, RandomForestRegressor
from .ensemble.gradient_boosting import GradientBoostingClassifier, GradientBoostingRegressor
from .ensemble.voting import VotingClassifier, VotingRegressor
from .model_file import ModelFileError, load_model
from .tree import Tree

__version__ = "0.1.0"

__all__ = [
    "AdaBoostClassifier",
    "BaggingClassifier",
    "BaggingRegressor",
    "GradientBoostingClassifier",
    "GradientBoostingRegressor",
    "InvalidParameterError",
    "ModelFileError",
    "NotFittedError",
    "RandomForestClassifier",
    "RandomForestRegressor",
    "Tree",
    "VotingClassifier",
    "VotingRegressor",
    "binning",
    "callbacks",
    "load_model",
]
