"""LambdaMART's objectives as losses (Burges 2010, "From RankNet to LambdaRank
to LambdaMART: An Overview"): ``rank:pairwise`` (RankNet), ``rank:ndcg``
(LambdaRank weighted by |dNDCG|, graded relevance, exponential gain
2^rel - 1), ``rank:map`` (weighted by |dAP|, binary relevance) and
``lambdarank`` (LightGBM's LambdaRank: ``rank:ndcg``'s lambdas with half its
pair weights, top 30 by default).

A ranking loss reads each row's relevance with its query id
(``QueryTarget``); its gradients are the lambdas of ``kernels.ranking``, a
whole query at a time, and its leaves Newton steps -G / (H + lambda) (Chen &
Guestrin 2016, eq. 5). The definitions follow XGBoost's (pairs, the top-k
truncation, normalization) so that the same trees' shape and rounds give
about the same ranking quality. The scores are relative within a query: f_0
is 0.

Fixed point: |g| and h are bounded from the largest query's size and the
largest weight, known once the rows are scanned (``query_gradient_bounds``),
so no round needs an extra pass over the rows; the bounds are the same for
any partitioning.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..kernels import ranking
from .losses import Loss

OBJECTIVES = ("rank:pairwise", "rank:ndcg", "rank:map", "lambdarank")
PAIR_METHODS = ("topk", "mean")
DEFAULT_TOP_K = {"lambdarank": 30}
"""Pairs per document with ``lambdarank_pair_method="topk"`` unless given:
LightGBM's ``lambdarank_truncation_level`` for its objective, else XGBoost's 32."""


def is_ranking(name) -> bool:
    """Whether a loss or objective name is a ranking objective."""
    return name in OBJECTIVES


def pairs_per_sample(objective: str, pair_method: str, given: int | None) -> int:
    """k of ``lambdarank_num_pair_per_sample``: ``given``, else the objective's default
    (``DEFAULT_TOP_K`` for "topk", 1 for "mean": XGBoost's)."""
    if given is not None:
        return int(given)
    return DEFAULT_TOP_K.get(objective, 32) if pair_method == "topk" else 1


class QueryTarget(NamedTuple):
    """A ranker's target, row by row: relevance and query id (each query's rows
    consecutive)."""

    relevance: np.ndarray  # (n_rows,) float64
    qid: np.ndarray  # (n_rows,) int64


class LambdaRankLoss(Loss):
    """One of ``OBJECTIVES`` with XGBoost's pair construction.

    Parameters
    ----------
    objective : {"rank:pairwise", "rank:ndcg", "rank:map", "lambdarank"}
        "lambdarank" is LightGBM's: the lambdas of "rank:ndcg", each pair's
        weight s (1 - s) |dZ| where XGBoost's is twice that (LightGBM's
        ``lambdarank`` objective with ``sigmoid=1``), so its Newton leaves
        are twice as large.
    pair_method : {"topk", "mean"}
        "topk": each of the first ``num_pair_per_sample`` documents by score
        against every lower one, O(k n) pairs per query of n documents;
        "mean": ``num_pair_per_sample`` documents of another relevance drawn
        for each document, O(k n) too, but spread over the whole list.
    num_pair_per_sample : int or None
        k above; None: 32 for "topk" (30 for "lambdarank", LightGBM's
        ``lambdarank_truncation_level``), 1 for "mean" (XGBoost's defaults).
        With "topk", NDCG's ideal DCG is truncated at k as well.
    exp_gain : bool
        NDCG's gain 2^rel - 1 (relevance at most 31), else rel.
    normalization, score_normalization : bool
        Scale each query's lambdas (see ``kernels.ranking``); divide |dZ| by
        the pair's score difference plus 0.01.
    seed : int
        Keys "mean"'s draws, with each query's id and scores.
    """

    is_classification = False
    margin_range_bounds = False
    query_bounds = True
    """|g| and h are bounded through the largest query (``query_gradient_bounds``)."""

    def __init__(self, objective: str = "rank:ndcg", pair_method: str = "topk",
                 num_pair_per_sample: int | None = None, exp_gain: bool = True,
                 normalization: bool = True, score_normalization: bool = True, seed: int = 0):
        if objective not in OBJECTIVES:
            raise ValueError(f"unknown ranking objective {objective!r}; choose one of {OBJECTIVES}")
        if pair_method not in PAIR_METHODS:
            raise ValueError(f"lambdarank_pair_method must be one of {PAIR_METHODS}, got "
                             f"{pair_method!r}")
        self.name = objective
        self.pair_method = pair_method
        self.num_pair = pairs_per_sample(objective, pair_method, num_pair_per_sample)
        self.exp_gain = bool(exp_gain)
        self.normalization = bool(normalization)
        self.score_normalization = bool(score_normalization)
        self.seed = int(seed)
        self.kind = {"rank:pairwise": ranking.PAIRWISE, "rank:ndcg": ranking.NDCG,
                     "rank:map": ranking.MAP, "lambdarank": ranking.NDCG}[objective]
        self.hessian_scale = 0.5 if objective == "lambdarank" else 1.0
        metric = "map" if objective == "rank:map" else "ndcg"
        self.metric_name = f"{metric}@{self.num_pair}" if pair_method == "topk" else metric

    def __reduce__(self):
        return LambdaRankLoss, (self.name, self.pair_method, self.num_pair, self.exp_gain,
                                self.normalization, self.score_normalization, self.seed)

    def init_statistics(self, y, w):
        raise NotImplementedError("a ranker starts from 0: scores are relative within a query")

    def query_gradient_bounds(self, w_max: float, max_query_rows: int) -> tuple[float, float]:
        """Upper bounds of |g| and h over all rows, from the largest weight and query.

        A pair's |dZ| is at most 1 (|dNDCG|, |dAP| and RankNet's 1: NDCG's
        ideal DCG holds the largest gain at discount 1), at most 100 once
        divided by |f_i - f_j| + 0.01; with s = sigmoid(f_i - f_j),
        |lambda_ij| = (1 - s) |dZ| and w_ij = 2 max(s (1 - s), 1e-16) |dZ|
        <= 2 |lambda_ij| + 2e-16 |dZ|, and w_ij <= |dZ| / 2 (Burges 2010,
        eqs. 3-4). A row's g sums its pairs' lambdas, at most half the
        query's S = sum of 2 |lambda_ij|, so "topk"'s normalization
        log2(1 + S) / S (<= 1 / ln 2) leaves |g| <= log2(1 + S) / 2 and
        h <= log2(1 + S) + 3e-16 |dZ| P, S <= 2 |dZ| P with P the query's pairs
        (at most min(k, n) n for n rows). Unnormalized, a row has at most
        n - 1 pairs ("topk") or k n ("mean": its own k draws and the others'
        that hit it), each adding at most |dZ| to |g| and |dZ| / 2 to h;
        "mean"'s normalization divides by k. "lambdarank"'s h is half of these.
        """
        n = max(int(max_query_rows), 1)
        dz = 100.0 if self.score_normalization else 1.0
        k = self.num_pair
        if self.pair_method == "topk":
            pairs, row_pairs = min(k, n) * n, n - 1
        else:
            pairs = row_pairs = k * n
        if self.normalization and self.pair_method == "topk":
            log_s = math.log2(1.0 + 2.0 * dz * pairs)
            g, h = 0.5 * log_s, log_s + 1e-15 * dz * pairs
        else:
            per = 1.0 / k if self.normalization else 1.0
            g, h = dz * row_pairs * per, 0.5 * dz * row_pairs * per
        return w_max * g, w_max * h * self.hessian_scale

    def gradients(self, y: QueryTarget, raw, w, where: str = "", row_offset: int = 0):
        """The rows' lambdas g and weights h, each of shape (1, n_rows), times ``w``."""
        rel = np.ascontiguousarray(y.relevance, np.float64)
        qid = np.ascontiguousarray(y.qid, np.int64)
        f = np.ascontiguousarray(raw[0], np.float64)
        g, h = np.empty((1, len(f))), np.empty((1, len(f)))
        ranking.lambdas(self.kind, rel, qid, f, np.ascontiguousarray(w, np.float64),
                        ranking.query_starts(qid), self.exp_gain, self.num_pair, self.num_pair,
                        self.pair_method == "mean", self.normalization, self.score_normalization,
                        np.uint64(self.seed % 2**64), g[0], h[0])
        if self.hessian_scale != 1.0:
            h *= self.hessian_scale  # exact: a power of two
        return g, h

    def pointwise(self, y, raw):
        raise NotImplementedError("a ranking loss is measured per query (metrics.QueryMetric)")
