"""A learning-to-rank data set of our making: graded relevance 0-4, queries of
varying length, rows sorted by query.

How it is generated: each query q draws its length n_q uniformly in
[min_docs, max_docs] and a query vector u_q (the query's own taste, standard
normal, scaled by 0.5). Each document has ``n_features`` standard-normal
features x; its latent utility is

    t = x . beta + (x . u_q) + sin(2 x_0) x_1 + 0.5 x_2^2 [x_3 > 0] + noise,

beta fixed for the data set, noise normal with standard deviation
``noise``. Relevance is graded by the document's place among its query's
documents by t: the top 5 % get 4, the next 10 % 3, 15 % 2, 20 % 1, the
rest 0, so every query of 10 documents or more has some relevant
documents and the grades mean the same in every query. The query vector
makes the same features count differently per query (as a search query
does); the non-linear terms need trees.
"""

from __future__ import annotations

import numpy as np

GRADES = (0.05, 0.10, 0.15, 0.20)
"""Shares of each query's documents graded 4, 3, 2, 1 (the rest 0)."""


def make_ranking(n_queries: int = 1000, min_docs: int = 60, max_docs: int = 160,
                 n_features: int = 20, noise: float = 1.0, seed: int = 0):
    """(X, relevance, qid): float64 (n, n_features), float64 (n,), int64 (n,).

    Rows are sorted by query id (0, 1, ...); with the defaults about 110,000
    rows.
    """
    rng = np.random.default_rng(seed)
    sizes = rng.integers(min_docs, max_docs + 1, n_queries)
    qid = np.repeat(np.arange(n_queries, dtype=np.int64), sizes)
    X = rng.standard_normal((len(qid), n_features))
    beta = rng.standard_normal(n_features) / np.sqrt(n_features)
    taste = 0.5 * rng.standard_normal((n_queries, n_features)) / np.sqrt(n_features)
    t = (X @ beta + np.einsum("ij,ij->i", X, taste[qid]) + np.sin(2 * X[:, 0]) * X[:, 1]
         + 0.5 * X[:, 2] ** 2 * (X[:, 3] > 0) + noise * rng.standard_normal(len(qid)))
    return X, _grades(t, sizes), qid


def _grades(t: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Relevance 4..0 by each document's place among its query's by t."""
    rel = np.zeros(len(t))
    start = 0
    cuts = np.cumsum(GRADES)
    for n in sizes:
        order = np.argsort(-t[start:start + n], kind="stable")
        place = np.empty(n)
        place[order] = np.arange(n) / n
        rel[start:start + n] = 4 - np.searchsorted(cuts, place, side="right")
        start += n
    return np.clip(rel, 0, 4)


def split_queries(X, rel, qid, test_fraction: float = 0.2, seed: int = 0):
    """Train and test rows by whole queries (the last ``test_fraction`` of the
    query ids, shuffled by ``seed``)."""
    ids = np.unique(qid)
    test = np.random.default_rng(seed).permutation(ids)[:int(len(ids) * test_fraction)]
    held = np.isin(qid, test)
    return (X[~held], rel[~held], qid[~held]), (X[held], rel[held], qid[held])
