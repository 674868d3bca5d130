"""The package contract (CONTRIBUTING.md, section 1), checked for every paper in the catalog."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import re

import pytest

from icml26.catalog import SLUGS, chapter_path, project_root
from icml26.common.ledger import Ledger
from icml26.common.presets import PRESET_NAMES, check_expected_time

SOURCE_BASES = ("official code", "full-text summary", "abstract only", "abstract", "README", "project page")


def _package(slug):
    return importlib.import_module(f"icml26.{slug}")


def _claims(slug):
    return importlib.import_module(f"icml26.{slug}.claims")


def _notebook_code(slug) -> str:
    nb = json.loads(chapter_path(slug).read_text())
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")


def _notebook_markdown(slug) -> str:
    nb = json.loads(chapter_path(slug).read_text())
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


@pytest.mark.parametrize("slug", SLUGS)
def test_package_exports_presets_time_and_run_experiment(slug):
    pkg = _package(slug)
    for name in ("PRESETS", "get_config", "EXPECTED_TIME", "run_experiment"):
        assert hasattr(pkg, name), f"icml26.{slug} must export {name} (CONTRIBUTING.md, section 1)"
    assert tuple(pkg.PRESETS) == PRESET_NAMES, f"{slug}: presets {tuple(pkg.PRESETS)}, expected {PRESET_NAMES}"
    check_expected_time(pkg.EXPECTED_TIME, pkg.PRESETS)
    params = inspect.signature(pkg.run_experiment).parameters
    assert list(params)[:3] == ["config", "seed", "device"], f"{slug}: run_experiment{inspect.signature(pkg.run_experiment)}"
    assert params["seed"].default == 0 and params["device"].default is None
    assert all(p.default is not inspect.Parameter.empty for p in list(params.values())[3:])


@pytest.mark.parametrize("slug", SLUGS)
def test_claims_module_exports_the_contract(slug):
    claims = _claims(slug)
    for name in ("CLAIM_IDS", "SOURCE_BASIS", "STAND_INS", "build_ledger"):
        assert hasattr(claims, name), f"icml26.{slug}.claims must export {name}"
    ids = tuple(claims.CLAIM_IDS)
    assert ids == tuple(f"C{i}" for i in range(1, len(ids) + 1))
    parts = claims.SOURCE_BASIS.split(" and ")
    assert parts and all(p in SOURCE_BASES for p in parts), f"{slug}: source basis {claims.SOURCE_BASIS!r}"
    assert isinstance(claims.STAND_INS, dict) and set(claims.STAND_INS) <= set(ids)
    assert list(inspect.signature(claims.build_ledger).parameters) == ["results"]


@pytest.mark.parametrize("slug", SLUGS)
def test_every_preset_is_a_validating_frozen_dataclass(slug):
    pkg = _package(slug)
    for name, config in pkg.PRESETS.items():
        assert dataclasses.is_dataclass(config), f"{slug}.{name} is not a dataclass"
        assert type(config).__dataclass_params__.frozen, f"{slug}: the config must be frozen"
        assert "__post_init__" in vars(type(config)), f"{slug}: the config must validate itself in __post_init__"
        assert pkg.get_config(name) == config


@pytest.mark.parametrize("slug", SLUGS)
def test_a_bad_preset_name_or_field_is_refused_with_the_valid_ones(slug):
    pkg = _package(slug)
    with pytest.raises(ValueError, match="valid presets: smoke, reduced, evidence, full"):
        pkg.get_config("huge")
    with pytest.raises(ValueError, match="valid fields"):
        pkg.get_config("smoke", no_such_field=1)


@pytest.mark.parametrize("slug", SLUGS)
def test_the_chapter_uses_the_contract(slug):
    code, text = _notebook_code(slug), _notebook_markdown(slug)
    assert "set_num_threads" not in code, f"{slug}: the thread policy lives in resolve_device, not the notebook"
    assert "build_ledger(" in code, f"{slug}: the ledger cell must call claims.build_ledger(results)"
    assert "run_experiment(" in code, f"{slug}: the page must run the experiment through run_experiment"
    assert re.search(r"device_banner\([^)]*EXPECTED_TIME\[", code), f"{slug}: the banner must read EXPECTED_TIME"
    reduced = _package(slug).EXPECTED_TIME["reduced"]
    assert reduced in text, f"{slug}: the Time section must quote EXPECTED_TIME['reduced'] ({reduced!r})"


def test_no_test_module_sets_threads_at_import():
    offenders = [str(p.relative_to(project_root())) for p in (project_root() / "tests").rglob("test_*.py")
                 if re.search(r"^torch\.set_num_threads", p.read_text(), re.M)]
    assert not offenders, f"set threads in tests/conftest.py only: {offenders}"


def test_ledger_module_imports_no_torch():
    import subprocess
    import sys

    code = ("import sys, icml26.common.ledger, icml26.evidence, icml26.common.presets;"
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_build_ledger_returns_a_ledger_for_the_smoke_results_of_one_chapter():
    from icml26.evidence import from_plain, to_plain

    pkg, claims = _package("w2sg_bregman"), _claims("w2sg_bregman")
    results = pkg.run_experiment(pkg.get_config("smoke"))
    plain = json.loads(json.dumps(to_plain(results)))
    ledger = claims.build_ledger(from_plain(plain))
    assert isinstance(ledger, Ledger)
    assert ledger.check_lines() == claims.build_ledger(results).check_lines()
    assert plain["seeds"] and all(isinstance(s, int) for s in plain["seeds"])
