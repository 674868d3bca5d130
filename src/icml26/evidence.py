"""Evidence records (CLAIMS.md rule 9; CONTRIBUTING.md, section 4).

A chapter's verdict comes from its stored *evidence record*: the ledger of the smallest preset
that decides its claims (3+ independently trained seeds, competent arms), run once, headless,
through the package's contract::

    results = run_experiment(config, seed=0, device=None)   # plain data (JSON)
    ledger = build_ledger(results)                          # icml26.common.ledger.Ledger

and stored as ``src/icml26/<slug>/evidence/<scale>-<device>.json`` (package data: a Colab reader
has it). The record holds the results the ledger was built from, the ledger (statuses, figures,
competence, thresholds, reasons, fragile flags) and its provenance (preset and config, seeds,
device and CPU/GPU model, library versions, wall time, peak memory, the git commit and a digest
of the package's sources).

:func:`check_record` is what CI runs on every record: the provenance is complete, the source
digest still matches the code (else it names the ``make evidence`` command that refreshes the
record; a record made since the code digest exists is stale only when what runs changed: the
sources' syntax trees without docstrings and comments, and the record's own preset), and every status recomputed from the stored results with the package's own decision
functions equals the stored one (so no status can be typed by hand).

Reading and checking import no torch until a package's ``build_ledger`` is needed; running does.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import datetime as _dt
import hashlib
import importlib
import json
import math
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Mapping

FORMAT = 1
#: The scales a record may be made at, smallest first; a chapter shows the first one it has.
RECORD_SCALES = ("evidence", "full")
#: The device kinds a record names; a chapter prefers its CPU record (the book's reference machine).
RECORD_DEVICES = ("cpu", "cuda", "mps")
#: What every record's provenance must hold.
PROVENANCE_KEYS = ("preset", "config", "seeds", "device", "hardware", "versions", "wall_s", "peak_memory_mb",
                   "source_digest", "sources", "commit", "created", "numerics")
#: A package's files that do not compute figures (drawing only), left out of the source digest.
NOT_COMPUTING = ("plots.py",)

PACKAGE_ROOT = Path(__file__).resolve().parent


def _check_slug(slug: str) -> str:
    from icml26.catalog import SLUGS

    if slug not in SLUGS:
        raise ValueError(f"unknown chapter {slug!r}; valid chapters: {', '.join(SLUGS)}")
    return slug


def record_dir(slug: str) -> Path:
    return PACKAGE_ROOT / _check_slug(slug) / "evidence"


def record_path(slug: str, scale: str, device: str) -> Path:
    if scale not in RECORD_SCALES:
        raise ValueError(f"unknown evidence scale {scale!r}; allowed: {', '.join(RECORD_SCALES)}")
    if device not in RECORD_DEVICES:
        raise ValueError(f"unknown device kind {device!r}; allowed: {', '.join(RECORD_DEVICES)}")
    return record_dir(slug) / f"{scale}-{device}.json"


def source_files(slug: str) -> list[Path]:
    """The package's sources that compute its figures (every .py but the drawing code)."""
    root = PACKAGE_ROOT / _check_slug(slug)
    return sorted(p for p in root.glob("*.py") if p.name not in NOT_COMPUTING)


#: How a record's ``source_digest`` was computed (its provenance ``digest``; records without one
#: are "bytes"). "code" leaves out what cannot change a figure: layout, comments, docstrings, and in
#: ``config.py`` the preset tables (the record's own preset is compared field by field instead).
DIGEST_KINDS = ("bytes", "code")
#: The top-level names in ``config.py`` that the "code" digest leaves out (see DIGEST_KINDS).
PRESET_TABLES = ("PRESETS", "EXPECTED_TIME")


def _canonical(node):
    """A syntax tree as plain nested lists, without docstrings; fields that are None or empty are
    left out, so the form is the same across the Python versions that add optional fields."""
    if isinstance(node, ast.AST):
        fields = dict(ast.iter_fields(node))
        body = fields.get("body")
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body \
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            fields["body"] = body[1:]
        return [type(node).__name__] + [[name, _canonical(value)] for name, value in fields.items()
                                        if value is not None and value != []]
    if isinstance(node, list):
        return [_canonical(item) for item in node]
    return repr(node)


def _code_of(path: Path) -> list:
    """The canonical syntax tree of one source file (for ``config.py``: without the preset tables)."""
    tree = ast.parse(path.read_text())
    if path.name == "config.py":
        tree.body = [node for node in tree.body if not (
            isinstance(node, (ast.Assign, ast.AnnAssign))
            and {t.id for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                 if isinstance(t, ast.Name)} & set(PRESET_TABLES))]
    return _canonical(tree)


def source_digest(slug: str, kind: str = "code") -> str:
    """sha256 over the package's computing sources: their names and, by `kind` (DIGEST_KINDS),
    their bytes (line endings normalised) or their code (syntax trees, see ``_code_of``)."""
    if kind not in DIGEST_KINDS:
        raise ValueError(f"unknown digest kind {kind!r}; allowed: {', '.join(DIGEST_KINDS)}")
    h = hashlib.sha256()
    for path in source_files(slug):
        body = (path.read_bytes().replace(b"\r\n", b"\n") if kind == "bytes"
                else json.dumps(_code_of(path)).encode())
        h.update(path.name.encode() + b"\0" + body + b"\0")
    return h.hexdigest()


def preset_config(slug: str, scale: str) -> dict:
    """The chapter's preset `scale` as plain data, as a record stores it."""
    config = importlib.import_module(f"icml26.{_check_slug(slug)}.config")
    return json.loads(json.dumps(to_plain(dataclasses.asdict(config.get_config(scale)))))


def to_plain(value):
    """Results as plain JSON data: numpy arrays and scalars, tuples, dataclasses and tensors become
    lists, numbers and dicts; dict keys become strings. Anything else is an error naming it."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    if hasattr(value, "detach"):  # a torch tensor
        value = value.detach().cpu().numpy()
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if isinstance(value, float):
        return value if math.isfinite(value) else {"nonfinite": str(value)}
    if value is None or isinstance(value, (bool, int, str)):
        return value
    raise TypeError(f"results must be plain data (numbers, strings, lists, dicts, arrays); got {type(value).__name__}")


def from_plain(value):
    """Undo :func:`to_plain`'s encoding of non-finite floats."""
    if isinstance(value, dict):
        if set(value) == {"nonfinite"}:
            return float(value["nonfinite"])
        return {k: from_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_plain(v) for v in value]
    return value


def _git_commit(slug: str) -> str:
    """The commit the record was made at, marked when the chapter's package differs from it."""
    try:
        root = PACKAGE_ROOT.parents[1]
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                                timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", f"src/icml26/{slug}", ":!*/evidence/*"],
                               cwd=root, capture_output=True, text=True, timeout=10).stdout.strip()
        return (commit or "unknown") + ("+uncommitted" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for name in ("torch", "numpy", "scipy", "scikit-learn"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "absent"
    return out


def _peak_memory_mb(device) -> dict:
    import resource

    peak = {"host": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
    if getattr(device, "type", "cpu") == "cuda":
        import torch

        peak["gpu"] = round(torch.cuda.max_memory_allocated(device) / 2**20, 1)
    return peak


def package(slug: str):
    """The chapter's package and its claims module (the contract: CONTRIBUTING.md, section 1)."""
    return importlib.import_module(f"icml26.{_check_slug(slug)}")


def claims_module(slug: str):
    return importlib.import_module(f"icml26.{_check_slug(slug)}.claims")


def run_record(slug: str, scale: str = "evidence", device: str = "auto", seed: int = 0) -> dict:
    """Run the chapter's experiment at `scale` through its contract and return the record."""
    from icml26.numerics import pin_cpu_numerics

    numerics = pin_cpu_numerics()
    from icml26.common.device import resolve_device
    from icml26.common.seeding import seed_everything

    pkg = package(slug)
    if scale not in pkg.PRESETS:
        raise ValueError(f"{slug} has no {scale!r} preset; its presets: {', '.join(pkg.PRESETS)}")
    torch_device = resolve_device(device)
    config = pkg.get_config(scale)
    seed_everything(seed)
    start = time.perf_counter()
    results = to_plain(pkg.run_experiment(config, seed=seed, device=torch_device))
    wall = time.perf_counter() - start
    ledger = claims_module(slug).build_ledger(from_plain(results))
    kind = torch_device.type
    hardware = {"cpu": cpu_model()}
    if kind == "cuda":
        import torch

        hardware["gpu"] = torch.cuda.get_device_name(torch_device)
    return {
        "format": FORMAT, "slug": slug, "scale": scale, "device": kind,
        "results": results, "ledger": ledger.record(),
        "provenance": {
            "preset": scale, "config": to_plain(dataclasses.asdict(config)), "seeds": results.get("seeds", []),
            "device": str(torch_device), "hardware": hardware, "versions": _versions(),
            "wall_s": round(wall, 1), "peak_memory_mb": _peak_memory_mb(torch_device),
            "source_digest": source_digest(slug), "digest": "code", "sources": [p.name for p in source_files(slug)],
            "commit": _git_commit(slug), "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "numerics": "pinned" if numerics else "native",
        },
    }


def write_record(record: Mapping) -> Path:
    path = record_path(record["slug"], record["scale"], record["device"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, sort_keys=False) + "\n")
    return path


def read_record(path: str | Path) -> dict:
    return json.loads(Path(path).read_text())


def chapter_records(slug: str) -> list[Path]:
    """The chapter's stored records, in the order a page prefers them (smallest scale, CPU first)."""
    return [p for scale in RECORD_SCALES for dev in RECORD_DEVICES
            if (p := record_path(slug, scale, dev)).is_file()]


def chapter_record(slug: str) -> dict | None:
    """The record a chapter's verdict comes from (rule 9), or None when none is stored yet."""
    paths = chapter_records(slug)
    return read_record(paths[0]) if paths else None


def refresh_command(record: Mapping) -> str:
    return f"make evidence CHAPTER={record.get('slug')} SCALE={record.get('scale')} DEVICE={record.get('device')}"


def _decided(claims: list[Mapping]) -> list[tuple]:
    return [(c["id"], c["status"], c["fragile"], c.get("stand_in", False), c.get("by_construction", False))
            for c in claims]


def check_record(path: str | Path, *, recompute: bool = True) -> list[str]:
    """Every problem with one record (an empty list when it is sound): missing provenance, a stale
    source digest, or a status that does not follow from the stored results."""
    path = Path(path)
    try:
        record = read_record(path)
    except (OSError, json.JSONDecodeError) as err:
        return [f"{path}: unreadable ({err})"]
    problems = []
    for key in ("format", "slug", "scale", "device", "results", "ledger", "provenance"):
        if key not in record:
            problems.append(f"{path.name}: no {key!r}")
    if problems:
        return problems
    prov = record["provenance"]
    missing = [k for k in PROVENANCE_KEYS if k not in prov or prov[k] in (None, "", [], {})]
    if missing:
        problems.append(f"{path.name}: provenance lacks {', '.join(missing)}")
    slug = record["slug"]
    if path.name != f"{record['scale']}-{record['device']}.json" or path.parent.parent.name != slug:
        problems.append(f"{path}: stored under the wrong name for {slug} at {record['scale']}-{record['device']}")
    kind = prov.get("digest", "bytes")
    if kind not in DIGEST_KINDS:
        problems.append(f"{path.name}: unknown digest kind {kind!r}; allowed: {', '.join(DIGEST_KINDS)}")
    elif prov.get("source_digest") != source_digest(slug, kind):
        problems.append(f"{path.name}: stale: the {'code' if kind == 'code' else 'sources'} of icml26.{slug} "
                        f"changed since the record was made; refresh it with `{refresh_command(record)}`")
    elif kind == "code" and (stored := prov.get("config") or {}) != (now := preset_config(slug, record["scale"])):
        changed = sorted(k for k in set(stored) | set(now) if stored.get(k) != now.get(k))
        problems.append(f"{path.name}: stale: the {record['scale']} preset changed since the record was made "
                        f"({', '.join(changed) or 'its fields'}); refresh it with `{refresh_command(record)}`")
    if recompute and not problems:
        ledger = claims_module(slug).build_ledger(from_plain(record["results"])).record()
        stored = record["ledger"]
        if _decided(ledger["claims"]) != _decided(stored["claims"]) or ledger["verdict"] != stored["verdict"]:
            diff = [f"{a[0]}: stored {b[1:]} vs recomputed {a[1:]}"
                    for a, b in zip(_decided(ledger["claims"]), _decided(stored["claims"])) if a != b]
            problems.append(f"{path.name}: the stored ledger does not follow from the stored results "
                            f"({'; '.join(diff) or 'verdict or claims differ'}); never edit a record by hand: "
                            f"`{refresh_command(record)}`")
    return problems


def all_records() -> list[Path]:
    return sorted(PACKAGE_ROOT.glob("*/evidence/*.json"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m icml26.evidence", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a chapter's evidence preset and store its record")
    run.add_argument("slug")
    run.add_argument("--scale", default="evidence", choices=RECORD_SCALES)
    run.add_argument("--device", default="auto")
    run.add_argument("--seed", type=int, default=0)
    check = sub.add_parser("check", help="check stored records (all, or the named chapters')")
    check.add_argument("slugs", nargs="*")
    args = parser.parse_args(argv)
    if args.command == "run":
        record = run_record(args.slug, args.scale, args.device, args.seed)
        path = write_record(record)
        print(f"wrote {path.relative_to(PACKAGE_ROOT.parents[1])} in {record['provenance']['wall_s']} s")
        for claim in record["ledger"]["claims"]:
            print(f"  {claim['id']} {claim['status']}{' (fragile)' if claim['fragile'] else ''}")
        print(f"  {record['ledger']['verdict_line']}")
        problems = check_record(path)
        for p in problems:
            print("PROBLEM:", p, file=sys.stderr)
        return 1 if problems else 0
    paths = [p for s in args.slugs for p in chapter_records(s)] if args.slugs else all_records()
    bad = 0
    for path in paths:
        problems = check_record(path)
        bad += bool(problems)
        print(f"{'ok ' if not problems else 'BAD'} {path.parent.parent.name}/{path.name}")
        for p in problems:
            print("   ", p)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
