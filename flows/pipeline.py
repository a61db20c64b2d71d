"""Pipeline flow: prepare -> train -> evaluate, on one Dask cluster.

Output folder::

    data/      the prepare flow's output
    model/     the train flow's run folder (model.json, checkpoints/)
    report/    the evaluate flow's output (report.html)
"""

# No `from __future__ import annotations` in a flow's module: Prefect 3.4.25 cannot
# resolve a flow parameter's annotation given as text (tests/test_prefect_compat.py).
from pathlib import Path
from typing import Any

from prefect import flow

from flows._cluster import dask_client, run_logger
from flows._tabular import BATCH_ROWS
from flows.config import ClusterConfig
from flows.evaluate import evaluate
from flows.prepare import prepare
from flows.train import train


@flow(name="distboost-pipeline")
def pipeline(
    source: str,
    output: str,
    target: str | list[str],
    task: str = "auto",
    categorical: list[str] | None = None,
    drop: list[str] | None = None,
    id_columns: list[str] | None = None,
    feature_columns: list[str] | None = None,
    config: str | dict | None = None,
    estimator: str | None = None,
    params: dict[str, Any] | None = None,
    checkpoint_every: int | None = None,
    validation_fraction: float = 0.15,
    test_fraction: float = 0.15,
    seed: int = 0,
    overwrite: bool = False,
    artifact_key: str = "distboost",
    shap_rows: int = 2000,
    scheduler: str | None = None,
    cluster: ClusterConfig | None = None,
    progress: bool = False,
    batch_rows: int = BATCH_ROWS,
    group: str | None = None, event: str | None = None, label_upper_bound: str | None = None,
) -> str:
    """Prepare raw data, train on it, evaluate on the test split.

    Parameters are those of :func:`flows.prepare.prepare`,
    :func:`flows.train.train` and :func:`flows.evaluate.evaluate`; one
    cluster (``scheduler`` or a LocalCluster) serves all three.

    Returns
    -------
    str
        Path of the HTML report.
    """
    logger = run_logger()
    out = Path(output)
    with dask_client(scheduler, cluster, training=True) as client:
        address = client.scheduler.address
        data = prepare(
            source=source,
            output=str(out / "data"),
            target=target,
            task=task,
            categorical=categorical,
            drop=drop,
            id_columns=id_columns,
            feature_columns=feature_columns,
            validation_fraction=validation_fraction,
            test_fraction=test_fraction,
            seed=seed,
            overwrite=overwrite,
            scheduler=address,
            progress=progress,
            batch_rows=batch_rows,
            group=group, event=event, label_upper_bound=label_upper_bound,
        )
        model = train(
            data=data,
            output=str(out / "model"),
            config=config,
            estimator=estimator,
            params=params,
            checkpoint_every=checkpoint_every,
            overwrite=overwrite,
            scheduler=address,
            progress=progress,
        )
        report = evaluate(
            data=data,
            model=model,
            output=str(out / "report"),
            artifact_key=artifact_key,
            shap_rows=shap_rows,
            scheduler=address,
            progress=progress,
        )
    logger.info("pipeline finished: %s", report)
    return report
