"""The evaluation report's data section: rows per split, missing rates per
column and the target's class balance (classification) or distribution
(regression), computed on the Dask workers from the prepared splits.

:func:`summarize_data` returns a JSON-ready dict (kept in ``evaluation.json``
under ``data``); :func:`data_tables` turns it into the report's tables.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

SPLITS = ("train", "validation", "test")
TOP_MISSING = 10
"""The report lists this many columns with the highest missing rates."""
STATISTICS = ("mean", "std", "min", "25%", "50%", "75%", "max")


def summarize_data(data: str | Path, schema: Any) -> dict:
    """Rows, missing values per column and the target of every split of the
    prepared folder ``data`` (run under a Dask client, or Dask's default).

    Returns
    -------
    dict
        ``splits``: the splits found, in train/validation/test order;
        ``rows``: rows per split; ``missing``: per column (features and
        target), per split, the fraction of rows missing; ``target``: per
        split, the count of each class (classification) or ``STATISTICS``
        of the target (regression); ``task``.
    """
    import dask

    from flows._data import has_split, load_split

    splits = [s for s in SPLITS if has_split(data, s)]
    lazy = {}
    for split in splits:
        X, y = load_split(data, split, schema)
        if schema.targets:  # several targets (flows._targets)
            from flows._targets import target_summary

            frame = X.assign(**{n: y[n] for n in schema.targets})
            lazy[split] = (frame.isna().sum(), y[schema.target].size, target_summary(y, schema))
            continue
        frame = X.assign(**{schema.target: y}) if schema.target not in X.columns else X
        target = y.value_counts(dropna=True) if schema.task == "classification" else y.describe()
        lazy[split] = (frame.isna().sum(), y.size, target)
    (computed,) = dask.compute(lazy)
    rows = {s: int(computed[s][1]) for s in splits}
    missing = {str(c): {s: float(computed[s][0][c]) / max(rows[s], 1) for s in splits}
               for c in computed[splits[0]][0].index} if splits else {}
    if schema.targets:
        from flows._targets import summary_values

        target = summary_values(computed, schema, splits, STATISTICS)
    elif schema.task == "classification":
        classes = list(schema.classes or sorted({k for s in splits for k in computed[s][2].index}))
        target = {s: {str(c): int(computed[s][2].get(c, 0)) for c in classes} for s in splits}
    else:
        target = {s: {k: float(computed[s][2][k]) for k in STATISTICS} for s in splits}
    return {"task": schema.task, "splits": splits, "rows": rows, "missing": missing,
            "target": target, **({"targets": schema.targets} if schema.targets else {})}


def data_tables(summary: dict) -> list[tuple[str, str, list[dict[str, str]]]]:
    """(heading, note, rows) of the data section's tables."""
    splits = summary["splits"]
    rows = summary["rows"]
    total = sum(rows.values())
    tables = [("Rows per split", "",
               [{"split": s, "rows": f"{rows[s]:,}", "share": _percent(rows[s] / max(total, 1))}
                for s in splits])]
    if summary.get("targets"):
        from flows._targets import target_table

        tables.append(target_table(summary))
    elif summary["task"] == "classification":
        balance = [{"class": c, **{s: _count_share(summary["target"][s][c], rows[s])
                                   for s in splits}}
                   for c in summary["target"][splits[0]]] if splits else []
        tables.append(("Class balance", "Rows of each class (share of the split).", balance))
    else:
        dist = [{"statistic": k, **{s: f"{summary['target'][s][k]:.4g}" for s in splits}}
                for k in STATISTICS]
        tables.append(("Target distribution", "Quantiles are Dask's approximate ones.", dist))
    tables.append(_missing_table(summary["missing"], splits))
    return tables


def _missing_table(missing: dict, splits: list[str]) -> tuple[str, str, list[dict[str, str]]]:
    """The columns with the highest missing rate in any split."""
    worst = {c: max(rates.values(), default=0.0) for c, rates in missing.items()}
    with_missing = [c for c in sorted(worst, key=lambda c: -worst[c]) if worst[c] > 0]
    if not with_missing:
        return "Missing values", f"No missing values in any of the {len(missing)} columns.", []
    shown = with_missing[:TOP_MISSING]
    note = (f"{len(with_missing)} of {len(missing)} columns have missing values"
            + (f"; the {len(shown)} highest rates are shown." if len(shown) < len(with_missing)
               else "."))
    return "Missing values", note, [{"column": c, **{s: _percent(missing[c][s]) for s in splits}}
                                    for c in shown]


def _percent(fraction: float) -> str:
    """A share for people: 12.3%, 0.04%, 0%."""
    if fraction == 0:
        return "0%"
    digits = 1 if fraction >= 0.001 else 2
    return f"{100 * fraction:.{digits}f}%"


def _count_share(count: int, rows: int) -> str:
    return f"{count:,} ({_percent(count / max(rows, 1))})"


def rounded_seconds(seconds: float) -> str:
    """A duration for people: 0.42 s, 8.3 s, 55.1 s, 2 min 5 s."""
    if seconds < 1:
        return f"{seconds:.2f} s"
    if seconds < 100:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(np.round(seconds)), 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"
