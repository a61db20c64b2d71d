"""Screenshot of the /distboost dashboard page in the middle of a fit.

    python bench/dashboard_screenshot.py [--out bench/results/distboost-dashboard.png]

Starts a LocalCluster with the distboost page (``distboost.dashboard``),
trains a GradientBoostingClassifier on ESL's example 10.2 with a validation
set, and once a third of the rounds have run, photographs the page with
headless Chromium (Debian: ``apt-get install chromium``). Needs a few CPU
seconds, not a benchmark.
"""

from __future__ import annotations

import argparse
import base64
import json
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import dask.dataframe as dd
from distributed import Client, LocalCluster

import distboost as db
from distboost.dashboard import PAGE, SCHEDULER_KWARGS
from distboost.demo_data import hastie_10_2
from distboost.training.events import TOPIC

ROUNDS = 300
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--no-first-run", "--hide-scrollbars", "--window-size=1400,1000")


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    raise SystemExit("no Chromium found: apt-get install -y chromium")


def _page_socket(port: int, deadline: float) -> str:
    """The DevTools websocket of the browser's page."""
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json", timeout=2) as r:
                pages = [p for p in json.loads(r.read()) if p["type"] == "page"]
            if pages:
                return pages[0]["webSocketDebuggerUrl"]
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError("Chromium did not open the page")
        time.sleep(0.2)


def screenshot(url: str, out: Path, settle: float = 6.0) -> None:
    """Headless Chromium's picture of ``url`` once its Bokeh plots have drawn
    (``--screenshot`` would shoot before the page's websocket delivers them)."""
    from websockets.sync.client import connect

    port = _free_port()
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile:
        browser = subprocess.Popen(
            [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
             f"--remote-debugging-port={port}", url],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            socket_url = _page_socket(port, time.monotonic() + 60)
            time.sleep(settle)
            with connect(socket_url, max_size=2**26) as ws:
                ws.send(json.dumps({"id": 1, "method": "Page.captureScreenshot"}))
                reply = json.loads(ws.recv(timeout=60))
        finally:
            browser.terminate()
            browser.wait(timeout=30)
    out.write_bytes(base64.b64decode(reply["result"]["data"]))
    from PIL import Image

    Image.open(out).convert("RGB").quantize(colors=64).save(out, optimize=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rounds_logged(client) -> int:
    return sum(e["kind"] == "round" for _, e in client.get_events(TOPIC))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="bench/results/distboost-dashboard.png")
    out = Path(parser.parse_args().out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    frame = hastie_10_2(400_000, 0)  # long enough a fit to photograph it running
    X, y = dd.from_pandas(frame.drop(columns="y"), npartitions=5), dd.from_pandas(frame["y"], 5)
    train, valid = (X.partitions[:4], y.partitions[:4]), (X.partitions[4:], y.partitions[4:])
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address="127.0.0.1:0",
                      scheduler_kwargs=SCHEDULER_KWARGS) as cluster, Client(cluster) as client:
        port = client.scheduler_info()["services"]["dashboard"]
        clf = db.GradientBoostingClassifier(n_estimators=ROUNDS, learning_rate=0.2, max_depth=3,
                                            verbose=True, client=client)
        fit = threading.Thread(target=clf.fit, args=train,
                               kwargs={"eval_set": [valid], "early_stopping_rounds": 40})
        fit.start()
        while rounds_logged(client) < ROUNDS // 3 and fit.is_alive():
            time.sleep(0.2)
        screenshot(f"http://127.0.0.1:{port}{PAGE}", out)
        fit.join()
    print(out, f"{out.stat().st_size / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
