"""`make gpu-check`: the whole book on one CUDA GPU in a few minutes, one command.

    python -m icml26.gpucheck                       # CUDA (exits 2 with a message when there is none)
    python -m icml26.gpucheck --device cpu --box 2  # the same harness on the CPU, tiny time box
    python -m icml26.gpucheck --print-carry         # how to bring the few missing wheels to a bare GPU box

It writes `_build/gpu-check.json` and a readable summary (stdout and `_build/gpu-check.md`):

1. **unit tests on the device**: `pytest tests -m device --device cuda` (the tests that take the
   `device` fixture of tests/conftest.py);
2. **every chapter at `reduced`** on the device, into a scratch folder (`_build/gpu-check/`; the
   stored notebooks are only read): wall time, peak GPU memory, and the ledger statuses of the
   check cell next to the stored (CPU) ones;
3. **a time-boxed slice of every `full` preset** (`--box` seconds of the notebook at SCALE=full,
   then stopped): loop throughput from the chapter's progress bars, peak memory and the projected
   full time.

How a notebook is executed: by default in a fresh Python process of its own that runs the code
cells in order (IPython's shell when IPython is installed, else plain `exec`), after injecting the
parameters as papermill would, with matplotlib on Agg. This needs no Jupyter kernel, papermill or
nbclient, so it runs on a bare GPU machine, and it can read the peak GPU memory and the progress
bars from inside. `--executor runner` uses `python -m icml26.runner --output-dir` (papermill and a
kernel; peak memory is then not measured) for the reduced runs instead.

Chapters run `--jobs` at a time (several share the GPU: the wall times and throughputs are then
those of a shared GPU, and the summary says so), within an overall `--budget` in seconds; what
does not start in time is reported as skipped.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import json
import os
import re
import resource
import signal
import subprocess
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
CHECK_TAG = "nbval-check-output"
CHECK_COMMENT = "NBVAL_CHECK_OUTPUT"

#: What a bare GPU machine (a CUDA torch with the scientific stack, no Jupyter) lacks for the
#: chapters: IPython and ipywidgets (the widget cells) with their pure-Python needs, and three
#: chapter libraries. `--print-carry` prints the download and install commands.
CARRY_WHEELS = (
    "ipython==9.18.1", "ipython-pygments-lexers", "traitlets", "decorator", "jedi", "parso", "matplotlib-inline",
    "pexpect", "ptyprocess", "prompt-toolkit", "wcwidth", "stack-data", "asttokens", "executing", "pure-eval",
    "ipywidgets==8.1.9", "comm", "widgetsnbextension", "jupyterlab-widgets",
    "highspy==1.16.0", "diffusers==0.42.1", "importlib-metadata", "lazy-importer",
)
#: Published as a source archive only (pure Python): built into a wheel where pip runs.
CARRY_SDISTS = ("wittgenstein==0.3.5",)

SHORT = {"REPRODUCED": "R", "PARTLY REPRODUCED": "PR", "NOT REPRODUCED": "NR", "INCONCLUSIVE": "INC",
         "NOT TESTED": "NT"}


# --------------------------------------------------------------------------------------------
# The ledger of a check cell's printed text (the line grammar is the ledger's own)
# --------------------------------------------------------------------------------------------

def parse_ledger(text: str) -> dict:
    """Statuses in a check cell's stdout, read with the ledger's grammar
    (`icml26.common.ledger.parse_check_output`): {"claims": {id: status}, "fragile": [ids],
    "verdicts": [the verdict line's status]}."""
    from .common.ledger import parse_check_output

    parsed = parse_check_output(text or "")
    claims = {k: v["status"] for k, v in parsed["claims"].items()}
    fragile = [k for k, v in parsed["claims"].items() if v["fragile"]]
    return {"claims": claims, "fragile": fragile, "verdicts": [parsed["verdict"]] if parsed["verdict"] else []}


def ledger_short(ledger: dict | None) -> str:
    """`C1 R, C2 PR*, E1 NR; V: PR` (* fragile), or `-` when there is nothing."""
    if not ledger or not (ledger.get("claims") or ledger.get("verdicts")):
        return "-"
    parts = [f"{k} {SHORT[v]}{'*' if k in ledger.get('fragile', ()) else ''}" for k, v in ledger["claims"].items()]
    verdicts = "/".join(SHORT[v] for v in ledger.get("verdicts", []))
    return ", ".join(parts) + ("; " if parts and verdicts else "") + (f"V: {verdicts}" if verdicts else "")


def same_ledger(a: dict | None, b: dict | None) -> bool | None:
    """Same statuses (claims and verdicts; the fragile flags aside); None when either is empty."""
    if not a or not b or not (a["claims"] or a["verdicts"]) or not (b["claims"] or b["verdicts"]):
        return None
    return a["claims"] == b["claims"] and a["verdicts"] == b["verdicts"]


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def is_check_cell(cell: dict) -> bool:
    return cell.get("cell_type") == "code" and (
        CHECK_TAG in cell.get("metadata", {}).get("tags", []) or CHECK_COMMENT in _source(cell))


def stored_ledger(notebook: Path) -> dict:
    """The ledger of a notebook's stored check-cell output (the CPU run that was committed)."""
    cells = json.loads(Path(notebook).read_text())["cells"]
    text = "".join(
        "".join(o["text"]) if isinstance(o.get("text"), list) else o.get("text", "")
        for c in cells if is_check_cell(c) for o in c.get("outputs", []) if o.get("output_type") == "stream"
    )
    return parse_ledger(text)


def declared_parameters(cells: list[dict]) -> tuple[int, dict]:
    """(index, defaults) of the cell tagged `parameters`."""
    for i, cell in enumerate(cells):
        if cell.get("cell_type") == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            defaults = {}
            for node in ast.parse(_source(cell)).body:
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    defaults[node.targets[0].id] = ast.literal_eval(node.value)
            return i, defaults
    raise ValueError("the notebook has no cell tagged 'parameters'")


# --------------------------------------------------------------------------------------------
# The in-process executor (runs in a child process of its own)
# --------------------------------------------------------------------------------------------

class TimeBoxExpired(BaseException):
    """Raised in the notebook's code when the time box ends (a BaseException: `except Exception`
    in a chapter does not swallow it)."""


BARS: list[dict] = []  # every progress bar the notebook opened: desc, total, n, start, last


def _track_progress_bars() -> None:
    """Count the iterations of every tqdm bar (chapters use icml26.common.progress, i.e. tqdm.auto),
    disabled bars included, so a time-boxed run knows its loops' rates and lengths."""
    try:
        import tqdm
        import tqdm.auto
    except ImportError:
        return

    def tracked(base):
        class Tracked(base):
            def __init__(self, iterable=None, *args, **kwargs):
                super().__init__(iterable, *args, **kwargs)
                total = kwargs.get("total", getattr(self, "total", None))
                if total is None and iterable is not None and hasattr(iterable, "__len__"):
                    total = len(iterable)
                self._icml26 = {"desc": str(kwargs.get("desc") or ""), "total": total, "n": 0,
                                "start": time.perf_counter(), "last": None, "closed": False}
                BARS.append(self._icml26)

            def __iter__(self):
                for item in super().__iter__():
                    yield item
                    self._icml26["n"] += 1
                    self._icml26["last"] = time.perf_counter()

            def update(self, n=1):
                if hasattr(self, "_icml26"):
                    self._icml26["n"] += n
                    self._icml26["last"] = time.perf_counter()
                return super().update(n)

            def close(self):
                if hasattr(self, "_icml26"):
                    self._icml26["closed"] = True
                return super().close()

        Tracked.__name__ = base.__name__
        return Tracked

    tqdm.auto.tqdm = tracked(tqdm.auto.tqdm)
    tqdm.auto.trange = lambda *args, **kwargs: tqdm.auto.tqdm(range(*args), **kwargs)
    tqdm.tqdm = tracked(tqdm.tqdm)
    tqdm.trange = lambda *args, **kwargs: tqdm.tqdm(range(*args), **kwargs)


def loop_projection(bars: list[dict], started: float, now: float) -> dict:
    """Throughput of the innermost open loop and the projected time of the run.

    The open bars (not closed, started in order) are taken as nested loops; the innermost one's
    rate times its length gives one pass, multiplied by the lengths of the loops around it, plus
    the time before the outermost open loop started. A lower bound when later phases follow.
    """
    open_bars = [b for b in bars if not b["closed"]]
    running = [b for b in open_bars if b["n"] > 0 and b["last"] and b["last"] > b["start"]]
    if not running:
        return {"loop": None, "it_per_s": None, "projected_s": None,
                "note": "no progress-bar iteration finished within the box"}
    inner = running[-1]
    rate = inner["n"] / (inner["last"] - inner["start"])
    out = {"loop": inner["desc"] or "(unnamed loop)", "done": inner["n"], "total": inner["total"],
           "it_per_s": rate, "projected_s": None, "note": ""}
    if not inner["total"]:
        out["note"] = "the loop's length is unknown"
        return out
    projected = inner["total"] / rate
    for outer in [b for b in open_bars if b["start"] < inner["start"]]:
        if outer["total"]:
            projected *= max(outer["total"] - outer["n"], 1)
    first = min([b for b in open_bars if b["start"] <= inner["start"]], key=lambda b: b["start"])
    out["projected_s"] = (first["start"] - started) + projected
    out["note"] = "lower bound: the loops open at the cut, later phases not counted"
    return out


def _gpu_peak_mb() -> float | None:
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return None
    return sum(torch.cuda.max_memory_allocated(i) for i in range(torch.cuda.device_count())) / 2**20


def _rss_peak_mb() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / 2**20 if sys.platform == "darwin" else rss / 2**10


def execute_notebook(path: Path, parameters: dict, time_box: float | None = None,
                     save: Path | None = None) -> dict:
    """Run a notebook's code cells in this process; return what the harness records.

    Parameters are injected after the `parameters` cell (unknown ones are an error, as in the
    runner). With `time_box` the run is stopped after that many seconds (SIGALRM), and the record
    holds the loop projection. `save` writes the notebook with the cells' printed output.
    """
    nb = json.loads(Path(path).read_text())
    cells = nb["cells"]
    index, defaults = declared_parameters(cells)
    unknown = sorted(set(parameters) - set(defaults))
    if unknown:
        raise ValueError(f"{path.name} declares no parameter(s) {unknown}; it has {', '.join(defaults)}")
    injected = "".join(f"{k} = {v!r}\n" for k, v in parameters.items())

    os.environ.setdefault("MPLBACKEND", "Agg")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.show = lambda *a, **k: plt.close("all")  # no screen: a shown figure is done with
    _track_progress_bars()
    sys.path.insert(0, str(path.parent))

    try:
        from IPython.core.interactiveshell import InteractiveShell

        shell = InteractiveShell.instance()

        def run(source: str):
            result = shell.run_cell(source, store_history=False)
            return result.error_before_exec or result.error_in_exec
        engine = "ipython"
    except ImportError:
        namespace = {"__name__": "__main__"}

        def run(source: str):
            try:
                exec(compile(source, "<cell>", "exec"), namespace)
            except BaseException as error:  # noqa: BLE001 - recorded, like a kernel would
                traceback.print_exc(file=sys.stdout)
                return error
            return None
        engine = "exec"

    record = {"ok": False, "engine": engine, "timed_out": False, "error": None, "cells_run": 0,
              "n_code_cells": 0, "check_text": "", "slowest_cells": []}
    code_cells = [(i, c) for i, c in enumerate(cells) if c.get("cell_type") == "code"]
    plan = []
    for i, cell in code_cells:
        plan.append((i, cell, _source(cell)))
        if i == index and injected:
            plan.append((None, None, injected))
    record["n_code_cells"] = len(plan)

    at_cut: list[dict] = []

    def expire(signum, frame):
        # The bars as they stand now: unwinding the loops closes them.
        at_cut[:] = [dict(b) for b in BARS]
        at_cut.append({"now": time.perf_counter()})
        raise TimeBoxExpired(f"time box of {time_box} s")

    started = time.perf_counter()
    timings = []
    boxed_from = None  # the box starts after the parameters cell: imports and setup are not in it
    if time_box:
        signal.signal(signal.SIGALRM, expire)
    try:
        for i, cell, source in plan:
            if time_box and boxed_from is None and (cell is None or i > index):
                boxed_from = time.perf_counter()
                record["setup_s"] = boxed_from - started
                signal.setitimer(signal.ITIMER_REAL, time_box)
            buffer = io.StringIO()
            t0 = time.perf_counter()
            with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
                try:
                    error = run(source)
                except TimeBoxExpired as expired:  # raised outside the cell's own handler
                    error = expired
            timings.append((time.perf_counter() - t0, i))
            text = buffer.getvalue()
            if cell is not None:
                cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": text}] if text else []
                cell["execution_count"] = None
                if is_check_cell(cell):
                    record["check_text"] += text
            if isinstance(error, TimeBoxExpired):
                record["timed_out"] = True
                break
            if error is not None:
                record["error"] = f"cell {i}: {type(error).__name__}: {error}"[:500]
                record["error_output"] = text[-3000:]
                break
            record["cells_run"] += 1
        else:
            record["ok"] = not record["timed_out"]
    except TimeBoxExpired:  # the alarm rang between cells, in the harness's own lines
        record["timed_out"] = True
    finally:
        if time_box:
            signal.setitimer(signal.ITIMER_REAL, 0)
    now = time.perf_counter()
    record["seconds"] = now - started
    record["peak_gpu_mb"] = _gpu_peak_mb()
    record["peak_rss_mb"] = _rss_peak_mb()
    record["ledger"] = parse_ledger(record["check_text"])
    record["slowest_cells"] = [[i, round(s, 2)] for s, i in sorted(timings, key=lambda t: -t[0])[:3]]
    if time_box:
        bars, cut = (at_cut[:-1], at_cut[-1]["now"]) if at_cut else (BARS, now)
        record["bars"] = [{k: b[k] for k in ("desc", "total", "n", "closed")} for b in bars]
        record["projection"] = loop_projection(bars, boxed_from or now, cut)
        if record["projection"]["projected_s"] is not None:  # the run's setup counts in a full run too
            record["projection"]["projected_s"] += record.get("setup_s", 0.0)
    if save is not None:
        save.parent.mkdir(parents=True, exist_ok=True)
        save.write_text(json.dumps(nb, indent=1))
    return record


def _child(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m icml26.gpucheck exec")
    parser.add_argument("notebook", type=Path)
    parser.add_argument("--result", type=Path, required=True)
    parser.add_argument("--save", type=Path)
    parser.add_argument("--box", type=float)
    parser.add_argument("-p", "--param", action="append", default=[])
    args = parser.parse_args(argv)
    params = {}
    for item in args.param:
        name, raw = item.split("=", 1)
        try:
            params[name] = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            params[name] = raw
    try:
        record = execute_notebook(args.notebook, params, args.box, args.save)
    except Exception as error:  # noqa: BLE001 - a setup failure is a result too
        record = {"ok": False, "error": f"{type(error).__name__}: {error}", "seconds": 0.0}
    args.result.write_text(json.dumps(record, default=str))
    return 0


# --------------------------------------------------------------------------------------------
# The harness
# --------------------------------------------------------------------------------------------

def child_environment(device: str) -> dict:
    env = dict(os.environ)
    try:
        from .numerics import pinned_environment

        env.update(pinned_environment())  # fixed CPU kernels and 2 threads per chapter, as `make run`
    except ImportError:
        env.setdefault("OMP_NUM_THREADS", "2")
    env.update({"MPLBACKEND": "Agg", "TQDM_DISABLE": "1", "PYTHONUNBUFFERED": "1", "PYTHONHASHSEED": "0"})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    return env


def run_in_child(notebook: Path, params: dict, scratch: Path, tag: str, box: float | None, timeout: float,
                 env: dict) -> dict:
    """One execution in a fresh process; a crash or a hard timeout is a record too."""
    result = scratch / f"{notebook.stem}.{tag}.json"
    cmd = [sys.executable, "-m", "icml26.gpucheck", "exec", str(notebook), "--result", str(result),
           "--save", str(scratch / f"{notebook.stem}.{tag}.ipynb")]
    cmd += [f"-p{k}={v!r}" if isinstance(v, str) else f"-p{k}={v}" for k, v in params.items()]
    if box:
        cmd += ["--box", str(box)]
    result.unlink(missing_ok=True)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, env=env, cwd=str(notebook.parent), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"killed after {timeout:.0f} s (hard timeout)", "seconds": time.perf_counter() - t0,
                "timed_out": bool(box)}
    if not result.is_file():
        return {"ok": False, "error": f"the process ended ({proc.returncode}) without a result",
                "stderr": (proc.stderr or "")[-2000:], "seconds": time.perf_counter() - t0}
    record = json.loads(result.read_text())
    record["process_s"] = time.perf_counter() - t0
    return record


def run_with_runner(slug: str, params: dict, scratch: Path, timeout: float, env: dict) -> dict:
    """A reduced run through the chapter runner (papermill) into the scratch folder."""
    folder = scratch / "runner"
    cmd = [sys.executable, "-m", "icml26.runner", slug, "--scale", str(params["SCALE"]), "--device",
           str(params["DEVICE"]), "--seed", str(params["SEED"]), "--output-dir", str(folder)]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, env=env, cwd=str(ROOT), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"killed after {timeout:.0f} s", "seconds": time.perf_counter() - t0}
    seconds = time.perf_counter() - t0
    out = folder / f"{slug}.ipynb"
    record = {"ok": proc.returncode == 0, "engine": "runner", "seconds": seconds, "peak_gpu_mb": None,
              "error": None if proc.returncode == 0 else (proc.stderr or "")[-800:]}
    record["ledger"] = stored_ledger(out) if out.is_file() else parse_ledger("")
    return record


def run_unit_tests(device: str, timeout: float, env: dict, paths: tuple[str, ...] = ("tests",)) -> dict:
    """The unit tests that take the `device` fixture, on `device`."""
    cmd = [sys.executable, "-m", "pytest", *paths, "-m", "device", "--device", device, "-q", "-p", "no:cacheprovider",
           "-p", "no:xdist", "--continue-on-collection-errors", "-rfE", "-o", "addopts="]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, env=env, cwd=str(ROOT), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"ok": False, "seconds": timeout, "summary": f"killed after {timeout:.0f} s", "counts": {}}
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    summary = lines[-1].strip("= ") if lines else ""
    counts = {word.rstrip("s") if word.startswith("error") else word: int(n)
              for n, word in re.findall(r"(\d+) (passed|failed|skipped|errors?|deselected|xfailed|xpassed)", summary)}
    problems = [ln for ln in proc.stdout.splitlines() if ln.startswith(("FAILED", "ERROR"))]
    # A test module that cannot be imported here (a Jupyter-only package on a bare GPU machine) is
    # a collection error, listed, not a failed device test.
    uncollected = [ln for ln in problems if ln.startswith("ERROR") and "::" not in ln.split(" - ")[0]]
    ok = proc.returncode == 0 or (counts.get("failed", 0) == 0 and counts.get("passed", 0) > 0
                                  and len(uncollected) == counts.get("error", 0))
    return {"ok": ok, "returncode": proc.returncode, "uncollected": uncollected, "seconds": time.perf_counter() - t0,
            "summary": summary, "counts": counts, "problems": problems[:40]}


def record_order(slugs: list[str], report: dict) -> list[str]:
    """Chapters for the evidence records, shortest projected full run first (unknown ones last)."""
    def projected(slug):
        proj = ((report["chapters"].get(slug) or {}).get("full") or {}).get("projection") or {}
        return proj.get("projected_s") if proj.get("projected_s") is not None else float("inf")

    return sorted(slugs, key=projected)


def make_records(slugs: list[str], report: dict, device: str, seconds: float, env: dict) -> dict:
    """Run `python -m icml26.evidence run <slug> --scale full --device <device>` one chapter at a time
    within `seconds`; each record is written in place and checked by its own run."""
    deadline, done = time.perf_counter() + seconds, {}
    for slug in record_order(slugs, report):
        left = deadline - time.perf_counter()
        if left < 30:
            done[slug] = {"ok": False, "skipped": "over the records budget"}
            continue
        command = [sys.executable, "-m", "icml26.evidence", "run", slug, "--scale", "full", "--device", device]
        began = time.perf_counter()
        try:
            run = subprocess.run(command, capture_output=True, text=True, timeout=left, env=env, cwd=ROOT)
            done[slug] = {"ok": run.returncode == 0, "seconds": time.perf_counter() - began,
                          "output": (run.stdout + run.stderr)[-2000:]}
        except subprocess.TimeoutExpired:
            done[slug] = {"ok": False, "seconds": left, "skipped": "ran past the records budget"}
        print(f"  {slug} full record: {'written' if done[slug]['ok'] else 'not written'} "
              f"{_fmt_s(done[slug].get('seconds'))} {done[slug].get('skipped', '')}", flush=True)
    return done


def device_facts(device: str) -> dict:
    import platform

    import torch

    facts = {"device": device, "torch": torch.__version__, "python": platform.python_version(),
             "cpus": os.cpu_count()}
    if device.startswith("cuda"):
        props = torch.cuda.get_device_properties(torch.device(device))
        facts.update(gpu=props.name, gpu_memory_gb=round(props.total_memory / 2**30, 1),
                     cuda=torch.version.cuda, gpus=torch.cuda.device_count())
    return facts


def resolve(device: str) -> str:
    """The device to check; no CUDA where CUDA is wanted is a clear SystemExit(2)."""
    import torch

    device = device.strip().lower()
    if device in ("auto", "cuda") or device.startswith("cuda:"):
        if not torch.cuda.is_available():
            raise SystemExit(
                "gpu-check: no CUDA GPU here (torch " + torch.__version__ + ", torch.cuda.is_available() is False).\n"
                "Run it on a machine with a CUDA GPU, or check the harness itself on the CPU with\n"
                "    make gpu-check DEVICE=cpu BOX=2")
        return "cuda" if device == "auto" else device
    if device != "cpu":
        raise SystemExit(f"gpu-check: DEVICE must be auto, cuda, cuda:N or cpu, got {device!r}")
    return device


def _fmt_s(value) -> str:
    if value is None:
        return "-"
    value = float(value)
    if value >= 3600:
        return f"{value / 3600:.1f} h"
    if value >= 120:
        return f"{value / 60:.1f} min"
    return f"{value:.0f} s" if value >= 10 else f"{value:.1f} s"


def _fmt_mb(value) -> str:
    return "-" if value is None else (f"{value / 1024:.1f} GB" if value >= 1024 else f"{value:.0f} MB")


def summary_markdown(report: dict) -> str:
    facts = report["facts"]
    on = facts.get("gpu") or "CPU"
    lines = [f"# gpu-check: {on} ({facts['device']}), torch {facts['torch']}",
             "",
             f"Total {_fmt_s(report['total_s'])}; {report['jobs']} chapter(s) at a time"
             + (" (they shared the device: times and throughputs are those of a shared device)" if report["jobs"] > 1 else "")
             + f"; full-preset slices of {report['box_s']:g} s.", ""]
    tests = report.get("tests")
    if tests:
        lines += [f"Unit tests on {facts['device']} (`-m device`): {tests['summary'] or 'no summary'}"
                  + ("" if tests["ok"] else " -- NOT all passed"), ""]
        lines += [f"    {p}" for p in tests.get("problems", [])[:10]]
        if tests.get("problems"):
            lines.append("")
    mem = "peak GPU" if facts["device"] != "cpu" else "peak RSS"
    lines += [f"| chapter | reduced: wall | {mem} | statuses on {facts['device']} | stored (CPU) | same | "
              f"full slice: loop rate | {mem} | projected full | note |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for slug, row in report["chapters"].items():
        red, full = row.get("reduced") or {}, row.get("full") or {}
        memkey = "peak_gpu_mb" if facts["device"] != "cpu" else "peak_rss_mb"
        same = {True: "yes", False: "**NO**", None: "-"}[same_ledger(red.get("ledger"), row.get("stored"))]
        notes = []
        if red and not red.get("ok"):
            notes.append(f"reduced failed: {red.get('error') or red.get('skipped')}")
        proj = full.get("projection") or {}
        rate = f"{proj['it_per_s']:.3g} it/s ({proj['loop']})" if proj.get("it_per_s") else "-"
        if full.get("skipped"):
            notes.append(f"full: {full['skipped']}")
        elif full and not full.get("timed_out"):
            notes.append("full: finished within the box" if full.get("ok") else f"full stopped: {full.get('error')}")
        elif proj.get("note") and not proj.get("projected_s"):
            notes.append(f"full: {proj['note']}")
        note = "; ".join(n.replace("|", "/").replace("\n", " ")[:160] for n in notes)
        lines.append(f"| {slug} | {_fmt_s(red.get('seconds')) if red.get('ok') else 'failed' if red else '-'} | "
                     f"{_fmt_mb(red.get(memkey))} | {ledger_short(red.get('ledger'))} | {ledger_short(row.get('stored'))} | "
                     f"{same} | {rate} | {_fmt_mb(full.get(memkey))} | "
                     f"{_fmt_s(full['seconds']) + ' (done)' if full.get('ok') else _fmt_s(proj.get('projected_s'))} | {note} |")
    lines += ["", "Statuses: R reproduced, PR partly, NR not reproduced, INC inconclusive, NT not tested, * fragile; "
              "V: the verdict line(s). Projected full: from the innermost open progress-bar loop at the cut "
              "(a lower bound where later phases follow)."]
    return "\n".join(lines) + "\n"


PRINT_CARRY = """# On a machine with pip and network, in the repository root (device README: carrying wheels):
echo /.whl/ >> .git/info/exclude
python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \\
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \\
    -d .whl {wheels}
python3 -m pip wheel -q --no-deps -w .whl {sdists}
# (about 20 MB; checked with pip on 2026-12-03)
# On the GPU machine (carry .whl), before make gpu-check:
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
"""


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["exec"]:
        return _child(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m icml26.gpucheck", description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default=os.environ.get("DEVICE", "auto"), help="auto|cuda|cuda:N (default) or cpu")
    parser.add_argument("--box", type=float, default=None,
                        help="seconds of each full preset after its setup cells (default 20; 2 on cpu)")
    parser.add_argument("--chapters", default="", help="comma-separated slugs (default: every written chapter)")
    parser.add_argument("--notebooks", type=Path, default=ROOT / "chapters", help="folder of the chapter notebooks")
    parser.add_argument("--scale", default="reduced", help="preset of the chapter runs (default reduced)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=None, help="chapters at a time (default: 6 on a GPU, 1 on cpu)")
    parser.add_argument("--budget", type=float, default=450.0, help="seconds; what has not started by then is skipped")
    parser.add_argument("--timeout", type=float, default=300.0, help="hard limit of one reduced run, seconds")
    parser.add_argument("--tests", default="tests", help="comma-separated test paths for the device tests")
    parser.add_argument("--skip", default="", help="comma-separated parts to leave out: tests, reduced, full")
    parser.add_argument("--executor", choices=("inproc", "runner"), default="inproc",
                        help="reduced runs: own executor (default) or the papermill runner")
    parser.add_argument("--out", type=Path, default=ROOT / "_build", help="where gpu-check.json/.md and the scratch go")
    parser.add_argument("--records", type=float, default=0.0,
                        help="seconds for evidence records after the other parts: each chapter's `full` preset, "
                             "shortest projected first, stored as src/icml26/<slug>/evidence/full-<device>.json")
    parser.add_argument("--print-carry", action="store_true", help="print how to carry the missing wheels, then exit")
    args = parser.parse_args(argv)
    if args.print_carry:
        print(PRINT_CARRY.format(wheels=" ".join(CARRY_WHEELS), sdists=" ".join(CARRY_SDISTS)))
        return 0
    device = resolve(args.device)
    on_cpu = device == "cpu"
    box = args.box if args.box is not None else (2.0 if on_cpu else 20.0)
    jobs = args.jobs or (1 if on_cpu else max(1, min(6, (os.cpu_count() or 2) // 2)))
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    if skip - {"tests", "reduced", "full"}:
        parser.error(f"--skip takes tests, reduced, full; got {args.skip!r}")
    notebooks = sorted(args.notebooks.glob("*.ipynb"))
    if args.notebooks.resolve() == (ROOT / "chapters").resolve():
        from .catalog import written_chapters

        notebooks = [args.notebooks / f"{s}.ipynb" for s in written_chapters()]
    if args.chapters:
        wanted = [s.strip() for s in args.chapters.split(",") if s.strip()]
        known = {p.stem: p for p in notebooks}
        missing = [s for s in wanted if s not in known]
        if missing:
            parser.error(f"unknown chapter(s) {missing}; known: {', '.join(known)}")
        notebooks = [known[s] for s in wanted]

    started = time.perf_counter()
    deadline = started + args.budget
    scratch = args.out / "gpu-check"
    scratch.mkdir(parents=True, exist_ok=True)
    env = child_environment(device)
    report = {"facts": device_facts(device), "box_s": box, "jobs": jobs, "scale": args.scale,
              "executor": args.executor, "chapters": {p.stem: {"stored": stored_ledger(p)} for p in notebooks}}
    print(f"gpu-check on {report['facts'].get('gpu', 'CPU')} ({device}): {len(notebooks)} chapter(s), "
          f"{jobs} at a time, box {box:g} s, budget {args.budget:.0f} s", flush=True)

    if "tests" not in skip:
        paths = tuple(p.strip() for p in args.tests.split(",") if p.strip())
        report["tests"] = run_unit_tests(device, min(240.0, max(30.0, deadline - time.perf_counter())), env, paths)
        print(f"unit tests on {device}: {report['tests']['summary']}", flush=True)

    params = {"SCALE": args.scale, "DEVICE": device, "SEED": args.seed}

    def reduced(nb: Path) -> None:
        left = deadline - time.perf_counter()
        if left < 5:
            record = {"ok": False, "skipped": "over the time budget"}
        elif args.executor == "runner":
            record = run_with_runner(nb.stem, params, scratch, min(args.timeout, left), env)
        else:
            record = run_in_child(nb, params, scratch, args.scale, None, min(args.timeout, left), env)
        report["chapters"][nb.stem]["reduced"] = record
        print(f"  {nb.stem} {args.scale}: {'ok' if record.get('ok') else 'FAILED'} {_fmt_s(record.get('seconds'))} "
              f"{ledger_short(record.get('ledger'))} {record.get('error') or record.get('skipped') or ''}", flush=True)

    def full(nb: Path) -> None:
        left = deadline - time.perf_counter()
        if left < box + 5:
            record = {"ok": False, "skipped": "over the time budget"}
        else:
            record = run_in_child(nb, {**params, "SCALE": "full"}, scratch, "full", box, box + 90.0, env)
        report["chapters"][nb.stem]["full"] = record
        proj = record.get("projection") or {}
        print(f"  {nb.stem} full slice: {_fmt_s(record.get('seconds'))}, projected {_fmt_s(proj.get('projected_s'))} "
              f"{record.get('skipped') or ('' if record.get('timed_out') or record.get('ok') else record.get('error'))}",
              flush=True)

    for part, work in (("reduced", reduced), ("full", full)):
        if part in skip:
            continue
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            list(pool.map(work, notebooks))

    if args.records > 0:
        report["records"] = make_records([nb.stem for nb in notebooks], report, device, args.records, env)

    report["total_s"] = time.perf_counter() - started
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "gpu-check.json").write_text(json.dumps(report, indent=1, default=str))
    text = summary_markdown(report)
    (args.out / "gpu-check.md").write_text(text)
    print()
    print(text)
    print(f"written: {args.out / 'gpu-check.json'}, {args.out / 'gpu-check.md'}; notebooks run in {scratch}")
    failed = [s for s, r in report["chapters"].items() if "reduced" not in skip and not (r.get("reduced") or {}).get("ok")]
    tests_ok = report.get("tests", {"ok": True})["ok"]
    return 0 if tests_ok and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
