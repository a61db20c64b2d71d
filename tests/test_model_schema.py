"""Model files are untrusted input (``inputs.model_schema``, ``model_trees``,
``model_layouts``): every way a file can be wrong is refused as a
``ModelFileError`` naming the file, the tree, the node and the key, within a
second, before any kernel walks it; valid files load as they did. The
mutation fuzz of the same promise is ``test_model_fuzz.py``.
"""

try:
    import _model_files as mf
except ImportError:  # tests/ imported as a package
    from tests import _model_files as mf

import json
import math

import numpy as np
import pandas as pd
import pytest

import distboost as db
from distboost.model_file import model_from_dict

D = "; the file is damaged or was edited: save the model again from distboost"


def _nodes(d, tree=0):
    return d["trees"][tree][0]["nodes"]


def _set(tree: int, field: str, node: int, value):
    def change(d):
        _nodes(d, tree)[field][node] = value
    return change


def _ring(d):
    """Nodes 1 and 2 each other's child, node 0 the parent of 3 and 5."""
    n = _nodes(d)
    n["left"][:3], n["right"][:3] = [3, 2, 1], [5, 4, 6]


def _orphans(d):
    n = _nodes(d)
    n["is_leaf"][2], n["left"][2], n["right"][2] = 1, -1, -1


def _big_leaves(d):
    for tree in (0, 1):
        n = _nodes(d, tree)
        n["value"] = [1e308 if leaf else v for v, leaf in zip(n["value"], n["is_leaf"])]


# (id, change of the hand-made model (tests/_model_files.py), key and message after
#  "model file <path>, key ")
ROWS = [
    # --- the trees are trees (kernels.tree walks them without checks)
    ("node its own child", mf.self_child,
     f"trees[0][0].nodes.left[1]: node 1 is its own left child; a tree has no cycles{D}"),
    ("node 2 -> node 1", _set(0, "left", 2, 1),
     (f"trees[0][0].nodes.left[2]: node 1 is the left child of node 2 and the left child of "
      f"node 0; in a tree each node has one parent{D}")),
    ("a cycle node 0 does not reach", _ring,
     (f"trees[0][0].nodes: node 1 is not reached from node 0: it is in or below a cycle of child "
      f"links (nodes [1, 2, 4, 6] are not reached){D}")),
    ("nodes no node reaches", _orphans,
     f"trees[0][0].nodes: node 5 is no node's child, so node 0 does not reach it{D}"),
    ("child outside the tree", _set(0, "right", 2, 7),
     (f"trees[0][0].nodes.right[2]: node 2's right child 7 is not a node of its tree (nodes 1 to "
      f"6; node 0 is the root){D}")),
    ("the root as a child", _set(0, "left", 1, 0),
     (f"trees[0][0].nodes.left[1]: node 1's left child 0 is not a node of its tree (nodes 1 to 6; "
      f"node 0 is the root){D}")),
    ("leaf with children", _set(0, "is_leaf", 1, 1),
     (f"trees[0][0].nodes.left[1]: node 1 is a leaf (is_leaf 1) but has left child 3; a leaf's "
      f"left and right are -1{D}")),
    ("split without children", _set(0, "is_leaf", 3, 0),
     (f"trees[0][0].nodes.left[3]: node 3's left child -1 is not a node of its tree (nodes 1 to "
      f"6; node 0 is the root){D}")),
    ("stored depth not the links'", _set(0, "depth", 3, 5),
     f"trees[0][0].nodes.depth[3]: node 3 has depth 5 but is 2 level(s) below node 0{D}"),
    # --- indices in range (out of range: SIGSEGV in the kernels)
    ("more trees in a round than outputs", mf.two_trees_a_round,
     f"trees[0]: has 2 tree(s) but a GradientBoostingRegressor has 1 per round{D}"),
    ("cat_index 1e9", _set(1, "cat_index", 0, 10**9),
     (f"trees[1][0].nodes.cat_index[0]: node 0 is a categorical split with cat_index 1000000000, "
      f"but its tree has 1 bitset row(s) (cat_bitsets){D}")),
    ("categorical split without a bitset", mf.no_bitset,
     (f"trees[1][0].nodes.cat_index[0]: node 0 is a categorical split with cat_index 0, but its "
      f"tree has 0 bitset row(s) (cat_bitsets){D}")),
    ("feature index beyond the features", _set(0, "feature", 0, 2),
     (f"trees[0][0].nodes.feature[0]: node 0 uses feature index 2 but the model has 2 features "
      f"(feature_names){D}")),
    ("numeric split on a categorical feature", _set(0, "feature", 0, 1),
     (f"trees[0][0].nodes.is_categorical[0]: node 0 is a numeric split on feature 1 ('b'), which "
      f"is categorical{D}")),
    ("bin beyond the feature's edges", _set(0, "bin_threshold", 2, 3),
     (f"trees[0][0].nodes.bin_threshold[2]: node 2 splits feature 0 at bin 3, but the feature has "
      f"3 bin edge(s) (bins 0 to 2 can split){D}")),
    ("bitset row of three words", lambda d: d["trees"][1][0]["cat_bitsets"][0].pop(),
     f"trees[1][0].cat_bitsets[0]: expected a list of 4 words, got list ['5', '0', '0']{D}"),
    # --- values of their kind
    ("NaN threshold", _set(0, "threshold", 0, math.nan),
     f"trees[0][0].nodes.threshold[0]: is nan; expected a finite threshold{D}"),
    ("infinite leaf value", _set(0, "value", 3, math.inf),
     f"trees[0][0].nodes.value[3]: is inf; expected a finite value{D}"),
    ("is_leaf 7", _set(0, "is_leaf", 3, 7),
     f"trees[0][0].nodes.is_leaf[3]: is 7; is_leaf is 0 or 1{D}"),
    ("missing_left 2", _set(0, "missing_left", 0, 2),
     f"trees[0][0].nodes.missing_left[0]: is 2; missing_left is 0 or 1{D}"),
    ("bin_threshold 300", _set(0, "bin_threshold", 0, 300),
     f"trees[0][0].nodes.bin_threshold[0]: is 300; bin_threshold is a bin code, 0 to 255{D}"),
    ("negative cover", _set(0, "cover", 4, -2.0),
     f"trees[0][0].nodes.cover[4]: is -2.0; a cover (a sum of hessians or weights) is >= 0{D}"),
    ("threshold not its bin's edge", _set(0, "threshold", 0, 0.5),
     (f"trees[0][0].nodes.threshold[0]: node 0's threshold 0.5 is not the bin edge of its "
      f"bin_threshold, bin_edges[0][1] = 0.0: the trees and the bins disagree{D}")),
    ("leaf values adding up to inf", _big_leaves,
     (f"trees: leaf values add up to inf, beyond what float64 holds: predictions would be inf or "
      f"NaN{D}")),
    ("bin edges out of order", lambda d: d["bin_mapper"]["bin_edges"][0].reverse(),
     (f"bin_mapper.bin_edges[0][1]: is 0.0, not above the edge before it (1.0); bin edges "
      f"increase strictly{D}")),
    ("infinite base score", lambda d: d["base_score"].__setitem__(0, -math.inf),
     f"base_score[0]: is -inf; expected a finite number{D}"),
    ("a base score per output, two", lambda d: d["base_score"].append(0.5),
     f"base_score: has 2 values but a GradientBoostingRegressor has 1 output(s){D}"),
    ("a categorical feature without categories", lambda d: d["categories"].clear(),
     f"categories.1: missing: categorical feature 1 has no categories{D}"),
    ("a category twice", lambda d: d["categories"]["1"].append("u"),
     f"categories.1: lists a category twice (categories are distinct){D}"),
    ("bins of other categories", lambda d: d["bin_mapper"]["categories"]["1"].pop(),
     f"bin_mapper.categories: differs from the model's categories{D}"),
    # --- types and sizes
    ("huge bin_threshold", _set(0, "bin_threshold", 0, 10**30),
     (f"trees[0][0].nodes.bin_threshold[0]: int 1000000000000000000000000000000 is too large; "
      f"bin_threshold is a bin code, 0 to 255{D}")),
    ("number beyond float64", _set(0, "gain", 0, 10**400),
     ("trees[0][0].nodes.gain[0]: int 100000000000000000...0000000000000000000 is too large; "
      "expected about -1.8e308 to 1.8e308")),
    ("text in a bitset", lambda d: d["trees"][1][0]["cat_bitsets"][0].__setitem__(0, "five"),
     (f"trees[1][0].cat_bitsets[0]: expected four whole numbers 0 to 2**64 - 1 (as text), got "
      f"list ['five', '0', '0', '0']{D}")),
    ("bitset word of 2**64", lambda d: d["trees"][1][0]["cat_bitsets"][0].__setitem__(
        1, str(2**64)),
     (f"trees[1][0].cat_bitsets[0]: expected four whole numbers 0 to 2**64 - 1 (as text), got "
      f"list ['5', '18446744073709551616', '0', '0']{D}")),
    ("text where a number is", _set(0, "value", 0, "0.1"),
     "trees[0][0].nodes.value[0]: expected a number, got str '0.1'"),
    ("a fraction where an integer is", _set(0, "feature", 0, 0.0),
     "trees[0][0].nodes.feature[0]: expected an integer, got float 0.0"),
    ("null where a number is", _set(0, "gain", 0, None),
     "trees[0][0].nodes.gain[0]: expected a number, got NoneType None"),
    ("a list where an object is", lambda d: d["trees"][0].__setitem__(0, []),
     "trees[0][0]: expected an object, got list []"),
    ("an object where a list is", lambda d: _nodes(d).__setitem__("left", {"0": 1}),
     "trees[0][0].nodes.left: expected a list, got dict {'0': 1}"),
    ("deeply nested value", _set(0, "value", 0, json.loads("[" * 500 + "]" * 500)),
     "trees[0][0].nodes.value[0]: expected a number, got list [[[...]]]"),
    ("node fields of different lengths", lambda d: _nodes(d)["gain"].pop(),
     ("trees[0][0].nodes.gain: has 6 entries but nodes.value has 7; every node field has one "
      "entry per node")),
]


@pytest.mark.parametrize("change, message", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_a_bad_model_file_is_refused_naming_file_tree_node_and_key(change, message, tmp_path):
    path = tmp_path / "model.json"
    path.write_text(mf.hand_made_text(change))
    with pytest.raises(db.ModelFileError) as info:
        db.load_model(path)
    assert str(info.value) == f"model file {path}, key {message}"


def test_the_hand_made_model_predicts_what_its_trees_say():
    """Tree 0 by a's bins, missing to the left at the root; tree 1 by b's bitset
    (u and w left), missing to the right."""
    model = model_from_dict(mf.hand_made())
    X = pd.DataFrame({"a": [-2.0, 2.0, np.nan, -0.5],
                      "b": pd.Categorical(["u", "v", "w", None], categories=["u", "v", "w"])})
    np.testing.assert_allclose(model.predict(X), [0.5 - 0.3 + 0.2, 0.5 + 0.3 - 0.2,
                                                  0.5 - 0.1 + 0.2, 0.5 - 0.1 - 0.2])


def test_thousands_of_trees_load_at_once_and_a_cycle_in_the_last_is_found(tmp_path):
    d = mf.hand_made()
    d["trees"] = [json.loads(json.dumps(d["trees"][r % 2])) for r in range(4000)]
    path = tmp_path / "model.json"
    path.write_text(json.dumps(d))
    assert len(db.load_model(path).trees_) == 4000
    d["trees"][-1][0]["nodes"]["left"][0] = 0
    path.write_text(json.dumps(d))
    with pytest.raises(db.ModelFileError, match=r"key trees\[3999\]\[0\]\.nodes\.left\[0\]: node 0 "
                                                r"is its own left child"):
        db.load_model(path)


@pytest.mark.parametrize("text, message", [
    ("[" * 100_000 + "]" * 100_000,
     "nests lists or objects too deeply to read; it is not a distboost model file"),
    (mf.hand_made_text().replace('"evals_result": {}', '"evals_result": ' + "[" * 100_000
                                 + "]" * 100_000),
     "nests lists or objects too deeply to read; it is not a distboost model file"),
    ('{"format": ' + "9" * 5000 + "}",
     "cannot be read as JSON (Exceeds the limit (4300 digits) for integer string conversion"),
])
def test_json_too_deep_or_too_long_to_read_is_refused(text, message, tmp_path):
    path = tmp_path / "model.json"
    path.write_text(text)
    with pytest.raises(db.ModelFileError) as info:
        db.load_model(path)
    assert str(info.value).startswith(f"model file {path} {message}")


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    return mf.fitted_models(tmp_path_factory.mktemp("models"))


def _mutated(path, tmp_path, change):
    d = json.loads(path.read_text())
    change(d)
    out = tmp_path / path.name
    out.write_text(json.dumps(d))
    return out


# (id, fitted model, change, key and message after "model file <path>, key ")
FITTED_ROWS = [
    ("a multiclass round of 2 trees", "multiclass", lambda d: d["trees"][1].pop(),
     f"trees[1]: has 2 tree(s) but a GradientBoostingClassifier of 3 classes has 3 per round{D}"),
    ("labels cut by their dtype", "classifier", lambda d: d["classes"].update(dtype="<U2"),
     f"classes.values: are not labels of dtype '<U2' (they would read as list ['ha', 'sp']){D}"),
    ("classes out of order", "classifier", lambda d: d["classes"]["values"].reverse(),
     f"classes.values: are not distinct and sorted (as numpy.unique gives them){D}"),
    ("a forest tree without class frequencies", "forest",
     lambda d: d["trees"][2][0].pop("leaf_values"),
     (f"trees[2][0].leaf_values: a RandomForestClassifier of 3 classes has 3 leaf values per "
      f"node, this tree none{D}")),
    ("AdaBoost with a weight short", "adaboost",
     lambda d: d["state"]["estimator_weights"].pop(),
     f"state.estimator_weights: has 2 entries for 3 trees{D}"),
    ("AdaBoost voting for class 5", "adaboost",
     lambda d: d["trees"][0][0]["nodes"]["value"].__setitem__(0, 5.0),
     (f"trees[0][0].nodes.value[0]: is 5.0, not a class code (0 to 2): a SAMME tree's nodes vote "
      f"for a class{D}")),
    ("a cycle in a voting member", "voting",
     lambda d: d["state"]["members"][1][1]["trees"][0][0]["nodes"]["left"].__setitem__(0, 0),
     (f"state.members[1][1].trees[0][0].nodes.left[0]: node 0 is its own left child; a tree has "
      f"no cycles{D}")),
    ("a voting model whose members are not fitted", "voting",
     lambda d: d["params"].update(prefit=False),
     f"params.prefit: is False; a saved VotingRegressor's members are fitted (prefit is true){D}"),
    ("a gradient boosting file with a state", "regressor", lambda d: d.update(state={}),
     f"state: a GradientBoostingRegressor keeps no state{D}"),
    ("poisson predictions beyond float64", "poisson",
     lambda d: d["base_score"].__setitem__(0, 1e6),
     (f"trees: leaf values add up to 1e+06 (loss='poisson' predicts e^f), beyond what float64 "
      f"holds: predictions would be inf or NaN{D}")),
]


@pytest.mark.parametrize("name, change, message", [r[1:] for r in FITTED_ROWS],
                         ids=[r[0] for r in FITTED_ROWS])
def test_a_bad_file_of_each_kind_of_model_is_refused(name, change, message, fitted, tmp_path):
    path = _mutated(fitted[name], tmp_path, change)
    with pytest.raises(db.ModelFileError) as info:
        db.load_model(path)
    assert str(info.value) == f"model file {path}, key {message}"


def test_valid_files_load_and_save_byte_for_byte(fitted, tmp_path):
    for name, path in fitted.items():
        model = db.load_model(path)
        model.save_model(tmp_path / path.name)
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), name


def test_continuing_a_model_file_checks_it_first(fitted, tmp_path):
    path = _mutated(fitted["classifier"], tmp_path, lambda d: d["trees"][2][0]["nodes"]["left"]
                    .__setitem__(0, 0))
    X = pd.DataFrame({"x": [0.0, 1.0], "c": pd.Categorical(["u", "v"]), "z": [0.0, 1.0]})
    with pytest.raises(db.ModelFileError, match=r"key trees\[2\]\[0\]\.nodes\.left\[0\]: node 0 "
                                                r"is its own left child"):
        db.GradientBoostingClassifier(n_estimators=1).fit(X, ["ham", "spam"], init_model=path)
