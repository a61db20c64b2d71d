"""A ranker's fixed-point bounds from its largest query (no extra lambda pass),
and row weights that must be equal within each query, in process and on Dask."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from distboost import GradientBoostingRanker
from distboost.inputs.queries import max_query_rows
from distboost.trees.ranking import LambdaRankLoss, QueryTarget

SMALL = {"n_estimators": 4, "max_depth": 2, "learning_rate": 0.3}


def _queries(seed):
    """Queries of 1 to 60 rows with hard scores: ties, near ties (score
    normalization's 1 / 0.01), far apart and reversed orders."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 61, 25)
    qid = np.repeat(np.arange(len(sizes)), sizes)
    n = len(qid)
    rel = rng.integers(0, 5, n).astype(float)
    f = np.where(rng.random(n) < 0.3, 1e-9 * rng.integers(0, 3, n),
                 rng.standard_normal(n) * rng.choice([0.0, 1e-3, 1.0, 30.0], n))
    f[qid == 3] = -rel[qid == 3] * 50.0  # the worst order, far apart
    w = np.repeat(rng.uniform(0.1, 3.0, len(sizes)), sizes)
    return rel, qid, f, w


@pytest.mark.parametrize("objective,method,normalization,score_norm", list(itertools.product(
    ["rank:ndcg", "rank:pairwise", "rank:map", "lambdarank"], ["topk", "mean"], [True, False],
    [True, False])))
def test_lambdas_stay_within_the_query_bounds(objective, method, normalization, score_norm):
    worst_g = worst_h = 0.0
    for seed in range(4):
        rel, qid, f, w = _queries(seed)
        if objective == "rank:map":
            rel = (rel >= 3).astype(float)
        for k in (None, 1, 5):
            loss = LambdaRankLoss(objective, method, k, normalization=normalization,
                                  score_normalization=score_norm, seed=seed)
            g, h = loss.gradients(QueryTarget(rel, qid), f[None, :], w)
            g_bound, h_bound = loss.query_gradient_bounds(w.max(), max_query_rows(qid))
            assert np.abs(g).max() <= g_bound and h.max() <= h_bound
            worst_g, worst_h = max(worst_g, np.abs(g).max()), max(worst_h, h.max())
    assert worst_g > 0 and worst_h > 0


def test_bounds_by_hand():
    # 10 rows, k = 32 > 10: pairs <= 10 * 10 = 100; S <= 2 * 100 * 100 with score normalization
    loss = LambdaRankLoss("rank:ndcg")
    g, h = loss.query_gradient_bounds(2.0, 10)
    assert g == pytest.approx(2.0 * 0.5 * np.log2(1 + 20000.0))
    assert h == pytest.approx(2.0 * (np.log2(1 + 20000.0) + 1e-15 * 100 * 100))
    # unnormalized "topk" without score normalization: 9 pairs of a row, |dZ| <= 1
    assert LambdaRankLoss("rank:pairwise", normalization=False,
                          score_normalization=False).query_gradient_bounds(1.0, 10) == (9.0, 4.5)
    # "mean", 3 draws per row, normalized by 1/3: 3 * 10 pairs at most touch a row
    assert LambdaRankLoss("rank:ndcg", "mean", 3, score_normalization=False
                          ).query_gradient_bounds(1.0, 10) == (10.0, 5.0)


def test_max_query_rows():
    assert max_query_rows(np.array([], np.int64)) == 0
    assert max_query_rows(np.array([4, 4, 5, 7, 7, 7, 9])) == 3
    assert max_query_rows(np.array([2])) == 1


def _data():
    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(12), 6)
    X = rng.standard_normal((len(qid), 3))
    rel = rng.integers(0, 3, len(qid)).astype(float)
    w = np.repeat(rng.uniform(0.5, 2.0, 12), 6)
    return X, rel, qid, w


def test_weights_differing_within_a_query_are_refused_in_process():
    X, rel, qid, w = _data()
    w[15] += 1.0  # query 2's fourth row
    with pytest.raises(ValueError, match=r"sample_weight differs within query 2 \(row 15\)"):
        GradientBoostingRanker(**SMALL).fit(X, rel, qid=qid, sample_weight=w)


def test_dask_query_weights_equal_in_process_and_unequal_refused(dask_client):
    import dask.array as da

    X, rel, qid, w = _data()
    chunks = ((24, 48),)
    here = GradientBoostingRanker(**SMALL).fit(X, rel, qid=qid, sample_weight=w)
    there = GradientBoostingRanker(client=dask_client, **SMALL).fit(
        da.from_array(X, chunks=(chunks[0], 3)), da.from_array(rel, chunks=chunks),
        qid=da.from_array(qid, chunks=chunks), sample_weight=da.from_array(w, chunks=chunks))
    assert np.array_equal(np.asarray(there.predict(X)), here.predict(X))
    w[40] *= 2.0  # query 6's fifth row, row 16 of partition 1
    with pytest.raises(ValueError, match=r"sample_weight in partition 1 differs within query 6: "
                                         r"row 16 has .*first row 12"):
        GradientBoostingRanker(client=dask_client, **SMALL).fit(
            da.from_array(X, chunks=(chunks[0], 3)), da.from_array(rel, chunks=chunks),
            qid=da.from_array(qid, chunks=chunks), sample_weight=da.from_array(w, chunks=chunks))
