"""One rule for claiming an output folder, and one writer at a time (``flows._output``)."""

try:
    import _flows_fixtures as fx
except ImportError:  # tests/ imported as a package
    from tests import _flows_fixtures as fx

import os
import re
import subprocess
import sys

import pytest

from flows._output import LOCK, OutputInUse, claim_output, has_marker, locked_output, only_parquet


def test_a_flow_writes_into_nothing_or_an_empty_folder(tmp_path):
    for output in (tmp_path / "absent", tmp_path):
        assert claim_output(output, "a run", has_marker("run.json"), False) == output


def test_a_folder_the_flow_wrote_is_replaced_only_when_asked(tmp_path):
    (tmp_path / "run.json").write_text("{}")
    with pytest.raises(FileExistsError, match="already exists; pass --force"):
        claim_output(tmp_path, "a run", has_marker("run.json"), False)
    assert claim_output(tmp_path, "a run", has_marker("run.json"), True) == tmp_path


def test_anything_else_is_never_claimed(tmp_path):
    (tmp_path / "thesis.tex").write_text("...")
    for overwrite in (False, True):
        with pytest.raises(FileExistsError, match="exists and is not a run; refusing"):
            claim_output(tmp_path, "a run", has_marker("run.json"), overwrite)
        with pytest.raises(FileExistsError, match=r"holds more than predictions; refusing"):
            claim_output(tmp_path, "predictions", only_parquet, overwrite,
                         refuse="holds more than predictions; refusing to replace it")
        with pytest.raises(FileExistsError, match="is a file, not a folder"):
            claim_output(tmp_path / "thesis.tex", "a run", has_marker("run.json"), overwrite)
    assert (tmp_path / "thesis.tex").read_text() == "..."


def test_part_files_alone_are_the_flows_own(tmp_path):
    (tmp_path / "part-00000.parquet").write_bytes(b"")
    assert only_parquet(tmp_path)
    (tmp_path / "mine.parquet").write_bytes(b"")  # a user's Parquet file is not a part file
    assert not only_parquet(tmp_path)
    (tmp_path / "mine.parquet").unlink()
    (tmp_path / "notes.txt").write_text("mine")
    assert not only_parquet(tmp_path)


HOLD = ("import sys, time\nfrom flows._output import locked_output\n"
        "with locked_output(sys.argv[1]):\n    print('held', flush=True)\n    time.sleep(300)\n")


def test_one_process_writes_a_folder_and_a_crash_frees_it(tmp_path):
    out = tmp_path / "run"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], cwd=fx.REPO,
                              env=fx.subprocess_env(tmp_path), stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        expected = (rf"^{re.escape(str(out))} is being written by another distboost training "
                    rf"\(PID {holder.pid}\); one at a time")
        with pytest.raises(OutputInUse, match=expected), locked_output(out):
            pass
        assert claim_output(out, "a run", has_marker("run.json"), False) == out  # lock only
    finally:
        holder.kill()  # SIGKILL: nothing of its own runs on the way out
        holder.wait(timeout=30)
    with locked_output(out), locked_output(out):  # the system freed it; shared in a process
        assert (out / LOCK).read_text() == f"{os.getpid()}\n"
    assert list(out.iterdir()) == []  # the lock file goes with the lock
    with locked_output(tmp_path / "new") as new:
        assert new.is_dir()
    assert not new.exists()  # a folder the lock made, left empty, goes too
