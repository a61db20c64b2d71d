"""DART's worker-side learner: gradient boosting's, with the round's dropped
trees taken out of the margins its gradients see (Rashmi & Gilad-Bachrach
2015, "DART: Dropouts meet Multiple Additive Regression Trees", Algorithm 1;
XGBoost's ``dart`` booster).

Row state: the margins of the whole model, f(x) = f_0 + sum_i w_i T_i(x)
(every tree i with its weight w_i). A round that drops the trees D computes
its statistics at f(x) - sum_{i in D} w_i T_i(x), in a buffer of its own:
the margins themselves are never changed by the drop, so nothing has to be
put back. The round's update then adds the new trees times their weight and
each dropped tree times the change of its weight (``scaled_rounds``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels.tree import copy_margins, pack_trees, predict_binned
from .gradient import GradientLearner, RoundTrees


def scaled_rounds(trees, factors, outputs) -> RoundTrees:
    """``trees`` packed with every node value of tree t multiplied by
    ``factors[t]``, tree t adding to output ``outputs[t]``.

    A leaf's value times the factor is what a row reaching it adds: the
    same product as ``w_i * T_i(x)``, so a factor of 1 leaves the trees as
    they are, to the bit.
    """
    nodes, roots, bitsets = pack_trees(list(trees))
    sizes = np.diff(np.append(roots, len(nodes)))
    nodes["value"] *= np.repeat(np.asarray(factors, np.float64), sizes)
    return RoundTrees(nodes, roots, bitsets, np.asarray(outputs, np.int64))


def dropped_margins(shard, margin, drop: RoundTrees):
    """margin - the dropped trees' weighted outputs (``drop``'s values are
    -w_i times the leaves), as a new array the shard lends."""
    out = shard.buffers.get("dart-margin", margin.shape, margin.dtype)
    copy_margins(margin, out)
    predict_binned(shard.X_binned, *drop, out)
    return out


@dataclass
class DartLearner(GradientLearner):
    """``GradientLearner`` whose statistics are taken at the margins without
    the dropped trees (``drop``: their values times -w_i; None: nothing
    dropped this round, the statistics are gradient boosting's to the bit).

    ``n_grown``: trees a round grows (K). An update that also re-weights
    dropped trees holds more trees than the round grew, so its rows are
    walked from the roots (``routed_places`` says None).
    """

    drop: RoundTrees | None = None
    n_grown: int = 1

    def row_stats(self, shard, margin, round_index):
        if self.drop is not None:
            margin = dropped_margins(shard, margin, self.drop)
        return super().row_stats(shard, margin, round_index)

    def routed_places(self, update: RoundTrees, split_history):
        if len(update.roots) != self.n_grown:
            return None
        return super().routed_places(update, split_history)
