"""distboost.plotting: every interpretation plot renders a PNG."""

import numpy as np
import pytest

from distboost import plotting
from distboost.inspection import IceCurves, PartialDependence

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _pd(features=(0,), shape=(1, 5), categorical=None):
    grids = [np.linspace(0, 1, n) for n in shape[1:]]
    return PartialDependence(
        features=features,
        feature_names=[f"x{f}" for f in features],
        grid_values=grids,
        average=np.random.default_rng(0).normal(size=shape),
        deciles=[np.linspace(0.1, 0.9, 9)] * len(features),
        categorical=categorical or [False] * len(features),
    )


def _is_png(fig):
    data = plotting.png_bytes(fig)
    assert data.startswith(PNG_MAGIC) and len(data) > 5000
    return data


def test_importance_orders_bars_largest_on_top():
    fig = plotting.plot_importance([10.0, 100.0, 55.0], ["a", "b", "c"])
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["a", "c", "b"]  # barh draws bottom-up: largest last = top
    _is_png(fig)


def test_partial_dependence_plots(tmp_path):
    ice = IceCurves(
        0, "x0", np.linspace(0, 1, 5), np.zeros((1, 3, 5)), np.zeros((1, 5)), None, False, False
    )
    one = plotting.plot_partial_dependence(_pd(), ice=ice, ylabel="log-odds")
    assert one.axes[0].get_ylabel() == "log-odds"
    path = plotting.save_png(one, tmp_path / "pd.png")
    assert path.read_bytes().startswith(PNG_MAGIC)
    multi = plotting.plot_partial_dependence(
        _pd(shape=(3, 5)), output=None, output_names=["a", "b", "c"]
    )
    assert len(multi.axes[0].get_legend().get_texts()) == 4  # 3 classes + deciles
    cat = plotting.plot_partial_dependence(
        PartialDependence(
            (0,),
            ["colour"],
            [np.array(["r", "g"], dtype=object)],
            np.array([[1.0, 2.0]]),
            [None],
            [True],
        )
    )
    assert [t.get_text() for t in cat.axes[0].get_xticklabels()] == ["r", "g"]
    two = plotting.plot_partial_dependence_2d(_pd((0, 1), (1, 4, 6)))
    assert two.axes[0].get_xlabel() == "x0" and two.axes[0].get_ylabel() == "x1"
    for fig in (multi, cat, two):
        _is_png(fig)
    with pytest.raises(ValueError):
        plotting.plot_partial_dependence_2d(_pd())


def test_shap_summary_puts_the_largest_mean_abs_shap_on_top():
    rng = np.random.default_rng(0)
    values = rng.normal(size=(300, 3)) * [1.0, 5.0, 0.1]
    features = rng.normal(size=(300, 3))
    features[::10, 1] = np.nan
    fig = plotting.plot_shap_summary(values, features, ["a", "b", "c"], max_display=2)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["a", "b"]  # bottom-up: the largest last, at the top; "c" left out
    greys = [c for c in fig.axes[0].collections if len(c.get_offsets()) == 30]
    assert greys  # the missing values of "b", drawn on their own
    _is_png(fig)


def test_swarm_offsets_stay_within_their_line():
    x = np.r_[np.zeros(50), np.linspace(0, 1, 50)]
    offsets = plotting._swarm_offsets(x, width=0.4)
    assert np.abs(offsets).max() == pytest.approx(0.4)
    assert len(np.unique(offsets[:50])) == 50  # the pile at 0 spreads out


def test_shap_dependence_with_categories_and_missing_values():
    x = np.array([0, 1, 2, np.nan, 1, 0], float)
    fig = plotting.plot_shap_dependence(x, np.arange(6.0), "colour", categories=["r", "g", "b"])
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels == ["missing", "r", "g", "b"]
    _is_png(fig)
    _is_png(plotting.plot_shap_dependence(np.r_[np.nan, np.linspace(0, 1, 20)], np.ones(21), "x"))
