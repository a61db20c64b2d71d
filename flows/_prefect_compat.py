"""A Prefect whose local API server cannot work with the fastapi installed,
refused before any flow runs, saying what to install.

Prefect 3.4 to 3.7.0 declare any fastapi < 1, but under fastapi >= 0.132
their API server refuses the task runs of a flow called from a flow (HTTP
422, "Input should be a valid dictionary"; Prefect 3.4.25 with fastapi 0.132,
0.133 and 0.136; 0.131 works), and under fastapi >= 0.137 it answers every
call with HTTP 500 ("'PrefectRouter' object has no attribute 'routes'";
Prefect 3.4.25, 3.5.0, 3.6.0, 3.6.15 and 3.7.0 with fastapi 0.137 and 0.150).
The Prefects that work with the newer fastapi require fastapi >= 0.139
themselves (3.7.8, 3.8), so a Prefect's own requirement tells which kind it is. distboost's ``fastapi<0.151`` cannot say
"below 0.137 for an older Prefect": a requirement cannot depend on another
package's version, so the command line checks here.
"""

from __future__ import annotations

import os
import re
from importlib.metadata import PackageNotFoundError, requires, version

FASTAPI_BREAKS_OLD_PREFECT = (0, 132)
"""The first fastapi an older Prefect's server does not work with."""

MADE_FOR_IT = (0, 139)
"""A Prefect requiring at least this fastapi works with it."""


def _release(text: str) -> tuple[int, ...]:
    """The release numbers of a version ("0.136.1" -> (0, 136, 1); "0.150.0rc1" -> (0, 150, 0))."""
    return tuple(int(n) for n in re.match(r"\d+(?:\.\d+)*", text.strip()).group().split("."))


def _fastapi_lower_bounds(prefect_requires: list[str]) -> list[tuple[int, ...]]:
    """The lower bounds (>=, >, ==) of fastapi among a package's requirements."""
    out = []
    for line in prefect_requires:
        name = re.match(r"\s*([A-Za-z0-9_.-]+)", line)
        if name is None or name.group(1).lower() != "fastapi":
            continue
        spec = line.split(";")[0][name.end():]
        out += [_release(v) for v in re.findall(r"(?:>=|==|>)\s*([0-9][0-9.]*)", spec)]
    return out


class IncompatiblePrefect(RuntimeError):
    """Prefect's local API server cannot work with the fastapi installed."""


def fastapi_problem(prefect: str, prefect_requires: list[str], fastapi: str) -> str | None:
    """What is wrong with Prefect ``prefect`` (declaring ``prefect_requires``)
    beside fastapi ``fastapi``, and what to do; None if they work together."""
    if _release(fastapi) < FASTAPI_BREAKS_OLD_PREFECT:
        return None
    if any(v >= MADE_FOR_IT for v in _fastapi_lower_bounds(prefect_requires)):
        return None  # this Prefect was made for it
    what = ("answers every call with HTTP 500 ('PrefectRouter' object has no attribute "
            "'routes')" if _release(fastapi) >= (0, 137) else
            "refuses the task runs of a flow called from a flow (HTTP 422)")
    return (f"Prefect {prefect}'s API server does not work with fastapi {fastapi}: it {what}, "
            f"although Prefect allows that fastapi. Install one this Prefect works with: "
            f"pip install 'fastapi>=0.111,<0.132' (or a Prefect >= 3.7.8)")


def check_prefect_server() -> None:
    """Raise ``IncompatiblePrefect`` when flows would run on Prefect's local API
    server (no ``PREFECT_API_URL``) and it cannot work with this fastapi."""
    if os.environ.get("PREFECT_API_URL"):
        return  # a server of its own, wherever it runs
    try:
        problem = fastapi_problem(version("prefect"), requires("prefect") or [],
                                  version("fastapi"))
    except PackageNotFoundError:
        return
    if problem:
        raise IncompatiblePrefect(problem)
