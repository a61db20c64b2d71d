"""Loss functions: gradients, hessians, initial scores, links and metrics.

A loss sees raw scores of shape (n_outputs, n_rows): one output for
regression and binary classification, K for multinomial deviance (K trees per
round, ESL Algorithm 10.4; seed 001).

``gradients`` returns g = dL/df and h = d^2L/df^2 per row (the second-order
Taylor expansion of seed 003 / Chen & Guestrin 2016 eq. 2), multiplied by the
sample weight. Initial scores (ESL Algorithm 10.3 step 1,
f_0 = argmin_gamma sum_i w_i L(y_i, gamma)) come from exact sums over all
partitions: ``init_statistics`` per partition, ``init_score`` on the driver.
"""

from __future__ import annotations

import numpy as np


def sigmoid(x: np.ndarray) -> np.ndarray:
    """Logistic function 1 / (1 + exp(-x)), without overflow."""
    out = np.empty_like(x, dtype=np.float64)
    pos = x >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-x[pos]))
    ex = np.exp(x[~pos])
    out[~pos] = ex / (1.0 + ex)
    return out


def softmax(raw: np.ndarray) -> np.ndarray:
    """Column-wise softmax of raw scores of shape (K, n)."""
    z = np.exp(raw - raw.max(axis=0, keepdims=True))
    return z / z.sum(axis=0, keepdims=True)


class Loss:
    """Interface; see the subclasses."""

    name: str
    metric_name: str
    is_classification = False

    def n_outputs(self, n_classes: int) -> int:
        return 1

    def init_statistics(self, y: np.ndarray, w: np.ndarray) -> list[np.ndarray]:
        """Arrays whose exact sums over all rows determine f_0."""
        raise NotImplementedError

    def init_score(self, sums: list[float], n_outputs: int) -> np.ndarray:
        """f_0 of shape (n_outputs,) from the summed ``init_statistics``."""
        raise NotImplementedError

    def gradients(self, y, raw, w):
        """Weighted g and h, each of shape (n_outputs, n_rows)."""
        raise NotImplementedError

    def gradient_bounds(self, y_absmax: float, w_max: float, margin_absmax: float):
        """Upper bounds of |g| and h over all rows, known on the driver.

        They fix the fixed-point scale of a round without a pass over the
        data; bounds for classification follow from |p - y| <= 1 and
        p(1 - p) <= 1/4.
        """
        return w_max, 0.25 * w_max

    def pointwise(self, y, raw):
        """Per-row loss used as the evaluation metric (before averaging)."""
        raise NotImplementedError

    def finish_metric(self, mean: float) -> float:
        return mean


class SquaredError(Loss):
    """L = (y - f)^2; g = 2(f - y), h = 2 (seed 003's convention).

    With this convention the split gain of seed 003's worked example is
    120.33; XGBoost's reg:squarederror uses L/2, so our ``reg_lambda`` and
    ``min_child_weight`` are twice XGBoost's for the same effect.
    """

    name, metric_name = "squared_error", "rmse"

    def init_statistics(self, y, w):
        return [w * y, w]

    def init_score(self, sums, n_outputs):
        return np.array([sums[0] / sums[1]])

    def gradients(self, y, raw, w):
        g = 2.0 * (raw[0] - y) * w
        return g[None, :], np.broadcast_to(2.0 * w, g.shape)[None, :].copy()

    def pointwise(self, y, raw):
        return (y - raw[0]) ** 2

    def gradient_bounds(self, y_absmax, w_max, margin_absmax):
        return 2.0 * w_max * (y_absmax + margin_absmax), 2.0 * w_max

    def finish_metric(self, mean):
        return float(np.sqrt(mean))


class BinomialDeviance(Loss):
    """L = log(1 + e^f) - y f with y in {0, 1} and f the log-odds.

    This is ESL's binomial deviance log(1 + e^{-2 y' F}) (y' in {-1, 1}) with
    f = 2F; g = p - y, h = p(1 - p).
    """

    name, metric_name, is_classification = "log_loss", "logloss", True

    def init_statistics(self, y, w):
        return [w * y, w]

    def init_score(self, sums, n_outputs):
        p = sums[0] / sums[1]
        return np.array([np.log(p / (1.0 - p))])

    def gradients(self, y, raw, w):
        p = sigmoid(raw[0])
        return ((p - y) * w)[None, :], (p * (1.0 - p) * w)[None, :]

    def pointwise(self, y, raw):
        f = raw[0]
        # log(1 + e^f) - y f, computed stably
        return np.logaddexp(0.0, f) - y * f

    def predict_proba(self, raw):
        p = sigmoid(raw[0])
        return np.column_stack([1.0 - p, p])


class MultinomialDeviance(Loss):
    """L = -sum_k y_k f_k + log sum_k e^{f_k} (ESL 10.10, seed 001 table).

    K outputs, softmax link; g_k = p_k - y_k, h_k = p_k (1 - p_k) (the diagonal
    of the Hessian). f_0k = log(pi_k), the class priors.
    """

    name, metric_name, is_classification = "log_loss", "mlogloss", True

    def __init__(self, n_classes: int):
        self.n_classes = n_classes

    def n_outputs(self, n_classes):
        return n_classes

    def init_statistics(self, y, w):
        return [w * (y == k) for k in range(self.n_classes)]

    def init_score(self, sums, n_outputs):
        prior = np.asarray(sums) / np.sum(sums)
        return np.log(prior)

    def gradients(self, y, raw, w):
        p = softmax(raw)
        onehot = np.arange(self.n_classes)[:, None] == y[None, :].astype(np.int64)
        return (p - onehot) * w, p * (1.0 - p) * w

    def pointwise(self, y, raw):
        m = raw.max(axis=0)
        lse = m + np.log(np.exp(raw - m).sum(axis=0))
        return lse - raw[y.astype(np.int64), np.arange(raw.shape[1])]

    def predict_proba(self, raw):
        return softmax(raw).T


def make_loss(name: str, n_classes: int | None = None) -> Loss:
    """Loss object for an estimator's ``loss`` parameter."""
    if name == "squared_error":
        return SquaredError()
    if name == "log_loss":
        return BinomialDeviance() if n_classes == 2 else MultinomialDeviance(n_classes)
    raise ValueError(f"unknown loss {name!r}")
