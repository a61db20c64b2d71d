"""The engine: training state kept where the rows are, and waves of work on it.

Modules, from the estimators' side down to a worker's memory:

``input_plan`` ``plan`` -> ``InputPlan``: the input path, from the user's collections to
               the executor, the partitions (X, y, w), the schema and the bins
``waves``      ``Engine``: the waves a fit sends (prepare, start a round, a level, finish)
``executor``   ``Executor``: what the engine asks of whoever runs the waves
``dask``       ``DaskExecutor``: tasks to bin, then one ``Holder`` actor per Dask worker
``holder``     ``Holder``, ``Op``, ``History``: what a worker keeps, and replay after a loss;
               ``LocalExecutor``: everything in this process, in one ``Holder``
``group``      the per-worker functions a wave runs on a group of shards
``shard``      ``Shard``: one binned partition; reading and binning partitions
``buffers``    memory a shard's passes reuse, in RAM or in files on local disk
``spill``      where a worker keeps its rows (``out_of_core``)
"""

from .dask import DaskExecutor
from .executor import Executor
from .holder import LocalExecutor
from .input_plan import InputPlan, local_partitions, plan
from .waves import TRAIN, Engine, eval_key

__all__ = ["TRAIN", "DaskExecutor", "Engine", "Executor", "InputPlan", "LocalExecutor", "eval_key",
           "local_partitions", "plan"]
