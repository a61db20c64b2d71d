"""scikit-learn's parameter contract (``inputs.params``): names from the
``__init__`` signatures, read once per class."""

import distboost as db
from distboost.inputs.params import ParamsMixin


class _Base(ParamsMixin):
    def __init__(self, a=1, b=2):
        self.a, self.b = a, b


class _Child(_Base):
    def __init__(self, c=3, **kwargs):
        super().__init__(**kwargs)
        self.c = c


def test_names_follow_kwargs_to_the_parent_per_class_and_callers_get_their_own_list():
    assert _Base._param_names() == ["a", "b"]
    assert _Child._param_names() == ["a", "b", "c"]
    names = _Child._param_names()
    names.append("z")  # a caller's list: the class's names stay
    assert _Child._param_names() == ["a", "b", "c"] and _Base._param_names() == ["a", "b"]
    assert _Child(c=5, a=0).get_params() == {"a": 0, "b": 2, "c": 5}


def test_estimators_set_and_get_every_init_parameter():
    model = db.GradientBoostingClassifier().set_params(n_estimators=7, max_depth=2)
    params = model.get_params()
    assert params["n_estimators"] == 7 and params["max_depth"] == 2
    assert set(params) == set(db.GradientBoostingClassifier._param_names())
