"""flows/_cluster.py: work the Dask workers cannot import fails at once, with
the module and the worker named, instead of waiting forever; the flow modules
import their helpers by absolute names, whatever name Prefect loads them by."""

try:
    import _flows_fixtures as fx
except ImportError:  # tests/ imported as a package
    from tests import _flows_fixtures as fx

import ast
import subprocess
import sys
import time

import pytest

from flows import _cluster
from flows.prepare import _on_workers


@pytest.fixture
def script_module(tmp_path, monkeypatch):
    """A module this process imports from a folder the workers do not see
    (as Prefect imports a flow file by its file name)."""
    (tmp_path / "only_here.py").write_text("def double(x):\n    return 2 * x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import only_here

    yield only_here
    sys.modules.pop("only_here", None)


def test_workers_import_what_the_flows_send(dask_client):
    _cluster.check_importable(dask_client, _cluster.WORKER_MODULES)
    assert _on_workers(dask_client, fx.np.negative, "distboost-test-neg", [(1,), (2,)], False) == [
        -1,
        -2,
    ]


def test_a_function_the_workers_cannot_import_fails_at_once(dask_client, script_module):
    assert script_module.double(2) == 4  # importable here
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="cannot import only_here") as error:
        _on_workers(dask_client, script_module.double, "distboost-test", [(1,)], False)
    assert time.monotonic() - started < 30
    assert "ModuleNotFoundError" in str(error.value) and "Dask worker tcp://" in str(error.value)


def test_flow_modules_use_absolute_imports():
    """Prefect runs ``flows/pipeline.py`` as a top-level module ``pipeline``:
    a relative import there would name modules no Dask worker can import."""
    for path in sorted((fx.REPO / "flows").glob("*.py")):
        tree = ast.parse(path.read_text())
        relative = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level]
        assert relative == [], f"{path.name}: relative imports on lines {relative}"


@pytest.mark.parametrize("entrypoint", ["pipeline", "prepare", "train", "evaluate", "predict"])
def test_entrypoints_load_as_scripts_and_send_package_functions(entrypoint):
    """Loaded the way Prefect loads an entrypoint (module ``pipeline``), a flow
    module imports its helpers as ``flows.*``, never as ``pipeline._cluster``
    (a name the Dask workers would fail to import)."""
    code = (
        "import sys\n"
        "from prefect.utilities.importtools import load_script_as_module\n"
        f"m = load_script_as_module('flows/{entrypoint}.py')\n"
        "under_script = sorted(k for k in sys.modules if k.startswith(m.__name__ + '.'))\n"
        "assert not under_script, under_script\n"
        "print(m.__name__)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=fx.REPO,
        env=fx.subprocess_env(fx.shared_prefect_home()),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == entrypoint


def test_local_clusters_of_the_flows_serve_the_distboost_page(capsys):
    import urllib.request

    config = {**fx.TEST_CLUSTER, "dashboard_address": "127.0.0.1:0"}
    with _cluster.dask_client(cluster=config, training=True) as client:
        port = client.scheduler_info()["services"]["dashboard"]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/distboost", timeout=30) as response:
            assert response.status == 200
        page = client.dashboard_link.replace("/status", "/distboost")
    assert f"training live: {page}" in capsys.readouterr().err
    # a flow that does not train (prepare, predict, explain, evaluate) names no live page
    with _cluster.dask_client(cluster=config) as client:
        dashboard = client.dashboard_link
    err = capsys.readouterr().err
    assert f"Dask dashboard: {dashboard}" in err and "training live" not in err
