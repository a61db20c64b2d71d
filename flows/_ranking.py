"""The evaluation report of a ranker (a prepared folder with a query column,
``distboost prepare --group``): NDCG at several cut-offs over the evaluated
split's queries, and the distribution of NDCG@10 across queries.

NDCG@k of a query (Järvelin & Kekäläinen 2002, "Cumulated gain-based
evaluation of IR techniques"): DCG@k = sum over the first k places r of
gain_r / log2(r + 1), divided by the DCG@k of the ideal order; gain 2^rel - 1
(Burges et al. 2005) or rel, as the model was trained
(``distboost.metrics.QueryMetric``, XGBoost's conventions: a query without
any gain counts 1). The figures are averages over queries, each query
counting once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.figure import Figure

CUTOFFS = (1, 3, 5, 10)
"""The k of NDCG@k in the report, besides NDCG over the whole list."""
SPREAD = "ndcg@10"
"""The cut-off whose per-query distribution the report shows."""
QUANTILES = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0)
BINS = np.linspace(0.0, 1.0, 21)
"""The per-query histogram's bins (queries per 0.05 of NDCG; the last holds 1)."""


def _per_query(name: str, rel: np.ndarray, score: np.ndarray, qid: np.ndarray,
               exp_gain: bool) -> np.ndarray:
    from distboost.metrics import QueryTarget, query_metric

    values, _ = query_metric(name, exp_gain).per_query(
        QueryTarget(np.asarray(rel, np.float64), np.asarray(qid, np.int64)),
        np.asarray(score, np.float64)[None, :])
    return values


def ranking_metrics(rel: np.ndarray, score: np.ndarray, qid: np.ndarray,
                    exp_gain: bool = True) -> dict:
    """Mean NDCG@k over the queries (k in ``CUTOFFS``, and the whole list),
    those of the baseline (every document scored alike: the split's own row
    order), and the quantiles of the per-query NDCG@10 (``per_query``).

    ``qid``: each query's rows consecutive (as the prepared splits hold them).
    """
    names = [f"ndcg@{k}" for k in CUTOFFS] + ["ndcg"]
    flat = np.zeros(len(rel))
    spread = _per_query(SPREAD, rel, score, qid, exp_gain)
    out: dict[str, Any] = {
        "n": len(rel),
        "queries": len(spread),
        **{n: float(_per_query(n, rel, score, qid, exp_gain).mean()) for n in names},
        "baseline": {n: float(_per_query(n, rel, flat, qid, exp_gain).mean()) for n in names},
        "per_query": {"metric": SPREAD,
                      "quantiles": {f"{q:g}": float(np.quantile(spread, q)) for q in QUANTILES},
                      "histogram": np.histogram(spread, BINS)[0].tolist()},
    }
    return out


def quantile_rows(metrics: dict) -> list[dict[str, str]]:
    """The per-query NDCG's quantiles as table rows."""
    spread = metrics["per_query"]
    return [{"quantile": "min" if q == "0" else "max" if q == "1" else f"{float(q):.0%}",
             spread["metric"].upper(): f"{v:.4f}"} for q, v in spread["quantiles"].items()]


def plot_ndcg(metrics: dict) -> Figure:
    """NDCG by cut-off (model and baseline), and the histogram of the per-query NDCG@10."""
    fig = Figure(figsize=(9.6, 4.0), layout="constrained")
    ax_k, ax_hist = fig.subplots(1, 2, width_ratios=[3, 2])
    labels = [f"@{k}" for k in CUTOFFS] + ["all"]
    keys = [f"ndcg@{k}" for k in CUTOFFS] + ["ndcg"]
    x = np.arange(len(keys))
    ax_k.plot(x, [metrics[k] for k in keys], "o-", color="tab:blue", label="model")
    ax_k.plot(x, [metrics["baseline"][k] for k in keys], "s--", color="tab:gray",
              label="baseline (row order)")
    ax_k.set_xticks(x, labels)
    ax_k.set_ylim(0, 1.02)
    ax_k.set_xlabel("cut-off k")
    ax_k.set_ylabel("mean NDCG@k over queries")
    ax_k.set_title("NDCG by cut-off")
    ax_k.grid(alpha=0.3)
    ax_k.legend(loc="lower right")
    spread = metrics["per_query"]
    ax_hist.stairs(spread["histogram"], BINS, fill=True, color="tab:blue", alpha=0.8)
    ax_hist.axvline(spread["quantiles"]["0.5"], color="tab:red", lw=1, label="median")
    ax_hist.set_xlabel(metrics["per_query"]["metric"].upper() + " of a query")
    ax_hist.set_ylabel("queries")
    ax_hist.set_title("Distribution across queries")
    ax_hist.legend(loc="upper left")
    return fig


def ranking_figures(metrics: dict) -> list[tuple]:
    """The report's ranking figure: (figure, name, section, title, caption)."""
    caption = (f"Left: mean NDCG@k over the {metrics['queries']:,} queries for k = "
               f"{', '.join(map(str, CUTOFFS))} and the whole list, the model's and the "
               f"baseline's (the rows' own order). Right: how "
               f"{metrics['per_query']['metric'].upper()} varies from query to query.")
    return [(plot_ndcg(metrics), "ndcg", "diagnostics", "NDCG by cut-off and across queries",
             caption)]
