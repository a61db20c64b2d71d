"""Bins given to ``fit(bin_mapper=...)``: matched to the training data's
features, or refused with the feature that does not match."""

from __future__ import annotations

import numpy as np

from ..binning import BinMapper
from ..inputs.frames import Schema

_UNKNOWN_CATEGORIES = "__UNKNOWN_CATEGORIES__"  # dask's placeholder in a frame's meta


def given_bins(bin_mapper, schema: Schema, X=None, init_model=None) -> BinMapper | None:
    """``bin_mapper`` with one entry per feature of ``schema``, in its order.

    Parameters
    ----------
    bin_mapper : BinMapper or None
        A fitted mapper: from ``BinMapper.from_edges`` (matched by feature
        name) or another model's ``bin_mapper_`` (matched by position).
    schema : Schema
        The training data's features.
    X : pandas or Dask DataFrame, optional
        Its declared categories must be among the mapper's.
    init_model : fitted estimator, optional
        A continued model keeps its own bins; ``bin_mapper`` must equal them.

    Returns
    -------
    BinMapper or None
        None when ``bin_mapper`` is None.
    """
    if bin_mapper is None:
        return None
    if not isinstance(bin_mapper, BinMapper) or not hasattr(bin_mapper, "bin_edges_"):
        raise TypeError(
            f"bin_mapper must be a fitted distboost.binning.BinMapper (e.g. "
            f"BinMapper.from_edges(...) or another model's bin_mapper_); got "
            f"{type(bin_mapper).__name__}"
        )
    if hasattr(bin_mapper, "feature_names_in_"):
        mapper = _by_name(bin_mapper, schema)
    else:
        mapper = _by_position(bin_mapper, schema)
    _check_declared_categories(mapper, schema, X)
    if init_model is not None and mapper.to_dict() != init_model.bin_mapper_.to_dict():
        raise ValueError(
            "bin_mapper differs from the bins of the model being continued (init_model or "
            "warm_start), which keeps its own bins; leave bin_mapper out when continuing"
        )
    return mapper


def _by_name(mapper: BinMapper, schema: Schema) -> BinMapper:
    names = [str(n) for n in mapper.feature_names_in_]
    index = {n: j for j, n in enumerate(names)}
    missing = [n for n in schema.feature_names if n not in index]
    if missing:
        raise ValueError(
            f"bin_mapper has no bins for feature {missing[0]!r} of X"
            f"{f' (nor for {len(missing) - 1} more)' if len(missing) > 1 else ''}; its features "
            f"are {_short(names)}: make the bins from the same columns"
        )
    extra = [n for n in names if n not in set(schema.feature_names)]
    if extra:
        raise ValueError(
            f"bin_mapper has bins for feature {extra[0]!r}, which X does not have (X's features "
            f"are {_short(schema.feature_names)}): make the bins from the same columns"
        )
    return _reordered(mapper, [index[n] for n in schema.feature_names], schema)


def _by_position(mapper: BinMapper, schema: Schema) -> BinMapper:
    if len(mapper.bin_edges_) != schema.n_features:
        raise ValueError(
            f"bin_mapper has bins for {len(mapper.bin_edges_)} features but X has "
            f"{schema.n_features} ({_short(schema.feature_names)}); pass bins of the same columns"
        )
    return _reordered(mapper, list(range(schema.n_features)), schema)


def _reordered(mapper: BinMapper, order: list[int], schema: Schema) -> BinMapper:
    """A mapper whose feature j is ``mapper``'s feature ``order[j]``."""
    for j, old in enumerate(order):
        ours, theirs = bool(schema.is_categorical[j]), bool(mapper.is_categorical_[old])
        if ours != theirs:
            kind = ("categorical", "numeric")
            raise ValueError(
                f"feature {schema.feature_names[j]!r} is {kind[not ours]} in X but "
                f"{kind[not theirs]} in bin_mapper; use bins made for the same column types"
            )
    out = BinMapper(mapper.max_bins)
    out.bin_edges_ = [mapper.bin_edges_[old] for old in order]
    out.is_categorical_ = np.asarray(mapper.is_categorical_)[order]
    out.categories_ = {j: list(mapper.categories_[old]) for j, old in enumerate(order)
                       if old in mapper.categories_}
    out._finish()
    return out


def _check_declared_categories(mapper: BinMapper, schema: Schema, X) -> None:
    """Categories X's dtypes declare must have a code in the mapper (values it
    does not list would fall in the missing-value bin unnoticed)."""
    meta = getattr(X, "_meta", X)
    dtypes = getattr(meta, "dtypes", None)
    if dtypes is None:
        return
    for j, dtype in enumerate(dtypes):
        categories = getattr(dtype, "categories", None)
        if categories is None or not schema.is_categorical[j]:
            continue
        known = set(mapper.categories_.get(j, []))
        unlisted = [c for c in categories if c not in known and c != _UNKNOWN_CATEGORIES]
        if unlisted:
            raise ValueError(
                f"feature {schema.feature_names[j]!r} has category {unlisted[0]!r}, which "
                f"bin_mapper does not list (it has {_short(mapper.categories_.get(j, []))}); "
                f"make the bins from data with every category"
            )


def _short(names) -> str:
    names = list(names)
    return str(names[:8])[:-1] + (", ...]" if len(names) > 8 else "]")
