"""Screenshot of an evaluation report (``report.html``) in headless Chromium.

    python -m flows.cli demo --out /tmp/demo --rows 4000 --rounds 60
    python -m flows.cli demo --dataset waveform --out /tmp/demo3 --rows 3000 --rounds 40
    python bench/report_screenshot.py /tmp/demo/report/report.html bench/results/report-binary.png
    python bench/report_screenshot.py /tmp/demo3/report/report.html \\
        bench/results/report-multiclass.png

Photographs the whole page (1400 px wide, as tall as it needs), trims the
blank space below it and scales it down until the PNG is under 1.5 MB.
Needs Chromium (Debian: ``apt-get install chromium``); not a benchmark.
"""

from __future__ import annotations

import argparse
import io
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image

WIDTH = 1400
MAX_BYTES = 1_500_000
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--no-first-run", "--hide-scrollbars")


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    raise SystemExit("no Chromium found: apt-get install -y chromium")


def photograph(page: Path, height: int) -> Image.Image:
    """The page as Chromium draws it in a window WIDTH x height."""
    with tempfile.TemporaryDirectory() as tmp:
        shot = Path(tmp) / "page.png"
        subprocess.run([chromium(), *FLAGS, f"--screenshot={shot}",
                        f"--window-size={WIDTH},{height}", f"--user-data-dir={tmp}/profile",
                        page.resolve().as_uri()],
                       check=True, capture_output=True, timeout=120)
        return Image.open(shot).convert("RGB")


def trimmed(image: Image.Image, margin: int = 40) -> Image.Image:
    """``image`` without the blank rows below the page's last content."""
    pixels = np.asarray(image)
    used = np.flatnonzero((pixels < 250).any(axis=(1, 2)))
    bottom = min(len(pixels), (used[-1] + 1 + margin) if used.size else len(pixels))
    return image.crop((0, 0, image.width, bottom))


def small_png(image: Image.Image) -> bytes:
    """PNG bytes of ``image``, scaled down until under MAX_BYTES."""
    scale = 1.0
    while True:
        size = (round(image.width * scale), round(image.height * scale))
        buf = io.BytesIO()
        image.resize(size, Image.LANCZOS).save(buf, format="PNG", optimize=True)
        if buf.tell() <= MAX_BYTES or scale < 0.3:
            return buf.getvalue()
        scale *= 0.85


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="report.html")
    parser.add_argument("out", type=Path, help="PNG to write")
    parser.add_argument("--height", type=int, default=16000,
                        help="window height: at least the page's")
    args = parser.parse_args()
    data = small_png(trimmed(photograph(args.report, args.height)))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(data)
    print(f"{args.out}: {len(data) / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
