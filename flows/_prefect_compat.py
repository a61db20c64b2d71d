"""A Prefect whose local API server cannot work with the fastapi installed,
refused before any flow runs, saying what to install.

Prefect 3.4 to 3.7.0 declare any fastapi < 1, but their API server answers
every call with HTTP 500 under fastapi >= 0.137 ("'PrefectRouter' object has
no attribute 'routes'", measured with Prefect 3.4.25, 3.5.0, 3.6.0, 3.6.15 and
3.7.0 against fastapi 0.137 and 0.150). The Prefects that work with it
require fastapi >= 0.139 themselves (3.7.8, 3.8), so a Prefect's own
requirement tells which kind it is. distboost's ``fastapi<0.151`` cannot say
"below 0.137 for an older Prefect": a requirement cannot depend on another
package's version, so the command line checks here.
"""

from __future__ import annotations

import os
import re
from importlib.metadata import PackageNotFoundError, requires, version

FASTAPI_READS_ROUTES = (0, 137)
"""From this fastapi on, a router's included routers must have ``routes``."""


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
    if _release(fastapi) < FASTAPI_READS_ROUTES:
        return None
    if any(v >= FASTAPI_READS_ROUTES for v in _fastapi_lower_bounds(prefect_requires)):
        return None  # this Prefect was made for it
    return (f"Prefect {prefect}'s API server does not work with fastapi {fastapi}: every call "
            f"answers HTTP 500 ('PrefectRouter' object has no attribute 'routes'), although "
            f"Prefect allows it. Install a fastapi this Prefect works with: "
            f"pip install 'fastapi>=0.111,<0.137' (or a Prefect >= 3.7.8)")


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
