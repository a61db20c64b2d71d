"""The input path of a fit, in one place: from the user's collections to the
engine's ``InputPlan`` (where training runs, the partitions, the schema and
the bins).

In this process for numpy/pandas, on Dask for Dask collections. In-memory
data are checked before any work starts (``inputs.checks``); Dask
collections on their metadata here and partition by partition as they are
read (``engine.sources``). Bins given to ``fit(bin_mapper=...)`` are matched
to the data's features, and a continued model's features, bins and classes
to the data, here too.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import dask
import numpy as np

from ..binning import BinMapper
from ..inputs import checks
from ..inputs.frames import Q_COLUMN, U_COLUMN, W_COLUMN, Y_COLUMN, Schema, infer_schema
from ..inputs.queries import check_query_ids, query_ids
from ..inputs.survival import check_bounds
from ..inputs.targets import check_multi_fit_target, check_same_targets, n_targets
from . import dask_internals, sources
from .dask import DaskExecutor, resolve_client
from .executor import Executor
from .holder import LocalExecutor

_UNKNOWN_CATEGORIES = "__UNKNOWN_CATEGORIES__"  # dask's placeholder in a frame's meta


@dataclass(frozen=True)
class Continued:
    """What a model being continued (``init_model``, ``warm_start``) keeps of
    its training data: its schema, its bins and its classes (None for a
    regressor)."""

    schema: Schema
    mapper: BinMapper
    classes: np.ndarray | None = None


@dataclass(frozen=True)
class InputPlan:
    """A fit's inputs as the engine takes them (``Engine.prepare``).

    Attributes
    ----------
    executor : LocalExecutor or DaskExecutor
        Where training runs.
    parts : list of (X, y, w), or of (X, y, w, qid) for a ranker
        The training partitions: values, or Delayed pieces on Dask.
    eval_parts : list (per eval set) of lists of (X, y, w) or (X, y, w, qid)
    schema : Schema
        The features (a continued model's own schema when continuing).
    mapper : BinMapper or None
        The bins given or continued; None: the engine fits them on a sample.
    classes : ndarray or None
        A continued classifier's classes; None: the engine finds them.
    on_dask : bool
        Whether the data are Dask collections.
    source : callable or None
        On Dask, ``source() -> (collection, optimized)``: the Dask DataFrame
        whose partitions ``parts`` are, and whether its optimized partitions,
        for errors naming files (``naming_sources``).
    """

    executor: Executor
    parts: list
    eval_parts: list
    schema: Schema
    mapper: BinMapper | None = None
    classes: np.ndarray | None = None
    on_dask: bool = False
    source: Callable[[], tuple] | None = None

    @contextmanager
    def naming_sources(self):
        """Errors that name a partition and a row also name the file and row they
        came from, when X was read from Parquet files (see ``engine.sources``)."""
        try:
            yield
        except (ValueError, TypeError) as exc:
            richer = None if self.source is None else sources.with_source(exc, *self.source())
            if richer is None:
                raise
            raise richer from exc


def is_dask(obj) -> bool:
    return obj is not None and dask.is_dask_collection(obj)


def _dask_parts(obj, what: str, files):
    """Delayed pieces of a Dask DataFrame/Series/Array, split by rows (a
    frame's read where a bad or changed file is named: ``sources.read_parts``)."""
    import dask.array as da

    if isinstance(obj, da.Array):
        if obj.ndim == 2 and obj.numblocks[1] != 1:
            obj = obj.rechunk({1: -1})
        parts = obj.to_delayed()
        return list(parts[:, 0]) if obj.ndim == 2 else list(parts)
    return list(sources.read_parts(obj, False, what, files))


def _meta(X):
    import dask.array as da

    if isinstance(X, da.Array):
        return np.empty((0, X.shape[1]), dtype=X.dtype)
    return dask_internals.meta(X)


_LOCAL_PARTITIONS: ContextVar[int] = ContextVar("distboost_local_partitions", default=1)


@contextmanager
def local_partitions(n_partitions: int):
    """In-process fits inside this block see their rows as ``n_partitions`` partitions.

    The engine then really runs on that many partitions in this process (one
    shard each, in one holder), as it would with a Dask collection of that
    many partitions: the model must be the same whatever ``n_partitions``,
    which is how partition-independence is checked without a cluster.
    Context-local, like ``sklearn.config_context``; Dask collections keep
    their own partitions.

    Examples
    --------
    >>> from distboost.engine import local_partitions
    >>> with local_partitions(4):
    ...     model.fit(X, y)  # doctest: +SKIP
    """
    if isinstance(n_partitions, bool) or not isinstance(n_partitions, int) or n_partitions < 1:
        raise ValueError(f"n_partitions must be a positive int, got {n_partitions!r}")
    token = _LOCAL_PARTITIONS.set(n_partitions)
    try:
        yield
    finally:
        _LOCAL_PARTITIONS.reset(token)


def _split_rows(X, y, w, n_partitions: int, qid=None, upper=None) -> list:
    """(X, y, w) as ``n_partitions`` consecutive runs of rows (as equal as can be);
    with ``qid``, (X, y, w, qid), each run moved to start with a query (whole
    queries per partition; runs left empty are dropped); with ``upper`` (an AFT
    model's upper bounds), (X, y, w, qid, upper)."""
    bounds = np.linspace(0, len(y), n_partitions + 1).astype(int)
    if qid is not None:
        starts = np.flatnonzero(np.diff(qid, prepend=qid[:1] - 1) != 0)
        bounds = np.unique(np.append(starts[np.searchsorted(starts, bounds[:-1])
                                            .clip(0, len(starts) - 1)], len(y)))
        bounds[0] = 0
    rows = (lambda a, i, j: a.iloc[i:j]) if hasattr(X, "iloc") else (lambda a, i, j: a[i:j])
    return [(rows(X, i, j), y[i:j], None if w is None else w[i:j],
             *_side(None if qid is None else qid[i:j], None if upper is None else upper[i:j]))
            for i, j in itertools.pairwise(bounds) if j > i]


def _side(qid, upper) -> tuple:
    """The pieces a part carries after (X, y, w): (), (qid,) or (qid, upper)."""
    if upper is not None:
        return (qid, upper)
    return () if qid is None else (qid,)


def plan(X, y, sample_weight=None, eval_set=None, eval_sample_weight=None, client=None,
         n_jobs=None, classifier=False, *, bin_mapper=None, continued=None, qid=None,
         eval_qid=None, multi_output=None, upper=None, eval_upper=None) -> InputPlan:
    """The ``InputPlan`` of a fit's data: executor, partitions, schema, bins.

    Parameters
    ----------
    X, y, sample_weight : the training data (numpy, pandas, or Dask collections)
    eval_set, eval_sample_weight : lists of (X, y) and of weights, optional
    client, n_jobs : the estimator's (a Dask client; threads in process)
    classifier : bool
        y holds class labels.
    bin_mapper : BinMapper, optional
        Bins to use, matched to X's features (``given_bins``).
    continued : Continued, optional
        The model being continued: X must have its features, y (in memory) its
        classes, and ``bin_mapper`` its bins.
    qid, eval_qid : a ranker's query ids per row of X (and per eval set), optional
        Partitioned like X on Dask; the parts then carry them as a fourth piece.
    multi_output : {None, "targets", "labels"}
        y has k > 1 columns (``inputs.targets``): real targets, or 0/1 labels
        (multi-label classification); None: y is one column.
    upper, eval_upper : an AFT model's upper bounds per row (y: the lower), optional
        Partitioned like X on Dask; the parts then carry them as a fifth piece.
    """
    eval_set = list(eval_set or [])
    eval_w = list(eval_sample_weight or [None] * len(eval_set))
    eval_q = list(eval_qid or [None] * len(eval_set))
    eval_u = list(eval_upper or [None] * len(eval_set))
    on_dask = is_dask(X)
    if on_dask:
        executor, parts, eval_parts, schema = _dask_plan(X, y, sample_weight, eval_set, eval_w,
                                                         client, qid, eval_q, multi_output,
                                                         upper, eval_u)
        source = functools.partial(_source_collection, X, y, sample_weight)
    else:
        executor, parts, eval_parts, schema = _local_plan(X, y, sample_weight, eval_set, eval_w,
                                                          n_jobs, classifier, qid, eval_q,
                                                          multi_output, upper, eval_u)
        source = None
    if continued is not None:
        _check_continued(continued, schema, None if on_dask else y, classifier)
    bins = given_bins(bin_mapper, schema, X, continued)
    if continued is not None:
        schema, bins = continued.schema, continued.mapper
    elif bins is not None:
        schema.categories = dict(bins.categories_)
    classes = None if continued is None else continued.classes
    return InputPlan(executor, parts, eval_parts, schema, bins, classes, on_dask, source)


def _dask_plan(X, y, sample_weight, eval_set, eval_w, client, qid=None, eval_q=(),
               multi_output=None, upper=None, eval_u=()):
    """Executor, partitions and schema of Dask collections, checked on their metadata."""
    _check_dask_fit(X, y)
    for k, target in enumerate([y] + [ye for _, ye in eval_set]):
        if multi_output is None and n_targets(target):
            raise ValueError(f"{'y' if k == 0 else f'eval_set[{k - 1}] y'} has "
                             f"{n_targets(target)} columns; this estimator takes one target")
        if multi_output is not None and k > 0:
            check_same_targets(n_targets(target), n_targets(y), f"eval_set[{k - 1}] y")
    for k, (Xe, _) in enumerate(eval_set):
        if is_dask(Xe) and hasattr(Xe, "columns"):
            checks.check_columns(Xe.columns, f"eval_set[{k}]")
    client = resolve_client(client)
    schema = infer_schema(_meta(X))
    files = sources.FileIdentities()  # each file as the fit first reads it
    parts = _zip_parts(X, y, sample_weight, "training data", files, qid, upper)
    eval_parts = [_zip_parts(Xe, ye, we, f"eval_set[{k}]", files, qe, ue)
                  for k, ((Xe, ye), we, qe, ue) in enumerate(zip(eval_set, eval_w, eval_q,
                                                                   eval_u))]
    return DaskExecutor(client), parts, eval_parts, schema


def _local_plan(X, y, sample_weight, eval_set, eval_w, n_jobs, classifier, qid=None,
                eval_q=(), multi_output=None, upper=None, eval_u=()):
    """Executor, partitions and schema of in-memory data, checked whole."""
    if multi_output is not None:  # a k-column y (``inputs.targets``)
        labels = multi_output == "labels"

        def check_fit_data(X, y, w, _, k=None, what="y"):
            X = checks.check_X(X)
            return X, check_multi_fit_target(y, len(X), labels, k, what), \
                checks.check_sample_weight(w, len(X))
    else:
        check_fit_data = checks.check_fit_data
    if is_dask(y) or is_dask(sample_weight) or is_dask(qid) or is_dask(upper):
        raise TypeError("X is in memory but y, sample_weight or qid is a Dask collection; use "
                        "the same kind")
    X, y, sample_weight = check_fit_data(X, y, sample_weight, classifier)
    qid = None if qid is None else check_query_ids(query_ids(qid, len(y)))
    schema = infer_schema(X)
    eval_parts = []
    for k, ((Xe, ye), we) in enumerate(zip(eval_set, eval_w)):
        if is_dask(Xe):
            raise TypeError(
                "eval_set holds a Dask collection but the training data are in memory; "
                "compute it first or train on Dask collections"
            )
        Xe, ye, we = check_fit_data(Xe, ye, we, classifier, *(
            () if multi_output is None else (y.shape[1], f"eval_set[{k}] y")))
        if Xe.shape[1] != X.shape[1]:
            raise ValueError(f"eval_set[{k}] has {Xe.shape[1]} features, but the training "
                             f"data have {X.shape[1]}; pass the same columns")
        qe = None if qid is None else check_query_ids(query_ids(eval_q[k], len(ye),
                                                                f" of eval_set[{k}]"))
        ue = None if upper is None else check_bounds(ye, eval_u[k], f" of eval_set[{k}]")
        eval_parts.append([(Xe, ye, we, *_side(qe, ue))])
    upper = None if upper is None else check_bounds(y, upper)
    parts = _split_rows(X, y, sample_weight, _LOCAL_PARTITIONS.get(), qid, upper)
    return LocalExecutor(n_jobs), parts, eval_parts, schema


def _check_dask_fit(X, y) -> None:
    """What the metadata of Dask training data can tell before any task runs."""
    if y is None:
        raise ValueError("this estimator requires y to be passed, but the target y is None; "
                         "pass the target as fit(X, y)")
    meta = _meta(X)
    if getattr(meta, "ndim", 2) != 2:
        raise ValueError(f"X must be a 2-D Dask DataFrame or Array, got {meta.ndim}-D; "
                         f"reshape it (e.g. X.to_frame() for a single feature)")
    if checks.is_sparse(meta):
        checks.check_X(meta)
    if hasattr(meta, "columns"):
        checks.check_columns(meta.columns)
    if meta.shape[1] == 0:
        raise ValueError("X has 0 feature(s) (no columns) while a minimum of 1 is required; "
                         "pass at least one feature column")
    dtypes = list(meta.dtypes) if hasattr(meta, "dtypes") else [meta.dtype]
    if any(getattr(dt, "kind", "") == "c" for dt in dtypes):
        raise ValueError("Complex data not supported: X has complex columns; pass real numbers")


def _joined(X, y, w, qid=None, upper=None):
    """X with y (and w, qid) as extra columns, or None if they don't align.

    Taking X and y from one frame in one task reads each partition once and
    keeps their rows together whatever the optimizer does to partition counts.
    """
    import dask.dataframe as dd

    if not (isinstance(X, dd.DataFrame) and isinstance(y, dd.Series)):
        return None
    if any(v is not None and not isinstance(v, dd.Series) for v in (w, qid, upper)):
        return None
    if not _co_aligned(X, y, w, qid, upper):
        return None  # e.g. from two folders: zip partitions, whose lengths are then checked
    extra = {Y_COLUMN: y} if w is None else {Y_COLUMN: y, W_COLUMN: w}
    if qid is not None:
        extra[Q_COLUMN] = qid
    if upper is not None:
        extra[U_COLUMN] = upper
    try:
        return X.assign(**extra)
    except (ValueError, NotImplementedError, TypeError):
        return None


def _co_aligned(X, y, w, qid=None, upper=None) -> bool:
    """Whether y (and w) are known to come from the same rows as X (e.g. one
    frame's columns). Where Dask cannot tell (``dask_internals.co_aligned``),
    no: X, y and w are then read side by side, partition by partition, and
    their lengths compared, which gives the same model."""
    return bool(dask_internals.co_aligned(X, y, *(v for v in (w, qid, upper) if v is not None)))


def _source_collection(X, y, w):
    """The collection whose partitions the training parts are (see ``_zip_parts``),
    and whether they are its optimized partitions (``to_delayed()``) or its
    partitions as given (``to_delayed(optimize_graph=False)``)."""
    import dask.dataframe as dd

    if not isinstance(X, dd.DataFrame):
        return None, False
    joined = _joined(X, y, w)
    return (X, False) if joined is None else (joined, True)


def _zip_parts(X, y, w, what: str, files, qid=None, upper=None):
    """(X, y, w) per partition, or (X, y, w, qid) given ``qid``, (X, y, w, qid,
    upper) given ``upper``: Delayed pieces (a frame's read naming a bad or
    changed file, ``sources.read_parts``; ``files`` notes each file's identity)."""
    side = _side(None if qid is None else Q_COLUMN, None if upper is None else U_COLUMN)
    if not is_dask(X):
        return [(dask.delayed(X), dask.delayed(y), None if w is None else dask.delayed(w),
                 *_side(None if qid is None else dask.delayed(qid),
                        None if upper is None else dask.delayed(upper)))]
    joined = _joined(X, y, w, qid, upper)
    if joined is not None:
        return [(part, Y_COLUMN, None if w is None else W_COLUMN, *side)
                for part in sources.read_parts(joined, True, what, files)]
    xs = _dask_parts(X, what, files)
    # without optimization, partition counts follow the user's collections
    ys = _dask_parts(y, what, files) if is_dask(y) else None
    ws = _dask_parts(w, what, files) if is_dask(w) else None
    qs = _dask_parts(qid, what, files) if is_dask(qid) else None
    us = _dask_parts(upper, what, files) if is_dask(upper) else None
    if ys is None:
        raise TypeError("X is a Dask collection, so y must be one too (partitioned like X)")
    if qid is not None and qs is None:
        raise TypeError("X is a Dask collection, so qid must be one too (partitioned like X)")
    if upper is not None and us is None:
        raise TypeError("X is a Dask collection, so y_upper must be one too (partitioned like X)")
    for name, other in (("y", ys), ("sample_weight", ws), ("qid", qs), ("y_upper", us)):
        if other is not None and len(other) != len(xs):
            raise ValueError(
                f"X has {len(xs)} partitions but {name} has {len(other)}; partition them alike "
                f"(e.g. take both from one DataFrame: ddf.drop(columns='label'), ddf['label'])"
            )
    return [(x, yy, None if ws is None else ws[i],
             *_side(None if qs is None else qs[i], None if us is None else us[i]))
            for i, (x, yy) in enumerate(zip(xs, ys))]


def _check_continued(continued: Continued, schema: Schema, y, classifier: bool) -> None:
    """Refuse to continue a model on other features, feature kinds or classes.

    ``y`` (in-memory targets, optional) is checked against its classes; on
    Dask, unknown labels are refused as the partitions are binned.
    """
    theirs, ours = continued.schema, schema
    if theirs.feature_names != ours.feature_names:
        raise ValueError(
            f"init_model was trained on features {_short(theirs.feature_names)} but X has "
            f"{_short(ours.feature_names)}; continue training on the same columns, in order"
        )
    if not np.array_equal(theirs.is_categorical, ours.is_categorical):
        changed = [n for n, a, b in zip(ours.feature_names, theirs.is_categorical,
                                        ours.is_categorical) if a != b]
        raise ValueError(f"feature(s) {_short(changed)} are categorical in one of init_model and "
                         f"X but not in the other; use the same dtypes")
    if y is not None and classifier:
        unknown = np.setdiff1d(np.unique(np.asarray(y)), continued.classes)
        if len(unknown):
            raise ValueError(f"y has class(es) {unknown.tolist()[:5]} that init_model was not "
                             f"trained on (its classes are {continued.classes.tolist()}); "
                             f"train a new model on all the classes")


def given_bins(bin_mapper, schema: Schema, X=None, continued=None) -> BinMapper | None:
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
    continued : Continued, optional
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
    if continued is not None and mapper.to_dict() != continued.mapper.to_dict():
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
