"""User-defined objectives (XGBoost's ``obj``), and the passes that fix the
fixed-point scales of losses whose gradients have no bound known in advance.

``loss=fn`` with ``fn(y_true, raw_score) -> (gradient, hessian)``: numpy
arrays of one partition's rows in, one first and one second derivative of the
loss per row out (dL/df, d^2L/df^2 at f = raw_score). distboost multiplies them
by the sample weights, as it does for its own losses. The function runs on
the workers, so it must pickle: a function of an importable module (the
workers must be able to import it too) or one ``cloudpickle`` can send by
value (a function of ``__main__``, a lambda, a closure). Its results are
checked every round: one finite value per row, hessians >= 0, with an error
naming the round, the partition and the row.

Fixed point: statistics are integers at a power-of-two scale shared by every
partition (``kernels.fixed_point``), set from bounds of |g| and h. A user's function
has no known bound, so each round starts with one pass computing it at the
margins the round will use (the model so far plus the previous round's
trees): the exact maximum of |g| and of h over all rows, the same for any
partitioning (a maximum does not depend on the order), so for a function that
is elementwise and deterministic the model is the same for any partitioning.
The log-link losses (``losses.LogLinkLoss``) need only the margins' range,
a cheaper pass.
"""

from __future__ import annotations

import contextlib
import pickle

import numpy as np

from ..engine.group import each_shard
from ..inputs.checks import InvalidParameterError, show_value
from ..kernels.tree import predict_binned
from ..trees.losses import Loss


class ObjectiveError(ValueError):
    """A user-defined objective returned something unusable."""


class CustomObjective(Loss):
    """A loss given as ``fn(y_true, raw_score) -> (gradient, hessian)``.

    One output (regression); the raw score is what the model predicts (the
    link is the user's business); f_0 is ``base_score`` (0 by default, as
    XGBoost for a custom objective); leaves are Newton steps -G/(H+lambda).
    The default metric is the root mean squared error of the raw score.
    """

    name, metric_name = "custom", "rmse"
    margin_range_bounds = False
    gradient_range_pass = True

    def __init__(self, fn):
        self.fn = fn

    def init_statistics(self, y, w):
        raise NotImplementedError("a custom objective starts from base_score (0 by default)")

    def gradients(self, y, raw, w, where: str = "", row_offset: int = 0):
        """The function's (g, h) at ``raw[0]``, checked, times the weights."""
        g, h = checked_derivatives(self.fn, y, raw[0], where, row_offset)
        return (g * w)[None, :], (h * w)[None, :]

    def pointwise(self, y, raw):
        return (y - raw[0]) ** 2

    def finish_metric(self, mean):
        return float(np.sqrt(mean))

    def __reduce__(self):
        return CustomObjective, (self.fn,)


def checked_derivatives(fn, y, raw, where: str = "", row_offset: int = 0):
    """``fn(y, raw)`` as two float64 arrays of one finite value per row (h >= 0);
    a bad row is named as ``row_offset`` + its index."""
    try:
        out = fn(y, raw)
    except Exception as exc:
        raise ObjectiveError(f"the objective {_name(fn)} raised{where}: "
                             f"{type(exc).__name__}: {exc}") from exc
    if not (isinstance(out, tuple) and len(out) == 2):
        raise ObjectiveError(f"the objective {_name(fn)} must return (gradient, hessian); "
                             f"it returned {type(out).__name__}{where}")
    arrays = []
    for what, a in zip(("gradient", "hessian"), out):
        a = np.asarray(a, dtype=np.float64)
        if a.shape != raw.shape:
            raise ObjectiveError(
                f"the objective {_name(fn)} returned a {what} of shape {a.shape} for "
                f"{len(raw)} rows{where}; return one value per row, shape {raw.shape}")
        bad = ~np.isfinite(a) if what == "gradient" else ~(np.isfinite(a) & (a >= 0))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            need = "finite" if what == "gradient" else "finite and >= 0"
            raise ObjectiveError(
                f"the objective {_name(fn)} returned {int(bad.sum())} {what}(s) that are not "
                f"{need}{where}, the first at row {i + row_offset}: {show_value(a[i])} (y = "
                f"{show_value(y[i])}, raw score {show_value(raw[i])})")
        arrays.append(a)
    return arrays


def _name(fn) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


def check_picklable(fn, what: str, owner: str) -> None:
    """Refuse, before any Dask work, a function the workers cannot receive."""
    import cloudpickle

    try:
        pickle.dumps(fn)
    except Exception:  # noqa: BLE001 (by reference failed: try by value, as the engine does)
        try:
            cloudpickle.dumps(fn)
        except Exception as exc:  # noqa: BLE001
            raise InvalidParameterError(
                f"{owner}: {what}={fn!r} cannot be sent to the Dask workers ({type(exc).__name__}:"
                f" {exc}); use a function defined at module level in a module the workers can "
                f"import, or one cloudpickle can pickle (no open files, locks or sockets)"
            ) from None


@contextlib.contextmanager
def explained_import_errors(functions, owner: str):
    """Say what a worker's failure to import a user's function means."""
    try:
        yield
    except ImportError as exc:
        if not functions:
            raise
        names = ", ".join(_name(f) for f in functions)
        raise ImportError(
            f"{owner}: a Dask worker could not import {exc.name or 'a module'} ({exc}) while "
            f"receiving {names}: functions from importable modules travel by reference, so the "
            f"module must be installed (or on the path) on every worker; or define the "
            f"function in the script you run (it then travels by value)") from exc


# --------------------------------------------------------- the range passes
def _margins(shard, rows, packed):
    """The rows' margins plus the pending trees (a copy), or the margins."""
    if packed is None:
        return rows
    margin = rows.copy()
    predict_binned(shard.X_binned, *packed, margin)
    return margin


def _row_offsets(shards) -> list[int]:
    """Each shard's first row within its partition (a partition kept on disk is
    several consecutive shards of one group)."""
    first = {}
    for s in shards:
        first[s.index] = min(first.get(s.index, s.first_row), s.first_row)
    return [s.first_row - first[s.index] for s in shards]


def _gradient_extremes(state, loss, packed, round_index):
    """Per group: (max |g|, max h) of ``loss`` at the margins plus ``packed``."""
    g_max = h_max = 0.0
    offsets = _row_offsets(state.shards)
    for shard, rows, offset in each_shard(state.shards, state.rows, offsets):
        where = f" in round {round_index}, partition {shard.index}"
        g, h = loss.gradients(shard.target, _margins(shard, rows, packed), shard.w, where, offset)
        g_max = max(g_max, float(np.abs(g).max(initial=0.0)))
        h_max = max(h_max, float(h.max(initial=0.0)))
    return state, (g_max, h_max)


def _margin_extremes(state):
    """Per group: (min f, max f) over its training rows."""
    lo, hi = np.inf, -np.inf
    for shard, rows in each_shard(state.shards, state.rows):
        if rows.size:
            lo, hi = min(lo, float(rows.min())), max(hi, float(rows.max()))
    return state, (lo, hi)


def gradient_range(engine, loss, packed_pending, round_index) -> tuple[float, float]:
    """Exact maxima of |g| and h over all training rows this round (one pass)."""
    per_group = engine.apply(_gradient_extremes, "gradient-range", loss, packed_pending,
                             round_index)
    return max(p[0] for p in per_group), max(p[1] for p in per_group)


def margin_range(engine, pending) -> tuple[float, float]:
    """The margins' range this round: the exact range now (one pass), widened by
    the smallest and largest leaf of the pending trees (``pending``: packed
    ``RoundTrees`` of one round, or None)."""
    per_group = engine.apply(_margin_extremes, "margin-range")
    lo, hi = min(p[0] for p in per_group), max(p[1] for p in per_group)
    if pending is not None:
        leaves = pending.nodes["value"][pending.nodes["is_leaf"] == 1]
        lo, hi = lo + float(leaves.min()), hi + float(leaves.max())
    return lo, hi


def _target_errors(state, loss):
    """Per group: the first refused target of each partition (partition, row, value,
    how many), and whether some row with a positive weight has y > 0."""
    errors, positive = [], False
    offsets = _row_offsets(state.shards)
    for shard, offset in each_shard(state.shards, offsets):
        bad = loss.check_target(shard.y)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            errors.append((shard.index, i + offset, float(shard.y[i]), int(bad.sum())))
        positive = positive or bool(np.any((shard.y > 0) & (shard.w > 0)))
    return state, (errors, positive)


def check_targets(engine, loss) -> None:
    """Refuse targets outside the loss's domain, naming the partition, row and value
    (one pass over the binned training rows, before the first round)."""
    per_group = engine.apply(_target_errors, "check-target", loss)
    errors = sorted(e for group in per_group for e in group[0])
    if errors:
        part, row, value, _ = errors[0]
        count = sum(e[3] for e in errors if e[0] == part)
        raise ValueError(target_message(loss, count, row, value, part))
    if not any(group[1] for group in per_group):
        raise ValueError(
            f"loss={loss.name!r}: the target is 0 on every row with a positive weight; a "
            f"log-link model needs some positive targets (the log of their mean is f_0)")


def check_local_targets(loss, y) -> None:
    """The same refusal for a target in memory, before any work (rows of ``y``).
    A target that is not numeric at all is left to the data checks of ``fit``."""
    try:
        y = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        return
    if y.ndim != 1:
        return
    bad = loss.check_target(y)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(target_message(loss, int(bad.sum()), i, y[i]))


def target_message(loss, count: int, row: int, value: float, partition=None) -> str:
    """The refusal of targets outside a log-link loss's domain."""
    where = "" if partition is None else f" in partition {partition}"
    need = "y >= 0" if loss.y_may_be_zero else "y > 0"
    return (f"target{where} has {count} value(s) that loss={loss.name!r} does not allow "
            f"({need}), the first at row {row} (value {show_value(value)}); drop or fix "
            f"those rows, or choose a loss for such targets")
