"""Which machine gave a benchmark's figures: CPUs, their model, memory, load.

Read from the standard library and Linux's ``/proc`` and ``/sys`` only (no psutil), so
that the benches describe any machine they run on; a value that cannot be read is
"unknown" (or None).
"""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else ``platform.processor()``, else
    "unknown"."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def usable_cpus() -> int | None:
    """CPUs this process may run on (its affinity mask), or None where unknown."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None


def cpu_quota() -> float | None:
    """The cgroup (v2) CPU limit in CPUs (``cpu.max``), or None where there is none."""
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
    except (OSError, ValueError):
        return None
    return None if quota == "max" else int(quota) / int(period)


def memory_gb() -> float | None:
    """Physical memory in GB, or None where unknown."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9
    except (AttributeError, OSError, ValueError):
        return None


def describe() -> dict[str, Any]:
    """The machine: CPU count and model, usable CPUs, CPU quota, memory, Python, OS, and
    the OpenMP wait policy the runs inherit (None: each library's default)."""
    return {"cpu_count": os.cpu_count(), "usable_cpus": usable_cpus(),
            "cpu_quota": cpu_quota(), "cpu_model": cpu_model(), "memory_gb": memory_gb(),
            "python": platform.python_version(), "platform": platform.platform(),
            "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY")}


def sentence(meta: dict[str, Any]) -> str:
    """The machine and its load in one sentence, from `describe`'s keys and
    ``load_average_before`` / ``load_average_after``."""
    quota = "" if meta.get("cpu_quota") is None else f", cgroup quota {meta['cpu_quota']:g} CPUs"
    memory = "" if meta.get("memory_gb") is None else f"; {meta['memory_gb']:.0f} GB memory"
    policy = meta.get("omp_wait_policy")
    wait = "" if policy is None else f"; OMP_WAIT_POLICY={policy} for every run"
    return (f"Machine: {meta['cpu_model']}, {meta['cpu_count']} CPUs "
            f"({meta['usable_cpus']} usable by this process{quota}){memory}; "
            f"1-minute load average {meta['load_average_before']:.1f} before / "
            f"{meta['load_average_after']:.1f} after; Python {meta['python']}{wait}.")
