"""Prefect's temporary API server dies with the command that started it
(``flows._prefect_server``); the whole command is in ``test_cli.py``."""

try:
    import _flows_fixtures as fx
except ImportError:  # tests/ imported as a package
    from tests import _flows_fixtures as fx

import os
import signal
import subprocess
import sys

import psutil

from flows import _prefect_server

WATCHED = ("import os, subprocess, sys\n"
           "code = 'import os, sys, time; from flows._prefect_server import watch_parent; ' \\\n"
           "       f'watch_parent({os.getpid()}, every=0.1); print(os.getpid(), flush=True); ' \\\n"
           "       'time.sleep(300)'\n"
           "subprocess.Popen([sys.executable, '-c', code])\n"
           "import time; time.sleep(300)\n")
"""A process whose child watches it (no parent-death signal: the other systems' way)."""


def test_a_watched_server_stops_when_its_parent_is_killed():
    parent = subprocess.Popen([sys.executable, "-c", WATCHED], cwd=fx.REPO,
                              env=fx.subprocess_env(fx.shared_prefect_home()),
                              stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        child = psutil.Process(int(parent.stdout.readline()))
        assert child.ppid() == parent.pid
        parent.kill()
        parent.wait(timeout=30)
        assert fx.process_gone(child, within=5)
    finally:
        os.killpg(parent.pid, signal.SIGKILL)


def test_the_server_runs_uvicorn_with_the_commands_pid(monkeypatch):
    command = _prefect_server.server_command(4321)
    assert command[1:5] == ["-m", "flows._prefect_server", "--parent", str(os.getpid())]
    assert command[5] == "uvicorn" and command[command.index("--port") + 1] == "4321"
    linux = sys.platform.startswith("linux")
    assert _prefect_server.arm_death_signal(0) == linux  # 0: none (this is pytest's process)
    monkeypatch.setattr(sys, "platform", "darwin")
    assert not _prefect_server.arm_death_signal(0)  # elsewhere the watch alone
