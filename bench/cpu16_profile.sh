#!/usr/bin/env bash
# Where the time goes at 1 and 16 threads (issue 39), in one prepared run on the 16-core host
# (../shared/tools/cpu16/README.md): W1 2M generated, then bench/profile.py at each thread
# count, in one compiled call (as in process) and wave by wave (as a Dask holder, per level:
# rows built, ns per built row x feature), each with xgboost at the same threads;
# CPROFILE=N adds the N Python functions with the most wall time, WAVES=0 leaves out the waves.
# Output to bench/results/profile-cpu16.txt and, when $OUT is set, to $OUT.
#
#   bash bench/cpu16_profile.sh                          # on the 16-core host
#   WHEELS=0 PYTHON=.venv/bin/python ROWS=20000 THREADS="1 2" bash bench/cpu16_profile.sh
set -uo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
if [ "${WHEELS:-1}" = 1 ]; then
  "$python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
      --target "$PWD/.pkgs" .wheels-cp312/*.whl || exit 1
  export PYTHONPATH="$PWD/.pkgs:$PWD"
fi
export PYTHONUNBUFFERED=1
rows=${ROWS:-2000000}
out=bench/results/${NAME:-profile-cpu16}.txt
"$python" bench/w1.py --rows "$rows" --partitions 8 > /dev/null || exit 1
{
  echo "# $(nproc) CPUs, $(date -u +%FT%TZ), $(git rev-parse --short HEAD 2>/dev/null)"
  for t in ${THREADS:-16 1 4}; do
    echo "## threads $t, in one compiled call"
    OMP_NUM_THREADS=$t timeout 200 "$python" bench/profile.py --rows "$rows" \
        --rounds "${ROUNDS:-10}" --threads "$t" --clock wall --cprofile "${CPROFILE:-0}"
    if [ "${WAVES:-1}" = 1 ]; then
      echo "## threads $t, wave by wave"
      OMP_NUM_THREADS=$t timeout 200 "$python" bench/profile.py --rows "$rows" \
          --rounds "${ROUNDS:-10}" --threads "$t" --clock wall --waves
    fi
    [ -n "${OUT:-}" ] && cp "$out" "$OUT"/ 2>/dev/null
  done
} 2>&1 | tee "$out"
[ -n "${OUT:-}" ] && cp "$out" "$OUT"/
exit 0
