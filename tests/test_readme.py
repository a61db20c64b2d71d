"""The README stays true: its two set-up commands are as documented, and every
other code block runs, in order, in one fresh folder (as a reader would)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
SETUP_MARKERS = ("main-command", "test-command")


def _blocks():
    """(language, code) of every fenced block except the two set-up commands."""
    text = README.read_text()
    out = []
    for m in re.finditer(r"(<!-- ([\w-]+) -->\s*)?```(\w+)\n(.*?)\n```", text, re.DOTALL):
        if m.group(2) in SETUP_MARKERS:
            continue
        out.append((m.group(3), m.group(4)))
    return out


def test_two_setup_commands():
    text = README.read_text()
    for marker, ending in (("main-command", "distboost demo"), ("test-command", "pytest")):
        m = re.search(rf"<!-- {marker} -->\s*```bash\n(.*?)\n```", text, re.DOTALL)
        assert m, marker
        command = m.group(1).strip()
        assert "\n" not in command and command.endswith(ending)


@pytest.mark.slow
@pytest.mark.timeout(2400)  # some 26 blocks, each its own process or command (~15 min)
def test_every_block_runs_in_order(tmp_path):
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "prefect-home"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PREFECT_API_URL", None)
    blocks = _blocks()
    assert [lang for lang, _ in blocks].count("python") >= 4 and len(blocks) >= 8
    for index, (lang, code) in enumerate(blocks):
        if lang == "python":
            script = tmp_path / f"block_{index}.py"
            script.write_text(code)
            cmd = [sys.executable, str(script)]
        else:
            cmd = ["bash", "-e", "-c", code]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=tmp_path,
                             env=env, check=False)
        assert out.returncode == 0, f"block {index} ({lang}):\n{code}\n---\n{out.stderr[-4000:]}"
    assert (tmp_path / "runs" / "report" / "report.html").exists()
    assert (tmp_path / "pd_x1.png").exists() and (tmp_path / "pd_x1_x2.png").exists()
