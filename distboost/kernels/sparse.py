"""Kernels over compressed sparse rows (CSR: ``indptr``, ``indices``, ``data``)
where an entry not stored is a missing value (XGBoost's convention for sparse
input): the row hashes of the binning sample and dense blocks with NaN in
the gaps, each exactly as the dense matrix with NaN where nothing is stored
gives them.
"""

import numba
import numpy as np

from .rng import splitmix64

_SEED = np.uint64(0x243F6A8885A308D3)  # row_content_hashes' starting word


@numba.njit(cache=True)
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
    The hash chains every feature of a row in order, so a row costs
    ``n_features`` mixing steps whatever it stores (no memory beyond the
    output).
    """
    n = len(indptr) - 1
    buf = np.empty(1, np.float64)
    bits = buf.view(np.uint64)
    buf[0] = np.nan
    nan_bits = bits[0]
    out = np.empty(n, dtype=np.uint64)
    for i in range(n):
        h = _SEED
        k, end = indptr[i], indptr[i + 1]
        for j in range(n_features):
            if k < end and indices[k] == j:
                buf[0] = data[k]
                k += 1
                h = splitmix64(h ^ bits[0])
            else:
                h = splitmix64(h ^ nan_bits)
        out[i] = h
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
