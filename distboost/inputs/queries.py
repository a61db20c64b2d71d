"""A ranker's queries as users give them, checked: query ids per row (``qid``,
scikit-learn's and XGBoost's way) or query sizes (``group``, LightGBM's way),
and the relevance labels against the objective's gain table.

The rows of a query must be consecutive and the query ids non-decreasing
within a partition (as XGBoost's ``qid``), and on Dask every query in one
partition: its lambdas compare every pair of its documents (Burges 2010), so
they are computed where all its rows are. Every refusal names the row, the
query id and, on Dask, the partitions.
"""

from __future__ import annotations

import numpy as np

from .checks import show_value

MAX_EXP_RELEVANCE = 31
"""The largest relevance exponential gain 2^rel - 1 takes (as XGBoost: the gain
must stay exact in its 32-bit tables)."""


def query_ids(qid, n_rows: int, where: str = "") -> np.ndarray:
    """``qid`` as int64, one per row; refuse missing or non-integer ids."""
    arr = qid.to_numpy() if hasattr(qid, "to_numpy") else np.asarray(qid)
    if arr.ndim != 1:
        raise ValueError(f"qid{where} must be 1-dimensional, one query id per row; "
                         f"got shape {arr.shape}")
    if len(arr) != n_rows:
        raise ValueError(f"qid{where} has {len(arr)} rows but X has {n_rows}; give one query "
                         f"id per row of X")
    if arr.dtype.kind not in "iub":
        try:
            as_float = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"qid{where} must hold integers, got dtype {arr.dtype}") from None
        bad = ~np.isfinite(as_float) | (as_float != np.round(as_float))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"qid{where} must hold whole numbers; row {i} is "
                             f"{show_value(arr[i])}")
        arr = as_float
    return arr.astype(np.int64)


def check_query_ids(qid: np.ndarray, partition: int | None = None, offset: int = 0) -> np.ndarray:
    """Refuse query ids that are not sorted, naming the first offending row.

    Interleaved ids (a query's rows not consecutive) are told apart from
    merely unsorted ones; ``offset`` is added to the row numbers named.
    """
    where = "" if partition is None else f" in partition {partition}"
    down = np.flatnonzero(qid[1:] < qid[:-1])
    if not len(down):
        return qid
    i = int(down[0]) + 1
    earlier = np.flatnonzero(qid[:i] == qid[i])
    fix = ("sort the rows by query id first (e.g. df.sort_values('qid', kind='stable'), "
           "which keeps each query's documents in order)")
    if len(earlier):
        raise ValueError(
            f"qid{where} is interleaved: query {qid[i]} has rows {int(earlier[-1]) + offset} and "
            f"{i + offset} with other queries between them (row {i + offset} comes after query "
            f"{qid[i - 1]}); a query's rows must be consecutive: {fix}")
    raise ValueError(
        f"qid{where} is not sorted: row {i + offset} has query {qid[i]} after query "
        f"{qid[i - 1]} (row {i - 1 + offset}); query ids must be non-decreasing: {fix}")


def check_query_weights(qid: np.ndarray, w: np.ndarray, partition: int | None = None,
                        offset: int = 0) -> None:
    """Refuse row weights that differ within a query, naming the query and row.

    A ranker weights whole queries (XGBoost's ``XGBRanker`` takes one weight
    per query): each pair's lambda is scaled by its query's weight, which a
    weight per row would leave ambiguous.
    """
    if not len(qid):
        return
    starts = np.flatnonzero(np.diff(qid, prepend=qid[0] - 1) != 0)
    sizes = np.diff(np.append(starts, len(qid)))
    differs = np.flatnonzero(w != np.repeat(w[starts], sizes))
    if len(differs):
        i = int(differs[0])
        first = int(starts[np.searchsorted(starts, i, "right") - 1])
        where = "" if partition is None else f" in partition {partition}"
        raise ValueError(
            f"sample_weight{where} differs within query {qid[i]}: row {i + offset} has "
            f"{show_value(w[i])}, the query's first row {first + offset} {show_value(w[first])}; "
            f"a ranker weights whole queries (as XGBoost's XGBRanker): give every row of a "
            f"query its query's weight")


def max_query_rows(qid: np.ndarray) -> int:
    """The number of rows of the largest query (0 without rows); ids sorted."""
    if not len(qid):
        return 0
    return int(np.diff(np.flatnonzero(np.diff(qid, prepend=qid[0] - 1, append=qid[-1] + 1))).max())


def qid_from_group(group, n_rows: int, what: str = "group") -> np.ndarray:
    """Query ids 0, 1, ... from query sizes (LightGBM's ``group``), summing to ``n_rows``."""
    sizes = np.asarray(group)
    if sizes.ndim != 1 or sizes.dtype.kind not in "iu" or (sizes < 1).any():
        raise ValueError(f"{what} must be a 1-D sequence of query sizes, integers >= 1 (the "
                         f"rows of each query, in order); got {show_value(group)}")
    if int(sizes.sum()) != n_rows:
        raise ValueError(f"{what} sizes sum to {int(sizes.sum())} but X has {n_rows} rows; "
                         f"give the size of every query, in the order of the rows")
    return np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)


def check_queries_apart(per_partition: list, what: str = "") -> None:
    """Refuse a query whose rows are in two partitions, naming it and them.

    ``per_partition``: each partition's query ids (once each, ``np.unique``);
    ``what``: the set named in the refusal (e.g. " of eval_set[0]").
    """
    ids = np.concatenate(per_partition)
    if len(ids) == len(np.unique(ids)):
        return
    owner: dict = {}
    for part, queries in enumerate(per_partition):
        for q in queries.tolist():
            if q in owner:
                raise ValueError(
                    f"query {q}{what} has rows in partitions {owner[q]} and {part}; a query's rows "
                    f"must all be in one partition (its lambdas compare every pair of its "
                    f"documents): repartition by query, e.g. ddf.shuffle('qid') then "
                    f"map_partitions(lambda df: df.sort_values('qid', kind='stable'))")
            owner[q] = part


def relevance_limit(objective: str, exp_gain: bool) -> float:
    """The largest relevance an objective's gain table holds (inf: no table)."""
    if objective == "rank:map":
        return 1.0
    if objective in ("rank:ndcg", "lambdarank") and exp_gain:
        return float(MAX_EXP_RELEVANCE)
    return np.inf


def check_relevance(y: np.ndarray, objective: str, exp_gain: bool, where: str = "",
                    offset: int = 0) -> None:
    """Refuse negative relevance, relevance above the gain table, and for
    ``rank:map`` labels other than 0 and 1, naming the first such row."""
    y = np.asarray(y, np.float64)
    negative = np.flatnonzero(y < 0)
    if len(negative):
        i = int(negative[0])
        raise ValueError(f"relevance{where} must be >= 0; row {i + offset} is "
                         f"{show_value(y[i])} ({len(negative)} negative value(s))")
    limit = relevance_limit(objective, exp_gain)
    above = np.flatnonzero(y > limit)
    if len(above):
        i = int(above[0])
        why = ("rank:map needs binary relevance, 0 or 1" if objective == "rank:map" else
               f"exponential gain 2^rel - 1 is tabled up to relevance {MAX_EXP_RELEVANCE} (as "
               f"XGBoost's); rescale the labels or set ndcg_exp_gain=False")
        raise ValueError(f"relevance{where} above {limit:g} at row {i + offset} "
                         f"({show_value(y[i])}): {why}")
    if objective == "rank:map":
        bad = np.flatnonzero((y != 0) & (y != 1))
        if len(bad):
            i = int(bad[0])
            raise ValueError(f"relevance{where} for rank:map must be 0 or 1; row {i + offset} "
                             f"is {show_value(y[i])}")
