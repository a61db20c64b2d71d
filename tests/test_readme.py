"""Every Python block of the README runs; the two commands stay as documented."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _blocks(lang):
    return re.findall(rf"```{lang}\n(.*?)\n```", README.read_text(), re.DOTALL)


@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_python_block_runs(index, tmp_path):
    code = _blocks("python")[index]
    script = tmp_path / f"readme_{index}.py"
    script.write_text(code)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=600, cwd=tmp_path, check=False)
    assert out.returncode == 0, out.stderr[-3000:]


def test_two_setup_commands():
    text = README.read_text()
    for marker, ending in (("main-command", "distboost demo"), ("test-command", "pytest")):
        m = re.search(rf"<!-- {marker} -->\s*```bash\n(.*?)\n```", text, re.DOTALL)
        assert m, marker
        command = m.group(1).strip()
        assert "\n" not in command and command.endswith(ending)
