"""Random mutations of valid model files (``_model_fuzz.py``): flipped,
deleted, duplicated, swapped and renamed keys, retargeted indices, numbers
(0, -1, huge, NaN, inf, fractions where integers are), types (text, lists,
objects, null, true), deep nesting, and damaged text. Every mutant either
loads and predicts finite values or is refused with ``ModelFileError``.

The loop runs in a child process per batch, which prints each mutant before
it runs it: a mutant that crashes the interpreter (a SIGSEGV in a kernel) or
hangs (a walk around a cycle) fails the test naming the mutant, and pytest
goes on. The models are small (3 to 6 trees of depth 2 or 3) of every kind:
binary, multiclass, regression, Poisson, categorical splits, a forest,
AdaBoost, voting.
"""

try:
    import _model_files as mf
except ImportError:  # tests/ imported as a package
    from tests import _model_files as mf

import json
import os
import selectors
import subprocess
import sys
from pathlib import Path

import pytest

import distboost

FUZZ = Path(__file__).with_name("_model_fuzz.py")
FIRST_ANSWER_S = 600.0
"""Wall time for the child to start (imports, kernels loaded or compiled)."""
PER_MUTANT_S = 60.0
"""Wall time a mutant may take (milliseconds of CPU; the margin is for a busy machine)."""


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fuzz-models")
    mf.fitted_models(folder)
    return folder


def fuzz(folder: Path, seed: int, count: int, plant: str = "",
         per_mutant_s: float = PER_MUTANT_S) -> dict:
    """Run ``count`` mutants of the models in ``folder`` in a child process;
    return its summary, or fail naming the mutant that crashed, hung or broke
    the promise."""
    root = str(Path(distboost.__file__).resolve().parents[1])  # this distboost, in the child
    env = {**os.environ, "NUMBA_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    errors = folder / f"stderr-{seed}.txt"
    with open(errors, "w") as stderr:
        proc = subprocess.Popen([sys.executable, str(FUZZ), str(folder), str(seed), str(count),
                                 *([plant] if plant else [])],
                                stdout=subprocess.PIPE, stderr=stderr, text=True, env=env)
    lines, last, wait = [], "(before the first mutant)", FIRST_ANSWER_S
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        while True:
            if not selector.select(timeout=wait):
                proc.kill()
                proc.wait()
                pytest.fail(f"the fuzz process gave no answer for {wait:.0f} s; it hangs on "
                            f"{last}")
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if line.startswith("mutant "):
                last, wait = line.strip(), per_mutant_s
    status = proc.wait()
    if status < 0 or not lines or not lines[-1].startswith("summary "):
        pytest.fail(f"the fuzz process ended with status {status} on {last}\n"
                    f"{errors.read_text()[-3000:]}")
    found = "".join(lines[next((i for i, x in enumerate(lines) if x.startswith("FAIL")), -1):-1])
    assert status == 0 and not found, found
    return json.loads(lines[-1].removeprefix("summary "))


def test_mutants_predict_finite_values_or_are_refused(models):
    runs = [fuzz(models, seed, 1500) for seed in (1, 2)]
    assert sum(r["loaded"] for r in runs) > 100 and sum(r["refused"] for r in runs) > 1000
    slowest = max(runs, key=lambda r: r["slowest_load_cpu_s"])
    assert slowest["slowest_load_cpu_s"] < 1.0, slowest


@pytest.mark.slow
def test_many_more_mutants(models):
    for seed in range(10, 15):
        summary = fuzz(models, seed, 2500)
        assert summary["slowest_load_cpu_s"] < 1.0, summary


@pytest.mark.parametrize("plant, says", [("crash", "ended with status -11 on mutant 0 9 planted"),
                                         ("hang", "hangs on mutant 0 9 planted")])
def test_a_mutant_that_crashes_or_hangs_is_named(plant, says, tmp_path):
    with pytest.raises(pytest.fail.Exception, match=says):
        fuzz(tmp_path, 9, 1, plant=plant, per_mutant_s=1.0)
