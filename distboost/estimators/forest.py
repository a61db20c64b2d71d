"""Random forests (Breiman 2001; ESL Algorithm 15.1).

For b = 1..M: draw a bootstrap sample of the rows; grow a tree on it, at every
node choosing the best split among k features drawn at random (k = sqrt(d)
for classification by default), without pruning; then average the trees
(class frequencies, or means). Bootstrap samples are Poisson multiplicities
drawn on the workers from (random_state, tree, global row id); many trees grow
per pass over the data (``trees_per_pass``, chosen from memory budgets when
None). Histogram trees are exact on the binned features: fully grown trees
on large data hold one histogram per node of a level, so there set
``max_depth`` or ``max_leaf_nodes``.
"""

from __future__ import annotations

from ..inputs import constraints
from ._bagged import TREE_PARAMETERS, BaggedClassifierMixin, BaggedRegressorMixin, BaggedTreesBase
from ._objectives import check_classes, resolve_constraints


class _Forest(BaggedTreesBase):
    def __init__(self, *, n_estimators=100, criterion="gini", max_depth=None,
                 min_samples_leaf=1, max_features="sqrt", max_leaf_nodes=None, bootstrap=True,
                 oob_score=False, max_samples=None, max_bins=256, monotonic_cst=None,
                 random_state=None, n_jobs=None, client=None, out_of_core="auto",
                 trees_per_pass=None):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.max_leaf_nodes = max_leaf_nodes
        self.bootstrap = bootstrap
        self.oob_score = oob_score
        self.max_samples = max_samples
        self.max_bins = max_bins
        self.monotonic_cst = monotonic_cst
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.client = client
        self.out_of_core = out_of_core
        self.trees_per_pass = trees_per_pass

    def _validate_params(self):
        super()._validate_params()
        constraints.check_monotonic_cst(self.monotonic_cst, type(self).__name__)

    def _check_columns(self, schema) -> None:
        """``monotonic_cst`` against the columns (``constraints``)."""
        self._monotonic = resolve_constraints(self.monotonic_cst, None, schema,
                                              type(self).__name__)[0]

    def _fit_engine(self, engine, init_model=None):
        if self._is_classifier:
            check_classes(self, self.n_classes_)
        super()._fit_engine(engine, init_model)


_SAMPLING = """\
    bootstrap : bool, default True
        Draw each tree's rows with replacement (False: every tree sees all rows).
    max_samples : int, float in (0, 1] or None, default None
        Rows per bootstrap sample (expected), as a count or a fraction.
    monotonic_cst : array-like of int of shape (n_features,), dict or None, default None
        scikit-learn's monotone constraints: -1 / 0 / +1 per feature (or a dict
        by column name) for a forest non-increasing / free / non-decreasing in
        that feature; for a classifier, in the probability of ``classes_[1]``
        (two classes only). Each tree's node values are bounded as the
        gradient boosting grower bounds them (``distboost.inputs.constraints``): a
        split whose children's values (means, or class-1 frequencies), clipped
        to the node's bounds, break the order is refused, children are bounded
        at the midpoint, and leaf values are clipped to their bounds.
"""


class RandomForestClassifier(BaggedClassifierMixin, _Forest):
    __doc__ = """A random forest of classification trees (Gini, entropy or misclassification).

    Parameters
    ----------
    n_estimators : int >= 1, default 100
        Trees M.
    criterion : {"gini", "entropy", "misclassification"}, default "gini"
        Impurity the splits reduce.
    max_features : {"sqrt", "log2"}, int, float in (0, 1] or None, default "sqrt"
        Features drawn at random at every node (None: all of them).
    oob_score : bool, default False
        Out-of-bag accuracy ``oob_score_`` and ``oob_decision_function_``
        (NaN for rows in every tree's sample); needs ``bootstrap=True``.
{sampling}{trees}
    Attributes
    ----------
    estimators_ : list of Tree
    classes_, n_features_in_, feature_names_in_, feature_importances_
    """.replace("{sampling}", _SAMPLING).replace("{trees}", TREE_PARAMETERS)


class RandomForestRegressor(BaggedRegressorMixin, _Forest):
    __doc__ = """A random forest of regression trees (squared error; leaves hold means).

    Parameters
    ----------
    n_estimators : int >= 1, default 100
        Trees M.
    criterion : {"squared_error"}, default "squared_error"
        Variance reduction.
    max_features : {"sqrt", "log2"}, int, float in (0, 1] or None, default 1.0
        Features drawn at random at every node (1.0, scikit-learn's default:
        all of them).
    oob_score : bool, default False
        Out-of-bag R^2 ``oob_score_`` and ``oob_prediction_``; needs
        ``bootstrap=True``.
{sampling}{trees}
    Attributes
    ----------
    estimators_ : list of Tree
    n_features_in_, feature_names_in_, feature_importances_
    """.replace("{sampling}", _SAMPLING).replace("{trees}", TREE_PARAMETERS)

    def __init__(self, *, n_estimators=100, criterion="squared_error", max_depth=None,
                 min_samples_leaf=1, max_features=1.0, max_leaf_nodes=None, bootstrap=True,
                 oob_score=False, max_samples=None, max_bins=256, monotonic_cst=None,
                 random_state=None, n_jobs=None, client=None, out_of_core="auto",
                 trees_per_pass=None):
        super().__init__(
            n_estimators=n_estimators, criterion=criterion, max_depth=max_depth,
            min_samples_leaf=min_samples_leaf, max_features=max_features,
            max_leaf_nodes=max_leaf_nodes, bootstrap=bootstrap, oob_score=oob_score,
            max_samples=max_samples, max_bins=max_bins, monotonic_cst=monotonic_cst,
            random_state=random_state,
            n_jobs=n_jobs, client=client, out_of_core=out_of_core, trees_per_pass=trees_per_pass,
        )
