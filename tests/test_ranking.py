"""GradientBoostingRanker: LambdaMART's lambdas by hand, the ranking metrics,
the refusals, Dask equal to in process to the bit, and xgboost's rank:ndcg."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from distboost import GradientBoostingRanker
from distboost.engine import local_partitions
from distboost.metrics import make_metrics, query_metric
from distboost.trees.ranking import LambdaRankLoss, QueryTarget

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.ranking_data import make_ranking, split_queries

SMALL = {"n_estimators": 8, "max_depth": 3, "learning_rate": 0.3}


def _lambdas(objective, rel, f=None, **kw):
    rel = np.asarray(rel, np.float64)
    f = np.zeros(len(rel)) if f is None else np.asarray(f, np.float64)
    loss = LambdaRankLoss(objective, **kw)
    g, h = loss.gradients(QueryTarget(rel, np.zeros(len(rel), np.int64)), f[None, :],
                          np.ones(len(rel)))
    return g[0], h[0]


def _normalized(g, h, total):
    norm = math.log2(1 + total) / total
    return np.asarray(g) * norm, np.asarray(h) * norm


# ----------------------------------------------------------------- lambdas by hand
def test_pairwise_lambdas_of_three_documents():
    # scores tie: the rank list is the row order; every pair has s = 1/2, |dZ| = 1:
    # lambda = -1/2 to the more relevant, +1/2 to the other, w = 2 (1/4) = 1/2 each
    g, h = _lambdas("rank:pairwise", [2, 0, 1])
    want_g, want_h = _normalized([-1.0, 1.0, 0.0], [1.0, 1.0, 1.0], 3.0)
    np.testing.assert_allclose(g, want_g, rtol=1e-15)
    np.testing.assert_allclose(h, want_h, rtol=1e-15)


def test_ndcg_lambdas_of_three_documents():
    gain = [3.0, 0.0, 1.0]  # 2^rel - 1 of rel [2, 0, 1]
    disc = [1.0, 1 / math.log2(3), 0.5]
    inv_idcg = 1 / (3 * disc[0] + 1 * disc[1])
    d01 = (gain[0] - gain[1]) * (disc[0] - disc[1]) * inv_idcg
    d02 = (gain[0] - gain[2]) * (disc[0] - disc[2]) * inv_idcg
    d12 = abs((gain[2] - gain[1]) * (disc[2] - disc[1])) * inv_idcg
    raw_g = [-0.5 * (d01 + d02), 0.5 * d01 + 0.5 * d12, 0.5 * d02 - 0.5 * d12]
    raw_h = [0.5 * (d01 + d02), 0.5 * (d01 + d12), 0.5 * (d02 + d12)]
    want_g, want_h = _normalized(raw_g, raw_h, d01 + d02 + d12)
    g, h = _lambdas("rank:ndcg", [2, 0, 1])
    np.testing.assert_allclose(g, want_g, rtol=1e-12)
    np.testing.assert_allclose(h, want_h, rtol=1e-12)


def test_lambdarank_is_lightgbm_pair_weights_of_ndcg():
    # LightGBM's lambdarank, two documents with tied scores: s = 1/2, one pair with
    # |dNDCG| = (1 - 0)(1 - 1/log2 3) / 1; lambda = -(1/2)|dZ|, weight (1/4)|dZ| (no
    # factor 2), both scaled by log2(1 + S) / S, S = |dZ|
    dz = 1.0 - 1.0 / math.log2(3)
    want_g, want_h = _normalized([-0.5 * dz, 0.5 * dz], [0.25 * dz, 0.25 * dz], dz)
    g, h = _lambdas("lambdarank", [1, 0])
    np.testing.assert_allclose(g, want_g, rtol=1e-15)
    np.testing.assert_allclose(h, want_h, rtol=1e-15)
    rel, f = [3, 0, 1, 2, 2, 4, 0], [0.3, -1.0, 2.0, 0.0, 0.5, -0.2, 1.5]
    g_lr, h_lr = _lambdas("lambdarank", rel, f, num_pair_per_sample=4)
    g_xgb, h_xgb = _lambdas("rank:ndcg", rel, f, num_pair_per_sample=4)
    assert np.array_equal(g_lr, g_xgb) and np.array_equal(h_lr, 0.5 * h_xgb)


def test_lambdarank_defaults_to_lightgbm_truncation():
    assert LambdaRankLoss("lambdarank").num_pair == 30  # lambdarank_truncation_level
    assert LambdaRankLoss("rank:ndcg").num_pair == 32
    assert LambdaRankLoss("lambdarank", "mean").num_pair == 1
    assert LambdaRankLoss("lambdarank").metric_name == "ndcg@30"


def test_map_lambdas_of_three_documents():
    # rel [1, 0, 1]: AP = (1 + 2/3) / 2; swapping places 0 and 1 gives (1/2 + 2/3) / 2
    # (|dAP| = 1/4), places 1 and 2 gives 1 (|dAP| = 1/6); places 0 and 2 tie in relevance
    d01, d12 = 0.25, 1 / 6
    raw_g = [-0.5 * d01, 0.5 * d01 + 0.5 * d12, -0.5 * d12]
    raw_h = [0.5 * d01, 0.5 * (d01 + d12), 0.5 * d12]
    want_g, want_h = _normalized(raw_g, raw_h, d01 + d12)
    g, h = _lambdas("rank:map", [1, 0, 1])
    np.testing.assert_allclose(g, want_g, rtol=1e-12)
    np.testing.assert_allclose(h, want_h, rtol=1e-12)


def test_score_normalization_divides_by_the_score_gap():
    f = np.array([0.5, 0.0])
    g, _ = _lambdas("rank:pairwise", [0, 1], f, normalization=False)
    s = 1 / (1 + math.exp(0.5))  # sigmoid(f_1 - f_0), document 1 the more relevant
    np.testing.assert_allclose(g, [(1 - s) / 0.51, (s - 1) / 0.51], rtol=1e-12)


def test_topk_pairs_only_from_the_first_k_places():
    # k = 1: only the document ranked first is paired; documents 1 and 2 of the list
    # (scores below) never meet each other
    g, _ = _lambdas("rank:pairwise", [0, 1, 2], [3.0, 2.0, 1.0], normalization=False,
                    score_normalization=False, num_pair_per_sample=1)
    s1, s2 = 1 / (1 + math.exp(1.0)), 1 / (1 + math.exp(2.0))
    np.testing.assert_allclose(g, [(1 - s1) + (1 - s2), s1 - 1, s2 - 1], rtol=1e-12)


def test_mean_pairs_are_drawn_among_other_labels_and_repeat():
    rel, f = [0, 1, 2, 2, 0], [0.1, 0.2, 0.3, 0.4, 0.5]
    g1, h1 = _lambdas("rank:ndcg", rel, f, pair_method="mean", num_pair_per_sample=2)
    g2, _ = _lambdas("rank:ndcg", rel, f, pair_method="mean", num_pair_per_sample=2)
    assert np.array_equal(g1, g2) and np.all(h1 > 0)
    assert abs(g1.sum()) < 1e-12  # each pair adds +lambda and -lambda


def test_lambdas_stay_within_each_query():
    rel = np.array([2.0, 0, 1, 3, 0])
    qid = np.array([7, 7, 7, 9, 9])
    loss = LambdaRankLoss("rank:ndcg")
    g, _ = loss.gradients(QueryTarget(rel, qid), np.zeros((1, 5)), np.ones(5))
    g_a, _ = _lambdas("rank:ndcg", rel[:3])
    g_b, _ = _lambdas("rank:ndcg", rel[3:])
    assert np.array_equal(g[0], np.concatenate([g_a, g_b]))


# ----------------------------------------------------------------- metrics
def _metric(name, rel, score, qid=None, exp_gain=True):
    metric = query_metric(name, exp_gain)
    qid = np.zeros(len(rel), np.int64) if qid is None else np.asarray(qid)
    target = QueryTarget(np.asarray(rel, np.float64), qid)
    return metric.value(metric.partial(target, np.asarray(score, np.float64)[None, :],
                                       np.ones(len(rel))))


def test_ndcg_at_k_equals_scikit_learn_with_linear_gain():
    from sklearn.metrics import ndcg_score

    rng = np.random.default_rng(0)
    rel, score = rng.integers(0, 4, 12), rng.permutation(12).astype(float)
    for k in (3, 5, 12):
        want = ndcg_score(rel[None, :], score[None, :], k=k)
        assert _metric(f"ndcg@{k}", rel, score, exp_gain=False) == pytest.approx(want, rel=1e-12)


def test_ranking_metrics_by_hand():
    assert _metric("ndcg@2", [0, 2, 1], [3, 2, 1]) == pytest.approx(
        (3 / math.log2(3)) / (3 + 1 / math.log2(3)))
    assert _metric("map", [1, 0, 1], [3, 2, 1]) == pytest.approx((1 + 2 / 3) / 2)
    assert _metric("map@1", [0, 1], [2, 1]) == 1.0  # no relevant document in the top 1
    assert _metric("mrr", [0, 1, 0, 1], [4, 3, 2, 1]) == 0.5
    # two queries: the mean of their values
    assert _metric("mrr", [1, 0, 0, 1], [2, 1, 2, 1], qid=[0, 0, 1, 1]) == 0.75


def test_metric_names_for_a_ranker():
    loss = LambdaRankLoss("rank:ndcg")
    (default,) = make_metrics(None, loss, None)
    assert default.name == "ndcg@32" and default.higher_is_better
    with pytest.raises(Exception, match="not a metric of a ranker"):
        make_metrics("rmse", loss, None)


# ----------------------------------------------------------------- refusals
def _tiny(n_queries=6, docs=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_queries * docs, 3))
    rel = rng.integers(0, 3, n_queries * docs).astype(float)
    qid = np.repeat(np.arange(n_queries), docs)
    return X, rel, qid


def test_fit_without_queries_is_refused():
    X, rel, _ = _tiny()
    with pytest.raises(ValueError, match="needs the queries of X: pass qid"):
        GradientBoostingRanker(**SMALL).fit(X, rel)


def test_interleaved_and_unsorted_qid_are_refused():
    X, rel, qid = _tiny()
    interleaved = qid.copy()
    interleaved[[4, 5]] = interleaved[[5, 4]]  # row 4 of query 1 sits among query 0's
    with pytest.raises(ValueError, match=r"interleaved: query 0 has rows 3 and 5"):
        GradientBoostingRanker(**SMALL).fit(X, rel, qid=interleaved)
    with pytest.raises(ValueError, match=r"not sorted: row 5 has query 0 after query 1"):
        GradientBoostingRanker(**SMALL).fit(X, rel, qid=np.r_[qid[5:10], qid[:5], qid[10:]])


def test_bad_relevance_is_refused():
    X, rel, qid = _tiny()
    with pytest.raises(ValueError, match="must be >= 0; row 2"):
        GradientBoostingRanker(**SMALL).fit(X, np.where(np.arange(len(rel)) == 2, -1, rel), qid=qid)
    with pytest.raises(ValueError, match="above 31 at row 0 .*exponential gain"):
        GradientBoostingRanker(**SMALL).fit(X, np.r_[32, rel[1:]], qid=qid)
    with pytest.raises(ValueError, match="above 1 at row"):
        GradientBoostingRanker(objective="rank:map", **SMALL).fit(X, rel + 1, qid=qid)


def test_group_sizes_are_qid():
    X, rel, qid = _tiny()
    by_qid = GradientBoostingRanker(**SMALL).fit(X, rel, qid=qid).predict(X)
    by_group = GradientBoostingRanker(**SMALL).fit(X, rel, group=[5] * 6).predict(X)
    assert np.array_equal(by_qid, by_group)
    model = GradientBoostingRanker(**SMALL).fit(X, rel, qid=qid)
    assert model.score(X, rel, group=[5] * 6, k=3) == _metric("ndcg@3", rel, by_qid, qid)
    with pytest.raises(ValueError, match="sum to 29 but X has 30 rows"):
        GradientBoostingRanker(**SMALL).fit(X, rel, group=[5] * 5 + [4])


# ----------------------------------------------------------------- training
@pytest.fixture(scope="module")
def ranking_data():
    X, rel, qid = make_ranking(n_queries=120, min_docs=15, max_docs=30, n_features=6, seed=1)
    return X, rel, qid


@pytest.mark.parametrize("objective", ["rank:ndcg", "rank:pairwise", "rank:map", "lambdarank"])
def test_partitions_give_the_same_model(ranking_data, objective):
    X, rel, qid = ranking_data
    y = (rel >= 3).astype(float) if objective == "rank:map" else rel
    one = GradientBoostingRanker(objective=objective, **SMALL).fit(X, y, qid=qid)
    with local_partitions(3):
        three = GradientBoostingRanker(objective=objective, **SMALL).fit(X, y, qid=qid)
    assert np.array_equal(one.predict(X), three.predict(X))
    assert _metric("ndcg@10", rel, one.predict(X), qid) > _metric(
        "ndcg@10", rel, np.zeros(len(rel)), qid) + 0.05


def test_eval_set_and_early_stopping_on_ndcg(ranking_data):
    X, rel, qid = ranking_data
    (Xt, yt, qt), (Xv, yv, qv) = split_queries(X, rel, qid, 0.3)
    model = GradientBoostingRanker(n_estimators=30, max_depth=3, eval_metric=["mrr", "ndcg@5"],
                                   early_stopping_rounds=3)
    model.fit(Xt, yt, qid=qt, eval_set=[(Xv, yv)], eval_qid=[qv])
    history = model.evals_result_["validation_0"]["ndcg@5"]
    assert model.best_iteration_ == int(np.argmax(history))
    assert history[model.best_iteration_] == pytest.approx(
        _metric("ndcg@5", yv, model.predict(Xv), qv))


def test_dask_equals_in_process_however_queries_are_partitioned(ranking_data, dask_client):
    import dask.array as da
    import dask.dataframe as dd
    import pandas as pd

    X, rel, qid = ranking_data
    local = GradientBoostingRanker(**SMALL).fit(X, rel, qid=qid).predict(X)
    starts = np.flatnonzero(np.diff(qid, prepend=-1))
    cut = [int(starts[10]), int(starts[70])]
    chunks = (cut[0], cut[1] - cut[0], len(qid) - cut[1])
    dX = da.from_array(X, chunks=(chunks, 6))
    fit = GradientBoostingRanker(client=dask_client, **SMALL).fit(
        dX, da.from_array(rel, chunks=(chunks,)), qid=da.from_array(qid, chunks=(chunks,)))
    assert np.array_equal(np.asarray(fit.predict(X)), local)
    # the per-query metrics of an evaluation set in three partitions: exact sums, the same
    params = dict(SMALL, eval_metric=["mrr", "ndcg@5"])
    here = GradientBoostingRanker(**params).fit(X, rel, qid=qid, eval_set=[(X, rel)],
                                                 eval_qid=[qid])
    there = GradientBoostingRanker(client=dask_client, **params).fit(
        dX, da.from_array(rel, chunks=(chunks,)), qid=da.from_array(qid, chunks=(chunks,)),
        eval_set=[(dX, da.from_array(rel, chunks=(chunks,)))],
        eval_qid=[da.from_array(qid, chunks=(chunks,))])
    assert there.evals_result_ == here.evals_result_
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(6)]).assign(rel=rel, qid=qid)
    ddf = dd.from_pandas(frame.set_index(pd.Index(qid)), npartitions=2)  # queries kept whole
    fit = GradientBoostingRanker(client=dask_client, **SMALL).fit(
        ddf[[f"f{j}" for j in range(6)]], ddf["rel"], qid=ddf["qid"])
    assert np.array_equal(np.asarray(fit.predict(X)), local)


def test_dask_query_across_partitions_is_refused(ranking_data, dask_client):
    import dask.array as da

    X, rel, qid = ranking_data
    starts = np.flatnonzero(np.diff(qid, prepend=-1))
    mid = int(starts[5]) + 2  # inside query 5
    chunks = ((mid, len(qid) - mid),)
    with pytest.raises(ValueError, match="query 5 has rows in partitions 0 and 1"):
        GradientBoostingRanker(client=dask_client, **SMALL).fit(
            da.from_array(X, chunks=(chunks[0], 6)), da.from_array(rel, chunks=chunks),
            qid=da.from_array(qid, chunks=chunks))
    whole = ((len(qid),),)

    def arrays(chunks, y=rel):
        return (da.from_array(X, chunks=(chunks[0], 6)), da.from_array(y, chunks=chunks),
                da.from_array(qid, chunks=chunks))

    dX, dy, dq = arrays(whole)
    eX, ey, eq = arrays(chunks)
    with pytest.raises(ValueError, match=r"query 5 of eval_set\[0\] has rows in partitions 0 and 1"):
        GradientBoostingRanker(client=dask_client, **SMALL).fit(
            dX, dy, qid=dq, eval_set=[(eX, ey)], eval_qid=[eq])
    dX, dy, dq = arrays(whole, np.where(np.arange(len(rel)) == 7, -2.0, rel))
    with pytest.raises(ValueError, match="relevance in partition 0 must be >= 0; row 7"):
        GradientBoostingRanker(client=dask_client, **SMALL).fit(dX, dy, qid=dq)


def test_shap_values_sum_to_the_scores(ranking_data):
    from distboost.inspection import shap_values

    X, rel, qid = ranking_data
    model = GradientBoostingRanker(**SMALL).fit(X, rel, qid=qid)
    phi = shap_values(model, X[:50])
    np.testing.assert_allclose(phi.sum(axis=1), model.predict(X[:50]), atol=1e-9)


def test_ndcg_at_10_close_to_xgboost():
    xgb = pytest.importorskip("xgboost")
    X, rel, qid = make_ranking(n_queries=400, min_docs=20, max_docs=40, n_features=8, seed=3)
    (Xt, yt, qt), (Xv, yv, qv) = split_queries(X, rel, qid, 0.5)
    shape = {"n_estimators": 40, "max_depth": 4, "learning_rate": 0.1}
    ours = GradientBoostingRanker(**shape).fit(Xt, yt, qid=qt)
    theirs = xgb.XGBRanker(objective="rank:ndcg", tree_method="hist", n_jobs=1, **shape)
    theirs.fit(Xt, yt, qid=qt)
    ndcg_ours = _metric("ndcg@10", yv, ours.predict(Xv), qv)
    ndcg_theirs = _metric("ndcg@10", yv, theirs.predict(Xv), qv)
    assert abs(ndcg_ours - ndcg_theirs) < 0.005, (ndcg_ours, ndcg_theirs)


def test_lambdarank_steps_twice_rank_ndcg():
    X, rel, qid = make_ranking(n_queries=100, min_docs=20, max_docs=40, n_features=8, seed=3)
    shape = {"n_estimators": 1, "max_depth": 3, "learning_rate": 1.0, "reg_lambda": 0.0,
             "min_child_weight": 0.0}
    lr = GradientBoostingRanker(objective="lambdarank", lambdarank_num_pair_per_sample=32,
                                **shape).fit(X, rel, qid=qid)
    xgb_like = GradientBoostingRanker(objective="rank:ndcg", **shape).fit(X, rel, qid=qid)
    # the same tree (without lambda the gain's ranking of splits is scale free),
    # each leaf -G/H with H halved: twice the step
    np.testing.assert_allclose(lr.predict(X), 2.0 * xgb_like.predict(X), rtol=1e-12)


@pytest.mark.parametrize("rounds,leaves", [(1, 2), (3, 2), (3, 4)])
def test_lambdarank_is_lightgbms(rounds, leaves):
    # integer features of 8 values: both systems bin every value apart, so the trees
    # can agree; LightGBM's float32 gradients and tabled sigmoid leave ~1e-6
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    n_queries, n_docs = 60, 20
    X = rng.integers(0, 8, (n_queries * n_docs, 4)).astype(float)
    rel = np.clip(np.round(X[:, 0] / 2 + X[:, 1] / 4 + rng.normal(0, 1, len(X))), 0, 4)
    qid = np.repeat(np.arange(n_queries), n_docs)
    ours = GradientBoostingRanker(objective="lambdarank", n_estimators=rounds,
                                  max_depth=1 if leaves == 2 else None, max_leaf_nodes=leaves,
                                  learning_rate=1.0, reg_lambda=0.0, min_child_weight=0.0)
    ours.fit(X, rel, qid=qid)
    theirs = lgb.LGBMRanker(objective="lambdarank", n_estimators=rounds, num_leaves=leaves,
                            learning_rate=1.0, reg_lambda=0.0, min_child_samples=1,
                            min_child_weight=1e-12, min_data_in_bin=1, n_jobs=1, verbose=-1)
    theirs.fit(X, rel, group=np.full(n_queries, n_docs))
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=0, atol=1e-5)


@pytest.mark.parametrize("objective,exported", [("rank:pairwise", "rank:pairwise"),
                                                ("lambdarank", "rank:ndcg")])
def test_xgboost_export_predicts_the_scores(ranking_data, tmp_path, objective, exported):
    xgb = pytest.importorskip("xgboost")
    import json

    X, rel, qid = ranking_data
    model = GradientBoostingRanker(objective=objective, **SMALL).fit(X, rel, qid=qid)
    path = tmp_path / "ranker.json"
    model.save_model(path, format="xgboost")
    booster = xgb.Booster(model_file=str(path))
    config = json.loads(booster.save_config())["learner"]["objective"]
    assert config["name"] == exported
    k = config["lambdarank_param"]["lambdarank_num_pair_per_sample"]
    assert k == ("30" if objective == "lambdarank" else "32")
    np.testing.assert_allclose(booster.predict(xgb.DMatrix(X), output_margin=True),
                               model.predict(X), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("objective", ["rank:ndcg", "lambdarank"])
def test_saved_ranker_loads_and_predicts_the_same(ranking_data, tmp_path, objective):
    from distboost import load_model

    X, rel, qid = ranking_data
    model = GradientBoostingRanker(objective=objective, lambdarank_pair_method="mean", **SMALL)
    model.fit(X, rel, qid=qid)
    model.save_model(tmp_path / "ranker.json")
    loaded = load_model(tmp_path / "ranker.json")
    assert isinstance(loaded, GradientBoostingRanker)
    assert loaded.lambdarank_pair_method == "mean" and loaded.objective == objective
    assert np.array_equal(loaded.predict(X), model.predict(X))


def test_ranknet_lambdas_are_the_derivatives_of_its_loss():
    """Without normalizations and with every pair (k >= n), g is dL/df of RankNet's
    L = sum over pairs rel_i > rel_j of log(1 + exp(-(f_i - f_j))), and h twice
    d^2L/df^2 (XGBoost's factor 2)."""
    rel = np.array([2.0, 0, 1, 1, 3])
    f = np.array([0.3, -0.2, 0.9, 0.1, -0.5])

    def loss(f):
        return sum(math.log1p(math.exp(-(f[i] - f[j]))) for i in range(5) for j in range(5)
                   if rel[i] > rel[j])

    g, h = _lambdas("rank:pairwise", rel, f, normalization=False, score_normalization=False)
    eps = 1e-5
    for i in range(5):
        step = np.eye(5)[i] * eps
        assert g[i] == pytest.approx((loss(f + step) - loss(f - step)) / (2 * eps), abs=1e-8)
        second = (loss(f + step) - 2 * loss(f) + loss(f - step)) / eps**2
        assert h[i] == pytest.approx(2 * second, abs=1e-4)


def test_query_weights_per_query_or_per_row(ranking_data):
    X, rel, qid = ranking_data
    n_queries = len(np.unique(qid))
    w = np.arange(1, n_queries + 1, dtype=float) % 3 + 1
    per_query = GradientBoostingRanker(**SMALL).fit(X, rel, qid=qid, sample_weight=w)
    per_row = GradientBoostingRanker(**SMALL).fit(X, rel, qid=qid, sample_weight=w[qid])
    assert np.array_equal(per_query.predict(X), per_row.predict(X))
    uneven = w[qid].copy()
    uneven[1] += 1
    with pytest.raises(ValueError, match="differs within query 0 .row 1."):
        GradientBoostingRanker(**SMALL).fit(X, rel, qid=qid, sample_weight=uneven)


def test_mean_pairs_give_the_same_model_in_any_partitions(ranking_data):
    X, rel, qid = ranking_data
    params = dict(SMALL, lambdarank_pair_method="mean", lambdarank_num_pair_per_sample=2,
                  random_state=3)
    one = GradientBoostingRanker(**params).fit(X, rel, qid=qid)
    with local_partitions(4):
        four = GradientBoostingRanker(**params).fit(X, rel, qid=qid)
    assert np.array_equal(one.predict(X), four.predict(X))


def test_warm_start_continues_to_the_same_model(ranking_data):
    X, rel, qid = ranking_data
    full = GradientBoostingRanker(**dict(SMALL, n_estimators=6)).fit(X, rel, qid=qid)
    model = GradientBoostingRanker(**dict(SMALL, n_estimators=3), warm_start=True)
    model.fit(X, rel, qid=qid).set_params(n_estimators=6).fit(X, rel, qid=qid)
    assert np.array_equal(model.predict(X), full.predict(X))
