"""Survival labels as users give them, checked.

AFT: lower and upper bounds of each row's time (XGBoost's
``label_lower_bound`` / ``label_upper_bound``): 0 <= lower <= upper,
upper = +inf right-censored, lower = 0 left-censored, lower == upper > 0
uncensored. Cox: XGBoost's signed time (y > 0 an event at y, y < 0 censored
at -y), or a time with an event indicator, turned into the signed form.
Every refusal names the row (and the partition on Dask), the value and what
to do.
"""

from __future__ import annotations

import numpy as np

from .checks import show_value


def _floats(values, name: str, where: str) -> np.ndarray:
    arr = values.to_numpy() if hasattr(values, "to_numpy") else np.asarray(values)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"{name}{where} must be 1-dimensional, one value per row; got shape "
                         f"{arr.shape}")
    try:
        return arr.astype(np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name}{where} must be numeric, got dtype {arr.dtype}") from None


def _refuse(bad, name: str, where: str, what: str, values, fix: str, offset: int = 0):
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}{where} has {int(bad.sum())} value(s) {what}, the first at row "
                         f"{i + offset} ({show_value(values[i])}); {fix}")


def check_bounds(lower, upper, where: str = "", offset: int = 0) -> np.ndarray:
    """Refuse AFT bounds that are not intervals of times; return ``upper`` as float64."""
    lower = _floats(lower, "y_lower", where)
    upper = _floats(upper, "y_upper", where)
    if len(lower) != len(upper):
        raise ValueError(f"y_lower{where} has {len(lower)} rows but y_upper has {len(upper)}; "
                         f"give both bounds for every row")
    _refuse(np.isnan(lower) | np.isinf(lower), "y_lower", where, "that are NaN or infinite",
            lower, "a lower bound is a time >= 0 (0: left-censored)", offset)
    _refuse(lower < 0, "y_lower", where, "below 0", lower,
            "survival times are >= 0; check the sign of the times", offset)
    _refuse(np.isnan(upper), "y_upper", where, "that are NaN", upper,
            "give +inf for a right-censored row", offset)
    _refuse(upper < lower, "y_upper", where, "below y_lower", upper,
            "each row needs y_lower <= y_upper (swap them, or fix the data)", offset)
    _refuse(upper <= 0, "y_upper", where, "<= 0", upper,
            "an upper bound must be a positive time (or +inf)", offset)
    return upper


def check_cox_target(y, where: str = "", offset: int = 0) -> np.ndarray:
    """Refuse a Cox target that is not a signed, non-zero, finite time."""
    y = _floats(y, "y", where)
    _refuse(~np.isfinite(y), "y", where, "that are NaN or infinite", y,
            "y is the time (negative: censored at -y)", offset)
    _refuse(y == 0, "y", where, "equal to 0", y,
            "a Cox time must be > 0 (its sign says event or censored); drop those rows or "
            "give them a small positive time", offset)
    return y


def cox_signed_time(time, event, where: str = "") -> np.ndarray:
    """XGBoost's Cox label from (time, event): time where event, -time where censored."""
    time = _floats(time, "y", where)
    event = _floats(event, "event", where)
    if len(event) != len(time):
        raise ValueError(f"event{where} has {len(event)} rows but y has {len(time)}; give one "
                         f"event indicator per row")
    _refuse(~np.isfinite(time) | (time <= 0), "y", where, "that are not finite times > 0",
            time, "with an event indicator y is the time, > 0", 0)
    _refuse(~np.isin(event, (0.0, 1.0)), "event", where, "that are not 0 or 1", event,
            "event is 1 (the event happened at y) or 0 (censored at y)", 0)
    return np.where(event == 1.0, time, -time)


def _signed_part(time, event, where, partition_info=None, block_info=None):
    """One partition's (block's) signed time, refusals naming the partition."""
    index = (partition_info or {}).get("number")
    if block_info is not None:
        index = block_info[0]["chunk-location"][0]
    signed = cox_signed_time(time, event, f"{where} in partition {index}")
    if hasattr(time, "index"):  # a pandas Series: keep its index and name
        return type(time)(signed, index=time.index, name=time.name)
    return signed


def cox_signed_time_dask(time, event, where: str = ""):
    """``cox_signed_time`` on Dask collections, lazily, partition by partition:
    the same float64 values as in memory (so Dask trains the in-process model to
    the bit); a refusal names the partition and the row within it."""
    if not (hasattr(time, "dask") and hasattr(event, "dask")):
        raise TypeError(f"y and event{where} must both be Dask collections or both be in "
                        f"memory; got {type(time).__name__} and {type(event).__name__}")
    if hasattr(time, "map_blocks") != hasattr(event, "map_blocks"):
        raise TypeError(f"y and event{where} must be both Dask Arrays or both Dask Series; "
                        f"got {type(time).__name__} and {type(event).__name__}")
    if hasattr(time, "map_blocks"):
        if time.ndim != 1 or event.ndim != 1:
            raise ValueError(f"y and event{where} must be 1-dimensional Dask Arrays")
        if time.chunks != event.chunks:
            raise ValueError(f"y and event{where} are chunked differently ({time.chunks} vs "
                             f"{event.chunks}); give them the same chunks")
        import dask.array as da

        return da.map_blocks(_signed_part, time, event, where, dtype=np.float64)
    if time.npartitions != event.npartitions:
        raise ValueError(f"y has {time.npartitions} partitions but event{where} has "
                         f"{event.npartitions}; give them the same partitions")
    return time.map_partitions(_signed_part, event, where, meta=(time.name, "f8"),
                               align_dataframes=False)
