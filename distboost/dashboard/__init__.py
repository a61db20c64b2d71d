"""A live distboost page in the Dask dashboard, at ``/distboost``.

Register it when the scheduler starts::

    dask scheduler --preload distboost.dashboard
    LocalCluster(..., scheduler_kwargs={"preload": ["distboost.dashboard"]})

(``distboost`` commands and flows do it on every LocalCluster they start.)
The page reads the ``distboost`` events every fit logs on the scheduler
(``distboost.training.events``), so it shows the fits of any client: learning curves
per named metric, the time of each round split into worker compute, transfer
and driver work, trees and leaves per round, progress (round i of n, elapsed,
estimated remaining, best round), the estimator and its main parameters;
AdaBoost's alpha and a forest's tree count per round; the fits before it in
a menu.
"""

from __future__ import annotations

import html
import math

from distributed.diagnostics.plugin import SchedulerPlugin

from ..engine import dask_internals
from ..training.events import TOPIC
from .fit_log import SPLIT, FitLog, FitView

__all__ = [
    "PAGE", "PRELOAD", "SCHEDULER_KWARGS", "DistboostPage", "FitsPlugin", "dask_setup",
    "summary_html"
]

PAGE = "/distboost"
PRELOAD = "distboost.dashboard"
SCHEDULER_KWARGS = {"preload": [PRELOAD]}
"""``LocalCluster(..., scheduler_kwargs=SCHEDULER_KWARGS)`` serves the page."""
_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
            "#7f7f7f", "#bcbd22", "#17becf")
_LATEST = "latest fit"


def _seconds(s: float) -> str:
    if s is None or not math.isfinite(s):
        return "?"
    return f"{s:.1f} s" if s < 120 else f"{s / 60:.1f} min"


def summary_html(view: FitView) -> str:
    """The estimator, its main parameters and the progress of its fit."""
    p = view.progress()
    n = p["n_rounds"] if p["n_rounds"] is not None else "?"
    state = "finished" if p["finished"] else "training"
    best = "" if p["best_round"] is None else f" &middot; best round {p['best_round']}"
    params = ", ".join(f"{k}={v}" for k, v in view.main_params().items())
    extra = ""
    if view.end and "oob_score" in view.end:
        extra = f" &middot; out-of-bag score {view.end['oob_score']:.4f}"
    stall = ""
    if view.stall is not None:
        stall = (f"<p style='color:#b00020'><b>stalled:</b> "
                 f"{html.escape(view.stall.get('message', ''))}</p>")
    return (
        f"<h3>{html.escape(view.start.get('estimator', 'fit'))} "
        f"<small>fit {html.escape(view.fit)}, {state}</small></h3>"
        f"<p><b>round {p['round']} of {n}</b> &middot; elapsed {_seconds(p['elapsed'])} "
        f"&middot; remaining {_seconds(p['remaining'])}{best}{extra}</p>"
        f"<p style='font-size:smaller'>{html.escape(params)}</p>{stall}"
    )


def _lines(series: dict) -> dict:
    names = sorted(series)
    return {
        "xs": [series[k][0] for k in names],
        "ys": [series[k][1] for k in names],
        "label": names,
        "color": [_PALETTE[i % len(_PALETTE)] for i in range(len(names))],
    }


class DistboostPage:
    """The Bokeh models of the page, updated from the scheduler's event log."""

    def __init__(self, scheduler):
        from bokeh.layouts import column, row
        from bokeh.models import ColumnDataSource, Div, Select
        from bokeh.plotting import figure

        self.log, self.shown = fit_log(scheduler), -1
        self.select = Select(title="Fit", value=_LATEST, options=[_LATEST], width=420)
        self.select.on_change("value", lambda attr, old, new: self.update(force=True))
        self.summary = Div(text="<p>No distboost fit on this cluster yet.</p>",
                           name="distboost-summary")
        self.curves = ColumnDataSource(_lines({}), name="distboost-curves")
        self.extras = ColumnDataSource(_lines({}), name="distboost-extras")
        self.rounds = ColumnDataSource(FitView("").per_round(), name="distboost-rounds")
        common = {"height": 300, "sizing_mode": "stretch_width",
                  "tools": "pan,wheel_zoom,box_zoom,reset,hover"}
        curves = figure(title="Learning curves", x_axis_label="round", **common)
        curves.multi_line("xs", "ys", source=self.curves, color="color", legend_field="label",
                          line_width=2)
        times = figure(title="Round time", x_axis_label="round", y_axis_label="seconds",
                       **common)
        times.vbar_stack(list(SPLIT), x="round", width=0.9, source=self.rounds,
                         color=_PALETTE[:3],
                         legend_label=["worker compute", "scheduling + transfer", "driver"])
        trees = figure(title="Leaves per round", x_axis_label="round", **common)
        trees.line("round", "n_leaves", source=self.rounds, line_width=2)
        learner = figure(title="AdaBoost alpha / forest trees grown", x_axis_label="round",
                         visible=False, **common)
        self.learner = learner
        learner.multi_line("xs", "ys", source=self.extras, color="color", legend_field="label",
                           line_width=2)
        self.root = column(row(self.select, self.summary, sizing_mode="stretch_width"),
                           row(curves, times, sizing_mode="stretch_width"),
                           row(trees, learner, sizing_mode="stretch_width"),
                           sizing_mode="stretch_width")
        self.update()

    def _chosen(self) -> FitView | None:
        if not self.log.fits:
            return None
        value = self.select.value
        if value == _LATEST or value not in self.log.fits:
            return list(self.log.fits.values())[-1]
        return self.log.fits[value]

    def update(self, force: bool = False) -> None:
        """Redraw the chosen fit if events came in (or the choice changed)."""
        if self.log.version == self.shown and not force:
            return
        self.shown = self.log.version
        self.select.options = [_LATEST] + list(self.log.fits)
        view = self._chosen()
        if view is None:
            return
        self.summary.text = summary_html(view)
        self.curves.data = _lines(view.curves())
        self.extras.data = _lines(view.extras())
        self.learner.visible = bool(self.extras.data["label"])
        self.rounds.data = view.per_round()


class FitsPlugin(SchedulerPlugin):
    """Keeps the fits of the scheduler's ``distboost`` events as they are logged."""

    name = "distboost-fits"

    def __init__(self, scheduler):
        self.log = FitLog()
        for _, event in scheduler.get_events(TOPIC):  # those logged before
            self.log.add(event)

    def log_event(self, topic, msg) -> None:
        if topic == TOPIC:
            self.log.add(msg)


def fit_log(scheduler) -> FitLog:
    """The scheduler's FitLog (its plugin is added on first use)."""
    plugin = scheduler.plugins.get(FitsPlugin.name)
    if plugin is None:
        plugin = FitsPlugin(scheduler)
        scheduler.add_plugin(plugin)
    return plugin.log


def distboost_doc(scheduler, extra, doc) -> None:
    """The Bokeh document of ``/distboost`` (a Dask dashboard application)."""
    page = DistboostPage(scheduler)
    doc.title = "Dask: distboost"
    doc.add_root(page.root)
    dask_internals.dress_dashboard_doc(doc, extra, page, 500)


def _register() -> None:
    """Add the page to the applications every new scheduler's dashboard serves
    (where this Dask's dashboard lets it: else a log line, and no page)."""
    dask_internals.register_dashboard_page(PAGE, distboost_doc)


def dask_setup(scheduler) -> None:
    """Preload hook: collect the fits from now on; link the page from the menu."""
    fit_log(scheduler)
    dask_internals.link_dashboard_page(scheduler, PAGE)


_register()
