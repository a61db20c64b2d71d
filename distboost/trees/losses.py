"""Loss functions: gradients, hessians, initial scores, links and metrics.

A loss sees raw scores of shape (n_outputs, n_rows): one output for
regression and binary classification, K for multinomial deviance (K trees per
round, ESL Algorithm 10.4).

``gradients`` returns g = dL/df and h = d^2L/df^2 per row (the second-order
Taylor expansion of Chen & Guestrin 2016, eq. 2), multiplied by the
sample weight. Initial scores (ESL Algorithm 10.3 step 1,
f_0 = argmin_gamma sum_i w_i L(y_i, gamma)) come either from exact sums over
all partitions (``init_statistics`` per partition, ``init_score`` on the
driver) or, for the robust losses, from an exact weighted quantile of y
(``init_quantile``; see ``line_search``).

Each loss also names its per-leaf line search (ESL Algorithm 10.3 step 2(c),
Friedman 2001 "TreeBoost"): ``leaf_rule`` is ``"quantile"`` (absolute error,
quantile), ``"huber"`` (median plus the mean of clipped deviations) or
``"sums"`` (a ratio of per-leaf sums: the exact minimizer for squared error and
exponential loss, one Newton step for deviance).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..kernels import libm
from ..kernels.fixed_point import gradient_stats
from ..kernels.losses import binomial_gradients, binomial_stats, sigmoid


def softmax(raw: np.ndarray) -> np.ndarray:
    """Column-wise softmax of raw scores of shape (K, n)."""
    z = libm.exp(raw - raw.max(axis=0, keepdims=True))
    return z / z.sum(axis=0, keepdims=True)


def _ratio(num: Fraction | int, den: Fraction | int) -> float:
    """num / den correctly rounded; 0 when den is 0."""
    return float(Fraction(num) / Fraction(den)) if den != 0 else 0.0


class Loss:
    """Interface; see the subclasses."""

    name: str
    metric_name: str
    is_classification = False
    has_hessian = True
    """False when d^2L/df^2 is 0 almost everywhere: Newton leaves are undefined."""
    leaf_rule = "sums"
    init_quantile: float | None = None
    """alpha when f_0 is the weighted alpha-quantile of y, else None."""

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

    def fixed_point_stats(self, y, raw, w, scales, out):
        """(g, h, 1) or (g, h) of every row in fixed point (``_fixed_point.gradient_stats``),
        written into ``out`` of shape (n_outputs, n_rows, 3 or 2), int64."""
        g, h = self.gradients(y, raw, w)
        return gradient_stats(g, h, scales, out)

    def gradient_bounds(self, y_absmax: float, w_max: float, margin_absmax: float):
        """Upper bounds of |g| and h over all rows, known on the driver.

        They fix the fixed-point scale of a round without a pass over the
        data; bounds for classification follow from |p - y| <= 1 and
        p(1 - p) <= 1/4.
        """
        return w_max, 0.25 * w_max

    margin_range_bounds = False
    """True when |g| and h are bounded through the margins' exact range, measured
    each round (``gradient_bounds_in``), rather than through ``gradient_bounds``."""

    def prediction(self, raw) -> np.ndarray:
        """A regressor's prediction from its raw scores: f itself (identity link)."""
        return raw[0]

    def pointwise(self, y, raw):
        """Per-row loss L(y, f) (before weighting and averaging)."""
        raise NotImplementedError

    def metric_pointwise(self, y, raw):
        """Per-row evaluation metric; the loss itself unless a loss says otherwise."""
        return self.pointwise(y, raw)

    def finish_metric(self, mean: float) -> float:
        return mean

    # ---------------------------------------------------- line search (sums)
    def leaf_sums(self, y, raw, w) -> list[np.ndarray]:
        """Per-row arrays (each (n_outputs, n_rows)) whose per-leaf exact sums
        give the leaf value through ``leaf_value``."""
        raise NotImplementedError

    def leaf_value(self, sums) -> float:
        """Leaf value from the exact per-leaf sums of ``leaf_sums``."""
        raise NotImplementedError


class SquaredError(Loss):
    """L = (y - f)^2; g = 2(f - y), h = 2 (the convention of Chen & Guestrin 2016, eq. 2, with l = (y - f)^2).

    With this convention the split gain of the worked example in
    ``tests/test_splitting.py`` is 120.33; XGBoost's reg:squarederror uses L/2, so our ``reg_lambda`` and
    ``min_child_weight`` are twice XGBoost's for the same effect. The line
    search is the leaf's weighted mean residual (ESL 10.10, LS_Boost).
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

    def leaf_sums(self, y, raw, w):
        return [(w * (y - raw[0]))[None, :], w[None, :]]

    def leaf_value(self, sums):
        return _ratio(sums[0], sums[1])


class AbsoluteError(Loss):
    """L = |y - f|; g = -sign(y - f), h = 0 (ESL Table 10.2, LAD regression).

    The tree is fit to sign(y - f) by least squares and each leaf's value is
    the weighted median of its residuals (Friedman 2001, LAD_TreeBoost);
    f_0 is the weighted median of y.
    """

    name, metric_name = "absolute_error", "mae"
    has_hessian = False
    leaf_rule = "quantile"
    init_quantile = 0.5
    alpha = 0.5

    def gradients(self, y, raw, w):
        g = -np.sign(y - raw[0]) * w
        return g[None, :], np.zeros_like(g)[None, :]

    def gradient_bounds(self, y_absmax, w_max, margin_absmax):
        return w_max, w_max

    def pointwise(self, y, raw):
        return np.abs(y - raw[0])


class QuantileLoss(Loss):
    """Pinball loss L = alpha (y - f) if y >= f else (1 - alpha)(f - y).

    g = -alpha where y > f, 1 - alpha where y < f (0 at y = f, a
    subgradient); h = 0. Leaf values and f_0 are weighted alpha-quantiles
    (of residuals, of y), the exact minimizers.
    """

    name, metric_name = "quantile", "pinball"
    has_hessian = False
    leaf_rule = "quantile"

    def __init__(self, alpha: float):
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"quantile loss needs 0 < alpha < 1, got alpha={alpha!r}")
        self.alpha = float(alpha)
        self.init_quantile = self.alpha

    def gradients(self, y, raw, w):
        r = y - raw[0]
        g = np.where(r > 0, -self.alpha, np.where(r < 0, 1.0 - self.alpha, 0.0)) * w
        return g[None, :], np.zeros_like(g)[None, :]

    def gradient_bounds(self, y_absmax, w_max, margin_absmax):
        return max(self.alpha, 1.0 - self.alpha) * w_max, w_max

    def pointwise(self, y, raw):
        r = y - raw[0]
        return np.where(r >= 0, self.alpha * r, (self.alpha - 1.0) * r)


class HuberLoss(Loss):
    """Huber's loss, Friedman's M-regression (ESL 10.6, Table 10.2).

    L = r^2 if |r| <= delta, else 2 delta |r| - delta^2 (r = y - f: the
    squared-error convention of ``SquaredError``); g = -2 clip(r, -delta,
    delta), h = 2 [|r| <= delta]. delta is the alpha-quantile of |r| over the
    training rows at the start of each round (Friedman 2001, M_TreeBoost),
    set with ``with_delta``. The leaf value is the Huber M-estimate's one-step
    approximation: the weighted median r~ of the leaf's residuals plus the
    weighted mean of clip(r - r~, -delta, delta). The evaluation metric is the
    mean absolute error (delta changes every round; the metric should not).
    """

    name, metric_name = "huber", "mae"
    has_hessian = False
    leaf_rule = "huber"
    init_quantile = 0.5

    def __init__(self, alpha: float = 0.9, delta: float = np.inf):
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"huber loss needs 0 < alpha < 1, got alpha={alpha!r}")
        self.alpha = float(alpha)
        self.delta = float(delta)

    def with_delta(self, delta: float) -> HuberLoss:
        return HuberLoss(self.alpha, delta)

    def gradients(self, y, raw, w):
        r = y - raw[0]
        g = -2.0 * np.clip(r, -self.delta, self.delta) * w
        h = 2.0 * (np.abs(r) <= self.delta) * w
        return g[None, :], h[None, :]

    def gradient_bounds(self, y_absmax, w_max, margin_absmax):
        reach = min(self.delta, y_absmax + margin_absmax)
        return 2.0 * w_max * reach, 2.0 * w_max

    def pointwise(self, y, raw):
        a = np.abs(y - raw[0])
        m = np.minimum(a, self.delta)
        return m * (2.0 * a - m)  # a^2 if a <= delta, else 2 delta a - delta^2

    def metric_pointwise(self, y, raw):
        return np.abs(y - raw[0])


class BinomialDeviance(Loss):
    """L = log(1 + e^f) - y f with y in {0, 1} and f the log-odds.

    This is ESL's binomial deviance log(1 + e^{-2 y' F}) (y' in {-1, 1}) with
    f = 2F; g = p - y, h = p(1 - p). The line search is one Newton step,
    sum_leaf w (y - p) / sum_leaf w p (1 - p) (Friedman 2001, L2_TreeBoost in
    the units of f).
    """

    name, metric_name, is_classification = "log_loss", "logloss", True

    def init_statistics(self, y, w):
        return [w * y, w]

    def init_score(self, sums, n_outputs):
        p = sums[0] / sums[1]
        return np.array([libm.log(p / (1.0 - p))])

    def fixed_point_stats(self, y, raw, w, scales, out):
        binomial_stats(np.asarray(y, np.float64), np.ascontiguousarray(raw[0], dtype=np.float64),
                        np.asarray(w, np.float64), float(scales[0]), float(scales[1]), out[0])
        return out

    def gradients(self, y, raw, w):
        f = np.ascontiguousarray(raw[0], dtype=np.float64)
        g, h = np.empty((1, len(f))), np.empty((1, len(f)))
        binomial_gradients(np.asarray(y, np.float64), f, np.asarray(w, np.float64), g[0], h[0])
        return g, h

    def pointwise(self, y, raw):
        f = raw[0]
        # log(1 + e^f) - y f, computed stably
        return np.logaddexp(0.0, f) - y * f

    def predict_proba(self, raw):
        p = sigmoid(raw[0])
        return np.column_stack([1.0 - p, p])

    def leaf_sums(self, y, raw, w):
        p = sigmoid(raw[0])
        return [(w * (y - p))[None, :], (w * p * (1.0 - p))[None, :]]

    def leaf_value(self, sums):
        return _ratio(sums[0], sums[1])


class MultinomialDeviance(Loss):
    """L = -sum_k y_k f_k + log sum_k e^{f_k} (ESL 10.10, Table 10.2).

    K outputs, softmax link; g_k = p_k - y_k, h_k = p_k (1 - p_k) (the diagonal
    of the Hessian). f_0k = log(pi_k), the class priors. The line search is
    ESL Algorithm 10.4's step (K-1)/K sum r / sum |r| (1 - |r|) with
    r = y_k - p_k (|r| (1 - |r|) = p_k (1 - p_k)).
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
        return libm.log(prior)

    def gradients(self, y, raw, w):
        p = softmax(raw)
        onehot = np.arange(self.n_classes)[:, None] == y[None, :].astype(np.int64)
        return (p - onehot) * w, p * (1.0 - p) * w

    def pointwise(self, y, raw):
        m = raw.max(axis=0)
        lse = m + libm.log(libm.exp(raw - m).sum(axis=0))
        return lse - raw[y.astype(np.int64), np.arange(raw.shape[1])]

    def predict_proba(self, raw):
        return softmax(raw).T

    def leaf_sums(self, y, raw, w):
        p = softmax(raw)
        onehot = np.arange(self.n_classes)[:, None] == y[None, :].astype(np.int64)
        r = onehot - p
        a = np.abs(r)
        return [w * r, w * a * (1.0 - a)]

    def leaf_value(self, sums):
        k = self.n_classes
        return (k - 1) / k * _ratio(sums[0], sums[1])


class ExponentialLoss(Loss):
    """AdaBoost's loss as gradient boosting: L = exp(-y' f), y' = 2y - 1
    (ESL 10.4-10.5).

    g = -y' e^{-y' f}, h = e^{-y' f}. f estimates half the log-odds (ESL eq.
    10.16), so P(y = 1 | x) = 1 / (1 + e^{-2f}). f_0 and the line search are
    exact: gamma = 1/2 log(S+ / S-) with S+- the weighted sums of e^{-y' f}
    over the leaf's rows of each class (ESL 10.9); a leaf holding one class
    only (the minimizer is infinite) takes the Newton step -G/H instead.
    """

    name, metric_name, is_classification = "exponential", "exponential", True

    def init_statistics(self, y, w):
        return [w * y, w * (1.0 - y)]

    def init_score(self, sums, n_outputs):
        pos, neg = sums
        if pos <= 0 or neg <= 0:
            return np.array([0.0])
        return np.array([0.5 * libm.log(pos / neg)])

    def gradients(self, y, raw, w):
        s = 2.0 * y - 1.0
        e = libm.exp(-s * raw[0]) * w
        return (-s * e)[None, :], e[None, :]

    def gradient_bounds(self, y_absmax, w_max, margin_absmax):
        b = w_max * libm.exp(margin_absmax)
        return b, b

    def pointwise(self, y, raw):
        return libm.exp(-(2.0 * y - 1.0) * raw[0])

    def predict_proba(self, raw):
        p = sigmoid(2.0 * raw[0])
        return np.column_stack([1.0 - p, p])

    def leaf_sums(self, y, raw, w):
        e = w * libm.exp(-(2.0 * y - 1.0) * raw[0])
        return [(e * y)[None, :], (e * (1.0 - y))[None, :]]

    def leaf_value(self, sums):
        pos, neg = Fraction(sums[0]), Fraction(sums[1])
        if pos > 0 and neg > 0:
            return 0.5 * float(libm.log(float(pos)) - libm.log(float(neg)))
        return _ratio(pos - neg, pos + neg)


class LogLinkLoss(Loss):
    """Base of the losses with a log link: f = log mu, ``predict`` returns mu = e^f.

    L is the negative log-likelihood in f (half the deviance, up to a term in
    y only), as XGBoost's count:poisson / reg:gamma / reg:tweedie and
    scikit-learn's HalfPoissonLoss / HalfGammaLoss / HalfTweedieLoss, so
    ``reg_lambda`` and ``min_child_weight`` mean what they mean there. f_0 is
    log of the weighted mean of y (the exact minimizer; exact sums over all
    partitions); leaves are Newton steps -G/(H+lambda), or with
    ``leaf_estimation="line_search"`` one Newton step on the leaf's rows
    (sum w (-g) / sum w h, Friedman's L2_TreeBoost step).

    Fixed-point scales: |g| and h grow like e^f, so a bound from the sum of
    the trees' largest leaves (the other losses' ``gradient_bounds``) would
    drift far above the rows' real range over many rounds and cost precision.
    Instead the margins' exact minimum and maximum over all rows are measured
    at the start of each round (one small pass, order-independent, so every
    partitioning gets the same scale) and the pending trees' extreme leaves
    added; ``gradient_bounds_in`` turns that range into bounds. There is no
    ``max_delta_step``: XGBoost's count:poisson clips leaves at 0.7 and
    inflates its hessian by e^0.7 to safeguard the Newton step; we follow
    scikit-learn's HistGradientBoostingRegressor, which does neither, and
    leave step size to the learning rate (``reg_lambda`` also damps the
    steps of leaves whose hessian sum e^f is small).
    """

    margin_range_bounds = True

    def init_statistics(self, y, w):
        return [w * y, w]

    def init_score(self, sums, n_outputs):
        if not sums[0] > 0:
            raise ValueError(
                f"loss={self.name!r}: the target is 0 on every row with a positive weight, so "
                f"its mean is 0 and its log (the initial score) is -inf; a log-link model "
                f"needs some positive targets")
        return np.array([libm.log(sums[0] / sums[1])])

    def prediction(self, raw):
        return libm.exp(raw[0])

    def gradients(self, y, raw, w):
        g, h = self._gh(np.asarray(y, np.float64), np.asarray(raw[0], np.float64))
        return (g * w)[None, :], (h * w)[None, :]

    def leaf_sums(self, y, raw, w):
        g, h = self.gradients(y, raw, w)
        return [-g, h]

    def leaf_value(self, sums):
        return _ratio(sums[0], sums[1])

    def metric_pointwise(self, y, raw):
        """The deviance (twice the pointwise loss, up to its minimum)."""
        return self.deviance(y, self.prediction(raw))

    def pointwise(self, y, raw):
        return 0.5 * self.metric_pointwise(y, raw)

    def check_target(self, y) -> np.ndarray:
        """Rows whose finite target the loss refuses (bool mask; NaN and inf are the
        data checks' to refuse)."""
        return np.isfinite(y) & ((y < 0) if self.y_may_be_zero else (y <= 0))


def _xlogy(x, y):
    """x log y, 0 where x = 0."""
    return np.where(x > 0, x * libm.log(np.where(x > 0, y, 1.0)), 0.0)


class PoissonLoss(LogLinkLoss):
    """Poisson deviance, log link: L = e^f - y f; g = e^f - y, h = e^f (y >= 0).

    Deviance 2 (y log(y / mu) - y + mu), scikit-learn's ``mean_poisson_deviance``.
    """

    name, metric_name = "poisson", "poisson_deviance"
    y_may_be_zero = True

    def _gh(self, y, f):
        mu = libm.exp(f)
        return mu - y, mu

    def gradient_bounds_in(self, y_max, w_max, f_lo, f_hi):
        """Bounds of |g| and h for margins in [f_lo, f_hi] (|e^f - y| <= max(e^f, y))."""
        mu = libm.exp(f_hi)
        return w_max * max(mu, y_max), w_max * mu

    @staticmethod
    def deviance(y, mu):
        return 2.0 * (_xlogy(y, y / mu) - y + mu)


class GammaLoss(LogLinkLoss):
    """Gamma deviance, log link: L = y e^{-f} + f; g = 1 - y e^{-f}, h = y e^{-f} (y > 0).

    Deviance 2 (log(mu / y) + y / mu - 1), scikit-learn's ``mean_gamma_deviance``.
    """

    name, metric_name = "gamma", "gamma_deviance"
    y_may_be_zero = False

    def _gh(self, y, f):
        r = y * libm.exp(-f)
        return 1.0 - r, r

    def gradient_bounds_in(self, y_max, w_max, f_lo, f_hi):
        """|1 - y e^{-f}| <= max(1, y e^{-f}), largest at f_lo."""
        r = y_max * libm.exp(-f_lo)
        return w_max * max(1.0, r), w_max * r

    @staticmethod
    def deviance(y, mu):
        return 2.0 * (libm.log(mu / y) + y / mu - 1.0)


class TweedieLoss(LogLinkLoss):
    """Tweedie deviance with power rho in (1, 2), log link (y >= 0; XGBoost's reg:tweedie):

    L = -y e^{(1-rho) f} / (1 - rho) + e^{(2-rho) f} / (2 - rho),
    g = -y e^{(1-rho) f} + e^{(2-rho) f},
    h = -(1 - rho) y e^{(1-rho) f} + (2 - rho) e^{(2-rho) f} (> 0).

    Deviance 2 (y^{2-rho} / ((1-rho)(2-rho)) - y mu^{1-rho} / (1-rho)
    + mu^{2-rho} / (2-rho)), scikit-learn's ``mean_tweedie_deviance(power=rho)``.
    """

    name, metric_name = "tweedie", "tweedie_deviance"
    y_may_be_zero = True

    def __init__(self, power: float = 1.5):
        if not 1.0 < power < 2.0:
            raise ValueError(f"loss='tweedie' needs 1 < tweedie_variance_power < 2, got {power!r}")
        self.power = float(power)

    def _gh(self, y, f):
        p = self.power
        a, b = y * libm.exp((1.0 - p) * f), libm.exp((2.0 - p) * f)
        return b - a, (p - 1.0) * a + (2.0 - p) * b

    def gradient_bounds_in(self, y_max, w_max, f_lo, f_hi):
        """y e^{(1-rho) f} is largest at f_lo, e^{(2-rho) f} at f_hi."""
        p = self.power
        a, b = y_max * libm.exp((1.0 - p) * f_lo), libm.exp((2.0 - p) * f_hi)
        return w_max * max(a, b), w_max * ((p - 1.0) * a + (2.0 - p) * b)

    def deviance(self, y, mu):
        p = self.power
        return 2.0 * (libm.power(y, 2.0 - p) / ((1.0 - p) * (2.0 - p))
                      - y * libm.power(mu, 1.0 - p) / (1.0 - p) + libm.power(mu, 2.0 - p) / (2.0 - p))


LOG_LINK_LOSSES = ("poisson", "gamma", "tweedie")
REGRESSION_LOSSES = ("squared_error", "absolute_error", "huber", "quantile", *LOG_LINK_LOSSES)
CLASSIFICATION_LOSSES = ("log_loss", "exponential")


def make_loss(name: str, n_classes: int | None = None, alpha: float = 0.9,
              tweedie_variance_power: float = 1.5) -> Loss:
    """Loss object for an estimator's ``loss`` parameter.

    ``alpha`` is the quantile of ``"quantile"`` and the residual quantile that
    sets Huber's delta (scikit-learn's convention, default 0.9);
    ``tweedie_variance_power`` the power of ``"tweedie"``.
    """
    if n_classes is None:
        if name in LOG_LINK_LOSSES:
            return {"poisson": PoissonLoss, "gamma": GammaLoss}.get(
                name, lambda: TweedieLoss(tweedie_variance_power))()
        if name == "squared_error":
            return SquaredError()
        if name == "absolute_error":
            return AbsoluteError()
        if name == "huber":
            return HuberLoss(alpha)
        if name == "quantile":
            return QuantileLoss(alpha)
        raise ValueError(f"unknown regression loss {name!r}; choose one of {REGRESSION_LOSSES}")
    if name == "log_loss":
        return BinomialDeviance() if n_classes == 2 else MultinomialDeviance(n_classes)
    if name == "exponential":
        if n_classes != 2:
            raise ValueError(
                f"loss='exponential' is for two classes (AdaBoost's loss); the target has "
                f"{n_classes}: use loss='log_loss'"
            )
        return ExponentialLoss()
    raise ValueError(f"unknown classification loss {name!r}; choose one of {CLASSIFICATION_LOSSES}")
