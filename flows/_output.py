"""Claiming an output folder: one rule for every flow that writes one.

A flow may write into a folder that is absent or empty. A folder holding
something else is either one the flow wrote before (it ``owns`` it: its
marker file is there, or nothing but its part files), whose own outputs it
replaces only when asked (``overwrite``), leaving anything else in it, or
anything else, which is never touched. The check runs before any work
starts, so a refused run has changed nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path


def claim_output(output: str | Path, what: str, owns: Callable[[Path], bool],
                 overwrite: bool, refuse: str = "") -> Path:
    """``output`` as a folder this flow may write, or an error saying why not.

    Parameters
    ----------
    output : the folder
    what : what the flow writes there, for messages ("a prepared-data folder")
    owns : ``owns(folder)``: whether a non-empty folder is one this flow wrote
    overwrite : replace a folder the flow owns (``--force``)
    refuse : the sentence for a folder it does not own (default: "exists and
        is not {what}; refusing to replace it: choose another output")

    Raises
    ------
    FileExistsError
        Naming the folder and what to do.
    """
    out = Path(output)
    if out.is_file():
        raise FileExistsError(f"{out} is a file, not a folder; choose another output")
    if not out.exists() or not any(out.iterdir()):
        return out
    if not owns(out):
        raise FileExistsError(f"{out} " + (refuse or f"exists and is not {what}; refusing to "
                                                      f"replace it: choose another output"))
    if not overwrite:
        raise FileExistsError(f"{out} already exists; pass --force (overwrite=True) to "
                              f"replace it")
    return out


def has_marker(name: str) -> Callable[[Path], bool]:
    """``owns`` for a flow that marks its folders with the file ``name``."""
    return lambda folder: (folder / name).is_file()


PART_FILE = re.compile(r"part-\d+\.parquet")
"""The name of a part file the flows write (``part-00000.parquet``)."""


def only_parquet(folder: Path) -> bool:
    """``owns`` for a flow whose folders hold its Parquet part files alone."""
    return all(PART_FILE.fullmatch(p.name) for p in folder.iterdir())
