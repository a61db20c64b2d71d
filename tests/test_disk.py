"""Out of core on a disk without room: files get their space up front, so a full
disk is a ``DiskSpaceError`` naming the directory (never a worker killed by
SIGBUS), and a fit refuses, before any binning, workers whose local directory
cannot hold their share.

The small disk is a real 2 MiB tmpfs mounted under the test's folder (as root;
the tests that need it are skipped where mounting is not permitted).
"""

import errno
import os
import subprocess
import time

import dask.array as da
import numpy as np
import pytest

import distboost as db
from distboost.engine import disk
from distboost.engine import spill as _spill
from distboost.engine.buffers import DiskBuffers


@pytest.fixture(scope="module")
def tiny_disk(tmp_path_factory):
    """A 2 MiB tmpfs: a real file system that fills up."""
    where = tmp_path_factory.mktemp("tiny") / "disk"
    where.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(where)],
                             capture_output=True, text=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.strip()}")
    yield where
    subprocess.run(["umount", "-l", str(where)], check=False)


def test_allocate_reserves_the_space_up_front(tmp_path, monkeypatch):
    with open(tmp_path / "a", "wb+") as f:
        disk.allocate(f.fileno(), 3 * 2**20, str(tmp_path))
        st = os.fstat(f.fileno())
        assert st.st_size == 3 * 2**20 and st.st_blocks * 512 >= 3 * 2**20

    def unsupported(fd, offset, length):
        raise OSError(errno.EOPNOTSUPP, "not supported")

    monkeypatch.setattr(os, "posix_fallocate", unsupported, raising=False)
    with open(tmp_path / "b", "wb+") as f:  # zeros written instead
        disk.allocate(f.fileno(), 2**20 + 5, str(tmp_path))
        f.seek(0)
        assert f.read() == bytes(2**20 + 5)


def test_a_full_disk_is_an_error_naming_the_directory(tiny_disk):
    buffers = DiskBuffers(str(tiny_disk))
    kept = buffers.get("codes", (2**20,), np.uint8)  # 1 MiB fits
    kept[:] = 7
    with pytest.raises(db.DiskSpaceError, match=(rf"out of core: no room in {tiny_disk} for "
                                                 r"1\.5 MiB more of binned rows \(\d\.\d MiB "
                                                 r"free there\)\. Give the workers a local "
                                                 r"directory with room")) as info:
        buffers.get("stats", (3 * 2**18,), np.float16)
    assert info.value.errno == errno.ENOSPC and info.value.directory == str(tiny_disk)
    assert os.listdir(tiny_disk) == [] and kept[-1] == 7  # nothing left; the first array intact
    del buffers, kept  # its space back for the tests below


class _FakeClient:
    def __init__(self, free):
        self.free, self.asked = free, None

    def run(self, fn, workers, on_error):
        self.asked = workers
        return {w: ("/scratch", self.free) for w in workers}


def test_check_room_asks_the_workers_out_of_core_will_use():
    mib = 2**20
    workers = {"tcp://a:1": {"memory_limit": 100 * mib, "metrics": {"memory": 10 * mib}},
               "tcp://b:2": {"memory_limit": 0, "metrics": {"memory": 10 * mib}}}
    client = _FakeClient(free=50 * mib)
    disk.check_room(client, workers, _spill.Placement(False, 80 * mib))
    assert client.asked is None  # in memory: no disk asked about
    with pytest.raises(db.DiskSpaceError, match=(r"worker tcp://a:1 would keep about 80\.0 MiB "
                                                 r"of binned training rows in its local "
                                                 r"directory /scratch, which has 50\.0 MiB free")):
        disk.check_room(client, workers, _spill.Placement("auto", 80 * mib))
    assert client.asked == ["tcp://a:1"]  # "auto" on b (no memory limit): in memory
    disk.check_room(_FakeClient(free=90 * mib), workers, _spill.Placement(True, 80 * mib))


@pytest.fixture(scope="module")
def tiny_client(tiny_disk):
    """One worker whose local directory is on the tiny disk."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=None,
                      local_directory=str(tiny_disk), memory_limit="2GiB") as cluster, \
            Client(cluster, set_as_default=False) as client:
        yield client


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120_000, 6))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    return da.from_array(X, chunks=(30_000, 6)), da.from_array(y, chunks=30_000)


def test_the_fit_refuses_a_worker_without_room_before_binning(tiny_client, tiny_disk, rows):
    (worker,) = tiny_client.scheduler_info()["workers"]
    with pytest.raises(db.DiskSpaceError, match=(rf"worker {worker} would keep about 9\.2 MiB "
                                                 rf"of binned training rows in its local "
                                                 rf"directory {tiny_disk}/\S+, which has "
                                                 r"\d\.\d MiB free\. Give the workers")):
        db.GradientBoostingClassifier(n_estimators=2, out_of_core=True,
                                      client=tiny_client).fit(*rows)


def test_out_of_core_on_a_full_disk_fails_at_once_naming_the_directory(tiny_client, tiny_disk,
                                                                        rows, monkeypatch):
    """With the fit-start check out of the way, binning itself meets the full
    disk: a ``DiskSpaceError`` from the worker, which stays alive."""
    from distboost.engine import dask as dask_engine

    monkeypatch.setattr(dask_engine, "check_room", lambda *args: None)
    pids = tiny_client.run(os.getpid)
    t0 = time.perf_counter()
    with pytest.raises(db.DiskSpaceError, match=(rf"out of core: no room in {tiny_disk}/\S+ "
                                                 r"\(the local directory of worker tcp://\S+\) "
                                                 r"for \d\.\d MiB more of binned rows")):
        db.GradientBoostingClassifier(n_estimators=2, out_of_core=True,
                                      client=tiny_client).fit(*rows)
    assert time.perf_counter() - t0 < 20
    assert tiny_client.run(os.getpid) == pids  # no worker died (no SIGBUS)
