"""scipy.sparse input: entries not stored are missing values (XGBoost's
convention), stored zeros are zeros. A sparse matrix and the dense matrix with
NaN where it stores nothing train the same model, to the bit, in process and
on a LocalCluster with sparse chunks; prediction, leaves, SHAP and partial
dependence agree."""

import numpy as np
import pytest
import scipy.sparse as sp

from distboost import (
    AdaBoostClassifier,
    BaggingRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
)
from distboost.binning import BinMapper, frame_candidates
from distboost.inputs.sparse import as_csr, to_dense
from distboost.inspection import partial_dependence, shap_values
from distboost.kernels.common import MISSING_BIN
from distboost.kernels.rng import row_content_hashes
from distboost.kernels.sparse import csr_row_hashes

N, D = 600, 12


DENSITIES = [0.3, 0.08]
"""Above and below ``shard.SPARSE_CODES_MAX_DENSITY``: dense codes, then sparse codes."""


def _data(seed=0, density=0.3, dtype=np.float64):
    """A CSR matrix with explicit zeros among its stored entries, its dense form
    with NaN where nothing is stored, and a target that needs both."""
    rng = np.random.default_rng(seed)
    X = sp.random(N, D, density=density, random_state=seed, format="csr", dtype=dtype)
    X.data = rng.normal(size=X.nnz).astype(dtype)
    X.data[rng.random(X.nnz) < 0.2] = 0.0  # explicit zeros: values, not missing
    dense = np.full((N, D), np.nan, dtype)
    coo = X.tocoo()
    dense[coo.row, coo.col] = coo.data
    filled = np.nan_to_num(dense)
    y = filled[:, 0] - 2 * filled[:, 1] + np.isnan(dense[:, 2]) + 0.1 * rng.normal(size=N)
    return X, dense, y


def _same_model(a, b) -> bool:
    trees_a = [t.nodes.tobytes() for r in a.trees_ for t in r]
    trees_b = [t.nodes.tobytes() for r in b.trees_ for t in r]
    return trees_a == trees_b and a.bin_mapper_.to_dict() == b.bin_mapper_.to_dict()


def test_hashes_and_codes_of_csr_equal_the_dense_matrix_with_nan():
    X, dense, _ = _data()
    assert np.array_equal(csr_row_hashes(X.indptr, X.indices, X.data, D), row_content_hashes(dense))
    mapper = BinMapper().fit(dense, np.zeros(D, bool), {})
    codes = mapper.transform(X)
    assert np.array_equal(codes, mapper.transform(dense))
    assert (codes[np.isnan(dense)] == MISSING_BIN).all()
    assert BinMapper().fit(X, np.zeros(D, bool), {}).to_dict() == mapper.to_dict()
    assert np.array_equal(to_dense(X), dense, equal_nan=True)
    hashes, rows, weights = frame_candidates(X.tocsc(), n_samples=100)  # a pipeline's sample
    dense_hashes, dense_rows, _ = frame_candidates(dense, n_samples=100)
    assert np.array_equal(hashes, dense_hashes) and sp.issparse(rows)
    assert np.array_equal(to_dense(rows), dense_rows, equal_nan=True)
    assert (BinMapper().fit(rows, np.zeros(D, bool), {}, weights).to_dict()
            == BinMapper().fit(dense_rows, np.zeros(D, bool), {}, weights).to_dict())


def test_bins_by_hand():
    """Column 0 stores 1, 0 and 3 (rows 0, 1, 3), row 2 nothing: edges between
    the three stored values; row 2 falls in the missing bin, row 1's stored 0
    in the lowest value bin."""
    X = sp.csr_matrix((np.array([1.0, 0.0, 3.0]), np.array([0, 0, 0]), np.array([0, 1, 2, 2, 3])),
                      shape=(4, 1))
    mapper = BinMapper().fit(X, [False], {})
    assert mapper.bin_edges_[0].tolist() == [0.5, 2.0]
    assert mapper.transform(X)[:, 0].tolist() == [1, 0, MISSING_BIN, 2]


@pytest.mark.parametrize("make", [sp.csr_matrix, sp.csc_matrix, sp.csr_array, sp.csc_array,
                                  sp.coo_matrix])
@pytest.mark.parametrize("density", DENSITIES)
def test_sparse_formats_train_the_dense_with_nan_model(make, density):
    X, dense, y = _data(density=density)
    ref = GradientBoostingRegressor(n_estimators=8, max_depth=3, random_state=0).fit(dense, y)
    model = GradientBoostingRegressor(n_estimators=8, max_depth=3, random_state=0).fit(make(X), y)
    assert _same_model(ref, model)
    assert np.array_equal(model.predict(make(X)), ref.predict(dense))


def test_explicit_zeros_differ_from_missing():
    X, _dense, y = _data()
    unstored = X.copy()
    unstored.eliminate_zeros()  # the stored zeros become missing
    a = GradientBoostingRegressor(n_estimators=8, random_state=0).fit(X, y)
    b = GradientBoostingRegressor(n_estimators=8, random_state=0).fit(unstored, y)
    assert not _same_model(a, b)
    stored_zeros = sp.csr_matrix((np.zeros(D), np.arange(D), [0, D]), shape=(1, D))
    nothing = sp.csr_matrix((1, D))  # also what sp.csr_matrix(np.zeros((1, D))) stores
    assert a.predict(stored_zeros).tolist() == a.predict(np.zeros((1, D))).tolist()
    assert a.predict(nothing).tolist() == a.predict(np.full((1, D), np.nan)).tolist()
    assert a.predict(stored_zeros).tolist() != a.predict(nothing).tolist()


@pytest.mark.parametrize("density", DENSITIES)
def test_classifier_float32_predict_apply_shap_and_partial_dependence(monkeypatch, density):
    X, dense, y = _data(seed=1, density=density, dtype=np.float32)
    labels = (y > np.median(y)).astype(int) + (y > np.quantile(y, 0.8))
    ref = GradientBoostingClassifier(n_estimators=5, max_depth=3, random_state=0).fit(dense, labels)
    model = GradientBoostingClassifier(n_estimators=5, max_depth=3, random_state=0).fit(
        X, labels, eval_set=[(X[:100], labels[:100])])
    assert _same_model(ref, model)
    monkeypatch.setattr("distboost.inputs.sparse.DENSE_BLOCK_VALUES", 128 * D)  # blocks of 128 rows
    assert np.array_equal(model.predict_proba(X), ref.predict_proba(dense))
    assert np.array_equal(model.apply(X), ref.apply(dense))
    assert np.array_equal(model.predict(X, pred_leaf=True), ref.predict(dense, pred_leaf=True))
    assert np.array_equal(shap_values(model, X[:50]), shap_values(ref, dense[:50]))
    for method in ("recursion", "brute"):
        pd_sparse = partial_dependence(model, X, [0], method=method)
        pd_dense = partial_dependence(ref, dense, [0], method=method)
        assert np.array_equal(pd_sparse.grid_values[0], pd_dense.grid_values[0])
        assert np.allclose(pd_sparse.average, pd_dense.average, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("make", [
    lambda: RandomForestClassifier(n_estimators=4, max_depth=4, random_state=0),
    lambda: AdaBoostClassifier(n_estimators=4, random_state=0),
])
@pytest.mark.parametrize("density", DENSITIES)
def test_forest_and_adaboost_take_sparse(make, monkeypatch, density):
    X, dense, y = _data(seed=2, density=density)
    labels = (y > 0).astype(int)
    ref, model = make().fit(dense, labels), make().fit(X.tocsc(), labels)
    assert _same_model(ref, model)
    monkeypatch.setattr("distboost.inputs.sparse.DENSE_BLOCK_VALUES", 128 * D)  # blocks of 128 rows
    assert np.array_equal(model.predict_proba(X), ref.predict_proba(dense))
    assert np.array_equal(model.predict(X), ref.predict(dense))


@pytest.mark.parametrize("density", DENSITIES)
def test_bagging_takes_sparse(partitioned, monkeypatch, density):
    X, dense, y = _data(seed=3, density=density)
    partitioned(3)
    ref = BaggingRegressor(n_estimators=3, random_state=0).fit(dense, y)
    model = BaggingRegressor(n_estimators=3, random_state=0).fit(X, y)
    assert _same_model(ref, model)
    monkeypatch.setattr("distboost.inputs.sparse.DENSE_BLOCK_VALUES", 128 * D)  # blocks of 128 rows
    assert np.array_equal(model.predict(X), ref.predict(dense))


@pytest.mark.parametrize("density", DENSITIES)
def test_dask_sparse_chunks_equal_in_process(dask_client, density):
    da = pytest.importorskip("dask.array")
    X, dense, y = _data(seed=4, density=density)
    ref = GradientBoostingRegressor(n_estimators=6, max_depth=3, random_state=0).fit(
        dense, y, eval_set=[(dense[:200], y[:200])])
    chunks = (N // 3, D)
    Xd = da.from_array(X, chunks=chunks, asarray=False)
    yd = da.from_array(y, chunks=N // 3)
    model = GradientBoostingRegressor(n_estimators=6, max_depth=3, random_state=0,
                                      client=dask_client).fit(
        Xd, yd, eval_set=[(Xd[:200], yd[:200])])
    assert _same_model(ref, model) and model.evals_result_ == ref.evals_result_
    assert np.array_equal(np.asarray(model.predict(Xd).compute()), ref.predict(dense))
    mapped = da.from_array(dense, chunks=chunks).map_blocks(_to_csr, dtype=dense.dtype)
    again = GradientBoostingRegressor(n_estimators=6, max_depth=3, random_state=0,
                                      client=dask_client).fit(mapped, yd)
    assert _same_model(ref, again)
    assert np.array_equal(model.apply(Xd).compute(), ref.apply(dense))
    assert np.array_equal(shap_values(model, Xd[:100]).compute(), shap_values(ref, dense[:100]))


def _to_csr(block):
    """A dense block as a CSR array storing only its non-NaN entries (zeros included)."""
    rows, cols = np.nonzero(~np.isnan(block))
    return sp.csr_array((block[rows, cols], (rows, cols)), shape=block.shape)


def test_bad_sparse_input_is_refused_clearly():
    X, _dense, y = _data()
    model = GradientBoostingRegressor(n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match=f"expecting {D} features"):
        model.predict(X[:, :5])
    bad = X.copy()
    bad.data[7] = np.nan
    row = int(np.searchsorted(bad.indptr, 7, side="right") - 1)
    with pytest.raises(ValueError, match=f"stores NaN \\(first at row {row}, column "
                                         f"{bad.indices[7]}\\)"):
        GradientBoostingRegressor(n_estimators=2).fit(bad, y)
    with pytest.raises(TypeError, match="y is a sparse matrix"):
        GradientBoostingRegressor(n_estimators=2).fit(X, sp.csr_matrix(y[:, None]))
    with pytest.raises(ValueError, match="eval_set\\[0\\] has 5 features"):
        GradientBoostingRegressor(n_estimators=2).fit(X, y, eval_set=[(X[:, :5], y)])
    with pytest.raises(ValueError, match="Complex data not supported"):
        as_csr(sp.csr_matrix(np.eye(2, dtype=complex)))
    with pytest.raises(ValueError, match="1 sample and 1 feature"):
        as_csr(sp.csr_matrix((0, 3)))
    dup = sp.coo_matrix((np.array([1.0, 2.0]), (np.array([0, 0]), np.array([1, 1]))), shape=(1, 2))
    assert as_csr(dup).toarray().tolist() == [[0.0, 3.0]]  # COO duplicates summed, as scipy does


def test_sparse_pandas_frame_is_refused_naming_the_way_out():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": pd.arrays.SparseArray([0.0, 1.0, 0.0])})
    with pytest.raises(TypeError, match="sparse columns.*scipy.sparse"):
        GradientBoostingRegressor(n_estimators=2).fit(frame, [0.0, 1.0, 2.0])


@pytest.mark.parametrize("density", DENSITIES)
def test_early_stopping_holds_out_the_rows_of_the_dense_form(density):
    X, dense, y = _data(seed=5, density=density)
    params = {"n_estimators": 30, "early_stopping": True, "validation_fraction": 0.2,
                  "n_iter_no_change": 3, "random_state": 0}
    ref = GradientBoostingRegressor(**params).fit(dense, y)
    model = GradientBoostingRegressor(**params).fit(X, y)
    assert _same_model(ref, model) and model.evals_result_ == ref.evals_result_


@pytest.mark.parametrize("density", DENSITIES)
def test_ranker_takes_sparse(density):
    from distboost import GradientBoostingRanker

    X, dense, y = _data(seed=6, density=density)
    qid = np.repeat(np.arange(N // 10), 10)
    rel = np.clip(np.round(y - y.min()), 0, 4)
    ref = GradientBoostingRanker(n_estimators=4, max_depth=3).fit(dense, rel, qid=qid)
    model = GradientBoostingRanker(n_estimators=4, max_depth=3).fit(X, rel, qid=qid)
    assert _same_model(ref, model)
    assert np.array_equal(model.predict(X), ref.predict(dense))


def test_sample_weights_weight_the_sparse_quantiles_as_the_dense_ones():
    X, dense, y = _data(seed=7, density=0.8)
    w = np.random.default_rng(7).integers(0, 4, N).astype(float)  # zeros leave the sample
    ref = GradientBoostingRegressor(n_estimators=4, max_bins=16, random_state=0).fit(
        dense, y, sample_weight=w)
    model = GradientBoostingRegressor(n_estimators=4, max_bins=16, random_state=0).fit(
        X, y, sample_weight=w)
    assert _same_model(ref, model)
