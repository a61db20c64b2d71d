"""deploy/: the Prefect deployments, the compose file and the Kubernetes
manifests agree with each other and with the code; deploy/README.md's recipe
runs as written on loopback (server, process work pool, process worker, the
daily pipeline with its process-based LocalCluster)."""

try:
    import _flows_fixtures as fx
    import _postgres
except ImportError:  # tests/ imported as a package
    from tests import _flows_fixtures as fx
    from tests import _postgres

import contextlib
import importlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

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
    from packaging.requirements import Requirement
    from prefect import Flow

    spec = prefect_yaml()
    deps = tomllib.loads((fx.REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    prefect = next(Requirement(d) for d in deps if Requirement(d).name == "prefect")
    version = spec["prefect-version"]
    assert prefect.specifier.contains(version), (version, str(prefect.specifier))
    # the image runs the Prefect of the server image beside it
    assert f'"prefect=={version}"' in (DEPLOY / "Dockerfile").read_text()
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
    assert set(services) == {"postgres", "prefect-server", "prefect-setup", "dask-scheduler",
                             "dask-worker", "prefect-worker"}
    for name in ("prefect-setup", "dask-scheduler", "dask-worker", "prefect-worker"):
        assert services[name]["image"] == IMAGE
    assert services["prefect-server"]["image"].startswith(
        f"prefecthq/prefect:{prefect_yaml()['prefect-version']}"
    )
    scheduler = services["dask-scheduler"]
    assert scheduler["command"][:2] == ["dask", "scheduler"]
    assert "--preload distboost.dashboard" in " ".join(scheduler["command"])
    port = scheduler["command"][scheduler["command"].index("--port") + 1]
    assert f"{port}:{port}" in scheduler["ports"] and "8787:8787" in scheduler["ports"]
    assert services["dask-worker"]["command"][:3] == [
        "dask",
        "worker",
        f"tcp://dask-scheduler:{port}",
    ]
    server = services["prefect-server"]["command"]
    api_port = server[server.index("--port") + 1]
    for name in ("prefect-setup", "prefect-worker"):
        env = services[name]["environment"]
        assert env["PREFECT_API_URL"] == f"http://prefect-server:{api_port}/api"
        assert env["DISTBOOST_SCHEDULER"] == f"tcp://dask-scheduler:{port}"
    assert f"--pool {POOL}" in " ".join(services["prefect-worker"]["command"])
    assert services["prefect-setup"]["command"] == ["sh", "deploy/setup.sh"]
    assert IMAGE in (DEPLOY / "Dockerfile").read_text()


def test_compose_survives_restarts():
    """PostgreSQL on a named volume behind the Prefect server; healthchecks, restart
    policies, and a worker that starts only once the set-up step has made its pool."""
    spec = compose()
    services = spec["services"]
    postgres = services["postgres"]
    assert postgres["image"].startswith("postgres:")
    (volume,) = postgres["volumes"]
    assert volume.split(":")[0] in spec["volumes"] and volume.endswith(":/var/lib/postgresql/data")
    url = services["prefect-server"]["environment"]["PREFECT_API_DATABASE_CONNECTION_URL"]
    env = postgres["environment"]
    assert url == (f"postgresql+asyncpg://{env['POSTGRES_USER']}:{env['POSTGRES_PASSWORD']}"
                   f"@postgres:5432/{env['POSTGRES_DB']}")
    for name, service in services.items():
        assert service["restart"] == ("no" if name == "prefect-setup" else "unless-stopped")
        assert "|| true" not in str(service.get("command", ""))
        if name not in ("prefect-setup", "dask-worker"):
            assert service["healthcheck"]["test"][0] in ("CMD", "CMD-SHELL"), name
        for needed, condition in service.get("depends_on", {}).items():
            if condition["condition"] == "service_healthy":
                assert "healthcheck" in services[needed], (name, needed)
    assert services["prefect-server"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert services["prefect-setup"]["depends_on"] == {
        "prefect-server": {"condition": "service_healthy"}}
    assert services["prefect-worker"]["depends_on"]["prefect-setup"] == {
        "condition": "service_completed_successfully"}


def test_compose_file_matches_the_compose_spec():
    """Validated by the Compose Specification's JSON schema (as check-jsonschema ships it)."""
    schema = _compose_spec()
    errors = sorted(_validator(schema).iter_errors(compose()), key=str)
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors]
    broken = compose()
    broken["services"]["postgres"]["healthcheck"]["intervall"] = "5s"  # the schema can fail
    assert list(_validator(schema).iter_errors(broken))


def _compose_spec():
    import json
    from importlib.resources import files

    if sys.version_info < (3, 11):
        pytest.skip("check-jsonschema, which ships the Compose schema, needs Python >= 3.11")
    vendor = files("check_jsonschema.builtin_schemas.vendor")
    return json.loads(vendor.joinpath("compose-spec.json").read_text())


def _validator(schema):
    import jsonschema

    return jsonschema.validators.validator_for(schema)(schema)


K8S_VERSION = "1.30"
"""The Kubernetes release whose API schemas the manifests are checked against."""


def test_kubernetes_manifests_match_the_api_schemas():
    """Every object validated, strictly (no unknown field), by kubernetes-validate."""
    import kubernetes_validate

    for doc in manifests():
        try:
            kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
        except kubernetes_validate.ValidationError as e:
            error = e.caught
            raise AssertionError(f"{doc['kind']} {doc['metadata']['name']}: "
                                 f"{list(error.absolute_path)}: {error.message}") from None
    bad = next(d for d in manifests() if d["kind"] == "Job")
    bad["spec"]["template"]["spec"]["containers"][0]["comand"] = ["sh"]  # the check can fail
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, K8S_VERSION, strict=True)


def _containers(doc):
    return doc["spec"]["template"]["spec"]["containers"]


def _by_kind(docs, kind):
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


def test_kubernetes_manifests_agree():
    docs = manifests()
    deployments = _by_kind(docs, "Deployment")
    workloads = {**deployments, **_by_kind(docs, "StatefulSet"), **_by_kind(docs, "Job")}
    services = _by_kind(docs, "Service")
    claims = set(_by_kind(docs, "PersistentVolumeClaim"))
    assert set(deployments) == {"dask-scheduler", "dask-worker", "prefect-server", "prefect-worker"}
    for name, service in services.items():  # every Service selects a workload's pods
        target = workloads[name]
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
    scheduler_cmd = " ".join(_containers(deployments["dask-scheduler"])[0]["command"])
    assert scheduler_cmd.startswith("dask scheduler")
    assert "--preload distboost.dashboard" in scheduler_cmd
    worker_cmd = _containers(deployments["dask-worker"])[0]["command"]
    sched_port = services["dask-scheduler"]["spec"]["ports"][0]["port"]
    assert worker_cmd[2] == f"tcp://dask-scheduler:{sched_port}"
    env = {e["name"]: e["value"] for e in _containers(deployments["prefect-worker"])[0]["env"]}
    api_port = services["prefect-server"]["spec"]["ports"][0]["port"]
    assert env["PREFECT_API_URL"] == f"http://prefect-server:{api_port}/api"
    assert env["DISTBOOST_SCHEDULER"] == f"tcp://dask-scheduler:{sched_port}"
    for doc in workloads.values():
        for volume in doc["spec"]["template"]["spec"].get("volumes", []):
            if "persistentVolumeClaim" in volume:
                assert volume["persistentVolumeClaim"]["claimName"] in claims


def test_kubernetes_prefect_keeps_its_database():
    """The Prefect server reads its database URL from the Secret that the PostgreSQL
    StatefulSet (with a claim per replica) shares; no emptyDir, no SQLite."""
    docs = manifests()
    (secret,) = _by_kind(docs, "Secret").values()
    postgres = _by_kind(docs, "StatefulSet")["prefect-postgres"]
    server = _containers(_by_kind(docs, "Deployment")["prefect-server"])[0]
    (url,) = [e for e in server["env"] if e["name"] == "PREFECT_API_DATABASE_CONNECTION_URL"]
    ref = url["valueFrom"]["secretKeyRef"]
    assert ref["name"] == secret["metadata"]["name"]
    connection = secret["stringData"][ref["key"]]
    env = {e["name"]: e.get("value") for e in _containers(postgres)[0]["env"]}
    assert connection == (f"postgresql+asyncpg://{env['POSTGRES_USER']}:"
                          f"{secret['stringData']['password']}@{postgres['spec']['serviceName']}"
                          f":5432/{env['POSTGRES_DB']}")
    (claim,) = postgres["spec"]["volumeClaimTemplates"]
    mounts = {m["name"]: m["mountPath"] for m in _containers(postgres)[0]["volumeMounts"]}
    assert mounts[claim["metadata"]["name"]] == "/var/lib/postgresql/data"
    assert env["PGDATA"].startswith("/var/lib/postgresql/data/")  # a claim's root has lost+found
    assert "volumes" not in _by_kind(docs, "Deployment")["prefect-server"]["spec"]["template"][
        "spec"]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert server[probe]["httpGet"]["path"] == "/api/health"


def test_kubernetes_job_deploys_and_worker_waits():
    """The Job runs deploy/setup.sh (so the daily schedule exists), the worker waits for
    its pool; the shared claim names a storage class; the Dask workers' spill folder
    is a sized volume within their ephemeral-storage."""
    docs = manifests()
    (job,) = _by_kind(docs, "Job").values()
    (deploy,) = _containers(job)
    assert deploy["image"] == IMAGE and deploy["workingDir"] == "/opt/distboost"
    assert deploy["command"] == ["sh", "deploy/setup.sh"]
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "OnFailure"
    worker = _by_kind(docs, "Deployment")["prefect-worker"]["spec"]["template"]["spec"]
    (wait,) = worker["initContainers"]
    assert f"prefect work-pool inspect {POOL}" in " ".join(wait["command"])
    assert "|| true" not in str(docs)
    (claim,) = _by_kind(docs, "PersistentVolumeClaim").values()
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"] and claim["spec"]["storageClassName"]
    dask = _by_kind(docs, "Deployment")["dask-worker"]["spec"]["template"]["spec"]
    (container,) = dask["containers"]
    local = container["command"][container["command"].index("--local-directory") + 1]
    (spill,) = [m["name"] for m in container["volumeMounts"] if m["mountPath"] == local]
    (volume,) = [v for v in dask["volumes"] if v["name"] == spill]
    assert volume["emptyDir"]["sizeLimit"]
    assert set(container["resources"]["requests"]) >= {"ephemeral-storage"}
    assert set(container["resources"]["limits"]) >= {"ephemeral-storage"}


def _build_context(root):
    """The files docker would send from ``root`` (docker-py's own .dockerignore rules)."""
    from docker.utils.build import exclude_paths

    rules = [line.strip() for line in (fx.REPO / ".dockerignore").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    paths = exclude_paths(str(root), rules, dockerfile="deploy/Dockerfile")
    return {p for p in paths if (root / p).is_file()}


def test_dockerignore_keeps_the_build_context_small(tmp_path):
    """The build context holds what the Dockerfile copies and no virtual environment,
    git data, caches or run outputs: in this checkout, and in one that has them all."""
    context = _build_context(fx.REPO)
    copied = re.findall(r"^COPY (.+) \S+$", (DEPLOY / "Dockerfile").read_text(), re.MULTILINE)
    for source in " ".join(copied).split():
        assert any(p == source or p.startswith(source + "/") for p in context), source
    assert "flows/pipeline.py" in context and "deploy/setup.sh" in context
    for path in context:
        assert path.split("/")[0] in {*" ".join(copied).split(), ".dockerignore"}, path
        assert "__pycache__" not in path.split("/"), path
    kept = {"pyproject.toml", "README.md", "distboost/__init__.py", "flows/cli.py",
            "deploy/Dockerfile", "deploy/setup.sh"}
    left_out = {".venv/bin/python", ".venv-floor/lib/x.py", ".git/HEAD", "runs/daily/model.json",
                "data/raw/a.csv", "distboost-demo/raw/a.csv", "flows/__pycache__/cli.cpython-311.pyc",
                "distboost/__pycache__/kernels.grow-12.py311.nbi", "bench/results/x.json",
                "tests/test_deploy.py", ".pytest_cache/README.md"}
    for path in kept | left_out:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("x")
    assert _build_context(tmp_path) == kept


# ----------------------------------------------------------------- a real run
def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def loopback_recipe() -> str:
    """The bash block of deploy/README.md marked ``<!-- loopback-recipe -->``."""
    text = (DEPLOY / "README.md").read_text()
    match = re.search(r"<!-- loopback-recipe -->\s*```bash\n(.*?)\n```", text, re.DOTALL)
    assert match, "deploy/README.md has no <!-- loopback-recipe --> block"
    return match.group(1)


def _fresh_environment(home):
    """A new user's environment: an empty HOME, no Prefect or Dask settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "DASK_"))}
    env.pop("DO_NOT_TRACK", None)
    env.pop("PYTHONPATH", None)
    env.pop("DISTBOOST_SCHEDULER", None)
    env["HOME"] = str(home)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


def _copy_of_the_repository(root, n_rows=500):
    """flows/ and deploy/ (distboost itself is installed) with a small data/raw."""
    ignore = shutil.ignore_patterns("__pycache__")
    for name in ("flows", "deploy"):
        shutil.copytree(fx.REPO / name, root / name, ignore=ignore)
    from distboost.demo_data import make_dataset, write_csv_files

    write_csv_files(make_dataset("hastie", n_rows), root / "data" / "raw", n_files=2)
    return root


def _still_running(group, wait=30):
    """The command lines of the processes of ``group`` that have not exited within
    ``wait`` seconds (the last ones may still be on their way out)."""
    for _ in range(int(wait * 2)):
        members = [p for p in os.listdir("/proc") if p.isdigit() and _group_of(p) == group]
        if not members:
            return []
        time.sleep(0.5)
    return [_command_line(p) for p in members]


def _group_of(pid):
    with contextlib.suppress(OSError):
        return os.getpgid(int(pid))


def _command_line(pid):
    with contextlib.suppress(OSError), open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read().replace(b"\0", b" ").decode(errors="replace")
    return pid


@pytest.mark.slow
def test_the_loopback_recipe_runs_as_written(tmp_path):
    """deploy/README.md's recipe: server, process pool, deploy, process worker, and
    the daily pipeline with its default (process-based) LocalCluster."""
    root = _copy_of_the_repository(tmp_path / "repo")
    home = tmp_path / "home"
    home.mkdir()
    script = loopback_recipe().replace("4200", str(_free_port()))
    assert script.count("--watch") == 2 and "--pool distboost-process) &" in script
    log = tmp_path / "recipe.log"
    with log.open("w") as out:  # not a pipe: the server and worker would hold it open
        recipe = subprocess.Popen(
            ["bash", "-e", "-c", script],
            env=_fresh_environment(home),
            cwd=root,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            recipe.wait(timeout=720)
            left = _still_running(recipe.pid)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(recipe.pid, signal.SIGKILL)  # whatever the recipe left running
    output = log.read_text()
    assert recipe.returncode == 0, output
    assert not left, f"the recipe left running: {left}\n{output}"
    assert output.count("Flow run finished successfully in 'Completed'") == 2, output
    assert "No flow runs found" not in output  # the daily schedule made its runs
    assert (root / "runs" / "daily" / "report" / "report.html").is_file()
    assert (root / "runs" / "daily" / "model" / "model.json").is_file()
    assert (root / "runs" / "x" / "schema.json").is_file()


# ------------------------------------------------- on a real PostgreSQL database
TINY_RUN = {  # the daily deployment's own parameters, plus a small, quick fit
    "params": {"n_estimators": 3, "max_depth": 2},
    "shap_rows": 50,
    "cluster": {"n_workers": 1, "processes": False, "dashboard_address": None},
}


def _started(command, env, cwd, log):
    """A process in a session of its own, its output in ``log`` (not a pipe)."""
    with open(log, "w") as out:
        return subprocess.Popen(command, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)


def _stop_group(process):
    """SIGTERM to the process group, SIGKILL to whatever is left after 20 s."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _prefect_server(stack, env, cwd, log):
    """``prefect server start`` as deploy/ runs it, stopped when ``stack`` closes;
    its API URL once it answers."""
    import httpx

    port = _free_port()
    server = _started(["prefect", "server", "start", "--host", "127.0.0.1", "--port",
                       str(port)], env, cwd, log)
    stack.callback(_stop_group, server)
    api = f"http://127.0.0.1:{port}/api"
    for _ in range(600):  # a guard against a hang, not a time limit: 5 minutes
        assert server.poll() is None, log.read_text()
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{api}/health", timeout=2).status_code == 200:
                return api
        time.sleep(0.5)
    raise AssertionError(f"no Prefect API at {api} after 5 minutes:\n{log.read_text()}")


def _daily_runs(api):
    """The daily deployment (with its schedules) and its flow runs, from the API."""
    import httpx

    deployment = httpx.get(f"{api}/deployments/name/distboost-pipeline/daily", timeout=30)
    deployment.raise_for_status()
    runs = httpx.post(f"{api}/flow_runs/filter", timeout=30, json={
        "deployments": {"id": {"any_": [deployment.json()["id"]]}}})
    runs.raise_for_status()
    return deployment.json(), runs.json()


def _states_in_the_database(pg):
    """(deployment name, state type) of every flow run, read from PostgreSQL itself."""
    import asyncio

    import asyncpg

    async def read():
        connection = await asyncpg.connect(pg.url("postgresql"))
        try:
            return await connection.fetch(
                "SELECT d.name, r.state_type FROM flow_run r JOIN deployment d "
                "ON r.deployment_id = d.id")
        finally:
            await connection.close()

    return [(name, str(state)) for name, state in asyncio.run(read())]


@pytest.mark.slow
@pytest.mark.postgres
def test_daily_deployment_completes_on_postgresql(tmp_path):
    """Prefect's production set-up on loopback: a Prefect server on a real
    PostgreSQL, deploy/setup.sh (wait for the API, make the pool, deploy), a
    process worker, the daily deployment run to Completed; then the server
    restarted with an empty home finds the deployment, its schedule and the run
    in the database."""
    if (reason := _postgres.missing()) is not None:
        pytest.skip(reason)
    root = _copy_of_the_repository(tmp_path / "repo", n_rows=300)
    env = _fresh_environment(tmp_path / "home")
    env.update(DO_NOT_TRACK="1", PREFECT_SERVER_ANALYTICS_ENABLED="false",
               PREFECT_UI_ENABLED="false", PREFECT_HOME=str(tmp_path / "home" / "prefect"),
               PREFECT_WORKER_QUERY_SECONDS="1")  # the worker's poll: 10 s by default
    with _postgres.running() as pg, contextlib.ExitStack() as stack:
        env["PREFECT_API_DATABASE_CONNECTION_URL"] = pg.url()
        with contextlib.ExitStack() as first_server:
            env["PREFECT_API_URL"] = _prefect_server(first_server, env, root,
                                                     tmp_path / "server.log")
            setup = subprocess.run(["sh", "deploy/setup.sh"], env=env, cwd=root,
                                   capture_output=True, text=True, timeout=600, check=False)
            assert setup.returncode == 0, setup.stdout + setup.stderr
            worker = _started(["prefect", "worker", "start", "--pool", POOL], env, root,
                              tmp_path / "worker.log")
            stack.callback(_stop_group, worker)
            run = subprocess.run(
                ["prefect", "deployment", "run", "distboost-pipeline/daily", "--watch",
                 "--watch-interval", "1", "--params", json.dumps(TINY_RUN)],
                env=env, cwd=root, capture_output=True, text=True, timeout=600, check=False)
            assert "Flow run finished successfully in 'Completed'" in run.stdout, (
                run.stdout + run.stderr + (tmp_path / "worker.log").read_text())
        assert ("daily", "COMPLETED") in _states_in_the_database(pg)
        # a new server on the same database, with a home it has never seen
        env["PREFECT_HOME"] = str(tmp_path / "home" / "prefect-after-restart")
        api = _prefect_server(stack, env, root, tmp_path / "server-restarted.log")
        deployment, runs = _daily_runs(api)
        assert [s["schedule"]["cron"] for s in deployment["schedules"]] == ["0 3 * * *"]
        assert "COMPLETED" in {r["state_type"] for r in runs}
        assert "SCHEDULED" in {r["state_type"] for r in runs}  # the next 03:00 UTC runs
    assert (root / "runs" / "daily" / "report" / "report.html").is_file()


def test_setup_fails_loudly_without_a_server(tmp_path):
    """deploy/setup.sh gives up, saying why, when the Prefect API does not answer
    (no ``work-pool create ... || true`` that hides it)."""
    env = _fresh_environment(tmp_path)
    env.update(PREFECT_API_URL=f"http://127.0.0.1:{_free_port()}/api", PREFECT_SETUP_TIMEOUT="2")
    setup = subprocess.run(["sh", str(DEPLOY / "setup.sh")], env=env, cwd=fx.REPO,
                           capture_output=True, text=True, timeout=60, check=False)
    assert setup.returncode == 1
    assert "did not answer within 2 s" in setup.stderr
    assert "deploy" not in setup.stdout
