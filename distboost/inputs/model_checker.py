"""Where a model file is wrong, said once: ``ModelFileError`` and the
``Checker`` that names the file and the key (a path such as
``trees[3][0].nodes.left[1]``), and reads lists of the file as numpy arrays
with one pass over their types (``Checker.array``), so that a model of
thousands of trees is checked in milliseconds.
"""

from __future__ import annotations

import math
import numbers
import reprlib
from collections.abc import Callable

import numpy as np

DAMAGED = "the file is damaged or was edited: save the model again from distboost"
"""What to do about a file that no version of distboost writes."""


class ModelFileError(ValueError):
    """A model file that is not valid JSON or does not follow the schema."""


class Checker:
    """Checks one decoded model file; ``fail`` names the file and the key.

    Parameters
    ----------
    source : str
        The file (or ``"<dict>"``) named in every message.
    """

    def __init__(self, source: str):
        self.source = source

    def fail(self, key: str, message: str):
        """Raise the ``ModelFileError`` of ``key`` (empty: the whole file)."""
        where = f", key {key}" if key else ""
        raise ModelFileError(f"model file {self.source}{where}: {message}")

    def typed(self, d: dict, key: str, kind, path: str, optional: bool = False):
        """``d[key]``, refused when missing (unless ``optional``: None) or not of ``kind``."""
        if key not in d:
            if optional:
                return None
            self.fail(join(path, key), "missing; the file is incomplete or not a model file")
        value = d[key]
        if not is_kind(value, kind):
            self.fail(join(path, key), f"expected {kind_name(kind)}, got {describe(value)}")
        return value

    def list_of(self, values: list, kind, path: str) -> None:
        """Every item of ``values`` is of ``kind``."""
        for i, v in enumerate(values):
            if not is_kind(v, kind):
                self.fail(f"{path}[{i}]", f"expected {kind_name(kind)}, got {describe(v)}")

    def array(self, values: list, kind: str, key_of: Callable[[int], str],
              expected: str = "") -> np.ndarray:
        """``values`` as an int64 (``kind="int"``) or float64 (``"number"``) array.

        true and false read as 1 and 0 (as Python and numpy read them). Any
        other item that is not of ``kind`` (text, a list, an object, null; a
        fraction where an integer is expected) or beyond what the array holds
        is refused, named by ``key_of(i)`` (and, for a number too large,
        ``expected``). numpy reads the list once; the items are looked at one
        by one only when it finds something else.
        """
        allowed = "biu" if kind == "int" else "biuf"
        try:
            array = np.array(values)
        except (ValueError, OverflowError):  # lists of different lengths; a huge integer
            array = None
        if array is not None and array.ndim == 1 and (array.dtype.kind in allowed
                                                      or not len(values)):
            if kind == "number":
                return array.astype(np.float64, copy=False)
            if array.dtype.kind != "u" or not len(values):  # uint64: some item >= 2**63
                return array.astype(np.int64, copy=False)
        return self._slow_array(values, kind, key_of, expected)

    def _slow_array(self, values: list, kind: str, key_of: Callable[[int], str],
                    expected: str) -> np.ndarray:
        """``array``, naming the first item it refuses."""
        for i, v in enumerate(values):
            if not (is_kind(v, kind) or is_kind(v, bool)):
                self.fail(key_of(i), f"expected {kind_name(kind)}, got {describe(v)}")
        try:
            return np.array(values, np.int64 if kind == "int" else np.float64)
        except OverflowError:
            i = next(i for i, v in enumerate(values) if not _fits(v, kind))
            limit = "-2**63 to 2**63 - 1" if kind == "int" else "about -1.8e308 to 1.8e308"
            self.fail(key_of(i), f"{describe(values[i])} is too large; "
                                 f"{expected or 'expected ' + limit}")

    def finite(self, values: np.ndarray, key_of: Callable[[int], str],
               what: str = "a finite number") -> None:
        """Every item of a float array is finite."""
        bad = np.flatnonzero(~np.isfinite(values))
        if len(bad):
            self.fail(key_of(bad[0]), f"is {values[bad[0]]}; expected {what}; {DAMAGED}")


def join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _type_is(t: type, kind) -> bool:
    """Values of type ``t`` are of ``kind`` (as ``is_kind``)."""
    if issubclass(t, (bool, np.bool_)):
        return kind is bool
    if kind == "number":
        return issubclass(t, numbers.Real)
    if kind == "int":
        return issubclass(t, int)
    return isinstance(kind, type) and issubclass(t, kind)


def is_kind(value, kind) -> bool:
    """``value`` is of ``kind``: a type, ``"number"`` (a real number, not true
    or false), ``"int"`` (a whole number written as one) or ``"int_or_none"``."""
    if kind == "int_or_none":
        return value is None or is_kind(value, "int")
    return _type_is(type(value), kind)


def _fits(value, kind: str) -> bool:
    if kind == "int":
        return -(2**63) <= value < 2**63
    try:
        float(value)
    except OverflowError:
        return False
    return True


def kind_name(kind) -> str:
    if isinstance(kind, str):
        return {"int_or_none": "an integer or null", "int": "an integer"}.get(kind, f"a {kind}")
    return {dict: "an object", list: "a list", str: "a string", bool: "true or false"}[kind]


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother = 2, 60, 60
_REPR.maxlist = _REPR.maxdict = 4


def short(value) -> str:
    """A short repr of ``value``, never deeper than two levels (a deeply
    nested value is described as quickly as a flat one)."""
    text = _REPR.repr(value)
    return f"{text[:60]}{'...' if len(text) > 60 else ''}"


def describe(value) -> str:
    """``value``'s type and its ``short`` repr."""
    return f"{type(value).__name__} {short(value)}"


def finite_number(value) -> bool:
    """``value`` is a number and finite (an integer of any size is)."""
    return is_kind(value, "number") and (isinstance(value, int) or math.isfinite(value))
