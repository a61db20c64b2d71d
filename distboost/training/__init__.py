"""Training on the engine: the one loop every ensemble runs (``loop``), the
rounds of gradient boosting (``booster``, with its line search, order
statistics and objectives) and of forests (``tree_batch``; AdaBoost's rounds
sit with its estimator), and the events a fit reports (``events``, read back
by ``dashboard.fit_log``)."""
