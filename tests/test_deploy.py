"""deploy/: the Prefect deployments, the compose file and the Kubernetes
manifests agree with each other and with the code; one deployment runs to
Completed on a real Prefect server on loopback."""

try:
    import _flows_fixtures as fx
except ImportError:  # tests/ imported as a package
    from tests import _flows_fixtures as fx

import importlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
import tomllib
import yaml

DEPLOY = fx.REPO / "deploy"
IMAGE = "distboost:0.1.0"
POOL = "distboost-process"


def prefect_yaml():
    return yaml.safe_load((DEPLOY / "prefect.yaml").read_text())


def compose():
    return yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())


def manifests():
    docs = []
    for path in sorted((DEPLOY / "kubernetes").glob("*.yaml")):
        docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return docs


def test_deployments_point_at_real_flows():
    from prefect import Flow

    spec = prefect_yaml()
    pinned = tomllib.loads((fx.REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    assert f"prefect=={spec['prefect-version']}" in pinned
    names = {d["name"] for d in spec["deployments"]}
    assert names == {"daily", "prepare", "train", "evaluate"}
    for d in spec["deployments"]:
        path, func = d["entrypoint"].split(":")
        assert (fx.REPO / path).is_file()
        module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
        flow = getattr(module, func)
        assert isinstance(flow, Flow)
        assert set(d.get("parameters", {})) <= set(flow.parameters.properties)
        assert d["work_pool"]["name"] == POOL
    daily = next(d for d in spec["deployments"] if d["name"] == "daily")
    assert daily["entrypoint"] == "flows/pipeline.py:pipeline"
    (schedule,) = daily["schedules"]
    assert re.fullmatch(r"\d+ \d+ \* \* \*", schedule["cron"]) and schedule["active"]


def test_serve_builds_the_same_deployments():
    from flows.serve import deployments

    built = {d.name: d for d in deployments()}
    assert set(built) == {"daily", "prepare", "train", "evaluate"}
    assert built["daily"].schedules and not built["prepare"].schedules


def test_compose_services_agree():
    services = compose()["services"]
    assert set(services) == {"prefect-server", "dask-scheduler", "dask-worker", "prefect-worker"}
    for name in ("dask-scheduler", "dask-worker", "prefect-worker"):
        assert services[name]["image"] == IMAGE
    assert services["prefect-server"]["image"].startswith(
        f"prefecthq/prefect:{prefect_yaml()['prefect-version']}"
    )
    scheduler = services["dask-scheduler"]
    assert scheduler["command"][:2] == ["dask", "scheduler"]
    port = scheduler["command"][scheduler["command"].index("--port") + 1]
    assert f"{port}:{port}" in scheduler["ports"] and "8787:8787" in scheduler["ports"]
    assert services["dask-worker"]["command"][:3] == [
        "dask",
        "worker",
        f"tcp://dask-scheduler:{port}",
    ]
    server = services["prefect-server"]["command"]
    api_port = server[server.index("--port") + 1]
    env = services["prefect-worker"]["environment"]
    assert env["PREFECT_API_URL"] == f"http://prefect-server:{api_port}/api"
    assert env["DISTBOOST_SCHEDULER"] == f"tcp://dask-scheduler:{port}"
    assert f"--pool {POOL}" in " ".join(services["prefect-worker"]["command"])
    assert IMAGE in (DEPLOY / "Dockerfile").read_text()


def _containers(doc):
    return doc["spec"]["template"]["spec"]["containers"]


def test_kubernetes_manifests_agree():
    docs = manifests()
    deployments = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Deployment"}
    services = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Service"}
    claims = {d["metadata"]["name"] for d in docs if d["kind"] == "PersistentVolumeClaim"}
    assert set(deployments) == {"dask-scheduler", "dask-worker", "prefect-server", "prefect-worker"}
    for name, service in services.items():  # every Service selects a Deployment's pods
        target = deployments[name]
        labels = target["spec"]["template"]["metadata"]["labels"]
        assert service["spec"]["selector"].items() <= labels.items()
        ports = {p["containerPort"] for c in _containers(target) for p in c["ports"]}
        assert {p["targetPort"] for p in service["spec"]["ports"]} <= ports
    for name in ("dask-scheduler", "dask-worker", "prefect-worker"):
        assert {c["image"] for c in _containers(deployments[name])} == {IMAGE}
    assert (
        _containers(deployments["prefect-server"])[0]["image"]
        == compose()["services"]["prefect-server"]["image"]
    )
    worker_cmd = _containers(deployments["dask-worker"])[0]["command"]
    sched_port = services["dask-scheduler"]["spec"]["ports"][0]["port"]
    assert worker_cmd[2] == f"tcp://dask-scheduler:{sched_port}"
    env = {e["name"]: e["value"] for e in _containers(deployments["prefect-worker"])[0]["env"]}
    api_port = services["prefect-server"]["spec"]["ports"][0]["port"]
    assert env["PREFECT_API_URL"] == f"http://prefect-server:{api_port}/api"
    assert env["DISTBOOST_SCHEDULER"] == f"tcp://dask-scheduler:{sched_port}"
    for doc in deployments.values():
        for volume in doc["spec"]["template"]["spec"].get("volumes", []):
            if "persistentVolumeClaim" in volume:
                assert volume["persistentVolumeClaim"]["claimName"] in claims


# ----------------------------------------------------------------- a real run
def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _prefect(env, *args, timeout=180):
    result = subprocess.run(
        ["prefect", *args],
        env=env,
        cwd=fx.REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert result.returncode == 0, f"prefect {' '.join(args)}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def _wait_healthy(url, server, timeout=180.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert server.poll() is None, "prefect server exited"
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError("prefect server did not become healthy")


@pytest.mark.slow
def test_one_deployment_run_completes_on_loopback(tmp_path):
    """prefect server start + process work pool + prefect deploy + a worker."""
    fx.hastie_csv(tmp_path / "raw", n_rows=400, n_files=2)
    port = _free_port()
    env = fx.subprocess_env(fx.shared_prefect_home())
    env["PREFECT_API_URL"] = f"http://127.0.0.1:{port}/api"
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    server = subprocess.Popen(
        ["prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        _wait_healthy(env["PREFECT_API_URL"], server)
        _prefect(env, "work-pool", "create", POOL, "--type", "process", "--overwrite")
        _prefect(env, "--no-prompt", "deploy", "--all", "--prefect-file", "deploy/prefect.yaml")
        params = {
            "source": str(tmp_path / "raw"),
            "output": str(tmp_path / "prepared"),
            "target": "y",
            "categorical": ["colour"],
            "cluster": fx.TEST_CLUSTER,
        }
        out = _prefect(
            env, "deployment", "run", "distboost-prepare/prepare", "--params", json.dumps(params)
        )
        run_id = re.search(r"UUID: ([0-9a-f-]{36})", out).group(1)
        _prefect(env, "worker", "start", "--pool", POOL, "--run-once", timeout=300)
        state = json.loads(_prefect(env, "flow-run", "inspect", run_id, "--output", "json"))
        assert state["state_type"] == "COMPLETED", state
        assert (tmp_path / "prepared" / "schema.json").is_file()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
