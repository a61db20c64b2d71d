"""Counter-based random numbers: every draw is a pure function of
``(seed, stream, global row id)``, never of how rows are partitioned.

SplitMix64 (Steele, Lea & Flood 2014) mixes a 64-bit counter into a uniformly
distributed 64-bit word.
"""

import numba
import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@numba.njit(cache=True, inline="always")
def splitmix64(z):
    """Mix one uint64 into a well-distributed uint64 (SplitMix64 finalizer)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@numba.njit(cache=True)
def row_uniforms(seed, stream, first_row, n_rows):
    """Uniform(0, 1) draws for global rows ``first_row .. first_row + n_rows - 1``.

    Parameters
    ----------
    seed, stream : int
        The user's random_state and a purpose/round counter.
    first_row : int
        Global id of the first row of this partition.
    n_rows : int

    Returns
    -------
    u : ndarray of shape (n_rows,), float64
    """
    key = _stream_key(seed, stream)
    out = np.empty(n_rows, dtype=np.float64)
    for i in range(n_rows):
        out[i] = _uniform(key, first_row + i)
    return out


@numba.njit(cache=True, inline="always")
def _stream_key(seed, stream):
    return splitmix64(np.uint64(seed) * _GOLDEN + np.uint64(stream))


@numba.njit(cache=True, inline="always")
def _uniform(key, row):
    """Global row ``row``'s Uniform(0, 1) draw of a stream (``row_uniforms``)."""
    z = splitmix64(key ^ (np.uint64(row) * _GOLDEN))
    return (z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@numba.njit(parallel=True, cache=True)
def sample_positions(w, seed, stream, first_row, subsample, out):
    """out[t, i] = 0 for rows in the sample (positive weight and, with
    ``subsample`` < 1, a ``row_uniforms`` draw below it), else -1; every tree
    t alike. In parallel over rows."""
    key = _stream_key(seed, stream)
    for i in numba.prange(len(w)):
        keep = w[i] > 0 and (subsample >= 1.0 or _uniform(key, first_row + i) < subsample)
        for t in range(out.shape[0]):
            out[t, i] = 0 if keep else -1


ROW_HASH_SEED = np.uint64(0x243F6A8885A308D3)
"""The starting word of every row's hash."""
_GAP = np.uint64(0x9E3779B97F4A7C15)


@numba.njit(cache=True, inline="always")
def gap_word(n_missing):
    """The word a run of ``n_missing`` missing values adds to a row's hash."""
    return splitmix64(_GAP + np.uint64(n_missing))


HASH_BLOCK = 4096
"""Rows hashed by one thread at a time."""


@numba.njit(parallel=True, cache=True)
def row_content_hashes(X):
    """Hash each row of a float matrix by its values (as float64 bit patterns).

    Used to choose the binning sample independently of row order and of the
    partitioning. float32 and float64 forms of the same values hash alike.
    Each value is mixed in (``splitmix64``) in column order; a run of missing
    values (NaN) is mixed in once, as its length (``gap_word``): a sparse
    row's hash costs its stored entries (``sparse.csr_row_hashes``), and a row
    without missing values hashes as its values alone. Blocks of
    ``HASH_BLOCK`` rows are hashed in parallel.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features), float32 or float64

    Returns
    -------
    h : ndarray of shape (n_rows,), uint64
    """
    n, d = X.shape
    out = np.empty(n, dtype=np.uint64)
    for block in numba.prange((n + HASH_BLOCK - 1) // HASH_BLOCK):
        buf = np.empty(1, np.float64)
        bits = buf.view(np.uint64)
        for i in range(block * HASH_BLOCK, min(n, (block + 1) * HASH_BLOCK)):
            h, gap = ROW_HASH_SEED, 0
            for j in range(d):
                if np.isnan(X[i, j]):
                    gap += 1
                    continue
                if gap:
                    h = splitmix64(h ^ gap_word(gap))
                    gap = 0
                buf[0] = X[i, j]
                h = splitmix64(h ^ bits[0])
            out[i] = splitmix64(h ^ gap_word(gap)) if gap else h
    return out


def random_seed(random_state) -> int:
    """Turn ``random_state`` (None, int or Generator) into a 63-bit integer seed."""
    if random_state is None:
        return 0
    if isinstance(random_state, (int, np.integer)):
        return int(random_state) & 0x7FFFFFFFFFFFFFFF
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**63 - 1))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**31 - 1))
    raise TypeError(f"random_state must be None, an int or a numpy Generator, got {random_state!r}")
