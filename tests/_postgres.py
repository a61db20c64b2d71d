"""A real PostgreSQL server for a test: Debian's binaries, a new cluster in a
temporary folder, on a free loopback port, stopped and removed on exit.

PostgreSQL refuses to run as root; as root the cluster belongs to the ``postgres``
user (Debian's package makes it) and its commands run as that user (``setpriv``).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

INSTALL = "apt-get install -y postgresql (Debian's package; .ci/run installs it)"


@dataclass(frozen=True)
class Postgres:
    """Where the server listens and how to log in."""

    port: int
    user: str
    password: str
    database: str

    def url(self, driver: str = "postgresql+asyncpg") -> str:
        """The SQLAlchemy URL of the database (Prefect's
        ``PREFECT_API_DATABASE_CONNECTION_URL``)."""
        return (f"{driver}://{self.user}:{self.password}@127.0.0.1:{self.port}/"
                f"{self.database}")


def server_binaries() -> Path | None:
    """The folder of the newest installed PostgreSQL's ``initdb`` and ``postgres``."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def missing() -> str | None:
    """Why a server cannot be started here, or None."""
    if server_binaries() is None:
        return f"PostgreSQL's server is not installed: {INSTALL}"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return f"running as root and there is no 'postgres' user to run PostgreSQL: {INSTALL}"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_owner(command: list[str]) -> list[str]:
    """``command`` run as the ``postgres`` user when this process is root."""
    if os.geteuid() != 0:
        return command
    return ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", *command]


@contextlib.contextmanager
def running(database: str = "prefect", timeout: float = 60) -> Iterator[Postgres]:
    """A new PostgreSQL cluster with ``database`` owned by a password-checked user."""
    bin_dir = server_binaries()
    base = Path(tempfile.mkdtemp(prefix="distboost-postgres-"))
    server = None
    try:
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(base, user.pw_uid, user.pw_gid)
        pg = Postgres(_free_port(), "prefect", secrets.token_hex(8), database)
        (base / "password").write_text(pg.password)
        subprocess.run(_as_owner([str(bin_dir / "initdb"), "-D", str(base / "data"),
                                  "-U", pg.user, "--pwfile", str(base / "password"),
                                  "-A", "scram-sha-256", "-E", "UTF8", "--no-sync"]),
                       check=True, capture_output=True, text=True)
        log = (base / "server.log").open("w")
        server = subprocess.Popen(
            _as_owner([str(bin_dir / "postgres"), "-D", str(base / "data"), "-p", str(pg.port),
                       "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={base}",
                       "-c", "fsync=off"]),
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        _wait_until_ready(bin_dir, pg, server, base / "server.log", timeout)
        subprocess.run([str(bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(pg.port),
                        "-U", pg.user, database],
                       env={**os.environ, "PGPASSWORD": pg.password},
                       check=True, capture_output=True, text=True)
        yield pg
    finally:
        if server is not None:
            _stop(server)
        shutil.rmtree(base, ignore_errors=True)


def _wait_until_ready(bin_dir: Path, pg: Postgres, server: subprocess.Popen, log: Path,
                      timeout: float) -> None:
    deadline = time.monotonic() + timeout
    ready = [str(bin_dir / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(pg.port)]
    while subprocess.run(ready, check=False).returncode != 0:
        if server.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"PostgreSQL did not start on port {pg.port}:\n"
                               f"{log.read_text()}")
        time.sleep(0.2)


def _stop(server: subprocess.Popen) -> None:
    """Fast shutdown (SIGINT), then SIGKILL to its process group."""
    with contextlib.suppress(ProcessLookupError):
        server.send_signal(signal.SIGINT)
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(server.pid, signal.SIGKILL)
    server.wait()
