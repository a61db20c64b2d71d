"""Kernels over compressed sparse rows (CSR: ``indptr``, ``indices``, ``data``)
where an entry not stored is a missing value (XGBoost's convention for sparse
input): the row hashes of the binning sample and dense blocks with NaN in
the gaps, each exactly as the dense matrix with NaN where nothing is stored
gives them.
"""

import numba
import numpy as np

from .rng import HASH_BLOCK, ROW_HASH_SEED, gap_word, splitmix64


@numba.njit(parallel=True, cache=True)
def csr_row_hashes(indptr, indices, data, n_features):
    """``rng.row_content_hashes`` of the dense rows with NaN where nothing is stored.

    Parameters
    ----------
    indptr : ndarray of shape (n_rows + 1,), int
    indices : ndarray of shape (nnz,), int, ascending within each row
    data : ndarray of shape (nnz,), float32 or float64
    n_features : int

    Returns
    -------
    h : ndarray of shape (n_rows,), uint64

    Notes
    -----
    The hash mixes a row's values in column order and each run of missing
    values once, as its length, so a row costs its stored entries.
    """
    n = len(indptr) - 1
    out = np.empty(n, dtype=np.uint64)
    for block in numba.prange((n + HASH_BLOCK - 1) // HASH_BLOCK):
        buf = np.empty(1, np.float64)
        bits = buf.view(np.uint64)
        for i in range(block * HASH_BLOCK, min(n, (block + 1) * HASH_BLOCK)):
            h, after = ROW_HASH_SEED, 0  # after: the column after the last stored entry
            for k in range(indptr[i], indptr[i + 1]):
                j = indices[k]
                if j > after:
                    h = splitmix64(h ^ gap_word(j - after))
                buf[0] = data[k]
                h = splitmix64(h ^ bits[0])
                after = j + 1
            out[i] = splitmix64(h ^ gap_word(n_features - after)) if n_features > after else h
    return out


@numba.njit(parallel=True, cache=True)
def csr_to_dense(indptr, indices, data, out):
    """Write the rows into ``out`` (n_rows, n_features), NaN where nothing is stored."""
    for i in numba.prange(len(indptr) - 1):
        out[i, :] = np.nan
        for k in range(indptr[i], indptr[i + 1]):
            out[i, indices[k]] = data[k]


@numba.njit(cache=True)
def first_nan(data):
    """Position of the first NaN in ``data``, or -1."""
    for k in range(len(data)):
        if np.isnan(data[k]):
            return k
    return -1
