"""Best-first growth: speculative expansions, taken in best-first order,
give the trees of one split per wave, in fewer waves."""

import numpy as np
import pytest


def _count_level_waves(monkeypatch) -> list:
    """A list whose last entry counts the level waves sent from now on (the
    caller appends a 0 to start each count); in process, too, the trees grow
    wave by wave (not in one compiled call, ``Engine.grows_here``)."""
    from distboost.engine.waves import Engine

    monkeypatch.setattr(Engine, "grows_here", lambda *args: False)
    waves, level = [], Engine.level

    def counted(self, *args):
        waves[-1] += 1
        return level(self, *args)

    monkeypatch.setattr(Engine, "level", counted)
    return waves


@pytest.mark.parametrize("make", [
    lambda db: db.GradientBoostingClassifier(n_estimators=3, max_depth=None, max_leaf_nodes=12),
    lambda db: db.GradientBoostingClassifier(n_estimators=3, max_depth=5, max_leaf_nodes=12,
                                             colsample_bynode=0.5, random_state=2),
    lambda db: db.RandomForestClassifier(n_estimators=3, max_leaf_nodes=10, random_state=1),
    lambda db: db.AdaBoostClassifier(n_estimators=3, max_leaf_nodes=7),
    lambda db: db.GradientBoostingRegressor(loss="huber", n_estimators=3, max_depth=None,
                                            max_leaf_nodes=15, min_samples_leaf=3),
], ids=["multiclass", "bynode", "forest", "adaboost", "huber-counts"])
def test_best_first_expanding_several_leaves_per_wave_grows_the_one_split_trees(make, monkeypatch):
    """Leaves expanded speculatively and taken in best-first order give the very
    trees of one split per wave (ids, values, counts), in fewer waves."""
    import distboost as db
    from distboost.trees import best_first

    rng = np.random.default_rng(11)
    X = rng.normal(size=(4000, 5))
    X[rng.random(X.shape) < 0.02] = np.nan
    y = (np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) ** 2 > 0.8).astype(int)
    y = y + (np.nan_to_num(X[:, 2]) > 1)  # three classes
    waves = _count_level_waves(monkeypatch)
    trees = {}
    for k in (1, 4, 64):
        monkeypatch.setattr(best_first, "SPECULATIVE_SPLITS", k)
        waves.append(0)
        model = make(db).fit(X, y)
        trees[k] = [t for r in model.trees_ for t in (r if isinstance(r, list) else [r])]
    assert trees[4] == trees[1] and trees[64] == trees[1]
    assert len(trees[1][0].nodes) > 7
    assert waves[1] < waves[0] and waves[2] <= waves[1]


def test_best_first_with_room_to_expand_every_known_split_takes_one_wave_per_level(monkeypatch):
    """Expansions reach below the leaves taken so far: with no limit on
    them, and a leaf limit that never binds, best-first growth to depth 5
    takes exactly the waves of depth-wise growth (one per level), however
    its order goes from branch to branch, and gives the same trees. Only
    the children's splits known from earlier waves make that possible: with
    the leaves alone, a branch the order goes back to waits for its parent."""
    import distboost as db
    from distboost.trees import best_first

    rng = np.random.default_rng(3)
    X = rng.normal(size=(3000, 4))
    y = (X[:, 0] * X[:, 1] + np.sin(3 * X[:, 2]) + 0.5 * rng.normal(size=3000) > 0).astype(int)
    waves = _count_level_waves(monkeypatch)
    monkeypatch.setattr(best_first, "SPECULATIVE_SPLITS", 10**6)
    params = {"n_estimators": 4, "max_depth": 5, "min_samples_leaf": 5}
    predictions = []
    for leaves in (None, 10**4):
        waves.append(0)
        model = db.GradientBoostingClassifier(max_leaf_nodes=leaves, **params).fit(X, y)
        predictions.append(model.decision_function(X))
    assert waves[0] == waves[1] and waves[0] <= 4 * 5
    np.testing.assert_array_equal(predictions[0], predictions[1])


class _Finder:
    """Splits already set on the nodes: those with a positive gain have one."""

    node_features = None

    def evaluate(self, pairs, block):
        return [(t, n) for t, n in pairs if n.gain > 0]


def _expanded_root(max_leaf_nodes):
    """A root (gain 10) expanded in the first wave, its children (gains 5
    and 7) built; return the policy and the children."""
    from distboost.trees.best_first import BestFirst
    from distboost.trees.nodes import Node, NodeBook

    root = Node(0, 0, np.zeros(2))
    root.exact, root.gain = 0, 10.0
    book = NodeBook([root])
    policy = BestFirst(book, _Finder(), max_leaf_nodes)
    policy.start([(0, root)])
    assert policy.next_splits() == [(0, root)]
    left, right = book.children(0, root, np.zeros(2), in_wave_order=False)
    left.gain, right.gain, root.expanded = 5.0, 7.0, True
    policy.wave_done([(0, root)], [(0, left), (0, right)], None)
    return policy, left, right


def test_the_best_leaf_first_and_the_likeliest_next_with_it():
    """The root's split is taken (its children get tree ids 1 2); the next
    wave expands the best leaf (gain 7) and, with room, the other (5); with
    room for one more leaf only, the best alone."""
    policy, left, right = _expanded_root(max_leaf_nodes=10)
    assert policy.next_splits() == [(0, right), (0, left)]
    assert (left.exact, right.exact) == (1, 2)
    policy, left, right = _expanded_root(max_leaf_nodes=3)
    assert policy.next_splits() == [(0, right)]
