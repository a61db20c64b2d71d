"""The prepared folder's schema as a typed model (``flows._prepared``)."""

import json

import pytest

from flows._prepared import Feature, PreparedSchema, read_schema
from flows._tabular import DataError


def _schema(**changes):
    fields = {"source": "raw/", "target": "y", "task": "classification",
              "target_kind": "integer", "columns_needed": ["x", "colour", "y"],
              "features": [Feature(name="x", kind="numeric"),
                           Feature(name="colour", kind="categorical", categories=["b", "r"])],
              "classes": [-1, 1]}
    return PreparedSchema(**{**fields, **changes})


def test_the_written_schema_reads_back_the_same(tmp_path):
    schema = _schema(split_rows={"train": 7, "validation": 2, "test": 1}, seed=3)
    (tmp_path / "schema.json").write_text(json.dumps(schema.to_dict()))
    assert read_schema(tmp_path) == schema
    assert schema.feature_names == ["x", "colour"] and schema.is_categorical == [False, True]
    written = schema.to_dict()
    assert "categories" not in written["features"][0] and "files" not in written  # not known
    assert written["format"] == "distboost-prepared/1"
    assert _schema(task="regression", target_kind="float", classes=None).to_dict().get(
        "classes") is None
    assert read_schema(tmp_path).classes == [-1, 1]  # whole-number labels stay numbers
    (tmp_path / "schema.json").write_text(json.dumps(_schema(classes=["no", "yes"]).to_dict()))
    assert read_schema(tmp_path).classes == ["no", "yes"]


def test_a_folder_without_or_with_a_broken_schema_is_refused_by_name(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"\(no schema.json\); run `distboost prepare`"):
        read_schema(tmp_path)
    broken = _schema().to_dict()
    broken["task"], broken["features"][1]["kind"] = "clustering", "text"
    del broken["target"]
    (tmp_path / "schema.json").write_text(json.dumps(broken))
    with pytest.raises(DataError) as info:
        read_schema(tmp_path)
    message = str(info.value)
    assert str(tmp_path / "schema.json") in message and "prepare the data again" in message
    assert "target: Field required" in message
    assert ("task: Input should be 'classification', 'regression', 'ranking' or 'survival'"
            in message)
    assert "features.1.kind: Input should be 'numeric' or 'categorical'" in message
