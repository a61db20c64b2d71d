"""Bagging and pasting of trees (Breiman 1996, 1999; Ho 1998).

Each of M trees is grown on a sample of the rows, drawn with replacement
(``bootstrap=True``: bagging, Poisson multiplicities with mean
``max_samples``) or without (``bootstrap=False``: pasting, each row kept with
probability ``max_samples``), and on a random subset of the features chosen
once per tree (``max_features < 1``: random subspaces). Predictions average
the trees: class frequencies (soft voting) or means. Out-of-bag estimates need
bootstrap samples. Only trees are bagged: they grow on the shared engine.
"""

from __future__ import annotations

from ._bagged import TREE_PARAMETERS, BaggedClassifierMixin, BaggedRegressorMixin, BaggedTreesBase


class _Bagging(BaggedTreesBase):
    _node_sampling = False

    def __init__(self, *, n_estimators=10, max_samples=1.0, max_features=1.0, bootstrap=True,
                 bootstrap_features=False, oob_score=False, criterion="gini", max_depth=None,
                 max_leaf_nodes=None, min_samples_leaf=1, max_bins=256, random_state=None,
                 n_jobs=None, client=None, out_of_core="auto", trees_per_pass=None):
        self.n_estimators = n_estimators
        self.max_samples = max_samples
        self.max_features = max_features
        self.bootstrap = bootstrap
        self.bootstrap_features = bootstrap_features
        self.oob_score = oob_score
        self.criterion = criterion
        self.max_depth = max_depth
        self.max_leaf_nodes = max_leaf_nodes
        self.min_samples_leaf = min_samples_leaf
        self.max_bins = max_bins
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.client = client
        self.out_of_core = out_of_core
        self.trees_per_pass = trees_per_pass


BAGGING_PARAMETERS = """\
    n_estimators : int >= 1, default 10
        Trees M.
    max_samples : int or float in (0, 1], default 1.0
        Rows per tree (expected), as a count or a fraction.
    max_features : int or float in (0, 1], default 1.0
        Features per tree (random subspaces), drawn once per tree.
    bootstrap : bool, default True
        Rows drawn with replacement (bagging); False: without (pasting).
    bootstrap_features : bool, default False
        Features drawn with replacement.
    oob_score : bool, default False
        Out-of-bag estimate ``oob_score_``; needs ``bootstrap=True``.
"""


class BaggingClassifier(BaggedClassifierMixin, _Bagging):
    __doc__ = """Bagged (or pasted) classification trees.

    scikit-learn's ``BaggingClassifier`` with the tree's own parameters
    instead of ``estimator``.

    Parameters
    ----------
{bagging}    criterion : {"gini", "entropy", "misclassification"}, default "gini"
        Impurity the splits reduce.
{trees}
    Attributes
    ----------
    estimators_, estimators_features_, classes_, oob_score_ and
    oob_decision_function_ (with ``oob_score=True``)
    """.replace("{bagging}", BAGGING_PARAMETERS).replace("{trees}", TREE_PARAMETERS)


class BaggingRegressor(BaggedRegressorMixin, _Bagging):
    __doc__ = """Bagged (or pasted) regression trees.

    Parameters
    ----------
{bagging}    criterion : {"squared_error"}, default "squared_error"
        Variance reduction.
{trees}
    Attributes
    ----------
    estimators_, estimators_features_, oob_score_ (R^2) with ``oob_score=True``
    """.replace("{bagging}", BAGGING_PARAMETERS).replace("{trees}", TREE_PARAMETERS)

    def __init__(self, *, n_estimators=10, max_samples=1.0, max_features=1.0, bootstrap=True,
                 bootstrap_features=False, oob_score=False, criterion="squared_error",
                 max_depth=None, max_leaf_nodes=None, min_samples_leaf=1, max_bins=256,
                 random_state=None, n_jobs=None, client=None, out_of_core="auto", trees_per_pass=None):
        super().__init__(
            n_estimators=n_estimators, max_samples=max_samples, max_features=max_features,
            bootstrap=bootstrap, bootstrap_features=bootstrap_features, oob_score=oob_score,
            criterion=criterion, max_depth=max_depth, max_leaf_nodes=max_leaf_nodes,
            min_samples_leaf=min_samples_leaf, max_bins=max_bins, random_state=random_state,
            n_jobs=n_jobs, client=client, out_of_core=out_of_core, trees_per_pass=trees_per_pass,
        )
