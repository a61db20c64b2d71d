"""Prefect 3.4 to 3.7.0 allow any fastapi < 1 but their API server fails under
fastapi >= 0.132; the command line refuses that pair at once, saying what to
install (``flows._prefect_compat``)."""

import importlib.metadata

import pytest

from flows._prefect_compat import IncompatiblePrefect, check_prefect_server, fastapi_problem

PREFECT_3_4_25 = ["fastapi<1.0.0,>=0.111.0", "fastapi-cli>=0.0.1", "uvicorn!=0.29.0,>=0.14.0"]
PREFECT_3_8_8 = ["fastapi<1.0.0,>=0.139.0", "starlette>=1.0.1"]


@pytest.mark.parametrize("prefect, requires, fastapi, broken", [
    ("3.4.25", PREFECT_3_4_25, "0.150.0", True),    # measured: HTTP 500 on every call
    ("3.4.25", PREFECT_3_4_25, "0.137.0", True),
    ("3.4.25", PREFECT_3_4_25, "0.132.0", True),    # measured: HTTP 422 on a subflow's tasks
    ("3.4.25", PREFECT_3_4_25, "0.131.0", False),   # measured: works
    ("3.4.20", PREFECT_3_4_25, "0.111.0", False),   # the floor stack
    ("3.8.8", PREFECT_3_8_8, "0.150.0", False),     # the newest stack
])
def test_the_pairs_measured(prefect, requires, fastapi, broken):
    problem = fastapi_problem(prefect, requires, fastapi)
    assert (problem is not None) == broken
    if broken:
        assert f"Prefect {prefect}'s API server does not work with fastapi {fastapi}" in problem
        assert "pip install 'fastapi>=0.111,<0.132'" in problem


def test_the_installed_prefect_and_fastapi_work_together(monkeypatch):
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    check_prefect_server()  # raises IncompatiblePrefect otherwise
    assert fastapi_problem(importlib.metadata.version("prefect"),
                           importlib.metadata.requires("prefect"),
                           importlib.metadata.version("fastapi")) is None


def test_the_error_is_one_the_command_line_reports():
    from flows import cli

    assert IncompatiblePrefect in cli._expected_errors()


def _flows():
    from flows.evaluate import evaluate
    from flows.explain import explain
    from flows.pipeline import pipeline
    from flows.predict import predict
    from flows.prepare import prepare
    from flows.train import train

    return (pipeline, prepare, train, evaluate, predict, explain)


@pytest.mark.parametrize("index", range(6))
def test_flow_parameters_validate_with_a_cluster_config(index):
    """Prefect builds a model of a flow's parameters from their annotations; Prefect 3.4.25
    cannot resolve annotations given as text (``PydanticUserError: ... is not fully
    defined; you should define ClusterConfig``), so flow modules do without
    ``from __future__ import annotations``."""
    import inspect

    flow = _flows()[index]
    params = inspect.signature(flow.fn).parameters
    assert [n for n, p in params.items() if isinstance(p.annotation, str)] == [], flow.name
    given = {n: "x" for n, p in params.items() if p.default is inspect.Parameter.empty}
    validated = flow.validate_parameters({**given, "cluster": {"n_workers": 1}})
    assert validated["cluster"].n_workers == 1
