"""What users hand to the library, checked and converted: hyperparameters and
their refusals (``checks``), the estimator contract (``params``), frames and
arrays to float64 matrices with their ``Schema`` (``frames``), monotone and
interaction constraints by column (``constraints``), and model files, which are
untrusted input too (``model_schema``, with ``model_trees``, ``model_layouts`` and
``model_checker``)."""
