"""docs/tutorial.md runs as written: its Python blocks, in order, as one script."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_tutorial_code_blocks_run(tmp_path):
    text = open(os.path.join(ROOT, "docs", "tutorial.md")).read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 6
    script = tmp_path / "tutorial.py"
    script.write_text("\n\n".join(blocks))   # one file: @pl.program reads its source with inspect
    env = dict(os.environ)
    env.pop("PYPTO_TRACE", None)
    cp = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600,
                        cwd=str(tmp_path), env=env)
    assert cp.returncode == 0, cp.stdout[-2000:] + cp.stderr[-4000:]
    assert "critical path: 2 tasks" in cp.stdout
