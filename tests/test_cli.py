"""The distboost command line: arguments, environment, exit codes, and the
whole demo end to end in a child process."""

try:
    import _flows_fixtures as fx
except ImportError:  # tests/ imported as a package
    from tests import _flows_fixtures as fx

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from flows import cli


def test_parser_reads_every_command():
    args = cli.build_parser().parse_args(
        [
            "train",
            "data",
            "--out",
            "run",
            "--param",
            "max_depth=3",
            "--param",
            "loss=huber",
            "--scheduler",
            "tcp://10.0.0.5:8786",
        ]
    )
    assert args.param == [("max_depth", 3), ("loss", "huber")]
    assert args.scheduler == "tcp://10.0.0.5:8786"
    args = cli.build_parser().parse_args(["demo"])
    assert (args.out, args.dataset, args.force) == ("distboost-demo", "hastie", False)
    args = cli.build_parser().parse_args(
        ["prepare", "raw", "--out", "d", "--target", "y", "--categorical", "a", "b"]
    )
    assert args.categorical == ["a", "b"] and args.task == "auto" and args.batch_rows == 100_000
    args = cli.build_parser().parse_args(
        ["prepare", "raw", "--out", "d", "--target", "y", "--batch-rows", "5000"]
    )
    assert args.batch_rows == 5000
    args = cli.build_parser().parse_args(["explain", "m.json", "data", "--out", "shap"])
    assert (args.model, args.data, args.out, args.force) == ("m.json", "data", "shap", False)
    args = cli.build_parser().parse_args(["evaluate", "d", "--model", "m", "--out", "r",
                                          "--shap-rows", "500"])
    assert args.shap_rows == 500
    for command in ("evaluate", "pipeline", "predict", "explain", "report"):
        assert command in cli.COMMANDS


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main([])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        cli.main(["train", "data", "--out", "r", "--param", "no-equals-sign"])
    assert exc.value.code == 2
    assert "expected KEY=VALUE" in capsys.readouterr().err


def test_prefect_environment_keeps_user_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    env = {"PREFECT_HOME": "/somewhere", "DO_NOT_TRACK": "0"}
    cli.prefect_environment(environ=env)
    assert env["PREFECT_HOME"] == "/somewhere" and env["DO_NOT_TRACK"] == "0"
    assert env["PREFECT_SERVER_ANALYTICS_ENABLED"] == "false"
    assert env["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"] == "120"
    assert not Path("/somewhere").exists()
    fresh = {}
    cli.prefect_environment(environ=fresh)
    assert fresh["PREFECT_HOME"] == str(tmp_path / ".distboost" / "prefect")
    assert Path(fresh["PREFECT_HOME"]).is_dir()  # Prefect would not make its parents


def _distboost_command() -> list[str]:
    """The installed ``distboost`` script, as the README runs it."""
    script = Path(sys.executable).parent / "distboost"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "flows.cli"]


@pytest.mark.slow
def test_main_command_on_a_fresh_home(tmp_path):
    """The README's main command with an empty HOME and no Prefect settings."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "DASK_"))}
    env.update(HOME=str(home), PYTHONPATH=str(fx.REPO))
    out = tmp_path / "demo"
    result = subprocess.run(
        [*_distboost_command(), "demo", "--out", str(out), "--rows", "600", "--rounds", "3"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == str(out / "report" / "report.html")
    noisy = [line for line in result.stderr.splitlines()
             if re.search(r"warn|traceback|error|exception", line, re.IGNORECASE)]
    assert noisy == [], result.stderr
    assert (home / ".distboost" / "prefect").is_dir()


def test_bad_input_exits_1_with_a_message(tmp_path, capsys):
    assert cli.main(["report", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("distboost: error: ") and "no evaluation.json" in err


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    # under a hidden folder, as in ~/.cache: prepare reads the demo's raw/ there
    out = tmp_path_factory.mktemp("cli") / ".cache" / "demo"
    result = fx.run_cli(
        [
            "demo",
            "--out",
            str(out),
            "--rows",
            "2000",
            "--rounds",
            "10",
            "--workers",
            "1",
            "--dashboard-address",
            ":0",
        ]
    )
    return out, result


def test_demo_runs_the_pipeline_and_prints_the_report_last(demo):
    out, result = demo
    assert result.returncode == 0, result.stderr
    last = result.stdout.strip().splitlines()[-1]
    assert last == str(out / "report" / "report.html") and Path(last).is_file()
    assert "started a local Dask cluster (1 workers)" in result.stderr
    assert "Dask dashboard: http://" in result.stderr
    assert "training live: http://" in result.stderr  # the demo trains
    assert (out / "raw").is_dir() and (out / "model" / "model.json").is_file()


def test_demo_refuses_to_redo_without_force(demo):
    out, _ = demo
    again = fx.run_cli(["demo", "--out", str(out)], timeout=120)
    assert again.returncode == 1
    assert "already holds a demo; pass --force" in again.stderr


def test_report_command_rerenders(demo, capsys):
    out, _ = demo
    (out / "report" / "report.html").unlink()
    assert cli.main(["report", str(out / "report")]) == 0
    assert capsys.readouterr().out.strip() == str(out / "report" / "report.html")
    html = (out / "report" / "report.html").read_text()
    assert html.count("data:image/png;base64,") >= 9


def test_missing_input_exits_1_at_once(tmp_path):
    result = fx.run_cli(
        [
            "prepare",
            str(tmp_path / "nothing.csv"),
            "--out",
            str(tmp_path / "o"),
            "--target",
            "y",
            "--workers",
            "1",
            "--dashboard-address",
            ":0",
        ]
    )
    assert result.returncode == 1
    assert "distboost: error: input" in result.stderr and "does not exist" in result.stderr
    assert "Traceback" not in result.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def prefect_server(home: Path):
    """``prefect server start`` on a free loopback port; yields its API URL."""
    api = f"http://127.0.0.1:{_free_port()}/api"
    port = api.split(":")[2].split("/")[0]
    env = fx.subprocess_env(home)
    server = subprocess.Popen(
        [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", port],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 240
        while True:
            assert server.poll() is None, "prefect server exited"
            assert time.monotonic() < deadline, "prefect server did not become healthy"
            try:
                with urllib.request.urlopen(f"{api}/health", timeout=2):
                    break
            except OSError:
                time.sleep(0.5)
        yield api
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)


@pytest.mark.slow
def test_flow_run_url_is_printed_with_a_prefect_server(tmp_path):
    raw = fx.hastie_csv(tmp_path / "raw", n_rows=300, n_files=2)
    home = tmp_path / "prefect"
    home.mkdir()
    with prefect_server(home) as api:
        env = fx.subprocess_env(home)
        env["PREFECT_API_URL"] = api
        result = subprocess.run(
            [sys.executable, "-m", "flows.cli", "--no-progress", "prepare", str(raw),
             "--out", str(tmp_path / "data"), "--target", "y", "--categorical", "colour",
             "--workers", "1", "--dashboard-address", ":0"],
            env=env, cwd=fx.REPO, capture_output=True, text=True, timeout=300, check=False,
        )
        assert result.returncode == 0, result.stderr
        ui = api.removesuffix("/api")
        match = re.search(rf"distboost: Prefect flow run: {ui}/runs/flow-run/([0-9a-f-]{{36}})",
                          result.stderr)
        assert match, result.stderr
        with urllib.request.urlopen(f"{api}/flow_runs/{match.group(1)}", timeout=10) as r:
            run = json.loads(r.read())
    assert run["state_type"] == "COMPLETED" and run["name"]


def test_no_flow_run_url_without_a_prefect_server(demo):
    _, result = demo
    assert "Prefect flow run:" not in result.stderr


# ------------------------------------------------- one training per folder, no server left
def _prefect_server_of(pid: int):
    """The Prefect API server the command ``pid`` started, once it answers; else None."""
    import psutil

    for child in psutil.Process(pid).children(recursive=True):
        command = child.cmdline()
        if "flows._prefect_server" in command:
            port = command[command.index("--port") + 1]
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=2):
                    return child
            except OSError:
                return None
    return None


def test_one_training_per_folder_and_a_killed_command_leaves_no_prefect_server(tmp_path):
    """A second ``distboost train`` into a folder a running one writes is refused
    at once, naming it; ``kill -9`` of the first takes its Prefect server along
    within seconds, and frees the folder."""
    from flows._output import LOCK, locked_output

    data = fx.prepared_folder(fx.hastie_csv(tmp_path / "raw", n_rows=300, n_files=2),
                              tmp_path / "data", categorical=["colour"])
    run = tmp_path / "run"
    args = [sys.executable, "-m", "flows.cli", "--no-progress", "train", str(data), "--out",
            str(run), "--param", "n_estimators=100000", "--workers", "1",
            "--param", "early_stopping_rounds=null",  # a training that goes on till killed
            "--dashboard-address", ":0"]
    env = fx.subprocess_env(fx.shared_prefect_home())
    first = subprocess.Popen(args, env=env, cwd=fx.REPO, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    server = second = None
    try:
        deadline = time.monotonic() + 300
        while not (run / LOCK).is_file():
            assert first.poll() is None and time.monotonic() < deadline, "no lock taken"
            time.sleep(0.05)
        second = subprocess.Popen(args, env=env, cwd=fx.REPO, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True, start_new_session=True)
        while server is None:  # the first's server starts meanwhile
            assert first.poll() is None and time.monotonic() < deadline, "no Prefect server"
            server = _prefect_server_of(first.pid)
            time.sleep(0.2)
        assert os.getpgid(server.pid) != os.getpgid(first.pid)  # a process group of its own
        assert (run / LOCK).read_text() == f"{first.pid}\n"
        refused = second.communicate(timeout=300)[1]
        assert second.returncode == 1, refused
        assert (f"distboost: error: {run} is being written by another distboost training "
                f"(PID {first.pid})") in refused
        assert "Dask" not in refused and "Traceback" not in refused  # refused before starting
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
        assert fx.process_gone(server, within=10), server.cmdline()
    finally:
        for proc in filter(None, (first, second)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # its Dask workers too
        if server is not None and not fx.process_gone(server, within=0):
            server.kill()
    with locked_output(run):  # the killed command's lock went with it
        assert (run / LOCK).read_text() == f"{os.getpid()}\n"
