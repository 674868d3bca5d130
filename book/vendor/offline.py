"""Prepare an offline build of the book: `make book OFFLINE=1` runs this, then builds with the
configuration it writes.

By default the pages load MathJax 3 (Sphinx), require.js and the ipywidgets HTML manager
(myst-nb) from public CDNs, so a reader without a network sees raw LaTeX and no widgets. This
script
  1. installs the pinned npm packages of book/vendor/package-lock.json with `npm ci` into
     _build/offline/npm (skipped when that lock file is already installed),
  2. copies the files the pages need into _build/offline/extra/_vendor/ (Sphinx copies that
     folder into the book's root through `html_extra_path`; nothing goes into _static/, where
     Jupyter Book would add a <script> tag for every .js file to every page),
  3. writes _build/offline/_config.yml: _config.yml plus the settings that point the pages at
     those copies (`mathjax_path`, myst-nb's `nb_ipywidgets_js`, `html_extra_path`).

_config.yml itself is never edited: the online build keeps the CDN defaults.

Usage: python book/vendor/offline.py            (from the repository root; prints the config path)
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
VENDOR = Path(__file__).resolve().parent
OUT = ROOT / "_build" / "offline"
NPM_DIR = OUT / "npm"
EXTRA = OUT / "extra"
ASSETS = EXTRA / "_vendor"  # served as <book>/_vendor/
CONFIG = OUT / "_config.yml"

# Paths as the pages reference them. Sphinx joins a relative script path onto "_static/",
# so "../_vendor/..." resolves to <book>/_vendor/... from every page, at any depth.
MATHJAX_JS = "../_vendor/mathjax/tex-mml-chtml.js"
REQUIRE_CONFIG_JS = "../_vendor/require-config.js"
REQUIRE_JS = "../_vendor/requirejs/require.js"
WIDGETS_JS = "../_vendor/html-manager/embed-amd.js"

# MathJax 3: the tex-mml-chtml combined component (the one Jupyter Book loads from the CDN) and
# what it loads on demand (TeX extensions via autoload, CHTML fonts, the menu, accessibility).
MATHJAX_KEEP = ("tex-mml-chtml.js", "input", "output/chtml", "ui", "a11y", "sre", "adaptors")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def npm_install() -> Path:
    """`npm ci` the pinned packages into _build/offline/npm; returns its node_modules."""
    lock = VENDOR / "package-lock.json"
    stamp = NPM_DIR / ".installed"
    modules = NPM_DIR / "node_modules"
    if stamp.is_file() and stamp.read_text() == _sha256(lock) and modules.is_dir():
        return modules
    if shutil.which("npm") is None:
        sys.exit("offline.py: npm is not installed (Debian: apt-get install npm)")
    NPM_DIR.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy2(VENDOR / name, NPM_DIR / name)
    subprocess.run(
        ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=NPM_DIR,
        check=True,
    )
    stamp.write_text(_sha256(lock))
    return modules


# Loaded before require.js (a global `require` object is its configuration). The widget
# manager's bundle finds its fonts next to its module URL, which require.js derives from the
# module name: map that name onto _vendor/html-manager/, wherever the page sits.
REQUIRE_CONFIG = """\
var require = {paths: {"@jupyter-widgets/html-manager/dist":
  new URL("html-manager", document.currentScript.src).href}};
"""


def copy_assets(modules: Path) -> None:
    """Copy MathJax, require.js and the widget manager's embed bundle into EXTRA/_vendor."""
    if ASSETS.exists():
        shutil.rmtree(ASSETS)
    mathjax = modules / "mathjax" / "es5"
    for part in MATHJAX_KEEP:
        source, target = mathjax / part, ASSETS / "mathjax" / part
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            shutil.copy2(source, target)
    (ASSETS / "require-config.js").write_text(REQUIRE_CONFIG)
    (ASSETS / "requirejs").mkdir(parents=True)
    shutil.copy2(modules / "requirejs" / "require.js", ASSETS / "requirejs" / "require.js")
    # embed-amd.js is self-contained; its Font Awesome fonts sit next to it under hashed names.
    manager = modules / "@jupyter-widgets" / "html-manager" / "dist"
    (ASSETS / "html-manager").mkdir(parents=True)
    for path in manager.iterdir():
        if path.name == "embed-amd.js" or path.suffix in {".woff2", ".woff", ".ttf", ".eot", ".svg"}:
            shutil.copy2(path, ASSETS / "html-manager" / path.name)
    for package in ("mathjax", "requirejs", "@jupyter-widgets/html-manager"):
        license_file = next((modules / package).glob("LICEN[CS]E*"), None)
        if license_file is not None:
            name = package.split("/")[-1]
            shutil.copy2(license_file, ASSETS / f"LICENSE.{name}.txt")


def write_config() -> Path:
    """_config.yml plus the offline settings, as _build/offline/_config.yml."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    sphinx = config.setdefault("sphinx", {})
    # Jupyter Book resolves local extension paths against the config file's folder.
    sphinx["local_extensions"] = {
        name: str((ROOT / path).resolve()) for name, path in (sphinx.get("local_extensions") or {}).items()
    }
    extra = sphinx.setdefault("config", {})
    extra["mathjax_path"] = MATHJAX_JS
    # No data-jupyter-widgets-cdn: the standard widgets are bundled in embed-amd.js.
    extra["nb_ipywidgets_js"] = {REQUIRE_CONFIG_JS: {}, REQUIRE_JS: {}, WIDGETS_JS: {}}
    extra["html_extra_path"] = [str(EXTRA)]
    CONFIG.parent.mkdir(parents=True, exist_ok=True)
    header = "# Generated by book/vendor/offline.py from _config.yml; do not edit (make book OFFLINE=1).\n"
    CONFIG.write_text(header + yaml.safe_dump(config, sort_keys=False))
    return CONFIG


def main() -> None:
    copy_assets(npm_install())
    print(write_config().relative_to(ROOT))


if __name__ == "__main__":
    main()
