"""One contract between estimators and training (issue 44, item 1): an estimator
builds an immutable spec, calls its family's one entry point and copies the
result; nothing in ``distboost/training/`` imports the estimators or reaches
into anything's private attributes but its own."""

import ast
import dataclasses
from pathlib import Path

import numpy as np
import pytest

import distboost as db
from distboost.engine import Engine, InputPlan, LocalExecutor
from distboost.inputs.frames import infer_schema
from distboost.kernels.splitting import SplitParams
from distboost.metrics import make_metrics
from distboost.training import adaboost, booster, tree_batch
from distboost.training.events import eval_set_names
from distboost.trees.losses import make_loss
from distboost.trees.params import GrowthParams

TRAINING = Path(db.__file__).parent / "training"


def private_reaches(source: str) -> list[tuple[int, str]]:
    """``x._name`` where x is not ``self``, ``cls`` or a module the source imports
    (dunders such as ``type(x).__name__`` aside): (line, expression) of each."""
    tree = ast.parse(source)
    modules = {"self", "cls"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.asname or a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            modules |= {a.asname or a.name for a in node.names}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
            continue
        if node.attr.startswith("__") and node.attr.endswith("__"):
            continue
        if isinstance(node.value, ast.Name) and node.value.id in modules:
            continue
        found.append((node.lineno, ast.unparse(node)))
    return found


def imported_modules(source: str, package: str) -> set[str]:
    """Absolute names of the modules ``source`` (a module of ``package``) imports."""
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            prefix = ".".join(base) if node.level else ""
            name = ".".join(p for p in (prefix, node.module or "") if p)
            out.add(name)
            out |= {f"{name}.{a.name}" for a in node.names}
    return out


@pytest.mark.parametrize("path", sorted(TRAINING.glob("*.py")), ids=lambda p: p.name)
def test_training_imports_no_estimator(path):
    imported = imported_modules(path.read_text(), "distboost.training")
    assert not [m for m in imported if m.startswith("distboost.estimators")], path.name


@pytest.mark.parametrize("path", sorted(TRAINING.glob("*.py")), ids=lambda p: p.name)
def test_training_reaches_into_nothing_private(path):
    assert private_reaches(path.read_text()) == [], path.name


def test_the_private_reach_check_sees_a_callback_into_an_estimator():
    """What ``training/adaboost.py`` did before: the estimator's private steps."""
    source = "from .loop import train\n\ndef grown(steps, engine, tree):\n" \
             "    return steps._round_error(engine, tree), self._x, train._y\n"
    assert private_reaches(source) == [(4, "steps._round_error")]


def test_imports_are_resolved_relative_to_the_package():
    source = "from ..estimators import adaboost\nfrom .loop import train\nimport numpy\n"
    assert imported_modules(source, "distboost.training") >= {
        "distboost.estimators", "distboost.estimators.adaboost", "distboost.training.loop",
        "numpy"}


def test_eval_set_names():
    assert eval_set_names(0) == []
    assert eval_set_names(2) == ["validation_0", "validation_1"]


def test_specs_are_immutable():
    for spec in (booster.BoostSpec, adaboost.AdaBoostSpec, tree_batch.ForestSpec):
        assert spec.__dataclass_params__.frozen, spec.__name__


class _Events:
    """A stand-in for ``FitEvents``: what training reports, in order."""

    def __init__(self):
        self.posted = []

    def start(self, n_rounds, *args, **kwargs):
        self.posted.append(("start", n_rounds))
        return self

    def round(self, r, metrics, trees=(), **extra):
        self.posted.append(("round", r))

    def end(self, n_rounds, **extra):
        self.posted.append(("end", n_rounds))


def _engine(X, y, regression):
    """An in-process engine holding (X, y) in one partition, binned in 32 bins."""
    engine = Engine(LocalExecutor())
    engine.prepare(InputPlan(engine.ex, [(X, y, np.ones(len(y)))], [], infer_schema(X)), regression, 32)
    return engine


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    return X, (X[:, 0] + 0.5 * X[:, 1] > 0).astype(np.int64)


def test_train_boosting_returns_its_result(data):
    X, y = data
    loss = make_loss("squared_error", None)
    spec = booster.BoostSpec(loss, 1, None, 3, GrowthParams(max_depth=2, learning_rate=0.3),
                             SplitParams(1.0, 0.0, 1.0, 1), metrics=make_metrics(None, loss, None))
    events, seen = _Events(), []
    hooks = booster.BoostHooks(on_round=lambda r, metrics: seen.append(r) and False,
                               events=events)
    with _engine(X, y.astype(np.float64), True) as engine:
        result = booster.train_boosting(engine, spec, hooks)
    assert isinstance(result, booster.BoostResult)
    assert len(result.model_trees()) == 3 and seen == [0, 1, 2]
    assert events.posted[0] == ("start", 3) and events.posted[-1] == ("end", 3)
    model = db.GradientBoostingRegressor(n_estimators=3, max_depth=2, learning_rate=0.3,
                                         max_bins=32).fit(X, y.astype(np.float64))
    assert model.trees_ == result.model_trees()


def test_train_adaboost_returns_its_result(data):
    X, y = data
    spec = adaboost.AdaBoostSpec(4, 2, "SAMME", "gini", 1.0, GrowthParams(max_depth=1))
    events = _Events()
    with _engine(X, y, False) as engine:
        result = adaboost.train_adaboost(engine, spec, events)
    assert isinstance(result, adaboost.AdaBoostResult)
    assert len(result.trees) == len(result.alphas) == len(result.errors) == 4
    assert events.posted[0] == ("start", 4) and events.posted[-1] == ("end", 4)
    model = db.AdaBoostClassifier(n_estimators=4, max_bins=32).fit(X, y)
    assert model.estimator_weights_.tolist() == result.alphas


def test_grow_forest_returns_its_result(data):
    X, y = data
    spec = tree_batch.ForestSpec(
        n_estimators=3, n_classes=2, criterion="gini", growth=GrowthParams(max_depth=3),
        min_samples_leaf=1, node_max_features=None, tree_masks=np.ones((3, 3), bool),
        bootstrap=True, rate=1.0, seed=0, oob=False)
    events = _Events()
    with _engine(X, y, False) as engine:
        result = tree_batch.grow_forest(engine, spec, events)
    assert isinstance(result, tree_batch.ForestResult) and len(result.trees) == 3
    assert events.posted[0] == ("start", 3) and events.posted[-1] == ("end", 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.n_estimators = 4
