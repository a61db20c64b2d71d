"""Losses: finite-difference gradients and hessians, initial scores, bounds,
line-search rules on hand-checkable leaves."""

from fractions import Fraction

import numpy as np
import pytest

from distboost.kernels import libm
from distboost.trees.losses import (
    AbsoluteError,
    BinomialDeviance,
    ExponentialLoss,
    GammaLoss,
    HuberLoss,
    MultinomialDeviance,
    PoissonLoss,
    QuantileLoss,
    SquaredError,
    TweedieLoss,
    make_loss,
)

rng = np.random.default_rng(0)
N = 200
Y_REG = rng.normal(size=N) * 3
Y_BIN = (rng.random(N) < 0.4).astype(float)
Y_MULTI = rng.integers(0, 3, N).astype(float)
W = rng.uniform(0.5, 2.0, N)
Y_COUNT = rng.poisson(2.0, N).astype(float)  # zeros included
Y_POSITIVE = rng.gamma(2.0, 1.5, N)

LOSSES = [
    (SquaredError(), Y_REG, 1),
    (AbsoluteError(), Y_REG, 1),
    (QuantileLoss(0.2), Y_REG, 1),
    (QuantileLoss(0.9), Y_REG, 1),
    (HuberLoss(0.9, delta=1.3), Y_REG, 1),
    (BinomialDeviance(), Y_BIN, 1),
    (ExponentialLoss(), Y_BIN, 1),
    (MultinomialDeviance(3), Y_MULTI, 3),
    (PoissonLoss(), Y_COUNT, 1),
    (GammaLoss(), Y_POSITIVE, 1),
    (TweedieLoss(1.5), Y_COUNT * 1.7, 1),
    (TweedieLoss(1.2), Y_POSITIVE, 1),
]


def _raw(k):
    return rng.normal(size=(k, N))


@pytest.mark.parametrize("loss,y,k", LOSSES, ids=lambda v: getattr(v, "name", ""))
def test_gradient_is_the_derivative_of_the_weighted_loss(loss, y, k):
    raw = _raw(k)
    eps = 1e-6
    g, _ = loss.gradients(y, raw, W)
    for j in range(k):
        up, down = raw.copy(), raw.copy()
        up[j] += eps
        down[j] -= eps
        fd = W * (loss.pointwise(y, up) - loss.pointwise(y, down)) / (2 * eps)
        np.testing.assert_allclose(g[j], fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("loss,y,k", LOSSES, ids=lambda v: getattr(v, "name", ""))
def test_hessian_is_the_derivative_of_the_gradient(loss, y, k):
    raw = _raw(k)
    eps = 1e-6
    _, h = loss.gradients(y, raw, W)
    for j in range(k):
        up, down = raw.copy(), raw.copy()
        up[j] += eps
        down[j] -= eps
        fd = (loss.gradients(y, up, W)[0][j] - loss.gradients(y, down, W)[0][j]) / (2 * eps)
        np.testing.assert_allclose(h[j], fd, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("loss,y,k", LOSSES, ids=lambda v: getattr(v, "name", ""))
def test_gradient_bounds_hold(loss, y, k):
    raw = _raw(k)
    g, h = loss.gradients(y, raw, W)
    if loss.margin_range_bounds:  # log link: from the margins' range
        g_bound, h_bound = loss.gradient_bounds_in(y.max(), W.max(), raw.min(), raw.max())
    else:
        g_bound, h_bound = loss.gradient_bounds(np.abs(y).max(), W.max(), np.abs(raw).max())
    assert np.abs(g).max() <= g_bound
    assert h.max() <= h_bound
    assert h.min() >= 0


def test_huber_with_infinite_delta_is_squared_error():
    raw = _raw(1)
    np.testing.assert_array_equal(HuberLoss(0.9).pointwise(Y_REG, raw),
                                  SquaredError().pointwise(Y_REG, raw))
    np.testing.assert_array_equal(HuberLoss(0.9).gradients(Y_REG, raw, W)[0],
                                  SquaredError().gradients(Y_REG, raw, W)[0])


def test_huber_hand_values():
    loss = HuberLoss(0.9, delta=1.0)
    y = np.array([0.5, 3.0, -2.0])
    raw = np.zeros((1, 3))
    np.testing.assert_allclose(loss.pointwise(y, raw), [0.25, 2 * 3 - 1, 2 * 2 - 1])
    g, h = loss.gradients(y, raw, np.ones(3))
    np.testing.assert_allclose(g[0], [-1.0, -2.0, 2.0])
    np.testing.assert_allclose(h[0], [2.0, 0.0, 0.0])


def test_quantile_gradient_signs():
    loss = QuantileLoss(0.25)
    g, _ = loss.gradients(np.array([1.0, -1.0, 0.0]), np.zeros((1, 3)), np.array([1.0, 2.0, 1.0]))
    np.testing.assert_allclose(g[0], [-0.25, 2 * 0.75, 0.0])


def test_exponential_init_score_is_half_log_odds_and_exact_minimizer():
    loss = ExponentialLoss()
    y = np.array([1.0, 1.0, 1.0, 0.0])
    f0 = loss.init_score([3.0, 1.0], 1)[0]
    assert f0 == pytest.approx(0.5 * np.log(3))
    grid = np.linspace(f0 - 0.01, f0 + 0.01, 21)
    values = [loss.pointwise(y, np.full((1, 4), f)).sum() for f in grid]
    assert np.argmin(values) == 10
    np.testing.assert_allclose(loss.predict_proba(np.array([[f0]]))[0, 1], 0.75)


@pytest.mark.parametrize("loss,y,k", [LOSSES[0], LOSSES[5], LOSSES[6], LOSSES[8]],
                         ids=["squared", "binomial", "exponential", "poisson"])
def test_sum_rule_leaf_values(loss, y, k):
    """squared: exact minimizer; binomial, Poisson: one Newton step; exponential: exact
    minimizer."""
    raw = _raw(k) * 0.3
    sums = [Fraction(float(a.sum())) for a in loss.leaf_sums(y, raw, W)]
    gamma = loss.leaf_value(sums)
    objective = lambda c: np.sum(W * loss.pointwise(y, raw + c))
    if loss.name in ("log_loss", "poisson"):
        g, h = loss.gradients(y, raw, W)
        assert gamma == pytest.approx(-g.sum() / h.sum())
    else:
        assert objective(gamma) <= min(objective(gamma - 1e-4), objective(gamma + 1e-4))


def test_multinomial_leaf_value_is_esl_algorithm_10_4():
    loss = MultinomialDeviance(3)
    raw = np.array([[0.0, 1.0], [0.0, 0.0], [0.0, -1.0]])
    y = np.array([0.0, 2.0])
    sums = [Fraction(float(a[0].sum())) for a in loss.leaf_sums(y, raw, np.ones(2))]
    p = np.exp(raw) / np.exp(raw).sum(axis=0)
    r = (y == 0) - p[0]
    expected = 2 / 3 * r.sum() / (np.abs(r) * (1 - np.abs(r))).sum()
    assert loss.leaf_value(sums) == pytest.approx(expected)


def test_exponential_pure_leaf_falls_back_to_a_bounded_step():
    assert ExponentialLoss().leaf_value([Fraction(5), Fraction(0)]) == 1.0


def test_make_loss_choices_and_errors():
    assert isinstance(make_loss("huber", alpha=0.8), HuberLoss)
    assert make_loss("quantile", alpha=0.3).alpha == 0.3
    assert isinstance(make_loss("exponential", 2), ExponentialLoss)
    with pytest.raises(ValueError, match="two classes"):
        make_loss("exponential", 3)
    with pytest.raises(ValueError, match="unknown regression loss"):
        make_loss("hinge")
    with pytest.raises(ValueError, match="0 < alpha < 1"):
        make_loss("quantile", alpha=1.0)


def test_robust_losses_need_line_search_and_get_it_by_default():
    from distboost import GradientBoostingRegressor

    X = rng.normal(size=(60, 2))
    y = X[:, 0]
    with pytest.raises(ValueError, match="line_search"):
        GradientBoostingRegressor(loss="absolute_error", leaf_estimation="newton").fit(X, y)
    m = GradientBoostingRegressor(loss="absolute_error", n_estimators=2, max_depth=2).fit(X, y)
    assert m.base_score_[0] == np.sort(y)[29]  # lower median of 60 values


@pytest.mark.parametrize("loss, y, metric", [
    (PoissonLoss(), Y_COUNT, "mean_poisson_deviance"),
    (GammaLoss(), Y_POSITIVE, "mean_gamma_deviance"),
    (TweedieLoss(1.5), Y_COUNT, "mean_tweedie_deviance"),
    (TweedieLoss(1.2), Y_POSITIVE, "mean_tweedie_deviance"),
], ids=["poisson", "gamma", "tweedie-1.5", "tweedie-1.2"])
def test_log_link_deviances_are_scikit_learns(loss, y, metric):
    import sklearn.metrics

    raw = _raw(1) * 0.5 + np.log(y.mean())
    mu = np.exp(raw[0])
    kwargs = {"power": loss.power} if metric == "mean_tweedie_deviance" else {}
    expected = getattr(sklearn.metrics, metric)(y, mu, sample_weight=W, **kwargs)
    np.testing.assert_allclose(np.average(loss.metric_pointwise(y, raw), weights=W), expected,
                               rtol=1e-12)
    # e^f by the C library's exp (distboost.kernels.libm: the same bits on every numpy), which
    # numpy's own SIMD exp matches to the last bit or two
    np.testing.assert_array_equal(loss.prediction(raw), libm.exp(raw[0]))
    np.testing.assert_allclose(loss.prediction(raw), mu, rtol=1e-15)


@pytest.mark.parametrize("loss, y", [(PoissonLoss(), Y_COUNT), (GammaLoss(), Y_POSITIVE),
                                     (TweedieLoss(1.5), Y_COUNT)],
                         ids=["poisson", "gamma", "tweedie"])
def test_log_link_initial_score_is_the_log_of_the_weighted_mean_and_the_minimizer(loss, y):
    f0 = loss.init_score([np.sum(W * y), np.sum(W)], 1)[0]
    assert f0 == pytest.approx(np.log(np.average(y, weights=W)), rel=1e-14)
    g, _ = loss.gradients(y, np.full((1, N), f0), W)
    assert abs(g.sum()) < 1e-9 * np.abs(g).sum()  # the derivative of the total loss vanishes
    with pytest.raises(ValueError, match="0 on every row"):
        loss.init_score([0.0, 5.0], 1)


def test_log_link_targets_outside_the_domain():
    y = np.array([0.0, 1.0, -0.5, 2.0])
    np.testing.assert_array_equal(PoissonLoss().check_target(y), [0, 0, 1, 0])
    np.testing.assert_array_equal(GammaLoss().check_target(y), [1, 0, 1, 0])
    np.testing.assert_array_equal(TweedieLoss().check_target(np.array([np.nan, 0.0])), [0, 0])
    with pytest.raises(ValueError, match="1 < tweedie_variance_power < 2"):
        TweedieLoss(2.0)
    assert isinstance(make_loss("tweedie", tweedie_variance_power=1.1), TweedieLoss)
    assert make_loss("tweedie", tweedie_variance_power=1.1).power == 1.1
