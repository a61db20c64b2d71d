"""scipy.sparse input: checked, made CSR, and read as XGBoost reads it.

An entry a sparse matrix does not store is a **missing value** (as NaN in a
dense matrix: it takes each split's learned default direction); an entry
stored as 0 is the value 0. So a CSR matrix and the dense matrix with NaN
where the CSR stores nothing are the same data and train the same model
(Chen & Guestrin 2016, "XGBoost: A Scalable Tree Boosting System",
Section 3.4, sparsity-aware split finding, treats absent entries as
missing in the same way).

Every scipy sparse format is accepted (matrices and the newer sparse
arrays); other formats than CSR are converted to CSR once, which copies
their stored entries (CSC, COO...). Duplicate entries of a COO matrix are
summed, as scipy's conversion does. A stored NaN is refused: it would read
as missing, which a sparse matrix says by not storing the entry.
"""

from __future__ import annotations

import numpy as np

from ..kernels.sparse import csr_to_dense, first_nan

DENSE_BLOCK_VALUES = 1 << 22
"""Values in a dense block made from sparse rows (32 MiB of float64), where a
kernel needs dense rows (prediction, SHAP): the rows are converted this many
values at a time, not all at once."""


def is_scipy_sparse(X) -> bool:
    """A scipy.sparse matrix or sparse array, of any format."""
    return type(X).__module__.startswith("scipy.sparse")


def as_csr(X, what: str = "X", partition: int | None = None):
    """``X`` as a canonical ``scipy.sparse.csr_matrix`` of floats.

    Parameters
    ----------
    X : scipy sparse matrix or array, 2-D, any format
    what : str
        How errors name X.
    partition : int, optional
        The Dask partition X is, for errors.

    Returns
    -------
    csr_matrix of float32 (kept) or float64 (any other number type),
    indices sorted and no duplicates; X itself when it already is one.

    Raises
    ------
    ValueError
        For a shape other than 2-D, no rows or no features, complex values,
        or a stored NaN (naming its row and column).
    TypeError
        For values that are not numbers.
    """
    import scipy.sparse as sp

    where = "" if partition is None else f" in partition {partition}"
    if len(X.shape) != 2:
        raise ValueError(f"{what}{where} is a {len(X.shape)}-D sparse array of shape {X.shape}; "
                         f"pass a 2-D matrix of shape (n_samples, n_features)")
    if X.shape[1] == 0 or (X.shape[0] == 0 and partition is None):
        raise ValueError(f"{what}{where} has shape {X.shape}: a minimum of 1 sample and 1 "
                         f"feature is required")
    kind = X.dtype.kind
    if kind == "c":
        raise ValueError(f"Complex data not supported: {what}{where} has dtype {X.dtype}; pass "
                         f"real numbers")
    if kind not in "biuf":
        raise TypeError(f"{what}{where} is a sparse matrix of dtype {X.dtype}; expected numbers")
    dtype = X.dtype if X.dtype in (np.float32, np.float64) else np.float64
    csr = X if isinstance(X, sp.csr_matrix) else sp.csr_matrix(X)
    if csr.dtype != dtype:
        csr = csr.astype(dtype)
    if not csr.has_canonical_format:
        csr = csr.copy() if csr is X else csr
        csr.sum_duplicates()
    _refuse_stored_nan(csr, what, where)
    return csr


def _refuse_stored_nan(csr, what: str, where: str) -> None:
    k = int(first_nan(csr.data))
    if k < 0:
        return
    row = int(np.searchsorted(csr.indptr, k, side="right") - 1)
    raise ValueError(
        f"{what}{where} is a sparse matrix that stores NaN (first at row {row}, column "
        f"{int(csr.indices[k])}); in sparse input an entry not stored is the missing value: "
        f"drop the stored NaNs, e.g. X.data[np.isnan(X.data)] = 0; X.eliminate_zeros() "
        f"(if the matrix stores no zeros of its own), or pass a dense array with NaN")


def to_dense(csr) -> np.ndarray:
    """The dense matrix of ``csr`` with NaN where it stores nothing (its dtype).

    Memory: ``8 n_rows n_features`` bytes (float64); used on blocks of rows
    (``dense_blocks``) or on what is dense anyway (SHAP values).
    """
    out = np.empty(csr.shape, csr.dtype)
    csr_to_dense(csr.indptr, csr.indices, csr.data, out)
    return out


def dense_rows(n_features: int) -> int:
    """Rows per dense block of ``DENSE_BLOCK_VALUES`` values (at least 1)."""
    return max(1, DENSE_BLOCK_VALUES // max(1, n_features))
