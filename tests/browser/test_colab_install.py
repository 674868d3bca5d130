"""The Colab path, played here, on the Colab edition (`make colab`, icml26.colab), which is what
the badges open: a fresh virtual environment pinned to Colab's own versions (COLAB_PINS, from
Colab's GPU runtime) runs each notebook's setup-cell install logic against this repository as a
local git URL at the pinned commit (a non-editable install), then imports icml26.common and the
chapter's module. torch and every pinned package must be exactly the ones that were there before.
Outside Colab the same logic must do nothing at all. Chapters whose install logic is the same
(the same syntax tree once the chapter's name is taken out) share one install, whose probe imports
all their modules. Then every Colab notebook runs its `smoke` preset with papermill in that
environment (ipykernel 6.17.1, IPython 7.34, ipywidgets 7.7.1), widget cells included, two at a
time on two cores; ICML26_COLAB_SMOKE="slug ..." limits which.

Colab's GPU runtime, as `googlecolab/backend-info` lists it (pip-freeze.gpu.txt, 2026-08-19), runs
Python 3.13.15 and torch 2.11.0+cu128. Neither can be pinned here: this venv has the machine's
Python (3.11), and torch is the tested CPU build of requirements.txt (a torch 2.11.0 wheel from
PyPI brings the CUDA stack, GBs, and the CPU index is out of reach); ICML26_COLAB_TORCH=2.11.0
pins it where a CPU build of it can be installed. Torch 2.11 on CUDA is exercised by
`make gpu-check` on a machine that has it. Everything else is pinned to Colab's versions.

The repository is a clean clone of HEAD into a temporary folder, with the working tree's changes
(tracked and untracked files that git does not ignore) committed on top, so an uncommitted
chapter is tested as it would be pushed; on a clean checkout that is HEAD itself. The Colab
edition is built from the working tree, pinned to that clone's commit.
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
COLAB_TORCH = os.environ.get("ICML26_COLAB_TORCH", PINS["torch"])  # Colab: 2.11.0+cu128 (see above)
# What Colab's GPU runtime ships (googlecolab/backend-info, pip-freeze.gpu.txt, 2026-08-19; its Python
# is 3.13, these versions also install on 3.11): the installed versions a reader's `pip install` must
# leave alone.
COLAB_PINS = {"numpy": "2.1.3", "pandas": "2.2.3", "scipy": "1.16.3", "matplotlib": "3.10.0",
              "scikit-learn": "1.6.1", "networkx": "3.6.1", "sympy": "1.14.0",
              "ipython": "7.34.0", "ipywidgets": "7.7.1", "ipykernel": "6.17.1", "nbformat": "5.11.1",
              "transformers": "5.15.0", "diffusers": "0.39.0", "highspy": "1.15.1"}
KEPT = ("torch", *COLAB_PINS)
PAPERMILL = next(line.strip() for line in (ROOT / "requirements.txt").read_text().splitlines()
                 if line.startswith("papermill=="))
SMOKE = os.environ.get("ICML26_COLAB_SMOKE", " ".join(CHAPTERS)).split()

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
def edition(repo_url, tmp_path_factory) -> Path:
    """The Colab edition of the working tree, its install cells pinned to the clone's commit."""
    from icml26.colab import write_colab_edition

    commit = _run(["git", "rev-parse", "HEAD"], cwd=repo_url.removeprefix("file://")).stdout.strip()
    folder = tmp_path_factory.mktemp("colab-edition")
    write_colab_edition([slug for slug in CHAPTERS], folder, commit)
    return folder


@pytest.fixture(scope="module")
def colab_env(tmp_path_factory) -> dict:
    """A plain venv (no system site-packages) holding torch and Colab's pinned packages, as Colab would."""
    venv = tmp_path_factory.mktemp("colab") / "venv"
    _run([sys._base_executable if hasattr(sys, "_base_executable") else "python3", "-m", "venv", str(venv)])
    python = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    # A current pip, as Colab has (the venv's bundled pip can be too old for `name @ git+file:`),
    # then torch alone (as the Makefile does), so nothing can pull another build of it.
    _run([str(python), "-m", "pip", "install", "-q", "--upgrade", "pip"], env=env)
    _run([str(python), "-m", "pip", "install", "-q", f"torch=={COLAB_TORCH}"], env=env)
    # Papermill runs the notebooks (Colab runs them itself); it must leave the pins alone too.
    _run([str(python), "-m", "pip", "install", "-q", PAPERMILL, f"torch=={COLAB_TORCH}",
          *(f"{k}=={v}" for k, v in COLAB_PINS.items())], env=env)
    before = _tagged(_run([str(python), "-c", PROBE, ",".join(KEPT)], env=env).stdout, "PROBE")
    return {"venv": venv, "python": python, "env": env, "before": before}


def _run_setup(colab_env, tmp_path, slug: str, mode: str, edition: Path, url: str | None = None) -> list:
    code = setup_logic(edition / f"{slug}.ipynb")
    if url is not None:
        configured = f"git+{repository()['url'].rstrip('/')}"
        pinned = re.escape(configured) + r"@[0-9a-f]{40}(?![\w.-])"
        assert re.search(pinned, code), (
            f"{slug}: the Colab edition's setup cell does not install from {configured}@<commit> "
            f"(_config.yml repository.url, pinned by make colab):\n{code}"
        )
        code = re.sub(re.escape(configured) + r"(?=@)", f"git+{url}", code)
    script, runner = tmp_path / "setup_cell.py", tmp_path / "runner.py"
    script.write_text(code)
    runner.write_text(RUNNER)
    result = _run([str(colab_env["python"]), str(runner), str(script), mode], env=colab_env["env"], cwd=tmp_path)
    return _tagged(result.stdout, "CALLS")


@pytest.mark.parametrize("slug", CHAPTERS)
def test_setup_cell_does_nothing_outside_colab(slug, colab_env, edition, tmp_path):
    calls = _run_setup(colab_env, tmp_path, slug, "local", edition)
    assert calls == [], f"{slug}: outside Colab the setup cell started {calls}"
    after = _tagged(_run([str(colab_env["python"]), "-c", PROBE, ",".join(KEPT)], env=colab_env["env"]).stdout, "PROBE")
    assert after["all"] == colab_env["before"]["all"], f"{slug}: packages changed outside Colab"


def _logic_key(edition: Path, slug: str) -> str:
    """The setup cell's install logic with the chapter's name taken out, as a syntax tree (comments and
    layout do not count): chapters with the same key run exactly the same install."""
    return ast.dump(ast.parse(setup_logic(edition / f"{slug}.ipynb").replace(slug, "SLUG")))


@pytest.fixture(scope="module")
def colab_installs() -> dict:
    """Each distinct install logic run once on "Colab" (the 19 setup cells hold 2 or 3 distinct ones):
    {key: (calls, probe after the install, the chapter modules imported)}; filled as tests ask."""
    return {}


def _install_once(installs: dict, key: str, slug: str, colab_env, repo_url, edition, tmp_path):
    if key not in installs:
        python, env = colab_env["python"], colab_env["env"]
        subprocess.run([str(python), "-m", "pip", "uninstall", "-q", "-y", "icml26"], env=env, capture_output=True)
        calls = _run_setup(colab_env, tmp_path, slug, "colab", edition, url=repo_url)
        sharing = [s for s in CHAPTERS if _logic_key(edition, s) == key]
        probe = _run([str(python), "-c", PROBE, ",".join(KEPT), "icml26.common", *(f"icml26.{s}" for s in sharing)],
                     env=env, cwd=tmp_path)
        installs[key] = (calls, _tagged(probe.stdout, "PROBE"), sharing)
    return installs[key]


@pytest.mark.parametrize("slug", CHAPTERS)
def test_colab_install_keeps_torch_and_numpy(slug, colab_env, colab_installs, repo_url, edition, tmp_path):
    """The setup cell's install on "Colab"; a chapter whose install logic is the same as an earlier
    chapter's (same syntax tree once the chapter name is taken out) reuses that install and its probe,
    which imported every chapter module sharing it."""
    before = colab_env["before"]
    calls, after, sharing = _install_once(colab_installs, _logic_key(edition, slug), slug, colab_env, repo_url,
                                          edition, tmp_path)
    assert slug in sharing
    assert calls, f"{slug}: on Colab the setup cell installed nothing"
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


@pytest.fixture(scope="module")
def installed(colab_env, repo_url, tmp_path_factory) -> dict:
    """The package installed once as on Colab; Colab's packages must be unchanged by it."""
    python, env, before = colab_env["python"], colab_env["env"], colab_env["before"]
    subprocess.run([str(python), "-m", "pip", "uninstall", "-q", "-y", "icml26"], env=env, capture_output=True)
    _run([str(python), "-m", "pip", "install", "-q", f"icml26 @ git+{repo_url}"], env=env,
         cwd=tmp_path_factory.mktemp("install"))
    after = _tagged(_run([str(python), "-c", PROBE, ",".join(KEPT)], env=env).stdout, "PROBE")
    changed = {k: (before[k]["version"], after[k]["version"]) for k in KEPT if after[k] != before[k]}
    assert not changed, f"installing icml26 changed Colab's packages: {changed}"
    return colab_env


def _smoke_run(slug: str, installed: dict, edition: Path, folder: Path) -> tuple[subprocess.CompletedProcess, Path]:
    python, env = installed["python"], installed["env"]
    work = folder / slug
    work.mkdir()
    out = work / f"{slug}.ipynb"
    run = subprocess.run(
        [str(python), "-m", "papermill", str(edition / f"{slug}.ipynb"), str(out), "-p", "SCALE", "smoke",
         "-p", "DEVICE", "cpu", "--cwd", str(work), "-k", "python3", "--no-progress-bar"],
        capture_output=True, text=True, env={**env, "TQDM_DISABLE": "1", "MPLBACKEND": "Agg"}, timeout=900,
    )
    return run, out


@pytest.fixture(scope="module")
def smoke_runs(installed, edition, tmp_path_factory) -> dict:
    """Every SMOKE notebook run once with papermill, as many at a time as there are CPU cores (at most
    2: each run is one kernel): {slug: (completed process, executed notebook)}."""
    from concurrent.futures import ThreadPoolExecutor

    folder = tmp_path_factory.mktemp("smoke")
    with ThreadPoolExecutor(max_workers=max(1, min(2, os.cpu_count() or 1))) as pool:
        runs = dict(zip(SMOKE, pool.map(lambda slug: _smoke_run(slug, installed, edition, folder), SMOKE)))
    return runs


@pytest.mark.parametrize("slug", SMOKE)
def test_colab_notebook_runs_at_smoke_on_colab_versions(slug, smoke_runs):
    """The Colab edition's notebook, every cell (widget cells too), at `smoke`, with papermill and
    ipykernel 6.17.1 / IPython 7.34 / ipywidgets 7.7.1 in the Colab-pinned venv."""
    run, out = smoke_runs[slug]
    assert run.returncode == 0, f"{slug} at smoke failed on Colab's versions:\n{run.stderr[-4000:]}"
    executed = json.loads(out.read_text())
    printed = "".join("".join(o.get("text", "")) for c in executed["cells"] if c["cell_type"] == "code"
                      for o in c.get("outputs", []) if o.get("output_type") == "stream")
    assert "Verdict:" in printed, f"{slug}: the check cell printed no verdict"


# What a Colab reader sees, as Jupyter renders it: nbconvert's HTML exporter, opened in headless
# Chromium (offline: MathJax and require.js, which the export takes from a CDN, are not loaded).
RAW_MARKUP = re.compile(r"\{[A-Za-z][\w:.-]*\}`|```|~~~|:::|(^|\n)\s*:[\w-]+:|(^|\n)\s*\([^()\s]+\)=|"
                        r"</?(details|summary)\b|\*\*\S|\]\([^)\s]+\)")
VISIBLE_TEXT = r'''
(cells) => cells.map((cell) => {
  const parts = [];
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (el.closest('pre, code') || !el.checkVisibility()) continue;
    parts.push(node.textContent);
  }
  const details = Array.from(cell.querySelectorAll('details')).map((d) => ({
    open: d.open, summary: (d.querySelector('summary') || {}).innerText || '',
    hidden: Array.from(d.children).filter((c) => c.tagName !== 'SUMMARY').every((c) => !c.checkVisibility()),
  }));
  return {text: parts.join(''), details};
})
'''


def _render(notebook: Path, target: Path) -> Path:
    import nbconvert

    body, _ = nbconvert.HTMLExporter().from_notebook_node(json_notebook(notebook))
    target.write_text(body, encoding="utf-8")
    return target


def json_notebook(path: Path):
    import nbformat

    return nbformat.read(path, as_version=4)


def _open(browser, html: Path):
    page = browser.new_page()
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort())
    page.goto(html.as_uri(), wait_until="load")
    return page


@pytest.mark.parametrize("slug", CHAPTERS)
def test_colab_notebook_in_chromium_shows_no_raw_markup_and_collapsed_solutions(slug, edition, browser, tmp_path):
    notebook = json_notebook(edition / f"{slug}.ipynb")
    markdown = [c for c in notebook.cells if c.cell_type == "markdown"]
    page = _open(browser, _render(edition / f"{slug}.ipynb", tmp_path / f"{slug}.html"))
    try:
        cells = page.query_selector_all("div.jp-MarkdownCell .jp-RenderedMarkdown")
        assert len(cells) == len(markdown), "nbconvert rendered another number of markdown cells"
        seen = page.evaluate(VISIBLE_TEXT, cells)
        problems, solutions = [], 0
        for i, (cell, shown) in enumerate(zip(markdown, seen)):
            text = re.sub(r"\$\$.*?\$\$|\$[^$\n]+\$", "", shown["text"], flags=re.S)  # MathJax's, not loaded
            problems += [f"markdown cell {i}: raw markup {m[0]!r}" for m in RAW_MARKUP.finditer(text)]
            if "solution" in cell.metadata.get("tags", []):
                solutions += 1
                details = shown["details"]
                if len(details) != 1 or details[0]["open"] or not details[0]["hidden"]:
                    problems.append(f"solution cell {i}: not one collapsed <details>: {details}")
                elif text.strip() != details[0]["summary"].strip():
                    problems.append(f"solution cell {i}: visible beside its summary: {text.strip()[:80]!r}")
        assert solutions >= 3
        assert not problems, f"{slug} in Chromium:\n" + "\n".join(problems)
        # Opened, a solution shows its text.
        summary = page.query_selector("details > summary")
        summary.click()
        assert page.evaluate("() => document.querySelector('details').open")
        assert page.evaluate("() => Array.from(document.querySelector('details').children)"
                             ".some((c) => c.tagName !== 'SUMMARY' && c.checkVisibility())")
    finally:
        page.close()


def test_colab_screenshots_beside_the_source(edition, browser, tmp_path):
    """_build/screenshots/colab/: one chapter's first screen and one opened solution, as Jupyter
    renders the Colab edition and as it renders the Jupyter Book source (what Colab showed)."""
    folder = ROOT / "_build" / "screenshots" / "colab"
    folder.mkdir(parents=True, exist_ok=True)
    slug = os.environ.get("ICML26_COLAB_SCREENSHOT", "w2sg_bregman")
    for name, notebook in (("colab", edition / f"{slug}.ipynb"), ("source", ROOT / "chapters" / f"{slug}.ipynb")):
        page = _open(browser, _render(notebook, tmp_path / f"{name}.html"))
        try:
            page.screenshot(path=str(folder / f"{slug}-{name}-first-screen.png"))
            cells = page.query_selector_all("div.jp-MarkdownCell")
            tags = [c.metadata.get("tags", []) for c in json_notebook(notebook).cells if c.cell_type == "markdown"]
            solution = cells[next(i for i, t in enumerate(tags) if "solution" in t)]
            if name == "colab":
                solution.query_selector("summary").click()
            exercise = cells[cells.index(solution) - 1] if cells.index(solution) else solution
            exercise.scroll_into_view_if_needed()
            page.screenshot(path=str(folder / f"{slug}-{name}-solution.png"))
        finally:
            page.close()
    assert len(list(folder.glob(f"{slug}-*.png"))) == 4
