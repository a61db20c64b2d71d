"""The ``distboost`` command line.

::

    distboost demo [--out DIR] [--dataset hastie|waveform|friedman] [--force]
    distboost prepare SOURCE --out DIR --target COLUMN [--target C2 ...] [--categorical C ...]
                      [--group QID]
    distboost prepare SOURCE --out DIR --target TIME --event EVENT      (survival:cox)
    distboost prepare SOURCE --out DIR --label-lower-bound L --label-upper-bound U  (survival:aft)
    distboost train DATA --out RUN [--config FILE] [--estimator NAME] [--param k=v ...]
    distboost evaluate DATA --model RUN/model.json --out REPORT
    distboost pipeline SOURCE --out DIR --target COLUMN [--config FILE]
    distboost predict MODEL DATA --out PREDICTIONS[.csv] [--proba | --pred-leaf] [--keep id,...]
                      [--times 1,2,5]   (a survival model: survival_<t> columns)
    distboost explain MODEL DATA --out SHAP[.csv] [--keep id,...] [--force]
    distboost report REPORT
    distboost cluster start|status|stop [--workers N]

Every command that computes takes ``--scheduler ADDRESS`` (a running Dask
scheduler; also from ``DISTBOOST_SCHEDULER``); without it the cluster of
``distboost cluster start`` is used where one runs, predict, explain and
evaluate of small data run in this process (``flows._in_process``), and
otherwise a LocalCluster is started and its dashboard printed. Every check
that needs no data (paths, names, parameters, columns) runs before any
cluster or Prefect server starts (``flows._precheck``).
Results (paths) go to stdout, the last line being the main one; status and
progress go to stderr. Exit status: 0 done, 1 bad input or failure, 2 bad
usage, 130 interrupted.

Prefect runs on its local SQLite-backed API unless ``PREFECT_API_URL`` is
set (then the flow run's page in the Prefect UI is printed as it starts); the
local API server runs in a process group of its own and dies with the
command, even on SIGKILL (``flows._prefect_server``);
its database lives in ``PREFECT_HOME`` (default here:
``~/.distboost/prefect``), so ``PREFECT_HOME=~/.distboost/prefect prefect
server start`` shows every run in the UI.
"""

from __future__ import annotations

import argparse
import inspect
import os
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flows._prepared import PreparedSchema

DEFAULT_PREFECT_HOME = Path("~/.distboost/prefect")
QUIET_PREFECT = {
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
}


def prefect_environment(verbose: bool = False, environ: Any = None) -> None:
    """Offline, quiet Prefect settings, unless the user has set them.

    Must run before Prefect is imported.
    """
    env = os.environ if environ is None else environ
    for key, value in QUIET_PREFECT.items():
        env.setdefault(key, value)
    if not env.get("PREFECT_HOME"):
        # Prefect makes its home folder without parents: on a fresh machine
        # ~/.distboost does not exist yet, and the ephemeral API would get no database.
        home = DEFAULT_PREFECT_HOME.expanduser()
        home.mkdir(parents=True, exist_ok=True)
        env["PREFECT_HOME"] = str(home)
    # Flow and task logs still reach the Prefect database (and UI); the terminal
    # shows distboost's own status lines unless -v.
    env.setdefault("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "INFO" if verbose else "CRITICAL")


# ------------------------------------------------------------------ arguments
def _key_value(text: str) -> tuple[str, Any]:
    import yaml

    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    key, value = text.split("=", 1)
    return key.strip(), yaml.safe_load(value)


def _times(text: str) -> list[float]:
    from flows._survival import parse_times

    try:
        return parse_times(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _cluster_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("Dask cluster")
    group.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="address of a running Dask scheduler, e.g. tcp://10.0.0.5:8786 "
        "(default: start a local cluster)",
    )
    group.add_argument("--workers", type=int, default=2, help="local cluster: worker processes")
    group.add_argument("--threads-per-worker", type=int, default=1,
                       help="local cluster: threads per worker")
    group.add_argument(
        "--dashboard-address",
        default=":8787",
        help="local cluster: dashboard address",
    )


def _prepare_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", action="append", metavar="COLUMN",
                        help="column to predict; repeat it for several targets (multi-output: "
                        "numbers, or 0/1 labels for multi-label classification); survival: "
                        "the time (with --label-lower-bound, that column is the target)")
    parser.add_argument(
        "--task", choices=["auto", "classification", "regression", "ranking", "survival"],
        default="auto",
        help="auto: classification for text labels or few distinct integers; ranking with "
        "--group; survival with --event or --label-*-bound (--task survival --target Y alone: "
        "XGBoost's signed time, y < 0 censored at -y)",
    )
    survival = parser.add_argument_group("survival labels (GradientBoostingSurvivalRegressor)")
    survival.add_argument("--event", metavar="COLUMN",
                          help="event indicator beside --target TIME: 1 the event happened at "
                          "TIME, 0 censored then (right-censored times, survival:cox)")
    survival.add_argument("--label-lower-bound", "--label-lower", metavar="COLUMN",
                          dest="label_lower_bound",
                          help="lower bound of each time (XGBoost's label_lower_bound; 0: "
                          "left-censored), with --label-upper-bound (survival:aft)")
    survival.add_argument("--label-upper-bound", "--label-upper", metavar="COLUMN",
                          dest="label_upper_bound",
                          help="upper bound of each time (XGBoost's label_upper_bound; empty "
                          "or inf: right-censored; equal to the lower: an event)")
    parser.add_argument("--group", metavar="COLUMN",
                        help="query id column (integers, sorted, each query's rows together "
                        "in one file) of a ranking task, the target being relevance: each "
                        "query goes to one split whole")
    parser.add_argument(
        "--categorical",
        nargs="+",
        default=[],
        metavar="COLUMN",
        help="columns to treat as categories",
    )
    parser.add_argument(
        "--drop",
        nargs="+",
        default=[],
        metavar="COLUMN",
        help="columns to leave out (identifiers, leaks)",
    )
    parser.add_argument("--id", nargs="+", default=[], dest="id_columns", metavar="COLUMN",
                        help="identifier columns: kept in the prepared data beside the "
                        "features, never features (predict --keep passes them through)")
    parser.add_argument("--feature", nargs="+", default=[], dest="feature_columns",
                        metavar="COLUMN",
                        help="columns that look like identifiers to use as features anyway")
    parser.add_argument("--validation-fraction", type=float, default=0.15,
                        help="share of the rows in the validation split")
    parser.add_argument("--test-fraction", type=float, default=0.15,
                        help="share of the rows in the test split")
    parser.add_argument("--seed", type=int, default=0, help="seed of the split")
    parser.add_argument("--batch-rows", type=int, default=100_000,
                        help="rows of an input file a worker reads at a time (default 100000)")


def _train_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help="training configuration (YAML or JSON)")
    parser.add_argument(
        "--estimator",
        help="estimator class, e.g. GradientBoostingRegressor (default: gradient boosting "
        "suited to the target)",
    )
    parser.add_argument(
        "--param",
        action="append",
        type=_key_value,
        default=[],
        metavar="KEY=VALUE",
        help="estimator parameter, or a setting of the run (early_stopping_rounds, "
        "checkpoint_every); VALUE is read as YAML, null for None (repeatable)",
    )
    parser.add_argument("--checkpoint-every", type=int,
                        help="rounds between checkpoints (default: the configuration's, 10)")


def _model_on_data(sub: Any, name: str, description: str, out: str) -> argparse.ArgumentParser:
    """A command applying a model file to CSV or Parquet input, written to --out."""
    p = sub.add_parser(name, help=description)
    p.add_argument("model", help="model file")
    p.add_argument("data", help="CSV/Parquet file, folder, glob or fsspec URL with the model's "
                   "feature columns")
    p.add_argument("--out", required=True, help=out + "; a name ending in .csv: one CSV file")
    p.add_argument("--keep", nargs="+", action="extend", default=[], metavar="COLUMN",
                   help="columns of DATA written first, beside each row's results, to join "
                   "on (--keep id,region or --keep id region)")
    p.add_argument("--id", dest="keep", action="append", metavar="COLUMN",
                   help="an identifier column to pass through (the same as --keep COLUMN)")
    p.add_argument("--force", action="store_true", help="replace an existing output")
    _cluster_options(p)
    return p


def _kept(args: argparse.Namespace) -> list[str]:
    """--keep and --id columns, split at commas, in order, each once."""
    names = [n.strip() for given in args.keep for n in given.split(",")]
    return list(dict.fromkeys(n for n in names if n))


def _shap_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shap-rows", type=int, default=2000, metavar="N",
                        help="SHAP values of about N rows of the split in the report (0: none)")


class _Formatter(argparse.HelpFormatter):
    """Help with each option's default shown, where it has one worth showing."""

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        nothing = default is None or default is False or default == [] \
            or default is argparse.SUPPRESS
        if "default" in text or nothing or not action.option_strings:
            return text
        return f"{text} (default: {default})"


def _common_options(parser: argparse.ArgumentParser, defaults: bool) -> None:
    """-v and --no-progress, taken before or after the command."""
    keep = {} if defaults else {"default": argparse.SUPPRESS}
    parser.add_argument("-v", "--verbose", action="store_true", help="show Prefect's logs",
                        **keep)
    parser.add_argument("--no-progress", action="store_true", help="no progress bars", **keep)


def _version() -> str:
    """distboost's version, without importing it (numba, Dask: seconds)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("distboost")
    except PackageNotFoundError:  # a checkout on the path, not installed
        from distboost import __version__

        return __version__


def _demo_parser(sub: Any) -> None:
    p = sub.add_parser("demo", help="make a demo data set and run the whole pipeline on it")
    p.add_argument("--out", default="distboost-demo", help="output folder")
    p.add_argument("--dataset", choices=["hastie", "waveform", "friedman"], default="hastie",
                   help="which demo data set to make")
    p.add_argument("--rows", type=int, default=20_000, help="rows to generate")
    p.add_argument("--rounds", type=int, default=1000,
                   help="boosting rounds at most (the pipeline stops early on its validation "
                        "split: 659 rounds on the default demo)")
    p.add_argument("--force", action="store_true", help="redo an existing demo folder")
    _cluster_options(p)


def _cluster_parser(sub: Any) -> None:
    p = sub.add_parser("cluster", help="keep a local Dask cluster running for the commands "
                                       "that follow (start, status, stop)")
    p.add_argument("action", choices=["start", "status", "stop"], help="what to do")
    p.add_argument("--workers", type=int, default=2, help="worker processes")
    p.add_argument("--threads-per-worker", type=int, default=1, help="threads per worker")
    p.add_argument("--memory-limit", default="auto",
                   help="memory limit per worker, e.g. 4GiB (default: auto, a share of the "
                        "machine's)")
    p.add_argument("--dashboard-address", default=":8787", help="dashboard address")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="distboost",
        description="Boosted tree ensembles on partitioned data with Dask, run as Prefect flows.",
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action="version", version=f"distboost {_version()}")
    _common_options(parser, defaults=True)
    common = argparse.ArgumentParser(add_help=False)
    _common_options(common, defaults=False)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add = sub.add_parser

    def add_parser(name, **kwargs):
        return add(name, parents=[common], formatter_class=_Formatter, **kwargs)

    sub.add_parser = add_parser

    _demo_parser(sub)

    p = sub.add_parser("prepare", help="validate raw CSV/Parquet and split it into Parquet")
    p.add_argument("source", help="CSV/Parquet file, folder, glob or fsspec URL")
    p.add_argument("--out", required=True, help="output folder")
    _prepare_options(p)
    p.add_argument("--force", action="store_true", help="replace an existing output")
    _cluster_options(p)

    p = sub.add_parser("train", help="train an estimator on prepared data (resumable)")
    p.add_argument("data", help="prepared data folder")
    p.add_argument("--out", required=True, help="run folder (rerun it to resume)")
    _train_options(p)
    p.add_argument("--force", action="store_true", help="start over in a folder of another run")
    _cluster_options(p)

    p = sub.add_parser("evaluate", help="metrics, plots and an HTML report")
    p.add_argument("data", help="prepared data folder")
    p.add_argument("--model", required=True, help="model file (RUN/model.json)")
    p.add_argument("--out", required=True, help="report folder")
    p.add_argument("--split", default="test", choices=["test", "validation", "train"],
                   help="which split to evaluate on")
    p.add_argument("--artifact-key", default="distboost", help="prefix of Prefect artifact keys")
    _shap_option(p)
    _cluster_options(p)

    p = sub.add_parser("pipeline", help="prepare, train and evaluate in one flow")
    p.add_argument("source", help="CSV/Parquet file, folder, glob or fsspec URL")
    p.add_argument("--out", required=True, help="output folder (data/, model/, report/)")
    _prepare_options(p)
    _train_options(p)
    p.add_argument("--artifact-key", default="distboost", help="prefix of Prefect artifact keys")
    _shap_option(p)
    p.add_argument("--force", action="store_true", help="replace existing outputs")
    _cluster_options(p)

    p = _model_on_data(sub, "predict", "predict CSV or Parquet data with a model",
                       "output folder of prediction Parquet files")
    p.add_argument("--proba", action="store_true", help="also write class probabilities")
    p.add_argument("--pred-leaf", action="store_true",
                   help="write each row's leaf in every tree instead (XGBoost's pred_leaf "
                   "layout: leaf_<round>, or leaf_<round>_<class> with several classes)")
    p.add_argument("--times", type=_times, metavar="T1,T2,...",
                   help="a survival model: also its survival probability S(t | x) at each "
                   "time, as columns survival_<t> (beside prediction and margin)")
    _model_on_data(sub, "explain", "SHAP values of a model for every row of CSV or Parquet data",
                   "output folder of SHAP value Parquet files (shap_<feature>, shap_bias)")

    p = sub.add_parser("report", help="re-render report.html of an evaluation folder")
    p.add_argument("folder", help="evaluation folder (holds evaluation.json)")

    _cluster_parser(sub)
    return parser


# ------------------------------------------------------------------- commands
def _cluster(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "n_workers": args.workers,
        "threads_per_worker": args.threads_per_worker,
        "dashboard_address": args.dashboard_address or None,
    }


def _params(args: argparse.Namespace) -> dict[str, Any] | None:
    return dict(getattr(args, "param", None) or ()) or None


def _check_prepare(args: argparse.Namespace) -> None:
    """Input files, column names and kinds, split options: in a second, before
    any cluster or Prefect server starts (``flows._precheck``)."""
    from flows._precheck import check_prepare
    from flows._survival import label_options
    from flows._targets import one_or_list

    target = one_or_list(args.target) if args.target else None  # once, or once per target
    if isinstance(target, list) and (args.event or args.label_lower_bound
                                     or args.label_upper_bound or args.task == "survival"):
        raise ValueError(f"several --target columns ({', '.join(target)}) make a multi-output "
                         f"task; survival takes one: --target TIME --event EVENT, or "
                         f"--label-lower-bound L --label-upper-bound U")
    args.target, args.event, args.label_upper_bound = label_options(
        target, args.event, args.label_lower_bound, args.label_upper_bound, args.task,
        args.group)
    check_prepare(args.source, args.target, args.task, args.categorical, args.drop,
                  args.validation_fraction, args.test_fraction, args.batch_rows,
                  args.id_columns, args.feature_columns, args.group, args.event,
                  args.label_upper_bound)


def _find_scheduler(args: argparse.Namespace) -> None:
    """``args.scheduler`` from ``--scheduler``, else ``DISTBOOST_SCHEDULER``, else
    the running cluster of ``distboost cluster start``; each said on stderr."""
    if args.scheduler:
        return
    from flows._cluster import SCHEDULER_ENV

    if os.environ.get(SCHEDULER_ENV):
        args.scheduler = os.environ[SCHEDULER_ENV]
        _say(f"using the Dask scheduler {SCHEDULER_ENV} names")
        return
    from flows._kept_cluster import running

    state = running()
    if state is not None:
        args.scheduler = state["address"]
        _say("using the cluster of `distboost cluster start` (`distboost cluster stop` "
             "stops it)")


def _small_in_process(args: argparse.Namespace, data: str, what: str,
                      flow_optional: bool = False) -> None:
    """Run in this process (``flows._in_process``) when no scheduler was found
    and ``data`` (local CSV or Parquet) is small; say so. ``flow_optional``:
    such a job runs without Prefect too when no Prefect API is configured
    (``_without_prefect``)."""
    _find_scheduler(args)
    if args.scheduler:
        return
    from flows._in_process import IN_PROCESS, data_size, fits_in_process

    size = data_size(data)
    if fits_in_process(size):
        args.scheduler = IN_PROCESS
        args.no_flow_run = flow_optional and not os.environ.get("PREFECT_API_URL")
        note = "; no Prefect flow run: set PREFECT_API_URL to record one" if args.no_flow_run else ""
        _say(f"{what} {size[0]:,} rows in this process (small data: no Dask cluster; "
             f"--scheduler or DISTBOOST_SCHEDULER to use one{note})")


def _without_prefect(args: argparse.Namespace) -> bool:
    """Whether ``_small_in_process`` chose to run the job without Prefect."""
    return bool(getattr(args, "no_flow_run", False))


def _check_file(path: str, what: str) -> None:
    if not Path(path).is_file():
        raise FileNotFoundError(f"{what} {path} does not exist")


def _check_model(path: str) -> Any:
    """A model file that exists and follows the schema, before anything starts;
    the model."""
    _check_file(path, "model file")
    from distboost import load_model

    return load_model(path)


def _check_model_data(args: argparse.Namespace, data: str | None = None) -> None:
    """The model, and the columns of ``data`` (default: ``args.data``;
    ``flows._precheck.check_model_data``)."""
    from flows._precheck import check_model_data

    check_model_data(_check_model(args.model), data or args.data)


_OPTION_OF = {"output": "out", "overwrite": "force"}
"""Flow parameters whose command-line option has another name."""


def _run_flow(flow, args: argparse.Namespace, **given: Any) -> str:
    """Call ``flow`` with every parameter it takes that the command line gave.

    Parameters come from the options of the same name (``_OPTION_OF`` for the
    renamed ones), the cluster options and ``--param`` pairs; ``given``
    overrides them. A small job run in this process (``_small_in_process``)
    with no Prefect API configured runs the flow's function without Prefect
    (``flows._cluster.step``): no flow run to record, no server to start.
    """
    from distboost import quiet_dask_noise

    without_prefect = _without_prefect(args)
    if os.environ.get("PREFECT_API_URL"):
        flow = flow.with_options(on_running=[_announce_flow_run])
    if without_prefect:
        flow = flow.fn
    else:
        from flows._prefect_server import start_local_server

        start_local_server()  # else Prefect starts one that a SIGKILL would leave behind
    values = {"cluster": _cluster(args), "params": _params(args), **given}
    kwargs = {}
    for name in inspect.signature(getattr(flow, "fn", flow)).parameters:
        option = _OPTION_OF.get(name, name)
        if name in values:
            kwargs[name] = values[name]
        elif hasattr(args, option):
            kwargs[name] = getattr(args, option)
    with quiet_dask_noise():  # no "Closing dangling stream"... when a process dies
        return flow(**kwargs)


def _announce_flow_run(flow, flow_run, state) -> None:
    """Print the flow run's page in the Prefect UI (a Prefect server is configured)."""
    from prefect.utilities.urls import url_for

    url = url_for(flow_run)
    if url:
        _say(f"Prefect flow run: {url}")


def cmd_prepare(args: argparse.Namespace) -> str:
    _check_prepare(args)
    from flows._precheck import check_prepare_output

    check_prepare_output(args.out, args.force)
    _find_scheduler(args)
    from flows.prepare import prepare

    return _run_flow(prepare, args)


def _check_train_config(args: argparse.Namespace, schema: PreparedSchema | None) -> None:
    """Estimator and parameters checked before any cluster or Prefect server starts.

    Without the prepared data's schema (the pipeline prepares it first) and
    without a named estimator, the parameters must suit gradient boosting for
    classification or for regression.
    """
    from flows.config import config_mapping, resolve_train_config, train_config

    given = {"estimator": args.estimator, "params": _params(args),
             "checkpoint_every": args.checkpoint_every}
    if schema is not None:
        resolve_train_config(schema, args.config, **given)
        return
    if args.estimator or "estimator" in config_mapping(args.config):
        train_config(args.config, **given)
        return
    errors = []
    survival = getattr(args, "event", None) or getattr(args, "label_upper_bound", None) or \
        getattr(args, "task", None) == "survival"
    names = (("GradientBoostingRanker",) if getattr(args, "group", None) else
             ("GradientBoostingSurvivalRegressor",) if survival else
             ("GradientBoostingClassifier", "GradientBoostingRegressor"))
    for name in names:
        try:
            train_config(args.config, **{**given, "estimator": name})
            return
        except ValueError as exc:
            errors.append(exc)
    raise errors[0]


def cmd_train(args: argparse.Namespace) -> str:
    from flows._prepared import read_schema

    schema = read_schema(args.data)
    if args.config:
        _check_file(args.config, "configuration file")
    _check_train_config(args, schema)
    from flows._output import locked_output

    with locked_output(args.out):  # a second training into the folder is refused at once
        _find_scheduler(args)
        from flows.train import train

        return _run_flow(train, args)


def cmd_evaluate(args: argparse.Namespace) -> str:
    from flows._prepared import read_schema

    read_schema(args.data)
    split = Path(args.data) / args.split
    from flows._precheck import check_evaluate_output
    from flows._tabular import DataError

    if not any(split.glob("*.parquet")):
        raise DataError(f"{args.data} has no {args.split!r} split (no Parquet files in {split})")
    _check_model_data(args, str(split))
    check_evaluate_output(args.out)
    _small_in_process(args, str(split), "evaluating")
    from flows.evaluate import evaluate

    return _run_flow(evaluate, args)


def cmd_pipeline(args: argparse.Namespace) -> str:
    _check_prepare(args)
    if args.config:
        _check_file(args.config, "configuration file")
    _check_train_config(args, None)
    _find_scheduler(args)
    from flows.pipeline import pipeline

    return _run_flow(pipeline, args)


def cmd_predict(args: argparse.Namespace) -> str:
    from flows.predict import check_predict, predict

    keep = _kept(args)
    check_predict(args.model, args.data, args.out, args.force, keep, args.proba, args.pred_leaf,
                  args.times)
    _small_in_process(args, args.data, "predicting", flow_optional=True)
    return _run_flow(predict, args, keep=keep)


def cmd_explain(args: argparse.Namespace) -> str:
    from flows.explain import check_explain, explain

    keep = _kept(args)
    check_explain(args.model, args.data, args.out, args.force, keep)
    _small_in_process(args, args.data, "explaining", flow_optional=True)
    return _run_flow(explain, args, keep=keep)


def cmd_report(args: argparse.Namespace) -> str:
    from flows.report import render_report

    return str(render_report(args.folder))


def cmd_cluster(args: argparse.Namespace) -> str:
    """``distboost cluster start|status|stop`` (``flows._kept_cluster``)."""
    from flows import _kept_cluster as kept

    if args.action == "start":
        state = kept.start(args.workers, args.threads_per_worker, args.dashboard_address,
                           args.memory_limit)
        _say(f"distboost cluster ({state['workers']} workers) at {state['address']}; "
             f"commands use it until `distboost cluster stop`")
        _say(f"Dask dashboard: {state['dashboard']}; training live: {state['live']}")
        return state["address"]
    if args.action == "stop":
        state = kept.stop()
        if state is None:
            _say("no distboost cluster runs; nothing to stop")
            return ""
        _say(f"stopped the distboost cluster at {state['address']}")
        return state["address"]
    state = kept.running()
    if state is None:
        raise ProcessLookupError("no distboost cluster runs (start one: distboost cluster start)")
    print(f"address: {state['address']}\ndashboard: {state['dashboard']}\n"
          f"training live: {state['live']}\nstarted: {state['started']} (process {state['pid']})")
    for w in kept.workers(state["address"]):
        limit = w["memory_limit"]
        print(f"worker {w['address']}: {w['threads']} thread(s), "
              + (f"memory limit {limit / 2**30:.1f} GiB" if limit else "no memory limit"))
    return state["address"]


def cmd_demo(args: argparse.Namespace) -> str:
    from distboost.demo_data import DATASETS, make_dataset, write_csv_files

    out = Path(args.out)
    if (out / "data").exists() and not args.force:
        raise FileExistsError(f"{out} already holds a demo; pass --force to run it again")
    target, description = DATASETS[args.dataset]
    _say(f"writing {args.rows:,} rows of {description} to {out / 'raw'}")
    write_csv_files(make_dataset(args.dataset, args.rows), out / "raw", n_files=4)
    _find_scheduler(args)
    from flows.pipeline import pipeline

    return _run_flow(
        pipeline,
        args,
        source=str(out / "raw"),
        output=str(out),
        target=target,
        categorical=["station"] if args.dataset == "waveform" else None,
        params={"n_estimators": args.rounds, "learning_rate": 0.2, "max_depth": 4},
        checkpoint_every=max(args.rounds // 4, 1),
        artifact_key=f"distboost-demo-{args.dataset}",
    )


COMMANDS = {
    "demo": cmd_demo,
    "prepare": cmd_prepare,
    "train": cmd_train,
    "evaluate": cmd_evaluate,
    "pipeline": cmd_pipeline,
    "predict": cmd_predict,
    "explain": cmd_explain,
    "report": cmd_report,
    "cluster": cmd_cluster,
}
NO_FLOW = ("report", "cluster")
"""Commands that run no Prefect flow."""


def _say(message: str) -> None:
    print(f"distboost: {message}", file=sys.stderr, flush=True)


def _expected_errors() -> tuple[type[BaseException], ...]:
    from flows._prefect_compat import IncompatiblePrefect

    errors: list[type[BaseException]] = [
        IncompatiblePrefect,
        ValueError,
        FileExistsError,
        FileNotFoundError,
        TypeError,
        KeyError,
    ]
    distributed = sys.modules.get("distributed")  # not imported: none of its errors raised
    if distributed is not None:
        errors.append(distributed.TimeoutError)
    errors.append(OSError)
    return tuple(errors)


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, turned into an interruption so that everything this
    command started (LocalCluster, Prefect's temporary API server, staging
    folders) is stopped and cleaned up on the way out."""


def _terminate(signum, frame) -> None:
    raise Terminated(signal.Signals(signum).name)


def _stop_on_termination() -> dict:
    """Install the handlers; returns the previous ones."""
    previous = {}
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            previous[name] = signal.signal(getattr(signal, name), _terminate)
    return previous


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``distboost`` command; returns the exit status."""
    args = build_parser().parse_args(argv)
    args.progress = not args.no_progress
    prefect_environment(verbose=args.verbose)
    previous = _stop_on_termination()
    try:
        return _run(args)
    finally:
        for name, handler in previous.items():
            signal.signal(getattr(signal, name), handler)


def _run(args: argparse.Namespace) -> int:
    from flows._prefect_compat import check_prefect_server

    started = time.perf_counter()
    try:
        if args.command not in NO_FLOW:  # every other command runs Prefect flows
            check_prefect_server()
        result = COMMANDS[args.command](args)
    except KeyboardInterrupt as exc:
        _say(f"interrupted{f' ({exc})' if isinstance(exc, Terminated) else ''}; "
             f"stopped what this command started")
        return 130
    except _expected_errors() as exc:
        if args.verbose:
            raise
        message = str(exc).strip() or type(exc).__name__
        print(f"distboost: error: {message}", file=sys.stderr)
        return 1
    if args.command not in NO_FLOW:
        _say(f"done in {time.perf_counter() - started:.0f} s")
    print(result, flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
