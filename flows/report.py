"""The self-contained HTML evaluation report.

:func:`render_report` reads ``evaluation.json`` and the PNG files beside it
(``figures/``) and writes ``report.html`` with every image embedded as a data
URI, so the one file can be mailed or archived. ``distboost report DIR``
re-renders it.
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Any

from flows.data_summary import data_tables
from flows.metrics import headline_rows, per_class_rows

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;
max-width:1100px;color:#222;line-height:1.45;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem} h2{border-bottom:1px solid #ddd;padding-bottom:.2rem;
margin-top:2.2rem} .meta{color:#666;font-size:.9rem}
table{border-collapse:collapse;margin:.6rem 0} td,th{border:1px solid #ddd;padding:.25rem .6rem;
text-align:right} th{background:#f4f4f4} td:first-child,th:first-child{text-align:left}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(480px,1fr));gap:1rem}
figure{margin:0} figure img{max-width:100%;border:1px solid #eee}
figcaption{font-size:.85rem;color:#555} code{background:#f4f4f4;padding:0 .2rem}
table.kv td,table.kv th{text-align:left} pre{background:#f8f8f8;padding:.6rem;font-size:.85rem}
"""

SECTIONS = (
    ("data", "Data"),
    ("metrics", "Metrics"),
    ("learning", "Learning curves"),
    ("importance", "Relative importance"),
    ("shap", "SHAP values"),
    ("dependence", "Partial dependence"),
    ("diagnostics", "Diagnostics"),
)


def _table(rows: list[dict[str, Any]], css: str = "") -> str:
    if not rows:
        return "<p>(none)</p>"
    head = "".join(f"<th>{html.escape(str(k))}</th>" for k in rows[0])
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row.values()) + "</tr>"
        for row in rows
    )
    attr = f' class="{css}"' if css else ""
    return f"<table{attr}><tr>{head}</tr>{body}</table>"


def _figure(folder: Path, fig: dict) -> str:
    data = base64.b64encode((folder / fig["file"]).read_bytes()).decode("ascii")
    alt = html.escape(fig["title"])
    caption = html.escape(fig.get("caption", ""))
    return (
        f'<figure><img src="data:image/png;base64,{data}" alt="{alt}">'
        f"<figcaption><b>{alt}.</b> {caption}</figcaption></figure>"
    )


def _section_body(key: str, evaluation: dict, folder: Path) -> str:
    figures = [f for f in evaluation["figures"] if f["section"] == key]
    parts = []
    if key == "data" and evaluation.get("data"):
        return _data_section(evaluation["data"])
    if key == "metrics":
        parts.append(_metrics_section(evaluation["metrics"]))
    if key == "importance" and evaluation.get("importance"):
        figures_html = "".join(_figure(folder, f) for f in figures)
        top = [{k: (f"{v:.1f}" if isinstance(v, float) else v) for k, v in r.items()}
               for r in evaluation["importance"][:15]]
        return f'<div class="grid">{figures_html}<div>{_table(top)}</div></div>'
    if key == "shap" and evaluation.get("shap"):
        parts.append(f"<p>{html.escape(shap_note(evaluation['shap']))}</p>")
        rows = [{k: (f"{v:.3g}" if isinstance(v, float) else v) for k, v in r.items()}
                for r in evaluation["shap"]["mean_abs"][:15]]
        figures_html = "".join(_figure(folder, f) for f in figures)
        return "".join(parts) + f'<div class="grid">{figures_html}<div>{_table(rows)}</div></div>'
    if key == "dependence" and figures:
        parts.append(f"<p>{html.escape(evaluation.get('dependence_note', ''))}</p>")
    if figures:
        parts.append('<div class="grid">' + "".join(_figure(folder, f) for f in figures) + "</div>")
    return "".join(parts)


def _data_section(summary: dict) -> str:
    """Rows per split, class balance or target distribution, missing rates."""
    parts = []
    for heading, note, rows in data_tables(summary):
        parts.append(f"<h3>{html.escape(heading)}</h3>")
        if note:
            parts.append(f"<p>{html.escape(note)}</p>")
        if rows:
            parts.append(_table(rows))
    return "".join(parts)


def _metrics_section(metrics: dict) -> str:
    """Headline metrics beside the baseline's, the AUC's averaging, per-class scores."""
    parts = [_table(headline_rows(metrics))]
    notes = []
    if metrics.get("per_target"):  # several targets (flows._targets)
        from flows._targets import metrics_note

        notes.append(metrics_note(metrics))
    elif "baseline" in metrics and "accuracy" in metrics:
        notes.append("Baseline: a model that knows only the class frequencies of the evaluated "
                     "rows (it predicts the majority class, gives every row the frequencies "
                     "as probabilities, and ranks no row above another: AUC 0.5).")
    elif "per_query" in metrics:
        from flows._ranking import quantile_rows

        notes.append("Mean NDCG over the queries, each counting once. Baseline: every document "
                     "scored alike, so each query keeps its rows' own order.")
    elif "cindex" in metrics:
        from flows._survival import metrics_note

        notes.append(metrics_note(metrics))
    elif "baseline" in metrics:
        notes.append("Baseline: predicting the mean of the evaluated target for every row "
                     "(R² 0).")
    if metrics.get("auc_average"):
        notes.append(f"AUC: {metrics['auc_average']}.")
    parts += [f"<p>{html.escape(n)}</p>" for n in notes]
    if metrics.get("per_query"):
        parts.append(f"<h3>Across queries</h3><p>Quantiles of each query's "
                     f"{metrics['per_query']['metric'].upper()}.</p>")
        parts.append(_table(quantile_rows(metrics)))
    if metrics.get("per_target"):
        from flows._targets import per_target_rows

        parts.append("<h3>Per target</h3><p>Each target's metrics on the evaluated rows, and "
                     "their mean.</p>" + _table(per_target_rows(metrics)))
    if metrics.get("by_risk_group"):
        from flows._survival import risk_group_rows

        heading, note, rows = risk_group_rows(metrics)
        parts.append(f"<h3>{heading}</h3><p>{html.escape(note)}</p>{_table(rows)}")
    if metrics.get("per_class"):
        parts.append("<h3>Per class</h3><p>Precision, recall and F1 of each class when the most "
                     "probable class is predicted; support: rows of the class.</p>")
        parts.append(_table(per_class_rows(metrics)))
    return "".join(parts)


def shap_note(shap: dict) -> str:
    """What the SHAP section shows, in a sentence or two."""
    bias = "" if shap.get("bias") is None else f" (the bias, here {shap['bias']:.4g})"
    rows = f"{shap['rows']:,} rows drawn at random from" if shap.get("sampled") else \
        f"the {shap['rows']:,} rows of"
    return (
        f"SHAP values of the model's {shap['explained']} for {rows} "
        f"the {shap['split']} split, computed on the Dask workers by exact TreeSHAP (Lundberg "
        f"et al. 2020, path-dependent, node weights the training covers): a row's values and "
        f"the expected output{bias} add up to its output."
    )


def _details(evaluation: dict) -> str:
    info = evaluation.get("details", {})
    rows = [{"item": k, "value": v} for k, v in info.items()]
    config = evaluation.get("training_config")
    config_html = (
        f"<h3>Training configuration</h3><pre>{html.escape(json.dumps(config, indent=2))}</pre>"
        if config
        else ""
    )
    return _table(rows, "kv") + config_html


def render_report(folder: str | Path) -> Path:
    """Write ``report.html`` from ``evaluation.json`` and ``figures/`` in ``folder``."""
    folder = Path(folder)
    source = folder / "evaluation.json"
    if not source.is_file():
        raise FileNotFoundError(
            f"{folder} holds no evaluation.json; run `distboost evaluate` to create it"
        )
    evaluation = json.loads(source.read_text())
    title = evaluation.get("title", "distboost evaluation report")
    body = [
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="meta">{html.escape(evaluation.get("subtitle", ""))}</p>',
    ]
    for key, heading in SECTIONS:
        content = _section_body(key, evaluation, folder)
        if content:
            body.append(f'<h2 id="{key}">{heading}</h2>{content}')
    body.append(f'<h2 id="details">Data and training</h2>{_details(evaluation)}')
    page = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head>"
        f"<body>{''.join(body)}</body></html>\n"
    )
    from distboost.model_file import write_atomic

    target = folder / "report.html"
    write_atomic(target, page)
    return target


def markdown_summary(evaluation: dict, report_path: str | Path) -> str:
    """The Prefect markdown artifact: headline metrics and where the report is."""
    lines = [f"# {evaluation.get('title', 'distboost evaluation')}", ""]
    lines.append(evaluation.get("subtitle", ""))
    lines += ["", "| metric | value | baseline |", "|---|---|---|"]
    lines += [f"| {r['metric']} | {r['value']} | {r.get('baseline', '')} |"
              for r in headline_rows(evaluation["metrics"])]
    if evaluation.get("importance"):
        top = ", ".join(r["feature"] for r in evaluation["importance"][:5])
        lines += ["", f"Most important inputs: {top}."]
    if evaluation.get("shap"):
        top = ", ".join(r["feature"] for r in evaluation["shap"]["mean_abs"][:5])
        lines += ["", f"Largest mean |SHAP| ({evaluation['shap']['rows']:,} rows): {top}."]
    lines += ["", f"Full report (images embedded): `{report_path}`"]
    return "\n".join(lines)
