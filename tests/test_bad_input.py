"""The table of bad input distboost refuses, one parametrized case per row.

Each row: what a user does wrong, the exception, and a pattern its message
must match (naming what is wrong and where). The same table, shortened, is
in README.md's reference section. Command-line and flow rows are in
``test_bad_input_cli.py``.
"""

import json

import numpy as np
import pandas as pd
import pytest

import distboost as db
from distboost.inspection import shap_values

rng = np.random.default_rng(0)
X = rng.normal(size=(60, 3))
Y_CLASS = (X[:, 0] > 0).astype(int)
Y_REG = X[:, 0] * 2.0
DF = pd.DataFrame(X, columns=["a", "b", "c"])

GBC = db.GradientBoostingClassifier
GBR = db.GradientBoostingRegressor


def _fitted(cls=GBC, data=X, y=Y_CLASS, **params):
    return cls(n_estimators=3, **params).fit(data, y)


def _with(array, index, value):
    out = np.array(array, dtype=float)
    out[index] = value
    return out


def _sparse(nan_at=None):
    """X as CSR (storing its nonzeros), with a NaN stored at entry ``nan_at``."""
    sparse = pytest.importorskip("scipy.sparse")
    out = sparse.csr_matrix(X)
    if nan_at is not None:
        out.data[nan_at] = np.nan
    return out


def _model_file(tmp, mutate=None, text=None):
    path = tmp / "model.json"
    _fitted(data=DF).save_model(path)
    if mutate is not None:
        doc = json.loads(path.read_text())
        mutate(doc)
        path.write_text(json.dumps(doc))
    if text is not None:
        path.write_bytes(text(path.read_bytes()))
    return path


def _set(doc, key, value):
    doc[key] = value


def _dask_xy_from_two_folders(tmp, client):
    import dask.dataframe as dd

    (tmp / "X").mkdir()
    (tmp / "y").mkdir()
    DF.to_parquet(tmp / "X" / "part-0.parquet")
    pd.DataFrame({"y": Y_CLASS[:50]}).to_parquet(tmp / "y" / "part-0.parquet")
    Xd, yd = dd.read_parquet(tmp / "X"), dd.read_parquet(tmp / "y")["y"]
    return GBC(n_estimators=2, client=client).fit(Xd, yd)


def _dask_nan_in_third_file(tmp, client):
    """Six Parquet files of 21 columns; reading 3 of them, Dask puts three files in
    one partition. The target is NaN in part-2, row 50."""
    import dask.dataframe as dd

    folder = tmp / "wide"
    folder.mkdir()
    for i in range(6):
        frame = pd.DataFrame({f"c{k}": np.arange(200.0) + k for k in range(20)})
        frame["y"] = np.where(np.arange(200) == 50, np.nan, 1.0) if i == 2 else 1.0
        frame.to_parquet(folder / f"part-{i}.parquet")
    ddf = dd.read_parquet(folder, columns=["c0", "c1", "y"])
    return GBR(n_estimators=2, client=client).fit(ddf[["c0", "c1"]], ddf["y"])


def _parquet_with_bad_file(tmp, how):
    """A Dask frame read from four Parquet files of 15 rows of DF and a label,
    part-2.parquet spoiled as ``how`` says."""
    import dask.dataframe as dd

    folder = tmp / "parquet"
    folder.mkdir()
    frame = DF.assign(label=Y_CLASS)
    for i in range(4):
        part = frame.iloc[15 * i: 15 * (i + 1)]
        if i == 2 and how == "missing column":
            part = part.drop(columns="c")
        if i == 2 and how == "text column":
            part = part.assign(b=["oops"] + [repr(v) for v in part["b"].iloc[1:]])
        part.to_parquet(folder / f"part-{i}.parquet")
    spoiled = folder / "part-2.parquet"
    data = bytearray(spoiled.read_bytes())
    if how == "truncated":
        spoiled.write_bytes(data[: len(data) // 2])
    if how == "random bytes":  # every page of the file's data; its footer intact
        end = len(data) - 8 - int.from_bytes(data[-8:-4], "little")
        data[4:end] = np.random.default_rng(3).bytes(end - 4)
        spoiled.write_bytes(data)
    return dd.read_parquet(folder)


def _fit_on_bad_file(c, how):
    ddf = _parquet_with_bad_file(c.tmp, how)
    return GBC(n_estimators=2, client=c.client).fit(ddf[["a", "b", "c"]], ddf["label"])


def _predict_on_bad_file(c, how):
    ddf = _parquet_with_bad_file(c.tmp, how)
    return c.client.compute(_fitted(data=DF).predict(ddf[["a", "b", "c"]])).result()


BAD_FILE = r"partition \d+: file \S*part-2\.parquet"


def _dask_frame(client, y, columns=("a", "b", "c")):
    import dask.dataframe as dd

    frame = DF[list(columns)].assign(label=y)
    ddf = dd.from_pandas(frame, npartitions=2)
    return ddf.drop(columns="label"), ddf["label"]


def _dask_fit(client, y, cls=GBC, columns=("a", "b", "c")):
    Xd, yd = _dask_frame(client, y, columns)
    return cls(n_estimators=2, client=client).fit(Xd, yd)


def _never_read(i):
    raise AssertionError(f"partition {i} was read: the check must come before any Dask work")


def _dask_unread(columns, client, eval_columns=None):
    """A Dask fit on frames with these column labels whose partitions, if any
    task read them, would fail (so a refusal shows it came before any Dask work)."""
    import dask.dataframe as dd

    def frame(labels):
        if not isinstance(labels, pd.MultiIndex):
            labels = pd.Index(labels, dtype=object)
        meta = pd.DataFrame(np.zeros((0, len(labels))), columns=labels)
        return dd.from_map(_never_read, [0, 1], meta=meta, enforce_metadata=False)

    target = dd.from_map(_never_read, [0, 1], meta=pd.Series(dtype=float, name="y"),
                         enforce_metadata=False)
    eval_set = None if eval_columns is None else [(frame(eval_columns), target)]
    return GBR(n_estimators=2, client=client).fit(frame(columns), target, eval_set=eval_set)


def _multiindex_columns():
    return DF.set_axis(pd.MultiIndex.from_tuples([("a", "x"), ("a", "y"), ("b", "x")]), axis=1)


def _poisson_regressor(**kw):
    return GBR(loss="poisson", **kw)


def _nan_objective(y, f):
    g = f - y
    g[3] = np.nan
    return g, np.ones_like(f)


def _nan_metric(y, f):
    return np.where(y == y[0], np.nan, 1.0)


class _Unpicklable:
    """A callable holding a lock: it cannot travel to Dask workers."""

    def __init__(self):
        import threading

        self.lock = threading.Lock()

    def __call__(self, y, f):
        return f - y, np.ones_like(f)


# (id, action(ctx), exception, message pattern); ctx.tmp is a fresh folder,
# ctx.client a real LocalCluster's client (started only for the rows using it)
ROWS = [
    # --- targets
    ("classifier target holds inf", lambda c: GBC().fit(X, _with(Y_CLASS, 5, np.inf)),
     ValueError, (r"target in partition 0 has 1 missing or infinite value\(s\), the first at row 5 "
                  r"\(value inf\)")),
    ("classifier target holds -inf (Dask)",
     lambda c: _dask_fit(c.client, _with(Y_CLASS, 40, -np.inf)),
     ValueError, r"target in partition 1 has 1 missing or infinite.*row 10"),
    ("NaN target in a file Dask read with others (Dask)",
     lambda c: _dask_nan_in_third_file(c.tmp, c.client),
     ValueError, (r"partition 0 has 1 missing or infinite value\(s\), the first at row 450 .*"
                  r"\[read from file .*part-2.parquet, row 50\]")),
    ("regression target holds NaN", lambda c: GBR().fit(X, _with(Y_REG, 7, np.nan)),
     ValueError, r"missing or infinite value\(s\), the first at row 7"),
    ("classifier given a continuous target", lambda c: GBC().fit(X, Y_REG),
     ValueError, r"Unknown label type: continuous.*row 0"),
    ("regression target holds text", lambda c: GBR().fit(X, np.array(["1.5"] * 59 + ["yes"])),
     ValueError, r"y at row 59 is 'yes'"),
    ("target is None", lambda c: GBR().fit(X, None),
     ValueError, r"requires y to be passed, but the target y is None"),
    ("target is None (Dask)", lambda c: GBR(client=c.client).fit(_dask_frame(c.client, Y_REG)[0],
                                                                 None),
     ValueError, r"requires y to be passed"),
    ("target has two columns (a forest takes one)",
     lambda c: db.RandomForestRegressor().fit(X, np.c_[Y_REG, Y_REG]),
     ValueError, r"y should be a 1d array, got an array of shape \(60, 2\)"),
    ("two-column target with a text column", lambda c: GBR().fit(
        X, pd.DataFrame({"u": Y_REG, "v": ["a"] * 60})),
     TypeError, r"the target's column 'v' is not numeric \(dtype"),
    ("X and y of different lengths", lambda c: GBR().fit(X, Y_REG[:50]),
     ValueError, r"X has 60 rows but y has 50"),
    ("a single class", lambda c: GBC().fit(X, np.ones(60)),
     ValueError, r"single class, 1 class \(\[1\.0\]\)"),
    # --- source files (Dask): the fit's and prediction's own reads name the file
    ("a truncated Parquet file (Dask)", lambda c: _fit_on_bad_file(c, "truncated"),
     db.SourceError, (rf"training data, {BAD_FILE} is not a readable Parquet file "
                      r"\(ArrowInvalid: Parquet magic bytes not found.*\)\. It may be cut short")),
    ("random bytes in a Parquet file (Dask)", lambda c: _fit_on_bad_file(c, "random bytes"),
     db.SourceError, (rf"training data, {BAD_FILE}, row group 0, column 'a' cannot be read "
                      r"\(.*\)\. The file is damaged: write it again")),
    ("a Parquet file missing a column (Dask)", lambda c: _fit_on_bad_file(c, "missing column"),
     db.SourceError, (rf"training data, {BAD_FILE} has no column\(s\) \['c'\] \(KeyError: .*\)"
                      r"\. Every file must hold the columns read from it")),
    ("text in a float column of a Parquet file (Dask)",
     lambda c: _fit_on_bad_file(c, "text column"),
     TypeError, (r"column 'b' in partition \d+ has dtype \S+, which is neither numeric nor "
                 r"categorical.*\[read from file \S*part-2\.parquet, where column 'b' is "
                 r"\w*string\]")),
    ("predict on a truncated Parquet file (Dask)",
     lambda c: _predict_on_bad_file(c, "truncated"),
     db.SourceError, rf"X, {BAD_FILE} is not a readable Parquet file \(ArrowInvalid"),
    ("predict on random bytes in a Parquet file (Dask)",
     lambda c: _predict_on_bad_file(c, "random bytes"),
     db.SourceError, rf"X, {BAD_FILE}, row group 0, column 'a' cannot be read"),
    ("predict on a Parquet file missing a column (Dask)",
     lambda c: _predict_on_bad_file(c, "missing column"),
     db.SourceError, rf"X, {BAD_FILE} has no column\(s\) \['c'\]"),
    ("predict on text in a float column of a Parquet file (Dask)",
     lambda c: _predict_on_bad_file(c, "text column"),
     TypeError, (r"column 'b' has dtype \S+, .*\[X, partition \d+, read from file "
                 r"\S*part-2\.parquet, where column 'b' is \w*string\]")),
    ("Dask X and y from two folders of different lengths",
     lambda c: _dask_xy_from_two_folders(c.tmp, c.client),
     ValueError, r"partition 0: X has 60 rows but the target has 50"),
    # --- sample weights
    ("all-zero sample_weight (boosting)", lambda c: GBC().fit(X, Y_CLASS, np.zeros(60)),
     ValueError, r"at least one non-zero number: sample_weight is zero for every row"),
    ("all-zero sample_weight (forest)",
     lambda c: db.RandomForestRegressor().fit(X, Y_REG, sample_weight=np.zeros(60)),
     ValueError, r"sample_weight is zero for every row"),
    ("all-zero sample_weight (Dask)",
     lambda c: GBR(client=c.client).fit(*_dask_frame(c.client, Y_REG),
                                        sample_weight=_dask_frame(c.client, np.zeros(60))[1]),
     ValueError, r"sample_weight is zero for every row"),
    ("a class with zero total weight",
     lambda c: GBC().fit(X, Y_CLASS, sample_weight=Y_CLASS.astype(float)),
     ValueError, r"class\(es\) \[0\] have zero total sample_weight"),
    ("negative sample_weight", lambda c: GBR().fit(X, Y_REG, _with(np.ones(60), 4, -1.0)),
     ValueError, r"finite and >= 0; row 4 is -1.0"),
    ("sample_weight of the wrong length", lambda c: GBR().fit(X, Y_REG, np.ones(59)),
     ValueError, r"sample_weight has 59 values for 60 rows"),
    # --- features
    ("a frame with zero columns", lambda c: GBR().fit(DF[[]], Y_REG),
     ValueError, r"0 feature\(s\) \(shape=\(60, 0\)\)"),
    ("a Dask frame with zero columns", lambda c: _dask_fit(c.client, Y_REG, GBR, columns=()),
     ValueError, r"0 feature\(s\)"),
    ("zero rows", lambda c: GBR().fit(X[:0], Y_REG[:0]),
     ValueError, r"0 sample\(s\) \(shape=\(0, 3\)\)"),
    ("a sparse matrix storing NaN", lambda c: GBR().fit(_sparse(nan_at=4), Y_REG),
     ValueError, (r"stores NaN \(first at row 1, column 1\); in sparse input an entry not "
                 r"stored is the missing value")),
    ("a sparse y", lambda c: GBR().fit(X, _sparse()[:, :1]),
     TypeError, r"y is a sparse matrix; pass the target as a 1-D dense array"),
    ("a pandas frame of sparse columns",
     lambda c: GBR().fit(DF.astype(pd.SparseDtype(float, 0.0)), Y_REG),
     TypeError, r"pandas DataFrame with sparse columns.*scipy.sparse matrix"),
    ('rate_drop=0.1 without booster="dart"', lambda c: GBR(rate_drop=0.1).fit(X, Y_REG),
     db.InvalidParameterError, r"rate_drop=0.1 is DART's, but booster='gbtree' drops no trees"),
    ('booster="dart" with loss="absolute_error"',
     lambda c: GBR(booster="dart", loss="absolute_error").fit(X, Y_REG),
     db.InvalidParameterError, r"booster='dart' grows its trees on Newton steps"),
    ("complex numbers", lambda c: GBR().fit(X + 1j, Y_REG),
     ValueError, r"Complex data not supported"),
    ("an object array holding a dict",
     lambda c: GBR().fit(np.array([[{"a": 1}]] + [[1.0]] * 59, dtype=object), Y_REG),
     TypeError, r"not a number at row 0, column 0: \{'a': 1\}"),
    ("a text column", lambda c: GBR().fit(DF.assign(city="Seoul"), Y_REG),
     TypeError, r"column 'city' has dtype .* neither numeric nor categorical"),
    ("a duplicate column name", lambda c: GBR().fit(DF.set_axis(["a", "b", "a"], axis=1), Y_REG),
     ValueError, (r"X has 2 columns named 'a' \(at positions 0 and 2\); each feature needs a "
                  r"name of its own: rename or drop the copies")),
    ("a duplicate column name (Dask)",
     lambda c: _dask_unread(["a", "b", "a"], c.client),
     ValueError, r"X has 2 columns named 'a' \(at positions 0 and 2\)"),
    ("a duplicate column name in a Dask eval_set",
     lambda c: _dask_unread(["a", "b", "c"], c.client, eval_columns=["a", "c", "c"]),
     ValueError, r"eval_set\[0\] has 2 columns named 'c' \(at positions 1 and 2\)"),
    ("column labels 1 and '1'", lambda c: GBR().fit(DF.set_axis([1, "1", "c"], axis=1), Y_REG),
     ValueError, r"columns 1 \(position 0\) and '1' \(position 1\) both name the feature '1'"),
    ("MultiIndex columns", lambda c: GBR().fit(_multiindex_columns(), Y_REG),
     TypeError, r"X has MultiIndex columns \(2 levels, e.g. \('a', 'x'\)\).*flatten them"),
    ("tuples as column labels", lambda c: GBR().fit(DF.set_axis([("a", 1), "b", "c"], axis=1),
                                                    Y_REG),
     TypeError, r"X's column \('a', 1\) \(position 0\) is a tuple.*flatten"),
    ("MultiIndex columns (Dask)",
     lambda c: _dask_unread(pd.MultiIndex.from_tuples([("a", "x"), ("b", "y")]), c.client),
     TypeError, r"X has MultiIndex columns \(2 levels"),
    ("eval_set with other columns",
     lambda c: GBR().fit(X, Y_REG, eval_set=[(X[:, :2], Y_REG)]),
     ValueError, r"eval_set\[0\] has 2 features, but the training data have 3"),
    ("early stopping without a validation set",
     lambda c: GBR().fit(X, Y_REG, early_stopping_rounds=5),
     ValueError, r"early_stopping_rounds needs a validation set to watch: pass eval_set="),
    ("early_stopping_rounds as text",
     lambda c: GBR().fit(X, Y_REG, eval_set=[(X, Y_REG)], early_stopping_rounds="5"),
     db.InvalidParameterError, r"early_stopping_rounds must be None or an int >= 1; got '5'"),
    ("eval_set given as one pair, not a list",
     lambda c: GBR().fit(X, Y_REG, eval_set=(X, Y_REG)),
     ValueError, r"eval_set must be a list of \(X, y\) pairs"),
    ("score with a target of another length", lambda c: _fitted(GBR, y=Y_REG).score(X, Y_REG[:5]),
     ValueError, r"X has 60 rows but y has 5"),
    # --- hyperparameters (checked at the start of fit, before any work)
    ("learning_rate as text", lambda c: GBR(learning_rate="0.1").fit(X, Y_REG),
     db.InvalidParameterError, r"parameter learning_rate must be a number > 0; got '0.1' \(str\)"),
    ("max_depth as text", lambda c: GBC(max_depth="three").fit(X, Y_CLASS),
     db.InvalidParameterError, r"max_depth must be an int >= 1 or None; got 'three'"),
    ("min_samples_leaf=0", lambda c: GBR(min_samples_leaf=0).fit(X, Y_REG),
     db.InvalidParameterError, r"min_samples_leaf must be an int >= 1; got 0"),
    ("n_estimators=2.5", lambda c: db.AdaBoostClassifier(n_estimators=2.5).fit(X, Y_CLASS),
     db.InvalidParameterError, r"n_estimators must be an int >= 1; got 2.5"),
    ("subsample above 1", lambda c: GBR(subsample=1.5).fit(X, Y_REG),
     db.InvalidParameterError, r"subsample must be a number in \(0, 1\]; got 1.5"),
    ("max_bins above 256", lambda c: GBR(max_bins=1000).fit(X, Y_REG),
     db.InvalidParameterError, r"max_bins must be an int in \[3, 256\]; got 1000"),
    ("unknown loss", lambda c: GBC(loss="hinge").fit(X, Y_CLASS),
     db.InvalidParameterError, r"loss must be one of 'log_loss', 'exponential'; got 'hinge'"),
    ("random_state as text", lambda c: GBR(random_state="seed").fit(X, Y_REG),
     db.InvalidParameterError, r"random_state must be None, an int"),
    ("Newton leaves for absolute error",
     lambda c: GBR(loss="absolute_error", leaf_estimation="newton").fit(X, Y_REG),
     db.InvalidParameterError, r"zero second derivative.*leaf_estimation='line_search'"),
    ("neither max_depth nor max_leaf_nodes", lambda c: GBR(max_depth=None).fit(X, Y_REG),
     db.InvalidParameterError, r"set max_depth or max_leaf_nodes"),
    ("oob_score without bootstrap",
     lambda c: db.BaggingRegressor(bootstrap=False, oob_score=True).fit(X, Y_REG),
     db.InvalidParameterError, r"oob_score=True needs bootstrap=True"),
    ("forest criterion unknown",
     lambda c: db.RandomForestClassifier(criterion="mse").fit(X, Y_CLASS),
     db.InvalidParameterError, r"criterion must be one of 'entropy', 'gini'"),
    ("set_params with a misspelled name", lambda c: GBR().set_params(learnin_rate=0.1),
     ValueError, r"invalid parameter 'learnin_rate' for GradientBoostingRegressor"),
    ("voting weights of the wrong length",
     lambda c: db.VotingRegressor([("g", GBR())], weights=[1, 2]).fit(X, Y_REG),
     ValueError, r"2 weights for 1 estimators"),
    ("voting='maybe'",
     lambda c: db.VotingClassifier([("g", GBC())], voting="maybe").fit(X, Y_CLASS),
     db.InvalidParameterError, r"voting must be one of 'hard', 'soft'; got 'maybe'"),
    # --- constraints, log-link losses, user's functions
    ("monotonic_cst of the wrong length", lambda c: GBR(monotonic_cst=[1, 0]).fit(X, Y_REG),
     db.InvalidParameterError, r"monotonic_cst has 2 value\(s\) but X has 3 feature\(s\)"),
    ("monotonic_cst naming an unknown column",
     lambda c: GBR(monotonic_cst={"a": 1, "x": -1}).fit(DF, Y_REG),
     db.InvalidParameterError, r"monotonic_cst names unknown feature\(s\) \['x'\]"),
    ("monotonic_cst value outside {-1, 0, 1}",
     lambda c: GBR(monotonic_cst=[1, 2, 0]).fit(X, Y_REG),
     db.InvalidParameterError, (r"monotonic_cst\[1\] must be -1 \(decreasing\), 0 \(free\) or "
                                r"1 \(increasing\); got 2")),
    ("monotonic_cst on a categorical column",
     lambda c: GBR(monotonic_cst={"c": 1}).fit(DF.assign(c=DF.c.gt(0).astype("category")),
                                               Y_REG),
     db.InvalidParameterError, r"constrains categorical feature\(s\) \['c'\]"),
    ("monotonic_cst with three classes",
     lambda c: GBC(monotonic_cst=[1, 0, 0]).fit(X, np.arange(60) % 3),
     db.InvalidParameterError, (r"not supported for multiclass classification \(the target has "
                                r"3 classes\)")),
    ("monotonic_cst on an estimator without it",
     lambda c: db.AdaBoostClassifier().set_params(monotonic_cst=[1, 0, 0]),
     ValueError, r"invalid parameter 'monotonic_cst' for AdaBoostClassifier"),
    ("interaction_cst listing a feature twice",
     lambda c: GBR(interaction_cst=[[0, "a"], ["b"]]).fit(DF, Y_REG),
     db.InvalidParameterError, r"interaction_cst\[0\] lists feature\(s\) \['a'\] more than once"),
    ("interaction_cst naming an unknown column",
     lambda c: GBR(interaction_cst=[["a", "z"]]).fit(DF, Y_REG),
     db.InvalidParameterError, r"interaction_cst\[0\] names unknown feature\(s\) \['z'\]"),
    ("interaction_cst with an index out of range",
     lambda c: GBR(interaction_cst=[[0, 5]]).fit(X, Y_REG),
     db.InvalidParameterError, r"interaction_cst\[0\] holds feature index 5, outside \[0, 2\]"),
    ("negative counts for loss='poisson'",
     lambda c: GBR(loss="poisson").fit(X, _with(np.abs(Y_REG), 5, -1.0)),
     ValueError, (r"target has 1 value\(s\) that loss='poisson' does not allow \(y >= 0\), the "
                  r"first at row 5 \(value -1.0\)")),
    ("negative counts for loss='poisson' (Dask)",
     lambda c: _dask_fit(c.client, _with(np.abs(Y_REG), 40, -2.0), _poisson_regressor),
     ValueError, (r"target in partition 1 has 1 value\(s\) that loss='poisson' does not allow "
                  r"\(y >= 0\), the first at row 10 \(value -2.0\)")),
    ("a zero target for loss='gamma'",
     lambda c: GBR(loss="gamma").fit(X, _with(np.abs(Y_REG) + 1, 7, 0.0)),
     ValueError, r"loss='gamma' does not allow \(y > 0\), the first at row 7 \(value 0.0\)"),
    ("counts all zero for loss='poisson'", lambda c: GBR(loss="poisson").fit(X, np.zeros(60)),
     ValueError, r"loss='poisson': the target is 0 on every row with a positive weight"),
    ("tweedie_variance_power outside (1, 2)",
     lambda c: GBR(loss="tweedie", tweedie_variance_power=2.5).fit(X, np.abs(Y_REG)),
     db.InvalidParameterError, r"tweedie_variance_power must be a number in \(1, 2\); got 2.5"),
    ("a custom objective returning NaN",
     lambda c: GBR(loss=_nan_objective, n_estimators=2).fit(X, Y_REG),
     ValueError, (r"_nan_objective returned 1 gradient\(s\) that are not finite in round 0, "
                  r"partition 0, the first at row 3: nan")),
    ("a custom objective of the wrong shape",
     lambda c: GBR(loss=lambda y, f: (f - y, 1.0), n_estimators=2).fit(X, Y_REG),
     ValueError, r"returned a hessian of shape \(\) for 60 rows in round 0, partition 0"),
    ("a custom objective the workers cannot receive (Dask)",
     lambda c: GBR(loss=_Unpicklable(), client=c.client).fit(*_dask_frame(c.client, Y_REG)),
     db.InvalidParameterError, r"loss=.* cannot be sent to the Dask workers"),
    ("a lambda as eval_metric, unnamed",
     lambda c: GBR(eval_metric=lambda y, f: np.log(f - y), n_estimators=2).fit(
         X, Y_REG, eval_set=[(X, Y_REG)]),
     db.InvalidParameterError, r"give the metric a name: make_metric\(fn, name='...'\)"),
    ("a named custom metric returning NaN",
     lambda c: GBR(eval_metric=_nan_metric, n_estimators=2).fit(X, Y_REG,
                                                                eval_set=[(X, Y_REG)]),
     ValueError, r"eval_metric '_nan_metric' must return one finite value per row \(60 rows\)"),
    ("a deviance metric of a squared-error model",
     lambda c: GBR(eval_metric="poisson_deviance").fit(X, Y_REG),
     db.InvalidParameterError, (r"'poisson_deviance' is not a metric of a regressor with "
                                r"loss='squared_error'")),
    # --- prediction
    ("predict before fit", lambda c: GBR().predict(X),
     db.NotFittedError, r"GradientBoostingRegressor is not fitted yet; call fit first"),
    ("predict on a 1-D row", lambda c: _fitted().predict(X[0]),
     ValueError, r"Reshape your data"),
    ("predict on a frame with a duplicate column",
     lambda c: _fitted(data=DF).predict(DF.assign(d=1.0).set_axis(["a", "b", "c", "a"], axis=1)),
     ValueError, r"X has 2 columns named 'a' \(at positions 0 and 3\)"),
    ("predict with too few features", lambda c: _fitted().predict(X[:, :1]),
     ValueError, r"X has 1 features, but GradientBoostingClassifier is expecting 3 features"),
    ("predict on a frame missing a column",
     lambda c: _fitted(data=DF).predict(DF[["a", "b"]]),
     ValueError, (r"missing feature column\(s\) \['c'\] that GradientBoostingClassifier was "
                 r"trained on \(features \['a', 'b', 'c'\]\)")),
    ("predict on a Dask frame missing a column",  # the same refusal, word for word
     lambda c: _fitted(data=DF).predict(_dask_frame(c.client, Y_CLASS, ("a", "b"))[0]),
     ValueError, (r"missing feature column\(s\) \['c'\] that GradientBoostingClassifier was "
                 r"trained on \(features \['a', 'b', 'c'\]\)")),
    ("SHAP values with too few features",
     lambda c: shap_values(_fitted(), X[:, :1]),
     ValueError, r"X has 1 features, but GradientBoostingClassifier is expecting 3 features"),
    ("SHAP values of a voting ensemble",
     lambda c: shap_values(db.VotingClassifier([("g", _fitted())], prefit=True).fit(X, Y_CLASS),
                           X),
     TypeError, (r"SHAP values explain distboost tree ensembles .* got VotingClassifier. For a "
                r"voting ensemble explain each of its members")),
    # --- continuing a model (init_model)
    ("init_model from AdaBoost",
     lambda c: GBC().fit(X, Y_CLASS, init_model=_fitted(db.AdaBoostClassifier)),
     TypeError, (r"init_model is a AdaBoostClassifier; GradientBoostingClassifier.fit can only "
                 r"continue a fitted GradientBoostingClassifier")),
    ("init_model from a regressor",
     lambda c: GBC().fit(X, Y_CLASS, init_model=_fitted(GBR, y=Y_REG)),
     TypeError, r"init_model is a GradientBoostingRegressor"),
    ("init_model with another loss",
     lambda c: GBC(loss="exponential").fit(X, Y_CLASS, init_model=_fitted()),
     ValueError, r"init_model was trained with loss='log_loss'"),
    ("init_model trained on other columns",
     lambda c: GBC().fit(DF.rename(columns={"c": "d"}), Y_CLASS, init_model=_fitted(data=DF)),
     ValueError, (r"init_model was trained on features \['a', 'b', 'c'\] but X has "
                  r"\['a', 'b', 'd'\]")),
    ("init_model with other classes",
     lambda c: GBC().fit(X, Y_CLASS + 1, init_model=_fitted()),
     ValueError, r"y has class\(es\) \[2\] that init_model was not trained on"),
    ("init_model not fitted", lambda c: GBC().fit(X, Y_CLASS, init_model=GBC()),
     db.NotFittedError, r"not fitted yet"),
    # --- model files
    ("model file truncated",
     lambda c: db.load_model(_model_file(c.tmp, text=lambda b: b[: len(b) // 2])),
     db.ModelFileError, r"model file .*model.json is not valid JSON .*truncated"),
    ("model file of random bytes",
     lambda c: db.load_model(_model_file(c.tmp, text=lambda b: bytes(range(256)))),
     db.ModelFileError, r"model file .*model.json is not text"),
    ("model file holding a JSON list",
     lambda c: db.load_model(_model_file(c.tmp, text=lambda b: b"[1, 2]")),
     db.ModelFileError, r"model.json: expected a JSON object at the top, got list"),
    ("model file without trees",
     lambda c: db.load_model(_model_file(c.tmp, lambda d: d.pop("trees"))),
     db.ModelFileError, r"model.json, key trees: missing"),
    ("model file naming an unknown estimator",
     lambda c: db.load_model(_model_file(c.tmp, lambda d: _set(d, "estimator", "Foo"))),
     db.ModelFileError, r"key estimator: unknown estimator 'Foo'"),
    ("model file naming a library function",
     lambda c: db.load_model(_model_file(c.tmp, lambda d: _set(d, "estimator", "load_model"))),
     db.ModelFileError, r"key estimator: unknown estimator 'load_model'"),
    ("model file with fewer feature names than its trees use",
     lambda c: db.load_model(_model_file(c.tmp, lambda d: _set(d, "feature_names", ["a", "b"]))),
     db.ModelFileError, r"key is_categorical: has 3 entries for 2 feature_names"),
    ("model file whose trees use a feature it does not have",
     lambda c: db.load_model(_model_file(c.tmp, lambda d: d["trees"][0][0]["nodes"]["feature"]
                                         .__setitem__(0, 7))),
     db.ModelFileError, (r"key trees\[0\]\[0\]\.nodes\.feature\[0\]: node 0 uses feature index 7 "
                         r"but the model has 3 features")),
    ("model file with an unknown parameter",
     lambda c: db.load_model(_model_file(c.tmp, lambda d: d["params"].update(learnin_rate=1))),
     db.ModelFileError, r"key params: unknown parameter\(s\) \['learnin_rate'\]"),
    ("model file with a parameter of the wrong type",
     lambda c: db.load_model(_model_file(c.tmp, lambda d: d["params"].update(max_depth="3"))),
     db.ModelFileError, r"key params: .*max_depth must be an int >= 1 or None; got '3'"),
    ("AdaBoost saved in XGBoost's format",
     lambda c: _fitted(db.AdaBoostClassifier).save_model(c.tmp / "m.json", format="xgboost"),
     TypeError, (r"AdaBoostClassifier cannot be written in XGBoost's model format: XGBoost has "
                 r"no AdaBoost \(SAMME\) objective.*Save it with format='distboost'")),
    ("a model format distboost does not write",
     lambda c: _fitted().save_model(c.tmp / "m.onnx", format="onnx"),
     ValueError, r"format must be one of 'distboost', 'xgboost'; got 'onnx'"),
    ("model file of a newer format",
     lambda c: db.load_model(_model_file(c.tmp, lambda d: _set(d, "version", 99))),
     db.ModelFileError, r"key version: model format version 99.*upgrade distboost"),
]


class _Context:
    def __init__(self, request, tmp):
        self.request, self.tmp = request, tmp

    @property
    def client(self):
        return self.request.getfixturevalue("dask_client")


@pytest.mark.parametrize("action, error, pattern", [r[1:] for r in ROWS],
                         ids=[r[0] for r in ROWS])
def test_bad_input_is_refused_clearly(action, error, pattern, request, tmp_path):
    with pytest.raises(error, match=pattern) as info:
        action(_Context(request, tmp_path))
    assert type(info.value).__module__.startswith(("distboost", "builtins"))
    assert "distboost" in info.traceback[-1].path.as_posix()


def test_init_model_of_same_kind_still_continues():
    first = _fitted(data=DF)
    more = GBC(n_estimators=2).fit(DF, Y_CLASS, init_model=first)
    assert more.n_estimators_ == 5


def test_readme_table_rows_are_rows_of_the_test_tables():
    from pathlib import Path

    try:
        from test_bad_input_cli import PREPARE_ROWS
        from test_bad_input_cli import ROWS as CLI_ROWS
        from test_flows_survival import SURVIVAL_ROWS
    except ImportError:  # tests/ imported as a package
        from tests.test_bad_input_cli import PREPARE_ROWS
        from tests.test_bad_input_cli import ROWS as CLI_ROWS
        from tests.test_flows_survival import SURVIVAL_ROWS
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme.split("## Reference: bad input")[1].split("\n## ")[0]
    shown = [line.split("|")[1].strip() for line in section.splitlines()
             if line.startswith("| ") and not line.startswith("| bad input")]
    known = {r[0] for r in ROWS + CLI_ROWS + PREPARE_ROWS + SURVIVAL_ROWS}
    known |= {"truncated latest checkpoint", "SIGTERM to the command",  # tests of their own
              "integer column labels", "a source file replaced during the fit",
              "out of core on a disk without room",
              # test_cli, test_prefect_server, test_flows_output, test_lost_scheduler
              "SIGKILL to the command", "`--force` into a run folder holding your files",
              "a second `distboost train` into a folder being trained",
              "the Dask scheduler killed mid-fit",
              # test_flows_join
              "`predict --keep` a column the data lack",
              "an identifier column left in `prepare`'s input",
              "a file `predict` or `explain` cannot read"}
    assert len(shown) >= 15 and set(shown) <= known, set(shown) - known


def test_integer_column_labels_name_the_features(dask_client, tmp_path):
    """Accepted, not refused: int labels (``pd.DataFrame(array)`` gives 0, 1, ...)
    name the features '0', '1', ...; prediction takes the same labels (or their
    text), a saved model keeps them, and a Dask fit gives the in-process model."""
    import dask.dataframe as dd

    frame = pd.DataFrame(X)
    local = GBR(n_estimators=3).fit(frame, Y_REG)
    assert list(local.feature_names_in_) == ["0", "1", "2"]
    expected = local.predict(frame)
    np.testing.assert_array_equal(local.predict(frame.set_axis(["0", "1", "2"], axis=1)),
                                  expected)
    local.save_model(tmp_path / "model.json")
    np.testing.assert_array_equal(db.load_model(tmp_path / "model.json").predict(frame),
                                  expected)
    ddf = dd.from_pandas(frame.assign(y=Y_REG), npartitions=2)
    remote = GBR(n_estimators=3, client=dask_client).fit(ddf[[0, 1, 2]], ddf["y"])
    assert [a[0] == b[0] for a, b in zip(remote.trees_, local.trees_, strict=True)] == [True] * 3
    np.testing.assert_array_equal(remote.predict(ddf[[0, 1, 2]]).compute(), expected)
