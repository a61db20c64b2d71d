"""Serve the distboost flows as deployments without a work pool.

    python -m flows.serve            # the pipeline daily at 03:00 UTC, the others on demand

``prefect.serve`` registers the deployments with the Prefect API (the local
server or ``PREFECT_API_URL``) and runs their flow runs in this process until
it is stopped. The parameters are those of deploy/prefect.yaml.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from prefect import serve

from flows.evaluate import evaluate
from flows.pipeline import pipeline
from flows.prepare import prepare
from flows.train import train

FLOWS = {"pipeline": pipeline, "prepare": prepare, "train": train, "evaluate": evaluate}
PREFECT_YAML = Path(__file__).resolve().parent.parent / "deploy" / "prefect.yaml"


def deployments(path: Path = PREFECT_YAML) -> list:
    """RunnerDeployments built from the entries of deploy/prefect.yaml."""
    spec = yaml.safe_load(path.read_text())
    out = []
    for entry in spec["deployments"]:
        flow_name = entry["entrypoint"].rsplit(":", 1)[1]
        cron = next((s["cron"] for s in entry.get("schedules", [])), None)
        out.append(
            FLOWS[flow_name].to_deployment(
                name=entry["name"],
                description=entry.get("description"),
                tags=entry.get("tags"),
                parameters=entry.get("parameters", {}),
                cron=cron,
            )
        )
    return out


if __name__ == "__main__":
    serve(*deployments())
