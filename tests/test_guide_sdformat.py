"""docs/guide/sdformat.md runs: its ```python blocks in order (one namespace, a scratch folder),
then its ``composedyn`` commands on the files those blocks wrote."""

from __future__ import annotations

import re
from pathlib import Path

from composedyn.cli import main

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "guide" / "sdformat.md"


def test_guide_examples_run(tmp_path, monkeypatch, capsys):
    text = GUIDE.read_text(encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__guide__"}
    for k, block in enumerate(re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)):
        exec(compile(block, f"sdformat.md python block {k + 1}", "exec"), namespace)
    capsys.readouterr()
    (commands,) = re.findall(r"^```bash\n(.*?)^```", text, flags=re.S | re.M)
    for line in commands.splitlines():
        args = line.split("#")[0].split()
        assert args[0] == "composedyn"
        assert main(args[1:]) == 0, line
    out = capsys.readouterr().out.splitlines()
    assert out == ["wrote pendulum.urdf: robot 'pendulum', 1 joint, floating base on 'base'",
                   "wrote left.urdf: robot 'left', 1 joint; gravity [0.0, 0.0, -9.8] m/s^2 is not part of URDF "
                   "(readers assume [0.0, 0.0, -9.81]): load it with gravity=..."]
