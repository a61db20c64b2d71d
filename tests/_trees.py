"""Hand-made trees for tests."""

import numpy as np

from distboost.kernels.common import NODE_DTYPE
from distboost.trees.tree import Tree


def stump(left: float, right: float, feature: int = 0, bin_threshold: int = 1) -> Tree:
    """Rows with ``feature``'s bin <= ``bin_threshold`` go left."""
    nodes = np.zeros(3, NODE_DTYPE)
    nodes["feature"][0], nodes["bin_threshold"][0] = feature, bin_threshold
    nodes["left"][0], nodes["right"][0] = 1, 2
    nodes["is_leaf"][1:] = 1
    nodes["value"][1:] = (left, right)
    return Tree(nodes, np.zeros((0, 4), np.uint64))
