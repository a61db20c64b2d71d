"""distboost: boosted and bagged tree ensembles on partitioned data with Dask."""

from .ensemble.gradient_boosting import GradientBoostingClassifier, GradientBoostingRegressor
from .model_file import load_model
from .tree import Tree

__version__ = "0.1.0"

__all__ = [
    "GradientBoostingClassifier",
    "GradientBoostingRegressor",
    "Tree",
    "load_model",
]
