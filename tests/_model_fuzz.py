"""Mutants of valid model files, loaded and predicted in this process: the
fuzz loop of ``test_model_fuzz.py``, run in a subprocess per batch so that a
crash or a hang names the mutant instead of ending pytest.

    python tests/_model_fuzz.py FOLDER SEED COUNT [crash|hang]

``FOLDER`` holds valid model files (``*.json``). Before each mutant one line
``mutant <i> <seed> <file> <mutations>`` is printed (the parent's time limit
per mutant reads these), then at the end ``summary <json>``. Every mutant must
either load and predict finite values (``predict`` and ``predict_proba`` on a
few rows) or raise ``ModelFileError``; each one that does neither is printed
as ``FAIL <seed> <file> <mutations>: <what happened>`` and the exit status is 1.
``mutant_of(text, seed)`` rebuilds a mutant from its seed. ``crash`` or
``hang`` plants one of those at the first mutant (the harness's own test).
"""

from __future__ import annotations

import copy
import json
import math
import random
import reprlib
import resource
import sys
import time
import traceback
import warnings
from pathlib import Path

import numpy as np

NUMBERS = [0, -1, 1, 2, 3, 7, 255, 256, 2**31, -(2**31) - 1, 2**63, 2**64, 10**30, -(10**30),
           1e308, -1e308, 1.7976931348623157e308, 5e-324, math.nan, math.inf, -math.inf, 0.5,
           -0.5]
OTHERS = ["abc", "1", "", "18446744073709551616", [], [1], {}, {"a": 1}, None, True, False]
DEPTHS = (2, 40, 3000)
MEMORY = 1 << 30
"""Address space a mutant may add to the warmed-up process (a model of a few kB)."""


def _positions(d) -> list[tuple]:
    """Every key and index of a decoded model file, as paths from the top."""
    out, todo = [], [(d, ())]
    while todo:
        value, path = todo.pop()
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for k, v in items:
            out.append((*path, k))
            if isinstance(v, (dict, list)) and len(path) < 12:
                todo.append((v, (*path, k)))
    return out


def _at(d, path: tuple):
    for k in path[:-1]:
        d = d[k]
    return d, path[-1]


def _nested(value, depth: int):
    for _ in range(depth):
        value = [value]
    return value


def _new_value(value, rng: random.Random):
    """A replacement: another number, another type, a near value or a deep one."""
    pick = rng.random()
    if pick < 0.35:
        return rng.choice(NUMBERS)
    if pick < 0.55:
        return rng.choice(OTHERS)
    if pick < 0.65:
        return _nested(value, rng.choice(DEPTHS))
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return rng.randint(-2, 40)  # retarget: an index near the tree's
    return rng.choice([value + 1, value - 1, -value, value * 2, value + 0.5, float(value),
                       rng.randint(-2, 40), int(value) if math.isfinite(value) else 0])


def mutate(d, rng: random.Random) -> str:
    """Change ``d`` in place at a random position; returns what was done."""
    positions = _positions(d)
    if not positions:
        return "nothing"
    shallow = [p for p in positions if len(p) <= 3]
    path = rng.choice(shallow if rng.random() < 0.3 and shallow else positions)
    parent, key = _at(d, path)
    value, op = parent[key], rng.choice(["set", "set", "set", "flip", "delete", "duplicate",
                                         "swap", "rename", "container"])
    if op == "flip" and (isinstance(value, bool) or value in (0, 1)):  # a flag the other way
        parent[key] = (not value) if isinstance(value, bool) else 1 - value
    elif op == "delete":
        del parent[key]
    elif op == "duplicate":  # a copy elsewhere: another key of the object, or once more in the list
        if isinstance(parent, dict):
            parent[rng.choice(list(parent))] = _copy(value)
        else:
            parent.insert(key, _copy(value))
    elif op == "swap" and isinstance(parent, list) and len(parent) > 1:
        other = rng.randrange(len(parent))
        parent[key], parent[other] = parent[other], parent[key]
    elif op == "rename" and isinstance(parent, dict):
        parent[f"{key}x"] = parent.pop(key)
    elif op == "container" and isinstance(value, (list, dict)) and value:
        change = rng.choice(["truncate", "clear", "append", "retype"])
        if change == "truncate" and isinstance(value, list):
            del value[len(value) // 2:]
        elif change == "clear":
            value.clear()
        elif change == "append" and isinstance(value, list):
            value.append(_copy(rng.choice(value)))
        else:
            parent[key] = dict(zip(map(str, range(len(value))), value)) \
                if isinstance(value, list) else list(value.values())
        op = f"container-{change}"
    else:
        op = "set"
        parent[key] = _new_value(value, rng)
    return f"{op} {'/'.join(map(str, path))}: {_now_at(parent, key)}"


def _now_at(parent, key) -> str:
    """What is at ``parent[key]`` after a mutation, in short."""
    if isinstance(parent, dict):
        return reprlib.repr(parent[key]) if key in parent else "(gone)"
    return reprlib.repr(parent[key]) if key < len(parent) else "(gone)"


def _copy(value):
    """A deep copy, or ``value`` itself when it is nested too deeply to copy."""
    try:
        return copy.deepcopy(value)
    except RecursionError:
        return value


def _text_mutant(text: str, rng: random.Random) -> tuple[str, str]:
    """The file's text cut short, or with a character changed or deleted."""
    at = rng.randrange(len(text))
    kind = rng.choice(["truncate", "change", "delete"])
    if kind == "truncate":
        return text[:at], f"text truncated at {at}"
    if kind == "delete":
        return text[:at] + text[at + 1:], f"text character {at} deleted"
    char = rng.choice('0123456789[]{}",:-.eE ')
    return text[:at] + char + text[at + 1:], f"text character {at} set to {char!r}"


def mutant_of(text: str, seed: int):
    """(decoded mutant or None, mutant text or None, description) for ``seed``."""
    rng = random.Random(seed)
    if rng.random() < 0.08:
        mutated, what = _text_mutant(text, rng)
        return None, mutated, what
    d = json.loads(text)
    return d, None, "; ".join(mutate(d, rng) for _ in range(rng.choice([1, 1, 1, 2, 3])))


def _rows(est, rng: np.random.Generator) -> np.ndarray:
    """A few rows for ``est``: normal values, some missing, categories as codes."""
    n_features = est.n_features_in_ if hasattr(est, "n_features_in_") \
        else est.estimators_[0].n_features_in_
    X = rng.normal(size=(12, n_features)) * 3
    for j in np.flatnonzero(_categorical(est)):
        X[:, j] = rng.integers(-1, 6, len(X))
    X[rng.random(X.shape) < 0.15] = np.nan
    return X


def _categorical(est) -> np.ndarray:
    member = est if hasattr(est, "_schema") else est.estimators_[0]
    return member._schema.is_categorical


def check_prediction(est, X) -> str | None:
    """What is wrong with ``est``'s predictions on X (None: finite, of the right shape)."""
    pred = np.asarray(est.predict(X))
    if len(pred) != len(X):
        return f"predict gave {pred.shape} for {len(X)} rows"
    if est._estimator_type == "regressor":
        return None if np.isfinite(pred.astype(np.float64)).all() else f"predict gave {pred}"
    if not np.isin(pred, est.classes_).all():
        return f"predict gave labels {pred} outside classes_ {est.classes_}"
    if getattr(est, "voting", "soft") != "soft":
        return None
    proba = np.asarray(est.predict_proba(X))
    if proba.shape != (len(X), len(est.classes_)) or not np.isfinite(proba).all():
        return f"predict_proba gave {proba!r}"
    return None


def run(folder: Path, seed: int, count: int, out=sys.stdout, plant: str = "") -> int:
    """The fuzz loop (see the module); returns the exit status."""
    if plant:
        print(f"mutant 0 {seed} planted {plant}", file=out, flush=True)
        if plant == "crash":
            import ctypes

            ctypes.string_at(0)  # reads address 0: SIGSEGV
        time.sleep(3600)
    import distboost as db
    from distboost.model_file import model_from_dict

    files = sorted(folder.glob("*.json"))
    texts = [f.read_text() for f in files]
    rows = np.random.default_rng(seed)
    for text in texts:  # warm up: every kernel compiled or loaded before the limits
        check_prediction(model_from_dict(json.loads(text)), _rows(model_from_dict(
            json.loads(text)), rows))
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    used = int(Path("/proc/self/statm").read_text().split()[0]) * resource.getpagesize() \
        if Path("/proc/self/statm").exists() else 0
    if used:
        resource.setrlimit(resource.RLIMIT_AS, (used + MEMORY, hard))
    counts, failures, slowest = {"loaded": 0, "refused": 0}, [], (0.0, "")
    scratch = folder / f"mutant-{seed}.txt"  # not *.json: not a model to mutate
    for i in range(count):
        s = seed * 1_000_003 + i
        f = i % len(files)
        d, text, what = mutant_of(texts[f], s)
        print(f"mutant {i} {s} {files[f].name} {what}", file=out, flush=True)
        started = time.process_time()  # CPU: the machine may be busy
        try:
            if text is not None:
                scratch.write_text(text)
                est = db.load_model(scratch)
            else:
                est = model_from_dict(d, "mutant")
        except db.ModelFileError:
            counts["refused"] += 1
            slowest = max(slowest, (time.process_time() - started, f"{s} {files[f].name} {what}"))
            continue
        except Exception as exc:  # noqa: BLE001 - the finding, reported below
            failures.append(f"FAIL {s} {files[f].name} {what}: loading raised {exc!r}\n"
                            f"{traceback.format_exc(limit=-3)}")
            continue
        slowest = max(slowest, (time.process_time() - started, f"{s} {files[f].name} {what}"))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                wrong = check_prediction(est, _rows(est, rows))
        except Exception as exc:  # noqa: BLE001
            wrong = f"prediction raised {exc!r}\n{traceback.format_exc(limit=-3)}"
        if wrong:
            failures.append(f"FAIL {s} {files[f].name} {what}: loaded, then {wrong}")
        counts["loaded"] += 1
    scratch.unlink(missing_ok=True)
    for line in failures:
        print(line, file=out, flush=True)
    print("summary " + json.dumps({**counts, "failures": len(failures),
                                   "slowest_load_cpu_s": slowest[0], "slowest": slowest[1]}),
          file=out, flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(run(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]),
                 plant=sys.argv[4] if len(sys.argv) > 4 else ""))
