"""`make gpu-check`'s harness (icml26.gpucheck), on the CPU: the ledger parser, the loop projection,
the in-process executor with its time box, the whole harness on two small notebooks, the clear
refusal without a GPU, and the runner's scratch output. The GPU run itself is `make gpu-check`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from icml26 import gpucheck
from icml26.catalog import written_chapters

ROOT = Path(__file__).resolve().parents[1]


def _notebook(cells, stored_check: str | None = None) -> dict:
    out = []
    for source, tags in cells:
        out.append({"cell_type": "code", "metadata": {"tags": tags}, "source": source, "outputs": [],
                    "execution_count": None})
        if stored_check is not None and "nbval-check-output" in tags:
            out[-1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": stored_check}]
    return {"cells": out, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


SETUP = ("import time\nfrom icml26.common import progress, resolve_device\n", [])
PARAMS = ("SCALE = 'reduced'\nDEVICE = 'auto'\nSEED = 0\n", ["parameters"])
LOOP = ("device = resolve_device(DEVICE)\nsteps = {'smoke': 3, 'reduced': 5, 'full': 10**6}[SCALE]\n"
        "for seed in progress(range(2), desc='seeds'):\n"
        "    for step in progress(range(steps), desc='train'):\n"
        "        time.sleep(0.01)\n", [])
CHECK = ("print('C1 REPRODUCED: it runs')\nprint('E1 (ours) NOT REPRODUCED (fragile): ours')\n"
         "print('Verdict: REPRODUCED (1 of 1 claims)')\n", ["nbval-check-output"])


@pytest.fixture(scope="module")
def notebooks(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("chapters")
    (folder / "alpha.ipynb").write_text(json.dumps(_notebook([SETUP, PARAMS, LOOP, CHECK],
                                                             stored_check="C1 NOT REPRODUCED: it runs\nVerdict: NOT REPRODUCED\n")))
    (folder / "beta.ipynb").write_text(json.dumps(_notebook([SETUP, PARAMS, ("raise RuntimeError('boom')", [])])))
    return folder


def test_ledger_lines_use_the_ledgers_grammar():
    text = ("C1 REPRODUCED: a\nC2 PARTLY REPRODUCED (fragile): b\nE1 (ours) NOT REPRODUCED: c\n"
            "C3 NOT TESTED: d\nC4 INCONCLUSIVE: e\nVerdict: PARTLY REPRODUCED (2 of 4)\nnoise C5 REPRODUCED: no\n")
    ledger = gpucheck.parse_ledger(text)
    assert ledger["claims"] == {"C1": "REPRODUCED", "C2": "PARTLY REPRODUCED", "E1": "NOT REPRODUCED",
                                "C3": "NOT TESTED", "C4": "INCONCLUSIVE"}
    assert ledger["fragile"] == ["C2"] and ledger["verdicts"] == ["PARTLY REPRODUCED"]
    assert gpucheck.ledger_short(ledger) == "C1 R, C2 PR*, E1 NR, C3 NT, C4 INC; V: PR"
    only = gpucheck.parse_ledger("Claim: x\nVerdict: INCONCLUSIVE (2 tested claims: 2 inconclusive)\n")
    assert only == {"claims": {}, "fragile": [], "verdicts": ["INCONCLUSIVE"]}
    assert gpucheck.same_ledger(only, only) is True
    assert gpucheck.same_ledger(only, ledger) is False
    assert gpucheck.same_ledger(only, gpucheck.parse_ledger("")) is None
    marked = gpucheck.parse_ledger("C1 REPRODUCED (fragile) (stand-in): x\nVerdict: PARTLY REPRODUCED (0 of 1)\n")
    assert marked["claims"] == {"C1": "REPRODUCED"} and marked["fragile"] == ["C1"]
    assert gpucheck.ledger_short(None) == "-"


@pytest.mark.parametrize("slug", written_chapters())
def test_every_stored_chapter_has_a_readable_ledger(slug):
    ledger = gpucheck.stored_ledger(ROOT / "chapters" / f"{slug}.ipynb")
    assert ledger["claims"] or ledger["verdicts"], f"{slug}: no status found in the stored check cell"


def test_loop_projection_multiplies_nested_loops():
    bars = [{"desc": "seeds", "total": 3, "n": 0, "start": 10.0, "last": None, "closed": False},
            {"desc": "train", "total": 1000, "n": 50, "start": 12.0, "last": 17.0, "closed": False},
            {"desc": "eval", "total": 5, "n": 5, "start": 11.0, "last": 11.5, "closed": True}]
    out = gpucheck.loop_projection(bars, started=4.0, now=17.0)
    assert out["loop"] == "train" and out["it_per_s"] == pytest.approx(10.0)
    assert out["projected_s"] == pytest.approx(6.0 + 3 * 100.0)  # before the seeds loop + 3 passes of 100 s
    assert gpucheck.loop_projection([], 0.0, 1.0)["projected_s"] is None


def test_without_a_gpu_it_says_so_and_exits_2():
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    for name in ("auto", "cuda"):
        with pytest.raises(SystemExit, match="(?s)no CUDA GPU here.*DEVICE=cpu"):
            gpucheck.resolve(name)
    result = subprocess.run([sys.executable, "-m", "icml26.gpucheck", "--out", "/nonexistent"], capture_output=True,
                            text=True, env={**gpucheck.child_environment("cpu"), "DEVICE": "auto"})
    assert result.returncode != 0 and "no CUDA GPU" in result.stderr


def test_cpu_harness_end_to_end(notebooks, tmp_path):
    """The same harness as on a GPU, on the CPU with a 1 s box: device tests, reduced runs (one
    chapter fails), full slices; JSON and markdown written; the stored notebooks untouched."""
    before = {p.name: p.read_bytes() for p in notebooks.iterdir()}
    cmd = [sys.executable, "-m", "icml26.gpucheck", "--device", "cpu", "--box", "1", "--notebooks", str(notebooks),
           "--out", str(tmp_path), "--tests", "tests/common/test_device_seed_presets.py"]
    result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=240,
                            env=gpucheck.child_environment("cpu"))
    assert result.returncode == 1, result.stdout + result.stderr  # beta fails, so the check fails
    report = json.loads((tmp_path / "gpu-check.json").read_text())
    assert report["tests"]["ok"] and report["tests"]["counts"].get("passed", 0) >= 1, report["tests"]
    alpha, beta = report["chapters"]["alpha"], report["chapters"]["beta"]
    assert alpha["reduced"]["ok"] and alpha["reduced"]["ledger"]["claims"] == {"C1": "REPRODUCED", "E1": "NOT REPRODUCED"}
    assert alpha["stored"]["verdicts"] == ["NOT REPRODUCED"]
    assert not beta["reduced"]["ok"] and "RuntimeError: boom" in beta["reduced"]["error"]
    full = alpha["full"]
    assert full["timed_out"] and full["projection"]["loop"] == "train"
    assert full["projection"]["projected_s"] > 2 * 10**6 / 200  # two seeds of 10**6 sleeps of 10 ms, at least
    markdown = (tmp_path / "gpu-check.md").read_text()
    assert "| alpha |" in markdown and "**NO**" in markdown and "boom" in markdown
    assert (tmp_path / "gpu-check" / "alpha.reduced.ipynb").is_file()
    assert {p.name: p.read_bytes() for p in notebooks.iterdir()} == before


def test_executor_injects_parameters_and_refuses_unknown_ones(notebooks, tmp_path):
    out = tmp_path / "r.json"
    ok = subprocess.run([sys.executable, "-m", "icml26.gpucheck", "exec", str(notebooks / "alpha.ipynb"), "--result",
                         str(out), "-pSCALE='smoke'", "-pDEVICE='cpu'"], capture_output=True, text=True,
                        env=gpucheck.child_environment("cpu"), timeout=120)
    record = json.loads(out.read_text())
    assert ok.returncode == 0 and record["ok"], record
    bad = subprocess.run([sys.executable, "-m", "icml26.gpucheck", "exec", str(notebooks / "alpha.ipynb"), "--result",
                          str(out), "-pWIDTH=3"], capture_output=True, text=True,
                         env=gpucheck.child_environment("cpu"), timeout=120)
    record = json.loads(out.read_text())
    assert bad.returncode == 0 and not record["ok"] and "WIDTH" in record["error"]


def test_runner_output_dir_leaves_the_stored_notebook_alone(tmp_path, monkeypatch):
    pytest.importorskip("papermill")
    import icml26.runner as runner

    stored = tmp_path / "chapters" / "dq_sync.ipynb"
    stored.parent.mkdir()
    nb = _notebook([PARAMS, ("print(SCALE, DEVICE)", [])])
    nb["metadata"]["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    stored.write_text(json.dumps(nb))
    original = stored.read_bytes()
    monkeypatch.setattr(runner, "chapter_path", lambda slug: stored)
    runner.run_chapter("dq_sync", {"SCALE": "smoke", "DEVICE": "cpu", "SEED": 0}, tmp_path / "scratch")
    assert stored.read_bytes() == original
    executed = json.loads((tmp_path / "scratch" / "dq_sync.ipynb").read_text())
    printed = "".join("".join(o.get("text", "")) for c in executed["cells"] for o in c.get("outputs", []))
    assert "smoke cpu" in printed
