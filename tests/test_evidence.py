"""Evidence records (CONTRIBUTING.md, section 4): every stored record is fresh and its statuses
follow from its stored results; a stale record, a hand-edited status and a record without
provenance each fail; the whole pipeline runs at smoke for one chapter."""

from __future__ import annotations

import json

import pytest

from icml26 import evidence
from icml26.evidence import all_records, check_record

RECORDS = all_records()


@pytest.mark.parametrize("path", RECORDS, ids=[f"{p.parent.parent.name}/{p.name}" for p in RECORDS])
def test_stored_record_is_fresh_and_follows_from_its_figures(path):
    problems = check_record(path)
    assert not problems, "\n".join(problems)


@pytest.fixture(scope="module")
def smoke_record():
    """The pipeline end to end at smoke for one chapter: run_experiment -> build_ledger -> record."""
    return evidence.run_record("w2sg_bregman", "smoke", "cpu")


def _store(record, tmp_path):
    path = tmp_path / record["slug"] / "evidence" / f"{record['scale']}-{record['device']}.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(record))
    return path


def test_a_sound_smoke_record_passes(smoke_record, tmp_path):
    assert check_record(_store(smoke_record, tmp_path)) == []
    prov = smoke_record["provenance"]
    assert prov["seeds"] and prov["wall_s"] > 0 and prov["peak_memory_mb"]["host"] > 0
    assert prov["source_digest"] == evidence.source_digest("w2sg_bregman") and prov["digest"] == "code"


def test_a_stale_record_fails_and_names_the_refresh_command(smoke_record, tmp_path):
    stale = json.loads(json.dumps(smoke_record))
    stale["provenance"]["source_digest"] = "0" * 64
    problems = check_record(_store(stale, tmp_path))
    assert any("stale" in p and "make evidence CHAPTER=w2sg_bregman SCALE=smoke DEVICE=cpu" in p for p in problems)


def test_a_hand_edited_status_fails(smoke_record, tmp_path):
    edited = json.loads(json.dumps(smoke_record))
    claim = edited["ledger"]["claims"][0]
    claim["status"] = "NOT REPRODUCED" if claim["status"] == "REPRODUCED" else "REPRODUCED"
    problems = check_record(_store(edited, tmp_path))
    assert any("does not follow from the stored results" in p for p in problems), problems


def test_a_hand_edited_fragile_flag_fails(smoke_record, tmp_path):
    edited = json.loads(json.dumps(smoke_record))
    claim = edited["ledger"]["claims"][0]
    claim["fragile"] = not claim["fragile"]
    assert any("does not follow" in p for p in check_record(_store(edited, tmp_path)))


@pytest.mark.parametrize("key", ["seeds", "hardware", "source_digest", "versions"])
def test_a_record_without_provenance_fails(smoke_record, tmp_path, key):
    bare = json.loads(json.dumps(smoke_record))
    del bare["provenance"][key]
    assert any(f"provenance lacks {key}" in p for p in check_record(_store(bare, tmp_path)))


def test_a_record_stored_under_another_chapter_fails(smoke_record, tmp_path):
    moved = json.loads(json.dumps(smoke_record))
    moved["slug"] = "w2sg_bregman"
    path = tmp_path / "tam" / "evidence" / "smoke-cpu.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(moved))
    assert any("wrong name" in p for p in check_record(path))


def test_record_paths_refuse_unknown_scales_devices_and_chapters():
    with pytest.raises(ValueError, match="allowed: evidence, full"):
        evidence.record_path("tam", "reduced", "cpu")
    with pytest.raises(ValueError, match="allowed: cpu, cuda, mps"):
        evidence.record_path("tam", "evidence", "tpu")
    with pytest.raises(ValueError, match="valid chapters"):
        evidence.record_dir("no_such_paper")


def test_results_must_be_plain_data():
    import numpy as np

    assert evidence.to_plain({"a": np.arange(3), 1: (np.float64(0.5), float("nan"))}) == \
        {"a": [0, 1, 2], "1": [0.5, {"nonfinite": "nan"}]}
    assert np.isnan(evidence.from_plain({"x": {"nonfinite": "nan"}})["x"])
    with pytest.raises(TypeError, match="plain data"):
        evidence.to_plain({"model": object()})


def test_a_record_whose_own_preset_changed_is_stale(smoke_record, tmp_path):
    changed = json.loads(json.dumps(smoke_record))
    field = next(iter(changed["provenance"]["config"]))
    changed["provenance"]["config"][field] = "something else"
    problems = check_record(_store(changed, tmp_path))
    assert any("the smoke preset changed" in p and field in p for p in problems), problems


def test_a_record_with_a_bytes_digest_is_checked_byte_for_byte(smoke_record, tmp_path):
    legacy = json.loads(json.dumps(smoke_record))
    legacy["provenance"]["digest"] = "bytes"
    legacy["provenance"]["source_digest"] = evidence.source_digest("w2sg_bregman", "bytes")
    assert check_record(_store(legacy, tmp_path)) == []
    legacy["provenance"]["source_digest"] = evidence.source_digest("w2sg_bregman", "code")
    assert any("stale" in p for p in check_record(_store(legacy, tmp_path / "again")))
    with pytest.raises(ValueError, match="unknown digest kind"):
        evidence.source_digest("w2sg_bregman", "lines")


CODE = '''"""Module docstring."""
def spread(values, scale=2.0):
    """Eq. 3: the spread."""
    # a comment
    return [scale * v for v in values if v > 0] + ["a long message " "in two parts"]
'''


def _code(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return evidence._code_of(path)


def test_the_code_digest_ignores_layout_comments_and_docstrings(tmp_path):
    reflowed = CODE.replace('"""Eq. 3: the spread."""', '"""Eq. 3 of the paper:\n    the spread."""')
    reflowed = reflowed.replace("    # a comment\n", "").replace(
        "return [scale * v for v in values if v > 0]", "return [\n        scale * v\n        for v in values if v > 0\n    ]")
    reflowed = reflowed.replace('"a long message " "in two parts"', '"a long message in two parts"')
    assert _code(tmp_path, "a.py", CODE) == _code(tmp_path, "b.py", reflowed)
    for edit in (("scale=2.0", "scale=2.5"), ("v > 0", "v >= 0"), ("in two parts", "in 2 parts")):
        assert _code(tmp_path, "a.py", CODE) != _code(tmp_path, "c.py", CODE.replace(*edit)), edit


def test_the_code_digest_of_config_leaves_out_only_the_preset_tables(tmp_path):
    config = ("from dataclasses import dataclass\n@dataclass\nclass C:\n    steps: int = 100\n"
              "PRESETS = {'reduced': C(), 'evidence': C(steps=300)}\nEXPECTED_TIME = {'reduced': 'a minute'}\n")
    base = _code(tmp_path, "config.py", config)
    (tmp_path / "other").mkdir()
    presets_changed = config.replace("'reduced': C()", "'reduced': C(steps=50)").replace("a minute", "30 s")
    assert _code(tmp_path / "other", "config.py", presets_changed) == base
    assert _code(tmp_path / "other", "config.py", config.replace("int = 100", "int = 120")) != base
    assert _code(tmp_path / "other", "not_config.py", config) != base
