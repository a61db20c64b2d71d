"""Prefect's temporary API server, run so that it dies with the command that started it.

Without ``PREFECT_API_URL`` Prefect starts a temporary API server (uvicorn,
about 190 MB) the first time a flow needs one, and stops it at exit. A
command killed with SIGKILL runs no exit handler: its server lived on,
re-parented to PID 1. The command line registers ``LocalServer`` in its
place before a flow runs (``start_local_server``): the same uvicorn command,
run by this module (``python -m flows._prefect_server --parent PID uvicorn
ARGS...``) in a child process that

* has a process group of its own: a Ctrl-C at the terminal reaches the
  command alone, which stops the server on its way out as before;
* gets SIGTERM when the command dies, whatever kills it (Linux: a
  parent-death signal, ``prctl(PR_SET_PDEATHSIG)``, which it sets first
  thing, then checks that its parent is still the command);
* watches its parent too: when the command is gone (its parent's PID
  changes) it stops, within ``WATCH_SECONDS``; on systems without
  ``prctl`` this alone stops it.

Registering it uses two private names of Prefect (``SubprocessASGIServer``'s
``_instances``, the table of its servers that Prefect's own test harness
fills the same way, and its ``_run_uvicorn_command``); where a Prefect lacks
them, Prefect starts its server itself, as before.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable

WATCH_SECONDS = 0.5
"""Seconds between the server's looks at whether its parent is still there."""

GRACE_SECONDS = 5.0
"""Seconds the server has to stop by itself once its parent is gone."""

PR_SET_PDEATHSIG = 1
"""``prctl`` option: the signal a process gets when its parent thread exits (linux/prctl.h)."""


# ----------------------------------------------------------- in the command
def start_local_server() -> bool:
    """Start Prefect's temporary API server now, in this thread, as a child that
    dies with this process; False where it is not Prefect's to start (an API URL
    is set, one already runs) or this Prefect cannot take it (it then starts
    its own when a flow needs it, as before).

    Call it from the main thread: a parent-death signal follows the thread
    that started the child.
    """
    server_class = _prefect_server_class()
    if server_class is None:
        return False
    from prefect.settings import PREFECT_API_URL

    if PREFECT_API_URL.value() or None in server_class._instances:
        return False
    server = _local_server_class(server_class)()  # registered as Prefect's (port None)
    server.start()
    return True


def _prefect_server_class():
    """Prefect's ``SubprocessASGIServer`` if it has what ``LocalServer`` needs, else None."""
    try:
        from prefect.server.api.server import SubprocessASGIServer
    except ImportError:
        return None
    if not (isinstance(getattr(SubprocessASGIServer, "_instances", None), dict)
            and callable(getattr(SubprocessASGIServer, "_run_uvicorn_command", None))
            and callable(getattr(SubprocessASGIServer, "start", None))):
        return None
    return SubprocessASGIServer


def _local_server_class(base: type) -> type:
    class LocalServer(base):
        """Prefect's temporary server, run by ``server_command`` (its own process
        group, a parent-death signal, a watch on its parent)."""

        def _run_uvicorn_command(self) -> subprocess.Popen:
            return subprocess.Popen(server_command(self.port), env=server_environment(),
                                    start_new_session=True)

    return LocalServer


def server_command(port: int) -> list[str]:
    """The command of a temporary API server on ``127.0.0.1:port`` (what Prefect runs)."""
    import prefect

    uvicorn = ["uvicorn", "--app-dir", str(prefect.__module_path__.parent), "--factory",
               "prefect.server.api.server:create_app", "--host", "127.0.0.1", "--port",
               str(port), "--log-level", "error", "--lifespan", "on"]
    return [sys.executable, "-m", "flows._prefect_server", "--parent", str(os.getpid()),
            *uvicorn]


def server_environment() -> dict[str, str]:
    """The server's environment: this one, Prefect's current settings, no UI, and
    ``flows`` importable from where this process imported it (a checkout not
    installed: its folder goes last on ``PYTHONPATH``)."""
    import site

    from prefect.settings import get_current_settings

    env = {**os.environ, "PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1",
           "PREFECT__SERVER_FINAL": "1",
           **get_current_settings().to_environment_variables(exclude_unset=True)}
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if here not in [*path, *site.getsitepackages(), site.getusersitepackages()]:
        env["PYTHONPATH"] = os.pathsep.join([*path, here])
    return env


# ------------------------------------------------------------ in the server
def arm_death_signal(signum: int) -> bool:
    """Have the system send ``signum`` to this process when its parent dies
    (Linux's ``prctl``); False where it cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def watch_parent(parent: int, every: float = WATCH_SECONDS, grace: float = GRACE_SECONDS,
                 exit: Callable[[int], None] = os._exit) -> threading.Thread:
    """A daemon thread that stops this process once ``parent`` is no longer its
    parent: SIGTERM to itself (uvicorn stops cleanly), then ``exit(1)`` if it
    still runs ``grace`` seconds later."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(grace)
        exit(1)

    thread = threading.Thread(target=watch, name="distboost-parent-watch", daemon=True)
    thread.start()
    return thread


def main(argv: list[str]) -> None:
    """``--parent PID uvicorn ARGS...``: run uvicorn with ARGS while PID lives."""
    if len(argv) < 3 or argv[0] != "--parent" or argv[2] != "uvicorn":
        raise SystemExit("usage: python -m flows._prefect_server --parent PID uvicorn ARGS...")
    parent = int(argv[1])
    arm_death_signal(signal.SIGTERM)
    if os.getppid() != parent:  # gone before the signal was armed
        raise SystemExit(1)
    watch_parent(parent)
    from uvicorn.main import main as uvicorn

    uvicorn.main(args=argv[3:], prog_name="uvicorn")


if __name__ == "__main__":  # pragma: no cover (run as the server's process)
    main(sys.argv[1:])
