"""One rule for claiming an output folder (``flows._output``)."""

import pytest

from flows._output import claim_output, has_marker, only_parquet


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
