"""Gradient boosting for ranking: LambdaMART (Burges 2010, "From RankNet to
LambdaRank to LambdaMART: An Overview"), XGBoost's ``XGBRanker`` in name and
parameters.

Training is gradient boosting's own (``training.booster.train_boosting``);
what makes it a ranker is its loss (``trees.ranking.LambdaRankLoss``: the
lambdas of each query, computed where the query's rows are), its queries
(``qid`` per row, or ``group`` sizes), and its metrics (``ndcg@k``,
``map@k``, ``mrr``).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..engine.group import each_shard
from ..engine.input_plan import is_dask
from ..inputs import checks, queries
from ..inputs.checks import BOOL, NONE, POSITIVE_INT, InvalidParameterError, Options
from ..kernels.rng import random_seed
from ..trees.ranking import OBJECTIVES, PAIR_METHODS, LambdaRankLoss
from . import _objectives
from .gradient_boosting import _ObjectiveBoosting

_NOT_RANKING = ("loss", "alpha", "tweedie_variance_power", "leaf_estimation")


class GradientBoostingRanker(_ObjectiveBoosting):
    """LambdaMART: gradient boosted trees fit to the lambdas of a ranking objective.

    Each round fits a tree to every document's lambda, the gradient of a
    pairwise loss over the documents of its query weighted by how much the
    objective's metric would change were a pair swapped (Burges 2010), with
    Newton leaves -G / (H + lambda) (Chen & Guestrin 2016, eq. 5). ``predict``
    returns scores: within a query, a higher score ranks higher.

    Parameters
    ----------
    objective : {"rank:ndcg", "rank:pairwise", "rank:map", "lambdarank"}, default "rank:ndcg"
        "rank:pairwise": RankNet (every pair counts alike); "rank:ndcg":
        LambdaRank weighted by |dNDCG| (graded relevance 0..31 with exponential
        gain 2^rel - 1); "rank:map": weighted by |dAP| (relevance 0 or 1);
        "lambdarank": LightGBM's objective of that name, "rank:ndcg" whose
        pair weights (the hessians) are half XGBoost's, so each tree's
        Newton leaves are twice as large.
    lambdarank_pair_method : {"topk", "mean"}, default "topk"
        "topk": the first k documents by score each paired with every lower
        document, about k n pairs for a query of n documents; "mean": k
        documents of another relevance drawn for each document, k n pairs
        spread over the list.
    lambdarank_num_pair_per_sample : int, optional
        k; None: 32 for "topk" (NDCG's ideal DCG truncated there too; 30 for
        "lambdarank", LightGBM's ``lambdarank_truncation_level``), 1 for
        "mean" (XGBoost's defaults).
    ndcg_exp_gain : bool, default True
        NDCG's gain 2^rel - 1; False: rel.
    lambdarank_normalization : bool, default True
        Scale each query's lambdas: by log2(1 + S) / S (S their sum) for
        "topk", by 1 / k for "mean" (XGBoost's).
    lambdarank_score_normalization : bool, default True
        Divide each pair's |dZ| by its score difference plus 0.01.
    eval_metric : str or list, optional
        "ndcg", "map" or "mrr", each optionally cut at k ("ndcg@10"); None:
        the objective's own, "ndcg@k" or "map@k" (k as above; no cut with
        "mean").

    The other parameters are ``GradientBoostingRegressor``'s (trees, rounds,
    regularization, sampling, Dask, DART's ``booster="dart"``). ``sample_weight`` weights queries: one
    weight per query, or per row equal within each query. ``out_of_core``
    must stay off: a partition's queries are held whole in memory.
    """

    _estimator_type = "ranker"
    fit_arguments = _ObjectiveBoosting.fit_arguments | {"qid", "group", "eval_qid", "eval_group"}
    _parameter_constraints: ClassVar[dict] = {
        **{k: v for k, v in _ObjectiveBoosting._parameter_constraints.items()
           if k not in _NOT_RANKING},
        "objective": [Options(OBJECTIVES)],
        "lambdarank_pair_method": [Options(PAIR_METHODS)],
        "lambdarank_num_pair_per_sample": [POSITIVE_INT, NONE],
        "ndcg_exp_gain": [BOOL],
        "lambdarank_normalization": [BOOL],
        "lambdarank_score_normalization": [BOOL],
    }

    def __init__(self, *, objective="rank:ndcg", lambdarank_pair_method="topk",
                 lambdarank_num_pair_per_sample=None, ndcg_exp_gain=True,
                 lambdarank_normalization=True, lambdarank_score_normalization=True,
                 n_estimators=100, learning_rate=0.1, max_depth=6, max_leaf_nodes=None,
                 max_bins=256, min_child_weight=1.0, min_samples_leaf=1, reg_lambda=1.0,
                 gamma=0.0, subsample=1.0, colsample_bytree=1.0, colsample_bylevel=1.0,
                 colsample_bynode=1.0, monotonic_cst=None, interaction_cst=None,
                 base_score=None, warm_start=False, random_state=None, n_jobs=None, client=None,
                 out_of_core=False, eval_metric=None, train_metric="auto",
                 early_stopping_rounds=None, verbose=False, booster="gbtree", rate_drop=0.0,
                 skip_drop=0.0, normalize_type="tree", sample_type="uniform", one_drop=False):
        super().__init__(
            loss=objective, n_estimators=n_estimators, learning_rate=learning_rate,
            max_depth=max_depth, max_leaf_nodes=max_leaf_nodes, max_bins=max_bins,
            min_child_weight=min_child_weight, min_samples_leaf=min_samples_leaf,
            reg_lambda=reg_lambda, gamma=gamma, subsample=subsample,
            colsample_bytree=colsample_bytree, colsample_bylevel=colsample_bylevel,
            colsample_bynode=colsample_bynode, monotonic_cst=monotonic_cst,
            interaction_cst=interaction_cst, base_score=base_score, warm_start=warm_start,
            random_state=random_state, n_jobs=n_jobs, client=client, out_of_core=out_of_core,
            eval_metric=eval_metric, train_metric=train_metric,
            early_stopping_rounds=early_stopping_rounds, early_stopping=False, verbose=verbose,
            booster=booster, rate_drop=rate_drop, skip_drop=skip_drop,
            normalize_type=normalize_type, sample_type=sample_type, one_drop=one_drop)
        self.lambdarank_pair_method = lambdarank_pair_method
        self.lambdarank_num_pair_per_sample = lambdarank_num_pair_per_sample
        self.ndcg_exp_gain = ndcg_exp_gain
        self.lambdarank_normalization = lambdarank_normalization
        self.lambdarank_score_normalization = lambdarank_score_normalization

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, *, qid=None, group=None, sample_weight=None, eval_set=None,
            eval_qid=None, eval_group=None, early_stopping_rounds=None,
            sample_weight_eval_set=None, init_model=None, callbacks=None, bin_mapper=None):
        """Fit the ranker: ``n_estimators`` rounds of LambdaMART.

        Parameters
        ----------
        X : array-like, pandas DataFrame, scipy sparse matrix, or Dask DataFrame/Array
            of shape (n, d). Sparse (also Dask chunks): entries not stored are missing
            values, stored zeros are zeros (XGBoost's convention).
        y : array-like or Dask Series/Array of shape (n,)
            Relevance, >= 0 (at most 31 for "rank:ndcg" with exponential gain,
            0 or 1 for "rank:map").
        qid : array-like or Dask Series/Array of shape (n,), optional
            The query of each row: integers, each query's rows consecutive and
            the ids non-decreasing (within each partition on Dask, where every
            query must be in one partition).
        group : array-like of int, optional
            Instead of ``qid`` (in memory): the number of rows of each query, in
            the order of the rows (LightGBM's way).
        sample_weight : array-like, optional
            One weight per query, or per row (equal within each query).
        eval_set : list of (X, y), optional
            Evaluated after each round with ``eval_metric`` (``evals_result_``);
            their queries in ``eval_qid`` or ``eval_group`` (one per set).
        early_stopping_rounds, sample_weight_eval_set, init_model, callbacks, bin_mapper :
            As ``GradientBoostingRegressor.fit``.
        """
        self._validate_params()
        if early_stopping_rounds is None:
            early_stopping_rounds = self.early_stopping_rounds
        eval_set = list(eval_set or [])
        qid = _query_ids(X, qid, group, "")
        eval_qid = [_query_ids(Xe, q, g, f" of eval_set[{k}]") for k, ((Xe, _), q, g)
                    in enumerate(zip(eval_set, _per_set(eval_qid, eval_set, "eval_qid"),
                                     _per_set(eval_group, eval_set, "eval_group")))]
        if not is_dask(X):
            self._check_relevance(y, "")
            for k, (_, ye) in enumerate(eval_set):
                self._check_relevance(ye, f" of eval_set[{k}]")
            sample_weight = _query_weights(sample_weight, qid, "sample_weight")
            sample_weight_eval_set = _eval_weights(sample_weight_eval_set, eval_qid)
        checks.check_fit_arguments(eval_set, early_stopping_rounds, callbacks)
        _objectives.check_data(self, X, y)
        init_model, n_rounds = self._resolve_init_model(init_model)
        with self._prepared(X, y, sample_weight, bin_mapper=bin_mapper, eval_set=eval_set,
                            sample_weight_eval_set=sample_weight_eval_set,
                            init_model=init_model, qid=qid, eval_qid=eval_qid) as engine:
            if is_dask(X):
                self._check_relevance_on(engine)
            self._fit_engine(engine, init_model, n_rounds, early_stopping_rounds, callbacks)
        return self

    def _validate_params(self):
        _objectives.check_params(self)
        checks.validate_params(self)
        if self.max_depth is None and self.max_leaf_nodes is None:
            raise InvalidParameterError(
                f"{type(self).__name__}: set max_depth or max_leaf_nodes (or both); with "
                f"neither the trees would grow without bound")
        if self.out_of_core is True:
            raise InvalidParameterError(
                f"{type(self).__name__}: out_of_core=True would cut queries into blocks; a "
                f"ranker holds each partition's queries whole in memory: leave out_of_core=False")
        self._metrics(self._make_loss(), None)

    def _make_loss(self, n_classes=None) -> LambdaRankLoss:
        return LambdaRankLoss(self.objective, self.lambdarank_pair_method,
                              self.lambdarank_num_pair_per_sample, self.ndcg_exp_gain,
                              self.lambdarank_normalization, self.lambdarank_score_normalization,
                              random_seed(self.random_state))

    def _loss_object(self) -> LambdaRankLoss:
        return self._make_loss()

    def _base_score(self, engine, loss, init_model):
        """f_0: 0 (scores are relative within a query), ``base_score`` or the continued model's."""
        if init_model is not None:
            return np.asarray(init_model.base_score_, np.float64)
        return np.full(1, 0.0 if self.base_score is None else float(self.base_score))

    def _check_relevance(self, y, where: str, offset: int = 0) -> None:
        queries.check_relevance(y, self.objective, self.ndcg_exp_gain, where, offset)

    def _check_relevance_on(self, engine) -> None:
        """On Dask, in one pass over the binned rows of every set: the relevance
        checks, and each evaluation set's queries in one partition each (the
        training set's are checked as its partitions are scanned)."""
        found = engine.apply_sets(_query_facts, "check-queries", self.objective,
                                  self.ndcg_exp_gain)
        for key, groups in found.items():
            facts = sorted((f for group in groups for f in group), key=lambda f: f[0])
            errors = [message for _, _, message in facts if message]
            if errors:
                raise ValueError(errors[0] if key == "train" else f"eval_set[{key[4:]}]: "
                                 f"{errors[0]}")
            if key != "train":
                queries.check_queries_apart([ids for _, ids, _ in facts],
                                            f" of eval_set[{key[4:]}]")

    # ------------------------------------------------------------- predict
    def predict(self, X):
        """Scores f(x), shape (n,): within a query, higher ranks first; lazy for Dask input."""
        return self._decision(X)

    def staged_predict(self, X):
        """Scores after each round."""
        for raw in self._staged_raw(X):
            yield raw[:, 0]

    def score(self, X, y, *, qid=None, group=None, k: int | None = None) -> float:
        """Mean NDCG@k over the queries of (X, y) (``metrics.query_metric``; in memory)."""
        from ..metrics import query_metric
        from ..trees.ranking import QueryTarget

        ids = _query_ids(X, qid, group, "")
        metric = query_metric("ndcg" if k is None else f"ndcg@{k}", self.ndcg_exp_gain)
        target = QueryTarget(np.asarray(y, np.float64), ids)
        raw = np.asarray(self.predict(X), np.float64)[None, :]
        return metric.value(metric.partial(target, raw, np.ones(len(ids))))


def _query_facts(state, objective, exp_gain):
    """Per group, for each partition: (index, its query ids once each, the refusal
    of its first bad relevance or "")."""
    facts = []
    for (shard,) in each_shard(state.shards):
        try:
            queries.check_relevance(shard.y, objective, exp_gain, f" in partition {shard.index}")
            message = ""
        except ValueError as exc:
            message = str(exc)
        facts.append((shard.index, np.unique(shard.qid), message))
    return state, facts


def _query_ids(X, qid, group, where: str):
    """The query ids of X's rows from ``qid`` or ``group`` (exactly one)."""
    if (qid is None) == (group is None):
        raise ValueError(
            f"GradientBoostingRanker needs the queries of X{where}: pass qid (the query of each "
            f"row) or group (the size of each query), one of the two"
            + ("" if qid is None else ", not both"))
    if group is None:
        return qid
    if is_dask(X):
        raise TypeError(f"group{where} gives query sizes for in-memory data; with Dask "
                        f"collections pass qid, a Dask Series or Array partitioned like X")
    return queries.qid_from_group(group, X.shape[0], f"group{where}")


def _per_set(values, eval_set, name: str) -> list:
    if values is None:
        return [None] * len(eval_set)
    if len(values) != len(eval_set):
        raise ValueError(f"{name} has {len(values)} entries but eval_set has {len(eval_set)}; "
                         f"give one per evaluation set")
    return list(values)


def _query_weights(w, qid, what: str):
    """Weights per row from one per query or one per row (equal within each query)."""
    if w is None:
        return None
    w = np.asarray(w, np.float64)
    starts = np.flatnonzero(np.diff(np.asarray(qid), prepend=np.asarray(qid)[:1] - 1) != 0)
    sizes = np.diff(np.append(starts, len(qid)))
    if len(w) == len(starts) and len(w) != len(qid):
        return np.repeat(w, sizes)
    if len(w) != len(qid):
        raise ValueError(f"{what} has {len(w)} entries; give one per query ({len(starts)}) or "
                         f"one per row ({len(qid)})")
    differs = np.flatnonzero(w != np.repeat(w[starts], sizes))
    if len(differs):
        i = int(differs[0])
        raise ValueError(f"{what} differs within query {np.asarray(qid)[i]} (row {i}); a "
                         f"ranker weights whole queries: give one weight per query")
    return w


def _eval_weights(weights, eval_qid):
    if weights is None:
        return None
    return [_query_weights(w, q, f"sample_weight_eval_set[{k}]")
            for k, (w, q) in enumerate(zip(weights, eval_qid))]
