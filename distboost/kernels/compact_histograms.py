"""Histograms on the wire: only their non-empty bins.

A node's histogram holds every feature's 256 bins, but a deep node of wide or
sparse data fills few of them: 1M rows x 10,000 features at 0.1 % density
store 156k entries in a holder's part of a depth-5 node, against its 2.56M
bins. Between the holders and the driver (``engine.reduction``) a level's
histograms then travel as ``CompactHistograms``: the non-empty bins' flat
positions and statistics, node by node. Exact (int64 fixed point), so the
sums are the dense ones to the bit; a histogram over half full travels dense.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

MAX_FILLED = 0.5
"""Fraction of non-empty bins above which histograms travel dense (a
compact bin costs a 4-byte position more than a dense one)."""


SAMPLE_UNITS = 64
"""(node, feature) units looked at first: histograms over half full by them
travel dense without being read whole."""


@dataclass(frozen=True)
class CompactHistograms:
    """The non-empty bins of histograms of shape (n_slots, n_features, n_bins, n_stats).

    Node ``s``'s bins are ``keys[starts[s]:starts[s + 1]]`` (ascending
    positions ``feature * n_bins + bin``) with statistics ``values`` of the
    same rows.
    """

    starts: np.ndarray  # (n_slots + 1,), int64
    keys: np.ndarray  # (nnz,), int32
    values: np.ndarray  # (nnz, n_stats), int64
    dense_shape: tuple

    @property
    def shape(self) -> tuple:
        return self.dense_shape

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def nbytes(self) -> int:
        return self.starts.nbytes + self.keys.nbytes + self.values.nbytes

    def to_dense(self) -> np.ndarray:
        out = np.zeros(self.dense_shape, self.values.dtype)
        for slot in range(len(self.starts) - 1):
            _scatter(self.starts, self.keys, self.values, slot, out[slot].reshape(-1, out.shape[3]))
        return out


def compact(hist: np.ndarray, max_filled: float = MAX_FILLED, clear: bool = False):
    """``hist`` (n_slots, n_features, n_bins, n_stats) as ``CompactHistograms``
    when at most ``max_filled`` of its bins hold anything, else ``hist``.

    ``clear``: once compact, ``hist`` is left all zeros (only its non-empty
    bins written), so memory reused for the next histograms need not be
    zeroed whole (``engine.buffers.Buffers.mark_zero``).
    """
    if not isinstance(hist, np.ndarray) or hist.ndim != 4 or hist.size == 0 \
            or hist.dtype != np.int64:
        return hist
    n_slots, n_features, n_bins, n_stats = hist.shape
    if clear and not hist.flags.c_contiguous:
        raise ValueError("compact(clear=True) needs C-contiguous histograms")
    units = np.ascontiguousarray(hist).reshape(n_slots * n_features, n_bins, n_stats)
    step = max(1, len(units) // SAMPLE_UNITS)
    if _filled_per_unit(units[::step]).sum() > max_filled * len(units[::step]) * n_bins:
        return hist  # full, by a sample of its (node, feature) units: not read whole
    counts = _filled_per_unit(units)
    offsets = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    if offsets[-1] > max_filled * n_slots * n_features * n_bins:
        return hist
    keys = np.empty(offsets[-1], np.int32)
    values = np.empty((offsets[-1], n_stats), np.int64)
    _fill(units, offsets, n_features, keys, values, clear)
    return CompactHistograms(offsets[::n_features].copy(), keys, values, tuple(hist.shape))


@numba.njit(parallel=True, cache=True)
def _filled_per_unit(units):
    """Non-empty bins of each (node, feature) unit."""
    counts = np.zeros(units.shape[0], np.int64)
    for u in numba.prange(units.shape[0]):
        n = 0
        for b in range(units.shape[1]):
            for s in range(units.shape[2]):
                if units[u, b, s] != 0:
                    n += 1
                    break
        counts[u] = n
    return counts


@numba.njit(parallel=True, cache=True)
def _fill(units, offsets, n_features, keys, values, clear):
    """Each unit's non-empty bins at its offset: position within its node,
    statistics (then zeroed in ``units`` when ``clear``)."""
    n_bins = units.shape[1]
    for u in numba.prange(units.shape[0]):
        k = offsets[u]
        base = (u % n_features) * n_bins
        for b in range(n_bins):
            filled = False
            for s in range(units.shape[2]):
                if units[u, b, s] != 0:
                    filled = True
                    break
            if filled:
                keys[k] = base + b
                for s in range(units.shape[2]):
                    values[k, s] = units[u, b, s]
                    if clear:
                        units[u, b, s] = 0
                k += 1


@numba.njit(cache=True)
def _scatter(starts, keys, values, slot, flat):
    """flat[keys] += values over node ``slot``'s bins (``flat``: (n_features * n_bins, n_stats))."""
    for k in range(starts[slot], starts[slot + 1]):
        for s in range(values.shape[1]):
            flat[keys[k], s] += values[k, s]


def is_compact(hist) -> bool:
    return isinstance(hist, CompactHistograms)


def add_into(out: np.ndarray, hist) -> None:
    """``out += hist`` for histograms of ``out``'s shape, dense or compact."""
    if not is_compact(hist):
        out += hist
        return
    _add_all(hist.starts, hist.keys, hist.values, out.reshape(out.shape[0], -1, out.shape[3]))


@numba.njit(parallel=True, cache=True)
def _add_all(starts, keys, values, out):
    for slot in numba.prange(len(starts) - 1):
        _scatter(starts, keys, values, slot, out[slot])


def summed(parts, out: np.ndarray, slot=None) -> np.ndarray:
    """The sum of ``parts`` (dense or compact histograms of one shape) into
    ``out``; with ``slot``, the sum of their node ``slot`` only."""
    dense = [p if slot is None else p[slot] for p in parts if not is_compact(p)]
    if dense:
        np.copyto(out, dense[0])
    else:
        out.fill(0)
    for d in dense[1:]:
        out += d
    for p in parts:
        if is_compact(p) and slot is None:
            add_into(out, p)
        elif is_compact(p):
            _scatter(p.starts, p.keys, p.values, slot, out.reshape(-1, out.shape[-1]))
    return out


def siblings(parts, slot, parent, built, other) -> None:
    """``histogram.siblings`` where some parts are compact: ``built`` the sum
    of the parts' node ``slot``, ``other = parent - built``."""
    np.subtract(parent, summed(parts, built, slot), out=other)
