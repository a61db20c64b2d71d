"""bench/report_screenshot.py: trimming, the size limit, and (where Chromium
is installed) a real page photographed."""

import importlib.util
import io
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "report_screenshot.py"
spec = importlib.util.spec_from_file_location("report_screenshot", SCRIPT)
shot = importlib.util.module_from_spec(spec)
spec.loader.exec_module(shot)


def test_blank_space_below_the_page_is_trimmed():
    pixels = np.full((500, 300, 3), 255, np.uint8)
    pixels[100:120, 10:50] = 0  # the page's last content ends at row 119
    out = shot.trimmed(Image.fromarray(pixels), margin=40)
    assert out.size == (300, 160)


def test_png_is_scaled_down_under_the_limit(monkeypatch):
    noise = np.random.default_rng(0).integers(0, 256, (600, 600, 3), dtype=np.uint8)
    monkeypatch.setattr(shot, "MAX_BYTES", 300_000)
    data = shot.small_png(Image.fromarray(noise))
    assert len(data) <= 300_000
    assert Image.open(io.BytesIO(data)).width < 600


@pytest.mark.skipif(not any(shutil.which(n) for n in ("chromium", "chromium-browser",
                                                          "google-chrome")),
                    reason="no Chromium installed")
def test_chromium_draws_the_page(tmp_path):
    page = tmp_path / "report.html"
    page.write_text('<html><body style="margin:0"><div style="height:300px;background:#000">'
                    "</div></body></html>")
    image = shot.trimmed(shot.photograph(page, 1200))
    assert image.width == shot.WIDTH and 300 <= image.height <= 360
    assert np.asarray(image)[150, 700].tolist() == [0, 0, 0]
