"""Training on the engine: one entry point per family, each taking a frozen
spec and returning a result (``booster.train_boosting``,
``adaboost.train_adaboost``, ``tree_batch.grow_forest``), the one loop they
all run (``loop``), gradient boosting's line search, order statistics and
objectives, and the events a fit reports (``events``, read back by
``dashboard.fit_log``). Nothing here calls back into an estimator."""
