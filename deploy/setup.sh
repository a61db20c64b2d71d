#!/bin/sh
# Wait for the Prefect API, make the work pool if it is missing, register the deployments.
#
# Run from the repository root (the image's /opt/distboost) with PREFECT_API_URL set:
# docker-compose.yml's one-shot service "prefect-setup" and kubernetes/prefect.yaml's Job
# "prefect-deploy" run it. It exits non-zero, saying why, when the API does not answer
# within PREFECT_SETUP_TIMEOUT seconds (default 300) or a step fails; run again, it
# leaves an existing pool as it is and updates the deployments.
set -eu
: "${PREFECT_API_URL:?set PREFECT_API_URL to the Prefect server API, e.g. http://prefect-server:4200/api}"
POOL=${DISTBOOST_WORK_POOL:-distboost-process}
timeout=${PREFECT_SETUP_TIMEOUT:-300}
deadline=$(($(date +%s) + timeout))

api_answers() {
    python -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + "/health", timeout=5)' \
        "$PREFECT_API_URL" 2> /dev/null
}

until api_answers; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
        echo "prefect-setup: the Prefect API at $PREFECT_API_URL did not answer within" \
             "$timeout s; check that the Prefect server runs and that PREFECT_API_URL" \
             "names it" >&2
        exit 1
    fi
    sleep 2
done
echo "prefect-setup: the Prefect API at $PREFECT_API_URL answers"

if prefect work-pool inspect "$POOL" > /dev/null 2>&1; then
    echo "prefect-setup: work pool '$POOL' exists"
else
    prefect work-pool create "$POOL" --type process
fi
prefect --no-prompt deploy --all --prefect-file deploy/prefect.yaml
