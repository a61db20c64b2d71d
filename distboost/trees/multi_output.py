"""Multi-output losses: k targets per row, one output (margin) per target.

``MultiOutputLoss`` applies a single-output loss to each of the k columns of
a target of shape (n_rows, k): the objective is the sum over targets,
L(y, f) = sum_j L_j(y_j, f_j), so its gradient and (diagonal) hessian for
output j are those of the single-output loss at column j (Chen & Guestrin
2016, eq. 2, applied per output). Squared error gives k-target regression;
binomial deviance gives multi-label classification with k independent
logistic outputs (Tsoumakas & Katakis 2007, "binary relevance").

With XGBoost's ``multi_strategy="one_output_per_tree"`` each round grows one
tree per output on that output's (g_j, h_j): the machinery of the
multinomial deviance's K trees per round (ESL Algorithm 10.4), with the
per-target statistics written exactly as the single-output loss writes them,
so each output's tree sees the integers a single-target fit sees at the same
fixed-point scales. With ``multi_strategy="multi_output_tree"`` each round
grows one tree on all the outputs' statistics (``trees.vector_leaves``).
"""

from __future__ import annotations

import numpy as np

from .losses import BinomialDeviance, Loss, SquaredError

MULTI_OUTPUT_LOSSES = {"regressor": ("squared_error",), "classifier": ("log_loss",)}
"""The losses a k-column target trains with, by kind of estimator."""

MULTI_STRATEGIES = ("one_output_per_tree", "multi_output_tree")
"""XGBoost's ``multi_strategy`` values distboost grows."""

def check_binary_labels(y: np.ndarray, names, where: str = "", offset: int = 0) -> None:
    """Refuse a multi-label target (n, k) holding a value other than 0 and 1,
    naming the column (``names[j]``), where (``where``), the row and the value."""
    bad = (y != 0) & (y != 1)
    if bad.any():
        i, j = map(int, np.argwhere(bad)[0])
        raise ValueError(
            f"multi-label classification takes a 0/1 indicator matrix, but the target's "
            f"{names[j]}{where} holds {float(y[i, j])!r} at row {i + offset}; binarize the "
            f"labels (e.g. sklearn.preprocessing.MultiLabelBinarizer)")



class MultiOutputLoss(Loss):
    """The sum over k targets of one single-output loss (see the module).

    Parameters
    ----------
    base : Loss
        ``SquaredError`` or ``BinomialDeviance``: one output, applied per column.
    n_targets : int >= 2
    """

    leaf_rule = "sums"
    init_quantile = None
    margin_range_bounds = False
    has_hessian = True

    def __init__(self, base: Loss, n_targets: int):
        self.base, self.n_targets = base, int(n_targets)
        self.name, self.metric_name = base.name, base.metric_name
        self.is_classification = base.is_classification

    def n_outputs(self, n_classes: int) -> int:
        return self.n_targets

    def init_statistics(self, y, w):
        """The base loss's statistics of every column, column after column
        (multi-label: labels other than 0 and 1 refused, naming the column)."""
        if self.is_classification:
            check_binary_labels(y, [f"column {j}" for j in range(y.shape[1])], " (a partition)")
        return [s for j in range(self.n_targets) for s in self.base.init_statistics(y[:, j], w)]

    def init_score(self, sums, n_outputs):
        """Each target's f_0 from its own sums: the single-output loss's f_0. A
        label column of one value only (its log-odds infinite) is refused, naming it."""
        m = len(sums) // self.n_targets
        for j in range(self.n_targets if self.is_classification else 0):
            positive, total = sums[j * m:j * m + 2]
            if not 0.0 < positive < total:
                raise ValueError(
                    f"label column {j} holds one value only (all {int(positive > 0)} among the "
                    f"rows with positive weight), so its log-odds f_0 is infinite; drop that "
                    f"column or add rows of the other value")
        return np.concatenate([self.base.init_score(sums[j * m:(j + 1) * m], 1)
                               for j in range(self.n_targets)])

    def gradients(self, y, raw, w):
        gh = [self.base.gradients(y[:, j], raw[j:j + 1], w) for j in range(self.n_targets)]
        return np.concatenate([g for g, _ in gh]), np.concatenate([h for _, h in gh])

    def fixed_point_stats(self, y, raw, w, scales, out):
        """Output j's rows written by the base loss into ``out[j]``: the same
        integers a single-target fit on column j writes at the same scales."""
        for j in range(self.n_targets):
            self.base.fixed_point_stats(np.ascontiguousarray(y[:, j]), raw[j:j + 1], w, scales,
                                        out[j:j + 1])
        return out

    def gradient_bounds(self, y_absmax, w_max, margin_absmax):
        return self.base.gradient_bounds(y_absmax, w_max, margin_absmax)

    def pointwise(self, y, raw):
        """The row's loss averaged over the targets."""
        return np.mean([self.base.pointwise(y[:, j], raw[j:j + 1])
                        for j in range(self.n_targets)], axis=0)

    def metric_pointwise(self, y, raw):
        """The base metric's per-row values averaged over the targets (XGBoost
        averages its multi-target "rmse" and "logloss" over every entry)."""
        return np.mean([self.base.metric_pointwise(y[:, j], raw[j:j + 1])
                        for j in range(self.n_targets)], axis=0)

    def finish_metric(self, mean):
        return self.base.finish_metric(mean)

    def prediction(self, raw):
        return np.asarray(raw).T

    def predict_proba(self, raw):
        """P(label j = 1) per row and target, shape (n_rows, k)."""
        return np.column_stack([self.base.predict_proba(raw[j:j + 1])[:, 1]
                                for j in range(self.n_targets)])

    def __reduce__(self):
        return MultiOutputLoss, (self.base, self.n_targets)


def make_multi_output_loss(name: str, classifier: bool, n_targets: int) -> MultiOutputLoss:
    """The multi-output loss of an estimator's ``loss`` for a k-column target;
    raises ValueError naming the loss and those that are supported."""
    kind = "classifier" if classifier else "regressor"
    if name not in MULTI_OUTPUT_LOSSES[kind]:
        raise ValueError(
            f"loss={name!r} does not support a multi-output target ({n_targets} columns); the "
            f"{kind} trains k targets with loss in {list(MULTI_OUTPUT_LOSSES[kind])} only: fit "
            f"one model per target for the others")
    return MultiOutputLoss(BinomialDeviance() if classifier else SquaredError(), n_targets)
