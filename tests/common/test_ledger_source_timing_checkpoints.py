import json

import pytest
import torch

from icml26.common import (Checkpointer, Timer, format_figure, load_checkpoint, read_chapter_record,
                           report_claim, save_checkpoint, source_of)
from icml26.common.claims import parse_claim_block


def test_report_claim_prints_three_lines_and_computes_the_verdict(capsys):
    result = report_claim("A beats B", {"error_a": 0.01234, "error_b": 0.5, "seeds": 10},
                          {"a below b": 0.01234 < 0.5})
    out = capsys.readouterr().out.splitlines()
    assert out == ["Claim: A beats B", "Measured: error_a=0.012, error_b=0.5, seeds=10",
                   "Verdict: REPRODUCED"]
    assert result.reproduced


def test_one_failed_check_gives_not_reproduced(capsys):
    result = report_claim("A beats B", {"x": 1.0}, {"first": True, "second": False})
    assert result.verdict == "NOT REPRODUCED"
    assert capsys.readouterr().out.endswith("Verdict: NOT REPRODUCED\n")


@pytest.mark.parametrize("claim, measured, checks, error", [
    ("", {"x": 1}, {"c": True}, ValueError),
    ("two\nlines", {"x": 1}, {"c": True}, ValueError),
    ("ok", {}, {"c": True}, ValueError),
    ("ok", {"x": 1}, {}, ValueError),
    ("ok", {"x": 1}, {"c": "REPRODUCED"}, TypeError),
])
def test_report_claim_rejects_malformed_input(claim, measured, checks, error):
    with pytest.raises(error):
        report_claim(claim, measured, checks)


def test_figures_are_rounded_coarsely():
    assert format_figure(0.123456) == "0.12"
    assert format_figure(123456.7, digits=3) == "1.23e+05"
    assert format_figure(True) == "yes" and format_figure(3) == "3"


def test_stored_claim_is_read_back_from_a_notebook(tmp_path):
    cell = {"cell_type": "code", "source": "# NBVAL_CHECK_OUTPUT\nreport_claim(...)", "metadata": {},
            "outputs": [{"output_type": "stream", "name": "stdout",
                         "text": ["Claim: c\n", "Measured: m=1\n", "Verdict: REPRODUCED\n"]}]}
    nb = {"cells": [cell], "metadata": {"papermill": {"duration": 42.5, "parameters": {}}},
          "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "demo.ipynb"
    path.write_text(json.dumps(nb))
    record = read_chapter_record(path)
    assert (record.slug, record.claim, record.measured, record.verdict, record.duration_s) == (
        "demo", "c", "m=1", "REPRODUCED", 42.5)
    assert parse_claim_block("Claim: c\nVerdict: x") is None


def test_source_of_returns_the_real_source():
    assert source_of(format_figure).startswith("def format_figure(")
    with pytest.raises(TypeError, match="cannot show the source"):
        source_of(1)


def test_timer_measures_wall_time_and_memory():
    with Timer("cpu") as timer:
        sum(range(200000))
    assert 0 < timer.seconds < 5 and timer.peak_mb > 0


def test_checkpoints_round_trip_atomically(tmp_path):
    state = {"w": torch.arange(4.0), "step": 3, "name": "run"}
    path = save_checkpoint(tmp_path / "a" / "ckpt.pt", state)
    loaded = load_checkpoint(path)
    assert torch.equal(loaded["w"], state["w"]) and loaded["step"] == 3
    assert [p.name for p in path.parent.iterdir()] == ["ckpt.pt"]  # no temporary left behind
    tensors = save_checkpoint(tmp_path / "t.safetensors", {"w": torch.ones(2, 2)})
    assert torch.equal(load_checkpoint(tensors)["w"], torch.ones(2, 2))
    with pytest.raises(TypeError, match="tensors only"):
        save_checkpoint(tmp_path / "bad.safetensors", {"step": 1})
    with pytest.raises(FileNotFoundError):
        load_checkpoint(tmp_path / "missing.pt")


def test_loading_refuses_pickled_code(tmp_path):
    path = tmp_path / "evil.pt"
    torch.save({"payload": _Evil()}, path)
    with pytest.raises(Exception, match="(?i)weights_only|unsupported|global"):
        load_checkpoint(path)


class _Evil:
    def __reduce__(self):
        return (print, ("pwned",))


def test_checkpointer_resumes_from_the_latest_and_prunes(tmp_path):
    keeper = Checkpointer(tmp_path / "run", keep=2)
    assert keeper.latest() is None
    for step in (1, 2, 3):
        keeper.save(step, {"w": torch.full((2,), float(step))})
    step, state = keeper.latest()
    assert step == 3 and torch.equal(state["w"], torch.full((2,), 3.0))
    assert len(list((tmp_path / "run").iterdir())) == 2
    with pytest.raises(ValueError):
        Checkpointer(tmp_path, keep=0)
