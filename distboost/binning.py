"""Quantile bin edges and the mapping of raw values to uint8 bin codes.

Edges come from a sample of rows chosen by a hash of each row's content (the
rows with the ``subsample`` smallest hashes), so they do not depend on how the
data is partitioned or ordered. Each feature gets at most ``max_bins - 1`` value
bins; bin ``MISSING_BIN`` (255) holds missing values. A value ``x`` falls in bin
``b`` when ``edges[b-1] < x <= edges[b]``, so a split "bin <= b" is the raw
test ``x <= edges[b]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numba
import numpy as np

from .inputs.sparse import as_csr, is_scipy_sparse
from .kernels.common import MAX_BINS, MISSING_BIN, X_BINNED_DTYPE
from .kernels.radix import sort_column, sort_columns
from .kernels.rng import row_content_hashes
from .kernels.sparse import csr_row_hashes
from .kernels.sparse_codes import SparseCodes

__all__ = [
    "SAMPLE_ROWS",
    "BinMapper",
    "CandidatePool",
    "find_bin_edges",
    "frame_candidates",
    "merge_candidates",
    "sample_candidates"
]

SAMPLE_ROWS = 200_000
"""Rows in the binning sample: the rows with the smallest content hashes
(LightGBM's ``bin_construct_sample_cnt`` has the same default)."""

CONVERT_ROWS = 65_536
"""Rows converted to a float matrix at a time (a DataFrame's columns to one
row-major block): a pass over a partition holds one such block, not a float
copy of the whole partition."""

SEARCH_SLOTS = 256
"""Edges per feature in the binning search's table: at most ``MAX_BINS - 2``
of the feature's own, then +inf."""


def row_blocks(n_rows: int, step: int = CONVERT_ROWS) -> list[tuple[int, int]]:
    """``(start, stop)`` of consecutive blocks of at most ``step`` rows."""
    return [(a, min(a + step, n_rows)) for a in range(0, n_rows, step)]


def row_slice(X, start: int, stop: int):
    """Rows ``start:stop`` of a DataFrame or an array."""
    return X.iloc[start:stop] if hasattr(X, "iloc") else X[start:stop]


PRIOR_MARGIN = 2.0
"""How far above its expected share of the sample a partition's first scan
reaches (``prior_bound``)."""


def prior_bound(n_samples: int, n_parts: int, n_rows: int) -> int | None:
    """The largest hash a partition sends before the sample's threshold is known.

    Hashes are uniform over [0, 2^64): were the ``n_parts`` partitions all of
    ``n_rows`` rows, the sample's largest hash would lie near
    ``2^64 n_samples / (n_parts n_rows)``. A partition sends only the rows
    below ``PRIOR_MARGIN`` times that, about ``2 n_samples / n_parts``, not
    up to ``n_samples``. Where the sample turns out to need more of a
    partition's rows (partitions of unequal sizes), those rows are asked for
    again (``Engine._scan``): the sample is the same either way.

    Returns
    -------
    int, or None when the bound would keep every row
    """
    share = PRIOR_MARGIN * n_samples / max(1, n_parts * n_rows)
    return None if share >= 1.0 else int(share * 2.0**64)


def block_candidates(matrix_of, w: np.ndarray, n_samples: int, below=None, above=None):
    """``sample_candidates`` of rows given block by block: ``matrix_of(start,
    stop)`` is the float matrix of rows ``start:stop`` (``row_blocks``). The
    same rows as from the whole matrix at once (``merge_candidates``).

    Once the blocks read hold ``n_samples`` candidates, the ``n_samples``-th
    smallest hash among them bounds the later blocks' (no larger one can
    enter), so that most rows of a large partition are neither sorted nor
    copied."""
    parts, held, bound, bounded_at = [], 0, below, 0
    for a, b in row_blocks(len(w)) or [(0, 0)]:  # no rows: an empty sample
        parts.append(sample_candidates(matrix_of(a, b), w[a:b], n_samples, bound, above))
        held += len(parts[-1][0])
        if held >= 2 * n_samples > 0:  # the rows held stay under twice the sample
            parts = [merge_candidates(parts, n_samples)]
            held = bounded_at = len(parts[0][0])
            bound = int(parts[0][0][-1])
        elif held >= n_samples > 0 and 4 * (held - bounded_at) >= n_samples:
            hashes = np.concatenate([p[0] for p in parts])
            bound = int(np.partition(hashes, n_samples - 1)[n_samples - 1])
            bounded_at = held
    return parts[0] if len(parts) == 1 else merge_candidates(parts, n_samples)


def frame_candidates(X, sample_weight=None, n_samples: int = SAMPLE_ROWS, below=None):
    """The binning candidates of a block of training rows, exactly as ``fit``
    draws them from a partition of X.

    A pipeline that computes bins outside ``fit`` (e.g. while writing its
    training split) gives each block's candidates to a ``CandidatePool`` (or
    ``merge_candidates``) and fits a ``BinMapper`` on the result; ``fit(X, y,
    bin_mapper=...)`` then bins exactly as a ``fit`` without it would.

    Parameters
    ----------
    X : pandas DataFrame (numeric, boolean and categorical columns), 2-D array
        or scipy sparse matrix (entries not stored are missing; the candidates'
        rows are then CSR)
        The rows, with the columns the fit will see. A categorical column
        enters the row hash as 0 (its categories, hence its codes, are not
        known until every partition is read; it needs no edges).
    sample_weight : array-like of shape (n_rows,), optional
        Rows with weight 0 are left out; the weights weight the quantiles.
    n_samples : int, default SAMPLE_ROWS
    below : int, optional
        ``CandidatePool.threshold``: only rows whose hash can still enter.

    Returns
    -------
    (hashes, rows, weights), as ``sample_candidates``
    """
    from .inputs.frames import infer_schema, to_matrix

    if is_scipy_sparse(X):  # sparse rows stay sparse (``BinMapper.fit`` takes them)
        X = as_csr(X)
        w = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, np.float64)
        return block_candidates(lambda a, b: X[a:b], w, n_samples, below)
    schema = infer_schema(X)
    w = np.ones(len(X)) if sample_weight is None else np.asarray(sample_weight, np.float64)
    return block_candidates(lambda a, b: to_matrix(row_slice(X, a, b), schema), w, n_samples, below)


def sample_candidates(X: np.ndarray, w: np.ndarray, n_samples: int, below=None, above=None):
    """The rows of ``X`` (weight > 0) with the ``n_samples`` smallest content hashes,
    among those whose hash is at most ``below`` (``CandidatePool.threshold``)
    and more than ``above``.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features), float64
    w : ndarray of shape (n_rows,), float64
        Sample weights; they weight the quantiles, so that a row of weight 3
        bins like three copies of it.
    n_samples : int
    below : int, optional
        Rows with a larger hash cannot be in the sample: the partitions
        scanned before already gave ``n_samples`` rows with smaller hashes.
    above : int, optional
        Rows with a hash this small or smaller were sent before (a first
        scan under ``prior_bound``).

    Returns
    -------
    hashes : ndarray of shape (m,), uint64, ascending
    rows : ndarray of shape (m, n_features), X's dtype (float32 or float64)
    weights : ndarray of shape (m,), float64
    """
    if not (w > 0).all():
        keep = w > 0
        X, w = X[keep], w[keep]
    if is_scipy_sparse(X):  # hashed as its dense rows with NaN where nothing is stored
        hashes = csr_row_hashes(X.indptr, X.indices, X.data, X.shape[1])
    else:
        X = np.ascontiguousarray(X)
        hashes = row_content_hashes(X if X.dtype == np.float32 else
                                    X.astype(np.float64, copy=False))
    within = None  # the rows whose hash can enter, when bounds leave some out
    if below is not None or above is not None:
        keep = np.ones(len(hashes), bool)
        if below is not None:
            keep &= hashes <= np.uint64(below)
        if above is not None:
            keep &= hashes > np.uint64(above)
        within = np.flatnonzero(keep)
        hashes = hashes[within]
    order = _smallest(hashes, w if within is None else w[within], n_samples)
    rows = order if within is None else within[order]  # the rows are copied once, here
    return hashes[order], X[rows], w[rows]  # float32 input stays float32 (exact in float64)


def _smallest(hashes: np.ndarray, weights: np.ndarray, n: int) -> np.ndarray:
    """Indices of the ``n`` rows with the smallest hashes, ascending; equal
    hashes (equal rows) by weight, so that which copies of a repeated row of
    different weights enter does not depend on where the rows are."""
    if len(hashes) > n:
        keep = np.flatnonzero(hashes <= np.partition(hashes, n - 1)[n - 1])
    else:
        keep = np.arange(len(hashes))
    order = keep[np.argsort(hashes[keep], kind="stable")]
    sorted_hashes = hashes[order]
    if (sorted_hashes[1:] == sorted_hashes[:-1]).any():
        order = keep[np.lexsort((weights[keep], hashes[keep]))]
    return order[:n]


def merge_candidates(parts: list, n_samples: int):
    """Merge several ``sample_candidates`` results, keeping the smallest hashes.

    The result is the same rows and weights whatever the grouping of inputs
    (rows with equal hashes have equal content; they are ordered by weight).
    Only the kept rows are copied (a worker merging its partitions' candidates
    never holds them all twice). Sparse rows (CSR) stay sparse.
    """
    hashes = np.concatenate([p[0] for p in parts])
    order = _smallest(hashes, np.concatenate([p[2] for p in parts]), n_samples)
    if any(is_scipy_sparse(p[1]) for p in parts):
        import scipy.sparse as sp

        rows = sp.vstack([sp.csr_matrix(p[1]) for p in parts], format="csr")[order]
        return hashes[order], rows, np.concatenate([p[2] for p in parts])[order]
    offsets = np.concatenate([[0], np.cumsum([len(p[0]) for p in parts])]).astype(np.int64)
    part_of = np.searchsorted(offsets, order, side="right") - 1
    within = order - offsets[part_of]
    by_part = np.argsort(part_of, kind="stable")  # each part's kept rows together: no mask a part
    first = np.searchsorted(part_of[by_part], np.arange(len(parts) + 1))
    dtype = np.result_type(*[p[1].dtype for p in parts])
    rows = np.empty((len(order),) + parts[0][1].shape[1:], dtype)
    weights = np.empty(len(order), np.float64)
    for i, (_, part_rows, part_weights) in enumerate(parts):
        mine = by_part[first[i]:first[i + 1]]
        rows[mine] = part_rows[within[mine]]
        weights[mine] = part_weights[within[mine]]
    return hashes[order], rows, weights


class CandidatePool:
    """The binning sample as partitions' candidates arrive, in any order.

    Keeps the ``n_samples`` rows with the smallest hashes seen so far (merged
    once the waiting candidates are as many as the sample), and tells the
    scans still to come the largest hash that can still enter (``threshold``),
    so that they send only those rows: the pool never holds much more than two
    samples, and a scan's result shrinks as the sample fills. The final sample
    is the same whatever the order of arrival (``merge_candidates``).
    """

    def __init__(self, n_samples: int):
        self.n_samples = n_samples
        self._merged, self._waiting, self.threshold = None, [], None

    def add(self, candidates) -> None:
        self._waiting.append(candidates)
        if sum(len(c[0]) for c in self._waiting) >= self.n_samples:
            self._merge()

    def _merge(self) -> None:
        parts = ([self._merged] if self._merged is not None else []) + self._waiting
        self._merged, self._waiting = merge_candidates(parts, self.n_samples), []
        if len(self._merged[0]) == self.n_samples:
            self.threshold = int(self._merged[0][-1])

    def result(self):
        """(hashes, rows, weights) of the sample."""
        if self._waiting or self._merged is None:
            self._merge()
        return self._merged


def weighted_percentile(values: np.ndarray, weights: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``np.percentile(..., method="midpoint")`` of the data with each value
    repeated ``weight`` times (exact for integer weights).

    Parameters
    ----------
    values : ndarray (n,), sorted ascending
    weights : ndarray (n,), positive
    q : ndarray of percentiles in [0, 100]
    """
    cum = np.cumsum(weights)
    position = np.asarray(q) / 100.0 * (cum[-1] - 1.0)
    lo = np.searchsorted(cum, np.floor(position), side="right")
    hi = np.searchsorted(cum, np.ceil(position), side="right")
    n = len(values) - 1
    return 0.5 * (values[np.minimum(lo, n)] + values[np.minimum(hi, n)])


def find_bin_edges(column: np.ndarray, max_bins: int, weights: np.ndarray | None = None) -> np.ndarray:
    """Bin thresholds of one numeric feature from its sample.

    With at most ``max_bins - 1`` distinct values every distinct value gets its
    own bin (thresholds at midpoints); otherwise thresholds are the midpoint
    quantiles at ``100 k / (max_bins - 1)`` percent.

    Parameters
    ----------
    column : ndarray of shape (n_samples,), float64 or float32
        A float32 column gives the edges of its float64 values (the
        conversion is exact and keeps the order).
    max_bins : int
        Total number of bins including the missing-value bin.
    weights : ndarray of shape (n_samples,), optional

    Returns
    -------
    edges : ndarray of shape (n_value_bins - 1,), float64, strictly increasing
    """
    weighted = not _unit(weights)
    values, order = sort_column(column, with_order=weighted)
    return sorted_bin_edges(values, max_bins, np.asarray(weights)[order] if weighted else None)


def _unit(weights) -> bool:
    """Whether every weight is 1 (or there are none): the quantiles need no weights."""
    return weights is None or bool((np.asarray(weights) == 1.0).all())


def sorted_bin_edges(values: np.ndarray, max_bins: int, weights: np.ndarray | None = None) -> np.ndarray:
    """``find_bin_edges`` of a feature's values already sorted, without NaN
    (``kernels.radix.sort_columns``); ``weights`` in the same order, or None
    for weights 1. Tied values may come with their weights in any order: the
    percentiles are the same (the values are equal)."""
    values = values.astype(np.float64, copy=False)
    changes = values[1:] != values[:-1]
    n_value_bins = max_bins - 1
    if len(values) == 0 or np.count_nonzero(changes) < n_value_bins:  # few distinct values
        distinct = np.concatenate((values[:1], values[1:][changes]))  # np.r_ costs ~10 us
        edges = 0.5 * (distinct[:-1] + distinct[1:])
    else:
        percentiles = np.linspace(0, 100, num=n_value_bins + 1)[1:-1]
        quantiles = (midpoint_percentile(values, percentiles) if weights is None else
                     weighted_percentile(values, weights, percentiles))
        edges = np.unique(quantiles)
    # a threshold equal to +inf would make the last bin unreachable
    return edges[np.isfinite(edges)].astype(np.float64)


def midpoint_percentile(values: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``weighted_percentile`` with every weight 1, without the cumulative sum:
    the ranks ``floor`` and ``ceil`` of ``q / 100 (n - 1)`` themselves (with
    weights 1 the cumulative weights are 1..n, so the searches find exactly
    those ranks); ``np.percentile(..., method="midpoint")``.

    Parameters
    ----------
    values : ndarray (n,), sorted ascending
    q : ndarray of percentiles in [0, 100]
    """
    position = np.asarray(q) / 100.0 * (len(values) - 1.0)
    n = len(values) - 1
    lo = np.minimum(np.floor(position).astype(np.int64), n)
    hi = np.minimum(np.ceil(position).astype(np.int64), n)
    return 0.5 * (values[lo] + values[hi])


def _checked_edges(name, values, max_bins: int) -> np.ndarray:
    """One feature's thresholds as float64, or a ValueError naming it."""
    try:
        edges = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"bin edges of feature {name!r} are not numbers: {values!r:.80}") from None
    if edges.ndim != 1 or not np.isfinite(edges).all() or (np.diff(edges) <= 0).any():
        raise ValueError(f"bin edges of feature {name!r} must be finite and strictly increasing; "
                         f"got {edges.tolist()!r:.80}")
    if len(edges) > max_bins - 2:
        raise ValueError(f"feature {name!r} has {len(edges)} bin edges, more than max_bins - 2 = "
                         f"{max_bins - 2}; pass a larger max_bins (at most {MAX_BINS}) or fewer "
                         f"edges")
    return edges


def _checked_categories(name, values, max_bins: int) -> list:
    """One feature's categories as a list, or a ValueError naming it."""
    values = list(values)
    if len(values) > max_bins - 1:
        raise ValueError(f"categorical feature {name!r} has {len(values)} categories, more than "
                         f"max_bins - 1 = {max_bins - 1}")
    if len(set(values)) != len(values):
        raise ValueError(f"categorical feature {name!r} lists a category twice")
    return values


@numba.njit(cache=True, inline="always")
def _bin_of(edges, x):
    """Number of edges strictly below x (searchsorted left) in one feature's
    row of ``BinMapper._edges_padded`` (``SEARCH_SLOTS`` edges, +inf after
    the feature's own).

    Always ``log2(SEARCH_SLOTS)`` halving steps of a fixed size, whatever the
    feature and x: each step compiles to a conditional add, not a branch the
    processor mispredicts half the time. 6 ns a value against 40 ns for the
    branching search.
    """
    base = 0
    half = SEARCH_SLOTS >> 1
    while half > 0:
        base += half * np.int64(edges[base + half - 1] < x)
        half >>= 1
    return base


@numba.njit(cache=True, inline="always")
def _code_of(x, edges, categorical, n_categories):
    """One value's bin code: ``MISSING_BIN`` for NaN and for a category outside
    ``0 .. n_categories - 1``, the category itself, or ``_bin_of`` its edges."""
    if np.isnan(x):
        return MISSING_BIN
    if categorical:
        code = int(x)
        return code if 0 <= code < n_categories else MISSING_BIN
    return _bin_of(edges, x)


@numba.njit(parallel=True, cache=True)
def _map_to_bins(X, edges, is_categorical, n_categories, out):
    """Write bin codes of ``X`` (n, d) into ``out`` (n, d); NaN -> MISSING_BIN.

    ``edges`` is ``BinMapper._edges_padded``, shape (d, SEARCH_SLOTS). Rows
    are processed in blocks, a feature at a time, so that each feature's
    edges stay in cache while its codes are looked up.
    """
    n, d = X.shape
    block = 2048
    for start in numba.prange((n + block - 1) // block):
        lo = start * block
        hi = min(lo + block, n)
        for j in range(d):
            row = edges[j]
            for i in range(lo, hi):
                out[i, j] = _code_of(np.float64(X[i, j]), row, is_categorical[j], n_categories[j])


@numba.njit(parallel=True, cache=True)
def _map_csr_to_bins(indptr, indices, data, edges, is_categorical, n_categories, out):
    """``_map_to_bins`` of a CSR matrix: ``MISSING_BIN`` where nothing is
    stored, the stored entries' codes elsewhere; rows in parallel."""
    for i in numba.prange(len(indptr) - 1):
        out[i, :] = MISSING_BIN
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            out[i, j] = _code_of(np.float64(data[k]), edges[j], is_categorical[j], n_categories[j])


@numba.njit(parallel=True, cache=True)
def _map_entries_to_bins(indptr, indices, data, edges, is_categorical, n_categories, out):
    """The code of every stored entry of a CSR matrix (``out[k]`` for ``data[k]``)."""
    for i in numba.prange(len(indptr) - 1):
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            out[k] = _code_of(np.float64(data[k]), edges[j], is_categorical[j], n_categories[j])


class BinMapper:
    """Per-feature bin edges (numeric) or category lists (categorical).

    Attributes
    ----------
    bin_edges_ : list of ndarray
        Thresholds per feature (empty for categorical features).
    is_categorical_ : ndarray of shape (n_features,), bool
    categories_ : dict[int, list]
        Category values per categorical feature; code = position in the list.
    n_bins_non_missing_ : ndarray of shape (n_features,), int
    feature_names_in_ : ndarray of str
        Only for a mapper made by :meth:`from_edges`: the features by name,
        which ``fit(bin_mapper=...)`` matches to the training data's columns.
    """

    def __init__(self, max_bins: int = MAX_BINS):
        if not 3 <= max_bins <= MAX_BINS:
            raise ValueError(f"max_bins must be between 3 and {MAX_BINS}, got {max_bins}")
        self.max_bins = max_bins

    def fit(self, sample: np.ndarray, is_categorical, categories: dict,
            weights: np.ndarray | None = None, feature_names=None) -> BinMapper:
        """Compute edges from a (weighted) sample: rows x features, categoricals as codes.

        Parameters
        ----------
        sample : ndarray of shape (n_samples, n_features)
            E.g. the rows of ``CandidatePool.result()`` (``frame_candidates``).
        is_categorical : array-like of shape (n_features,), bool
        categories : dict of int to list
            Per categorical feature, its categories (code = position).
        weights : ndarray of shape (n_samples,), optional
        feature_names : sequence of str, optional
            Names the features, so that ``fit(bin_mapper=...)`` matches them to
            the training data's columns by name (as ``from_edges``).
        """
        self.is_categorical_ = np.asarray(is_categorical, dtype=bool)
        self.categories_ = {int(k): list(v) for k, v in categories.items()}
        if is_scipy_sparse(sample):
            edges, n_features = self._sparse_edges(sample, weights), sample.shape[1]
        else:
            sample = np.asarray(sample)  # float32 stays float32: half the bytes to transpose and sort
            edges, n_features = self._dense_edges(sample, weights), sample.shape[1]
        self.bin_edges_ = [np.empty(0) if self.is_categorical_[j] else edges(j)
                           for j in range(n_features)]
        if feature_names is not None:
            self.feature_names_in_ = np.array([str(n) for n in feature_names], dtype=object)
        self._finish()
        return self

    def _dense_edges(self, sample, weights):
        """``edges(j)`` of a dense sample: its columns sorted at once, in
        parallel (``kernels.radix.sort_columns``)."""
        numeric = np.flatnonzero(~self.is_categorical_)  # a categorical column has no edges
        position = np.cumsum(~self.is_categorical_) - 1
        if sample.dtype != np.float32:
            sample = sample.astype(np.float64, copy=False)
        columns = np.ascontiguousarray(sample.T[numeric])  # one copy, feature-major
        weighted = not _unit(weights)
        values, order, present = sort_columns(columns, with_order=weighted)

        def edges(j):
            k = position[j]
            m = int(present[k])
            w = np.asarray(weights)[order[k, :m]] if weighted else None
            return sorted_bin_edges(values[k, :m], self.max_bins, w)

        return edges

    def _sparse_edges(self, sample, weights):
        """``edges(j)`` of a sparse sample: each feature's stored values, the
        entries not stored being missing (as NaN, which ``find_bin_edges``
        leaves out). The sample is transposed once (CSC); no dense matrix."""
        csc = sample.tocsc()
        csc.sort_indices()  # each column's rows ascending: weights in the dense order

        def edges(j):
            lo, hi = csc.indptr[j], csc.indptr[j + 1]
            w = None if weights is None else np.asarray(weights)[csc.indices[lo:hi]]
            return find_bin_edges(csc.data[lo:hi], self.max_bins, w)

        return edges

    @classmethod
    def from_edges(cls, edges: Mapping[str, Sequence[float]],
                   categories: Mapping[str, Sequence] | None = None,
                   max_bins: int = MAX_BINS) -> BinMapper:
        """A mapper from bins computed elsewhere, by feature name.

        E.g. from the quantile edges of a data preparation step (the prepare
        flow's ``bin_edges.json``); ``fit(X, y, bin_mapper=...)`` then bins
        with them instead of sampling X for its own, after matching the names
        to X's columns.

        Parameters
        ----------
        edges : mapping of str to sequence of float
            Thresholds of each numeric feature, finite and strictly
            increasing: a value x falls in bin b when
            ``edges[b-1] < x <= edges[b]``. At most ``max_bins - 2`` per
            feature (``max_bins - 1`` value bins).
        categories : mapping of str to sequence, optional
            The categories of each categorical feature, at most
            ``max_bins - 1``; a category's code is its position.
        max_bins : int in [3, 256], default 256
            Bins per feature, the missing-value bin included.

        Returns
        -------
        BinMapper

        Raises
        ------
        ValueError
            Naming the feature whose edges or categories are unusable.
        """
        categories = dict(categories or {})
        both = [name for name in edges if name in categories]
        if both:
            raise ValueError(f"feature {both[0]!r} has both edges and categories; a feature is "
                             f"numeric (edges) or categorical (categories), not both")
        self = cls(max_bins)
        names = [str(n) for n in edges] + [str(n) for n in categories]
        self.feature_names_in_ = np.array(names, dtype=object)
        self.is_categorical_ = np.array([False] * len(edges) + [True] * len(categories))
        self.bin_edges_ = [_checked_edges(name, values, max_bins) for name, values in edges.items()]
        self.bin_edges_ += [np.empty(0)] * len(categories)
        self.categories_ = {}
        for j, (name, values) in enumerate(categories.items(), start=len(edges)):
            self.categories_[j] = _checked_categories(name, values, max_bins)
        self._finish()
        return self

    def _finish(self) -> None:
        n_cat = np.array(
            [len(self.categories_.get(j, ())) for j in range(len(self.bin_edges_))], np.int64
        )
        self.n_bins_non_missing_ = np.where(
            self.is_categorical_, n_cat, [len(e) + 1 for e in self.bin_edges_]
        ).astype(np.int64)
        self._n_categories = n_cat
        self._edges_padded = np.full((len(self.bin_edges_), SEARCH_SLOTS), np.inf)
        for j, e in enumerate(self.bin_edges_):
            self._edges_padded[j, :len(e)] = e

    def transform(self, X: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Bin codes of a numeric matrix (categoricals as codes, NaN missing).

        Parameters
        ----------
        X : ndarray of shape (n_rows, n_features), float32 or float64, or a
            scipy CSR matrix (canonical, ``inputs.sparse.as_csr``) whose
            entries not stored are missing: binned from its stored entries,
            never made dense
        out : ndarray of the result's shape, uint8, C-contiguous, optional
            Where to write the codes (e.g. a file mapped into memory).

        Returns
        -------
        X_binned : ndarray of shape (n_rows, n_features), uint8, C-contiguous
            Row-major: a histogram pass reads each visited row's codes as one
            short contiguous run (XGBoost's layout of its bin matrix).
        """
        if out is None:
            out = np.empty(X.shape, dtype=X_BINNED_DTYPE)
        if is_scipy_sparse(X):
            _map_csr_to_bins(X.indptr, X.indices, X.data, self._edges_padded,
                             self.is_categorical_, self._n_categories, out)
            return out
        if X.dtype not in (np.float32, np.float64):
            X = X.astype(np.float64)
        X = np.ascontiguousarray(X)
        _map_to_bins(
            X, self._edges_padded, self.is_categorical_, self._n_categories, out
        )
        return out

    def transform_sparse(self, X) -> SparseCodes:
        """Codes of a scipy CSR matrix's stored entries only (``kernels.sparse_codes``):
        memory in proportion to them; entries not stored are missing."""
        codes = np.empty(X.nnz, dtype=X_BINNED_DTYPE)
        _map_entries_to_bins(X.indptr, X.indices, X.data, self._edges_padded,
                             self.is_categorical_, self._n_categories, codes)
        return SparseCodes(np.asarray(X.indptr, np.int64), np.asarray(X.indices, np.int32), codes,
                           X.shape[1])

    def bin_threshold_value(self, feature: int, bin_index: int) -> float:
        """Raw threshold of the split "bin <= bin_index" on a numeric feature."""
        edges = self.bin_edges_[feature]
        return float(edges[bin_index]) if bin_index < len(edges) else np.inf

    def bin_threshold_values(self, features, bins) -> np.ndarray:
        """``bin_threshold_value`` of each (feature, bin) pair (arrays)."""
        return self._edges_padded[np.asarray(features, np.int64), np.asarray(bins, np.int64)]

    @property
    def threshold_table(self) -> np.ndarray:
        """(n_features, 256) float64: ``bin_threshold_value(j, b)`` at [j, b], for
        compiled code (read only)."""
        return self._edges_padded

    def to_dict(self) -> dict:
        return {
            "max_bins": self.max_bins,
            "bin_edges": [e.tolist() for e in self.bin_edges_],
            "is_categorical": self.is_categorical_.tolist(),
            "categories": {str(k): list(v) for k, v in self.categories_.items()},
        }

    @classmethod
    def from_dict(cls, d: dict) -> BinMapper:
        self = cls(d["max_bins"])
        self.bin_edges_ = [np.asarray(e, dtype=np.float64) for e in d["bin_edges"]]
        self.is_categorical_ = np.asarray(d["is_categorical"], dtype=bool)
        self.categories_ = {int(k): list(v) for k, v in d["categories"].items()}
        self._finish()
        return self
