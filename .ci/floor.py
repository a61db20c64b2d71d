"""Print the runtime dependencies' lower bounds (pyproject.toml) beside the versions
installed, and fail unless every one is installed at exactly its lower bound.

Run with the floor environment's Python (``.ci/run`` does), after
``uv pip install --resolution lowest-direct -e .``.
"""

from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import tomllib
from packaging.requirements import Requirement
from packaging.version import Version


def floors(pyproject: Path) -> list[tuple[str, Version, str]]:
    """(name, lower bound, specifier) of each runtime dependency with a lower bound."""
    deps = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"]
    out = []
    for line in deps:
        req = Requirement(line)
        lower = [Version(s.version) for s in req.specifier if s.operator in (">=", "==")]
        if not lower:
            raise SystemExit(f"pyproject.toml: {line!r} has no lower bound; every runtime "
                             f"dependency needs the oldest version tested")
        out.append((req.name, max(lower), str(req.specifier)))
    return out


def main() -> int:
    rows, wrong = [], []
    for name, lower, spec in floors(Path(__file__).resolve().parents[1] / "pyproject.toml"):
        try:
            installed = Version(version(name))
        except PackageNotFoundError:
            installed = None
        rows.append((name, spec, str(installed)))
        if installed != lower:
            wrong.append(f"{name} {installed} (lower bound {lower})")
    width = max(len(r[0]) for r in rows)
    print(f"{'package':<{width}}  {'installed':<10}  range")
    for name, spec, installed in rows:
        print(f"{name:<{width}}  {installed:<10}  {spec}")
    if wrong:
        print("not at their lower bounds: " + "; ".join(wrong), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
