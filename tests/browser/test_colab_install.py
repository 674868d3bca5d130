"""The Colab path, played here: a fresh virtual environment pinned to Colab's own versions of torch's
neighbours (COLAB_PINS: numpy, scipy, pandas, matplotlib, IPython and ipywidgets 7.7.1, whose widget
frontend Colab keeps) runs each chapter's setup-cell install logic against this repository as a
local git URL (a non-editable install), then imports icml26.common and the chapter's module. torch
and every pinned package must be exactly the ones that were there before. Outside Colab the same
logic must do nothing at all. Then one chapter runs its `smoke` preset, widget cells included, on
ipywidgets 7.7.1 and IPython 7.34 (icml26.gpucheck's notebook executor, in that environment).

The repository is a clean clone of HEAD into a temporary folder, with the working tree's changes
(tracked and untracked files that git does not ignore) committed on top, so an uncommitted
chapter is tested as it would be pushed; on a clean checkout that is HEAD itself.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from bookinfo import ROOT, repository, toc_files

COLAB_TEST = '"google.colab" in sys.modules'
CHAPTERS = [name.removeprefix("chapters/") for name in toc_files() if name.startswith("chapters/")]
PINS = dict(
    line.strip().split("==", 1)
    for line in (ROOT / "requirements.txt").read_text().splitlines()
    if re.match(r"^(torch)==", line.strip())
)
# What Colab's default runtime ships (its Python is 3.12; these versions also install on 3.11):
# the installed versions a reader's `pip install` must leave alone.
COLAB_PINS = {"numpy": "2.0.2", "scipy": "1.16.3", "pandas": "2.2.2", "matplotlib": "3.10.0",
              "ipython": "7.34.0", "ipywidgets": "7.7.1"}
KEPT = ("torch", *COLAB_PINS)
SMOKE_CHAPTER = "w2sg_bregman"  # seconds at `smoke`, and it has widget cells

# Runs inside the fresh environment: executes the extracted setup logic and records every
# process it starts. `get_ipython()` covers cells written with %pip / !pip (transformed by
# IPython outside; inside, %pip runs `python -m pip`, as IPython's magic does).
RUNNER = r'''
import json, os, shlex, subprocess, sys, types

calls = []
_Popen = subprocess.Popen
class SpyPopen(_Popen):
    def __init__(self, args, *a, **k):
        calls.append(args if isinstance(args, str) else [str(x) for x in args])
        super().__init__(args, *a, **k)
subprocess.Popen = SpyPopen
_system = os.system
os.system = lambda cmd: (calls.append(cmd), _system(cmd))[1]

class Shell:
    def run_line_magic(self, name, line):
        if name != "pip":
            raise RuntimeError(f"setup cell uses %{name}, which this test does not emulate")
        subprocess.run([sys.executable, "-m", "pip", *shlex.split(line)], check=True)
    def system(self, cmd):
        subprocess.run(cmd, shell=True, check=True)
    getoutput = system

if sys.argv[2] == "colab":
    sys.modules["google"] = types.ModuleType("google")
    sys.modules["google.colab"] = types.ModuleType("google.colab")
code = open(sys.argv[1]).read()
exec(compile(code, "setup-cell", "exec"), {"__name__": "__main__", "get_ipython": Shell})
print("CALLS=" + json.dumps(calls))
'''

PROBE = r'''
import importlib.metadata as md, json, sys
out = {}
for name in sys.argv[1].split(","):
    dist = md.distribution(name)
    record = dist.locate_file(dist._path.name + "/RECORD") if hasattr(dist, "_path") else None
    st = __import__("os").stat(record) if record else None
    out[name] = {"version": dist.version, "dist_info": str(dist._path), "record": [st.st_ino, st.st_mtime_ns] if st else None}
out["all"] = sorted(d.metadata["Name"].lower() for d in md.distributions())
if len(sys.argv) > 2:
    import importlib
    for module in sys.argv[2:]:
        importlib.import_module(module)
    import icml26, torch, numpy
    out["icml26_file"] = icml26.__file__
    out["imported"] = {"torch": torch.__version__, "numpy": numpy.__version__}
    import ipywidgets
    out["imported"]["ipywidgets"] = ipywidgets.__version__
print("PROBE=" + json.dumps(out))
'''


def _run(cmd, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise AssertionError(f"{cmd} failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result


def _tagged(output: str, tag: str):
    line = next(line for line in output.splitlines() if line.startswith(tag + "="))
    return json.loads(line[len(tag) + 1 :])


def setup_logic(notebook: Path) -> str:
    """The chapter's install logic: the setup cell's `if "google.colab" in sys.modules:` block
    and the imports before it, with IPython syntax (%pip, !pip) turned into Python."""
    from IPython.core.inputtransformer2 import TransformerManager

    cells = json.loads(notebook.read_text())["cells"]
    source = next(
        ("".join(c["source"]) for c in cells if c["cell_type"] == "code" and COLAB_TEST in "".join(c["source"])),
        None,
    )
    assert source is not None, f"{notebook.name}: no setup cell with `if {COLAB_TEST}:`"
    code = TransformerManager().transform_cell(source)
    tree = ast.parse(code)
    kept = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            kept.append(ast.get_source_segment(code, node))
        elif isinstance(node, ast.If) and "google.colab" in ast.get_source_segment(code, node.test):
            kept.append(ast.get_source_segment(code, node))
            break
    return "\n".join(kept) + "\n"


@pytest.fixture(scope="module")
def repo_url(tmp_path_factory) -> str:
    """file:// URL of a clean clone of HEAD plus the working tree's changes."""
    clone = tmp_path_factory.mktemp("repo") / "icml26-runnable"
    _run(["git", "clone", "-q", "--no-local", str(ROOT), str(clone)])
    listed = _run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT
    ).stdout.split("\0")
    for rel in filter(None, listed):
        source, target = ROOT / rel, clone / rel
        if source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
        elif target.exists():  # deleted in the working tree
            target.unlink()
    _run(["git", "add", "-A"], cwd=clone)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    _run(["git", "commit", "-q", "--allow-empty", "-m", "working tree"], cwd=clone, env=env)
    return f"file://{clone}"


@pytest.fixture(scope="module")
def colab_env(tmp_path_factory) -> dict:
    """A plain venv (no system site-packages) holding only torch and numpy, as Colab would."""
    venv = tmp_path_factory.mktemp("colab") / "venv"
    _run([sys._base_executable if hasattr(sys, "_base_executable") else "python3", "-m", "venv", str(venv)])
    python = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    # A current pip, as Colab has (the venv's bundled pip can be too old for `name @ git+file:`),
    # then torch alone (as the Makefile does), so nothing can pull another build of it.
    _run([str(python), "-m", "pip", "install", "-q", "--upgrade", "pip"], env=env)
    _run([str(python), "-m", "pip", "install", "-q", f"torch=={PINS['torch']}"], env=env)
    _run([str(python), "-m", "pip", "install", "-q", *(f"{k}=={v}" for k, v in COLAB_PINS.items())], env=env)
    before = _tagged(_run([str(python), "-c", PROBE, ",".join(KEPT)], env=env).stdout, "PROBE")
    return {"venv": venv, "python": python, "env": env, "before": before}


def _run_setup(colab_env, tmp_path, slug: str, mode: str, url: str | None = None) -> list:
    code = setup_logic(ROOT / "chapters" / f"{slug}.ipynb")
    if url is not None:
        configured = f"git+{repository()['url'].rstrip('/')}"
        assert re.search(re.escape(configured) + r"(?![\w.-])", code), (
            f"{slug}: the setup cell does not install from {configured} (_config.yml repository.url):\n{code}"
        )
        code = re.sub(re.escape(configured) + r"(?![\w.-])", f"git+{url}", code)
    script, runner = tmp_path / "setup_cell.py", tmp_path / "runner.py"
    script.write_text(code)
    runner.write_text(RUNNER)
    result = _run([str(colab_env["python"]), str(runner), str(script), mode], env=colab_env["env"], cwd=tmp_path)
    return _tagged(result.stdout, "CALLS")


@pytest.mark.parametrize("slug", CHAPTERS)
def test_setup_cell_does_nothing_outside_colab(slug, colab_env, tmp_path):
    calls = _run_setup(colab_env, tmp_path, slug, "local")
    assert calls == [], f"{slug}: outside Colab the setup cell started {calls}"
    after = _tagged(_run([str(colab_env["python"]), "-c", PROBE, ",".join(KEPT)], env=colab_env["env"]).stdout, "PROBE")
    assert after["all"] == colab_env["before"]["all"], f"{slug}: packages changed outside Colab"


@pytest.mark.parametrize("slug", CHAPTERS)
def test_colab_install_keeps_torch_and_numpy(slug, colab_env, repo_url, tmp_path):
    python, env, before = colab_env["python"], colab_env["env"], colab_env["before"]
    subprocess.run([str(python), "-m", "pip", "uninstall", "-q", "-y", "icml26"], env=env, capture_output=True)
    calls = _run_setup(colab_env, tmp_path, slug, "colab", url=repo_url)
    assert calls, f"{slug}: on Colab the setup cell installed nothing"
    probe = _run([str(python), "-c", PROBE, ",".join(KEPT), "icml26.common", f"icml26.{slug}"], env=env, cwd=tmp_path)
    after = _tagged(probe.stdout, "PROBE")
    site = str(colab_env["venv"])
    assert after["icml26_file"].startswith(site), f"icml26 imported from {after['icml26_file']}, not the venv"
    assert "-e " not in json.dumps(calls) and "--editable" not in json.dumps(calls), "editable install"
    for name in KEPT:
        assert after[name]["version"] == before[name]["version"], (
            f"{slug}: {name} {before[name]['version']} was replaced by {after[name]['version']}"
        )
        assert after[name]["dist_info"] == before[name]["dist_info"], f"{slug}: {name} was reinstalled"
        assert after[name]["record"] == before[name]["record"], f"{slug}: {name} was reinstalled (RECORD rewritten)"
    for name in after["imported"]:
        assert after["imported"][name].split("+")[0] == before[name]["version"].split("+")[0]
    pulled = [d for d in after["all"] if d.startswith(("nvidia-", "triton"))]
    assert not pulled, f"{slug}: the install pulled a GPU stack: {pulled}"


def test_colab_smoke_run_with_widgets(colab_env, repo_url, tmp_path):
    """One chapter's `smoke` preset, every cell (widget cells too), in the Colab-pinned venv: the
    package installed as on Colab, ipywidgets 7.7.1 and IPython 7.34 doing the widget work."""
    python, env, before = colab_env["python"], colab_env["env"], colab_env["before"]
    _run([str(python), "-m", "pip", "install", "-q", f"icml26 @ git+{repo_url}"], env=env, cwd=tmp_path)
    after = _tagged(_run([str(python), "-c", PROBE, ",".join(KEPT)], env=env).stdout, "PROBE")
    changed = {k: (before[k]["version"], after[k]["version"]) for k in KEPT if after[k] != before[k]}
    assert not changed, f"installing icml26 changed Colab's packages: {changed}"
    result_file = tmp_path / "smoke.json"
    notebook = ROOT / "chapters" / f"{SMOKE_CHAPTER}.ipynb"
    _run([str(python), "-m", "icml26.gpucheck", "exec", str(notebook), "--result", str(result_file),
          "-pSCALE='smoke'", "-pDEVICE='cpu'"], env={**env, "MPLBACKEND": "Agg", "TQDM_DISABLE": "1"}, cwd=tmp_path)
    record = json.loads(result_file.read_text())
    assert record["ok"], f"{SMOKE_CHAPTER} at smoke failed on Colab's versions: {record.get('error')}\n{record.get('error_output', '')}"
    assert record["engine"] == "ipython" and record["cells_run"] == record["n_code_cells"]
    assert record["ledger"]["claims"] or record["ledger"]["verdicts"], "the check cell printed no status"
