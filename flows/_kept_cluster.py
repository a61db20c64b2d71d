"""One local Dask cluster kept running for a series of commands.

``distboost cluster start`` runs ``python -m flows._kept_cluster`` in the
background: a LocalCluster (scheduler and worker processes, the ``/distboost``
dashboard page) that writes its address to a state file
(``state_path()``: ``$XDG_RUNTIME_DIR/distboost/cluster.json``, else
``~/.cache/distboost/cluster.json``) and runs until ``distboost cluster stop``
(SIGTERM) closes it and removes the file. Every other command that computes
finds the file (``running()``) and connects to that cluster instead of
starting its own. A file whose process is gone (a crash, a reboot) is stale:
``running()`` says so, removes it and returns None.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

START_SECONDS = 120
"""How long ``start`` waits for the cluster to write its state file."""
STOP_SECONDS = 30
"""How long ``stop`` waits for the cluster to close before killing it."""


def _say(message: str) -> None:
    print(f"distboost: {message}", file=sys.stderr, flush=True)


def state_path() -> Path:
    """Where the running cluster's state file lives."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) if runtime else Path("~/.cache").expanduser()
    return base / "distboost" / "cluster.json"


def _ours(pid: int) -> bool:
    """Whether process ``pid`` runs and is a kept cluster (not a reused pid)."""
    import psutil

    try:
        return any("flows._kept_cluster" in part for part in psutil.Process(pid).cmdline())
    except (psutil.Error, OSError):
        return False


def read_state(path: Path | None = None) -> dict | None:
    """The state file's content, or None where there is none (or it is unreadable)."""
    path = path or state_path()
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) and "address" in state and "pid" in state else None


def running(path: Path | None = None, quiet: bool = False) -> dict | None:
    """The state of the kept cluster if it runs; a stale file is removed, with a message."""
    path = path or state_path()
    state = read_state(path)
    if state is None:
        return None
    if not _ours(int(state["pid"])):
        if not quiet:
            _say(f"ignoring {path}: the distboost cluster it names ({state['address']}, "
                 f"process {state['pid']}) is no longer running; removed it")
        path.unlink(missing_ok=True)
        return None
    return state


def start(workers: int, threads_per_worker: int, dashboard_address: str,
          memory_limit: str = "auto") -> dict:
    """Start the kept cluster in the background (or find the running one); its state."""
    path = state_path()
    state = running(path)
    if state is not None:
        _say(f"a distboost cluster already runs at {state['address']}")
        return state
    path.parent.mkdir(parents=True, exist_ok=True)
    log = path.with_name("cluster.log")
    command = [sys.executable, "-m", "flows._kept_cluster", str(path), str(workers),
               str(threads_per_worker), dashboard_address or "", memory_limit]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [
        str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH")]))}
    with open(log, "w") as out:
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                start_new_session=True, env=env)
    return _wait_started(proc, path, log)


def _wait_started(proc: subprocess.Popen, path: Path, log: Path) -> dict:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        state = read_state(path)
        if state is not None and state["pid"] == proc.pid:
            return state
        if proc.poll() is not None:
            tail = log.read_text()[-2000:].strip()
            raise RuntimeError(f"the distboost cluster did not start (exit status "
                               f"{proc.returncode}); its log {log} ends:\n{tail}")
        time.sleep(0.2)
    proc.terminate()
    raise TimeoutError(f"the distboost cluster wrote no address in {START_SECONDS} s; "
                       f"see its log {log}")


def stop() -> dict | None:
    """Stop the kept cluster (SIGTERM, then SIGKILL after ``STOP_SECONDS``); its
    last state, or None where none ran."""
    path = state_path()
    state = running(path)
    if state is None:
        return None
    pid = int(state["pid"])
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_SECONDS
    while _ours(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if _ours(pid):
        os.killpg(pid, signal.SIGKILL)  # its own session: the workers too
    path.unlink(missing_ok=True)
    return state


def workers(address: str) -> list[dict[str, Any]]:
    """The workers of the scheduler at ``address``: name, threads, memory limit."""
    from distributed import Client

    with Client(address, timeout="10s", set_as_default=False) as client:
        info = client.scheduler_info(n_workers=-1)["workers"] \
            if _takes_n_workers(client) else client.scheduler_info()["workers"]
    return [{"address": a, "threads": w.get("nthreads"), "memory_limit": w.get("memory_limit")}
            for a, w in sorted(info.items())]


def _takes_n_workers(client: Any) -> bool:
    import inspect

    return "n_workers" in inspect.signature(client.scheduler_info).parameters


def _write_state(path: Path, state: dict) -> None:
    staging = path.with_name(f".{path.name}.{os.getpid()}")
    staging.write_text(json.dumps(state, indent=1) + "\n")
    os.replace(staging, path)


def serve(path: Path, n_workers: int, threads_per_worker: int, dashboard_address: str,
          memory_limit: str) -> None:
    """Run the cluster until SIGTERM or SIGINT; the state file exists meanwhile."""
    from distributed import LocalCluster

    from distboost.dashboard import PAGE, SCHEDULER_KWARGS

    done = threading.Event()
    for name in ("SIGTERM", "SIGINT", "SIGHUP"):
        signal.signal(getattr(signal, name), lambda *_: done.set())
    with LocalCluster(n_workers=n_workers, threads_per_worker=threads_per_worker,
                      dashboard_address=dashboard_address or ":0",
                      memory_limit=memory_limit, silence_logs=logging.ERROR,
                      scheduler_kwargs=SCHEDULER_KWARGS) as cluster:
        link = cluster.dashboard_link
        _write_state(path, {"pid": os.getpid(), "address": cluster.scheduler_address,
                            "dashboard": link, "live": link.replace("/status", PAGE),
                            "workers": n_workers, "threads_per_worker": threads_per_worker,
                            "started": time.strftime("%Y-%m-%d %H:%M:%S")})
        try:
            while not done.wait(1.0):
                pass
        finally:
            state = read_state(path)
            if state is not None and state["pid"] == os.getpid():
                path.unlink(missing_ok=True)


if __name__ == "__main__":  # pragma: no cover - run by start(), tested through it
    where, n, threads, dashboard, memory = sys.argv[1:6]
    serve(Path(where), int(n), int(threads), dashboard, memory)
