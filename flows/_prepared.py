"""The schema of a prepared data folder (``schema.json``), as a typed model.

The prepare flow infers it from the first rows (``_schema.infer_data_schema``),
completes it from the statistics of every file (categories, classes) and
writes it; train, evaluate, predict and explain read it (``read_schema``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from flows._tabular import DataError

FORMAT = "distboost-prepared/1"


class Feature(BaseModel):
    """One feature column: its name, its kind, and (categorical) its categories
    in the order of their codes (known once the prepare flow has scanned every file)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    kind: Literal["numeric", "categorical"]
    categories: list[str] | None = None


class PreparedSchema(BaseModel):
    """What a prepared folder holds: where it came from, the target and the task,
    the features, and (once written) the classes, the split sizes and how the
    rows were split."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: Literal["distboost-prepared/1"] = FORMAT
    source: str
    target: str
    task: Literal["classification", "regression", "ranking", "survival"]
    target_kind: Literal["float", "integer", "text"]
    """The target's values: numbers (regression), whole numbers or text (class labels)."""
    features: list[Feature]
    columns_needed: list[str]
    """The columns read from each input file: the features, the target, the ids."""
    ids: dict[str, str] | None = None
    """Identifier columns carried into the splits beside the features, never
    features, by name: how each is read ("integer", "float" or "text" from CSV,
    "typed" as Parquet stores it; ``flows._tabular.text_kind``)."""
    classes: list[int] | list[str] | None = None
    group: str | None = None
    """A ranking task's query id column (one of ``ids``; ``flows._queries``)."""
    targets: list[str] | None = None
    """The k >= 2 target columns of a multi-output task, ``target`` the first
    (``flows._targets``); None for one target."""
    event: str | None = None
    """A survival task's event indicator (1 event, 0 censored at the target's
    time; one of ``ids``; ``flows._survival``)."""
    label_upper_bound: str | None = None
    """An interval-censored survival task's upper bound (the target is the lower
    bound; one of ``ids``; ``flows._survival``)."""
    split_rows: dict[str, int] = {}
    seed: int | None = None
    fractions: dict[str, float] | None = None
    files: list[str] | None = None

    @property
    def feature_names(self) -> list[str]:
        return [f.name for f in self.features]

    @property
    def target_names(self) -> list[str]:
        """The target column(s): ``targets``, or ``[target]``."""
        return list(self.targets or [self.target])

    @property
    def id_names(self) -> list[str]:
        return list(self.ids or {})

    @property
    def is_categorical(self) -> list[bool]:
        return [f.kind == "categorical" for f in self.features]

    def to_dict(self) -> dict:
        """What ``schema.json`` holds (fields not yet known are left out)."""
        return self.model_dump(mode="json", exclude_none=True)


def read_schema(data: str | Path) -> PreparedSchema:
    """The prepared folder's schema; a clear error if the folder or the file is not one.

    Raises
    ------
    FileNotFoundError
        No ``schema.json``: the folder was not prepared.
    DataError
        ``schema.json`` is not a prepared schema: which field, and what is wrong.
    """
    path = Path(data) / "schema.json"
    if not path.is_file():
        raise FileNotFoundError(
            f"{data} is not a prepared data folder (no schema.json); run `distboost prepare` first"
        )
    try:
        return PreparedSchema.model_validate_json(path.read_text())
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'the file'}: {e['msg']}"
                             for e in exc.errors())
        raise DataError(f"{path} is not a distboost prepared schema ({problems}); prepare the "
                        f"data again with `distboost prepare`") from None
