"""Prefect flows of distboost: prepare -> train -> evaluate, and the pipeline.

The flow modules import Prefect; the helper modules (``_tabular``,
``_schema``, ``_data``, ``config``, ``metrics``, ``report``) do not, so Dask
workers and the library never need it.
"""
