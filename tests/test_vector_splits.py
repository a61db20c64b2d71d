"""Vector-leaf split search (``kernels.vector_splits``): a hand-checked node,
and the scan against every candidate written out one by one, with and
without a row count, missing values on either side, and the limits."""

import numpy as np
import pytest

from distboost.kernels.common import MISSING_BIN
from distboost.kernels.vector_splits import _scan, best_vector_splits, vector_score


def _brute(hist_f, n_bins_f, total, k, inv_g, inv_h, lam, mcw, min_count, P):
    """Every "bin <= b" candidate, missing right then left, by the definition
    (module docstring): the first of the largest gains."""
    miss = hist_f[MISSING_BIN]
    parent = sum((total[2 * j] * inv_g) ** 2 / (total[2 * j + 1] * inv_h + lam) for j in range(k))
    best = (-np.inf, -1, False)
    for b in range(n_bins_f - 1):
        if b > 0 and hist_f[b, P] == 0:
            continue
        for missing_left in (False, True):
            if missing_left and miss[P] == 0:
                continue
            left = hist_f[:b + 1].sum(axis=0) + (miss if missing_left else 0)
            right = total - left
            if min(left[P], right[P]) < min_count:
                continue
            if any(min(left[2 * j + 1], right[2 * j + 1]) * inv_h < mcw for j in range(k)):
                continue
            score = 0.0
            for j in range(k):
                score += ((left[2 * j] * inv_g) ** 2 / (left[2 * j + 1] * inv_h + lam)
                          + (right[2 * j] * inv_g) ** 2 / (right[2 * j + 1] * inv_h + lam))
            gain = 0.5 * (score - parent)
            if gain > best[0]:
                ml = missing_left if miss[P] > 0 else left[P] >= right[P]
                best = (gain, b, ml)
    return best, parent


def test_hand_checked_node():
    """Two outputs, three bins of one row each (count last), lambda 1, G = 0
    at the node: x <= 1 separates output 0's gradients and wins (by hand below);
    no missing values, so missing goes to the larger child, the left."""
    # rows: (g0, h0, g1, h1, 1) = (-2, 2, 2, 2, 1), (-2, 2, -2, 2, 1), (4, 2, 0, 2, 1)
    hist = np.zeros((256, 5), np.int64)
    hist[0], hist[1], hist[2] = (-2, 2, 2, 2, 1), (-2, 2, -2, 2, 1), (4, 2, 0, 2, 1)
    total = hist.sum(axis=0)
    parent = vector_score(total, 2, 1.0, 1.0, 1.0)
    assert parent == 0.0  # G_0 = G_1 = 0
    gain, b, ml = _scan(hist, 3, total, 2, 1.0, 1.0, 1.0, 0.0, 1, parent, 4)
    # x <= 0: 1/2 [4/3 + 4/5 + 4/3 + 4/5] = 2.1333; x <= 1: 1/2 [16/5 + 16/3 + 0 + 0] = 4.2667
    assert (b, ml) == (1, True) and gain == pytest.approx(0.5 * (16 / 5 + 16 / 3), rel=1e-15)


@pytest.mark.parametrize("counts", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_scan_equals_every_candidate_written_out(counts, seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 6))
    n_stats = 2 * k + counts
    P = 2 * k if counts else 1
    n_bins = int(rng.integers(2, 256))
    occupied = rng.random(256) < rng.uniform(0.05, 1.0)
    occupied[n_bins:MISSING_BIN] = False
    occupied[MISSING_BIN] = seed % 2 == 0
    rows = rng.integers(1, 30, 256) * occupied
    hist = np.zeros((256, n_stats), np.int64)
    for j in range(k):
        hist[:, 2 * j] = rng.integers(-500, 500, 256) * rows
        hist[:, 2 * j + 1] = rng.integers(1, 40, 256) * rows  # at least 1 a row
    if counts:
        hist[:, P] = rows
    total = hist.sum(axis=0)
    inv_g, inv_h, lam = 1 / 64, 1 / 32, float(rng.choice([0.5, 2.0]))
    mcw = float(rng.choice([0.1, 3.0]))
    min_count = int(rng.choice([1, 4])) if counts else 1
    (gain, b, ml), parent = _brute(hist, n_bins, total, k, inv_g, inv_h, lam, mcw, min_count, P)
    assert vector_score(total, k, inv_g, inv_h, lam) == pytest.approx(parent, rel=1e-14)
    got = _scan(hist, n_bins, total, k, inv_g, inv_h, lam, mcw, min_count,
                vector_score(total, k, inv_g, inv_h, lam), P)
    assert got[1:] == (b, ml)
    assert got[0] == pytest.approx(gain, rel=1e-12, abs=1e-12) or gain == got[0] == -np.inf


def test_nodes_and_features_pick_the_first_of_the_best():
    """best_vector_splits over two nodes and two features: a feature a node may
    not use is skipped, gamma is subtracted, a node with no candidate gets -inf."""
    hist = np.zeros((2, 2, 256, 4), np.int64)
    hist[0, 0, 0], hist[0, 0, 1] = (-4, 2, 0, 2), (4, 2, 0, 2)
    hist[0, 1] = hist[0, 0]
    hist[1, 0, 0] = (1, 4, 1, 4)  # one bin: nothing to split
    hist[1, 1, 0] = hist[1, 0, 0]
    totals = hist[:, 0].sum(axis=1)
    features = np.array([[False, True], [True, True]])
    gain, feature, split_bin, _ = best_vector_splits(
        hist, totals, features, np.array([2, 2]), 1.0, 1.0, 1.0, 0.25, 0.0, 1, 1)
    assert feature.tolist() == [1, -1] and split_bin[0] == 0
    assert gain[0] == pytest.approx(0.5 * (16 / 3 + 16 / 3) - 0.25) and gain[1] == -np.inf
