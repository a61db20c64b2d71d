#!/usr/bin/env bash
# The 16-core measurement of issue 39 in one prepared run (../shared/tools/cpu16/README.md):
# the carried wheels installed, W1 generated, distboost's kernels compiled (threads.py's
# warm-up), then threads.py's sections within their budgets:
#   1. in process, W1 2M rows, 50 rounds of depth 6, at 1, 2, 4, 8 and 16 threads;
#   2. the same at 16 and 8 threads with OMP_WAIT_POLICY=ACTIVE (spinning threads);
#   3. W1 10M rows, 100 rounds: in process at 16 threads, and LocalCluster(8 x 2).
# The reports go to bench/results/ and, when $OUT is set (the device tool), to $OUT too.
#
#   bash bench/cpu16.sh                                  # on the 16-core host
#   WHEELS=0 PYTHON=.venv/bin/python ROWS_SMALL=20000 ROWS_LARGE=40000 THREADS=1,2 \
#       LARGE_THREADS=2 DASK_SHAPE=1x2 bash bench/cpu16.sh   # a smoke run of the same steps
set -uo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
if [ "${WHEELS:-1}" = 1 ]; then  # the host lacks Dask, xgboost and LightGBM: carried as wheels
  "$python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
      --target "$PWD/.pkgs" .wheels-cp312/*.whl || exit 1
  export PYTHONPATH="$PWD/.pkgs:$PWD"
fi
export PYTHONUNBUFFERED=1
small=${ROWS_SMALL:-2000000}
large=${ROWS_LARGE:-10000000}
threads=${THREADS:-1,16,8,4,2}  # 1 and 16 first: a budget cut drops the middle
large_threads=${LARGE_THREADS:-16}
dask=${DASK_SHAPE:-8x2}
"$python" - <<'PY'
import importlib, os, platform
names = ("numpy", "numba", "pandas", "pyarrow", "scipy", "sklearn", "dask", "distributed",
         "xgboost", "lightgbm")
print(platform.python_version(), os.cpu_count(), "CPUs;",
      ", ".join(f"{n} {importlib.import_module(n).__version__}" for n in names))
PY
"$python" bench/w1.py --rows "$small" --partitions 8 > /dev/null || exit 1
"$python" bench/w1.py --rows "$large" --partitions 80 > /dev/null || exit 1
"$python" bench/threads.py --threads "$threads" --rows "$small" --partitions 8 \
    --systems distboost,xgboost --rounds 50 --repeats 1 --budget "${BUDGET_SMALL:-250}" \
    --out threads-cpu16-small
[ -n "${OUT:-}" ] && cp bench/results/threads-cpu16-small.* "$OUT"/  # kept if the rest overruns
# The same at the most threads with OpenMP's threads spinning (the wait policy a user may
# set; distboost's default is passive), to see what passive waiting costs on many cores.
OMP_WAIT_POLICY=ACTIVE "$python" bench/threads.py --threads "${ACTIVE_THREADS:-16,8}" \
    --rows "$small" --partitions 8 --systems distboost,xgboost --rounds 50 --repeats 1 \
    --budget "${BUDGET_ACTIVE:-60}" --out threads-cpu16-active
[ -n "${OUT:-}" ] && cp bench/results/threads-cpu16-active.* "$OUT"/
"$python" bench/threads.py --threads "$large_threads" --rows "$large" --partitions 80 \
    --systems distboost,xgboost --dask "$dask" --dask-rows "$large" --dask-partitions 80 \
    --rounds 100 --repeats 1 --budget "${BUDGET_LARGE:-190}" --out threads-cpu16-large
[ -n "${OUT:-}" ] && cp bench/results/threads-cpu16-large.* "$OUT"/
exit 0
