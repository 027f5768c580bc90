"""The README's Python example runs as printed (in a scratch folder, so its data/db is
built there)."""

import re

import pytest

from conftest import REPO

pytest.importorskip("pyspiel")


def test_readme_example(tmp_path, monkeypatch, capsys):
    text = (REPO / "README.md").read_text()
    section = text.split("\n## Python\n", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert len(code.strip().splitlines()) <= 12
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "0 [Move(pit=5, captured=2, value=0)]"
    assert out[1] == "[0 2]"
    # The game's result (the README shows the one this OpenSpiel gives with its seeds).
    returns = eval(out[2])
    assert len(returns) == 2 and sum(returns) == 0
