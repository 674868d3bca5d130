"""The chapter runner refuses what papermill would only warn about."""

import nbformat
import pytest

import icml26.runner as runner


@pytest.fixture
def demo_notebook(tmp_path, monkeypatch):
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('SCALE = "reduced"\nDEVICE = "auto"\nSEED = 0')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell("print(SCALE)")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "dq_sync.ipynb"
    nbformat.write(nb, path)
    monkeypatch.setattr(runner, "chapter_path", lambda slug: path)
    return path


def test_declared_parameters_are_read_from_the_tagged_cell(demo_notebook):
    assert runner.declared_parameters(demo_notebook) == {"SCALE": "reduced", "DEVICE": "auto", "SEED": 0}


def test_only_non_default_parameters_are_injected(demo_notebook):
    wanted = {"SCALE": "reduced", "DEVICE": "cpu", "SEED": 0}
    assert runner.check_parameters("dq_sync", wanted) == {"DEVICE": "cpu"}


@pytest.mark.parametrize("wanted, message", [
    ({"SCAEL": "full"}, r"declares no parameter\(s\) \['SCAEL'\]; its parameters are: SCALE, DEVICE, SEED"),
    ({"SCALE": "huge"}, "unknown preset 'huge'; valid presets: smoke, reduced, evidence, full"),
    ({"DEVICE": "gpu"}, "unknown device 'gpu'"),
    ({"SEED": "zero"}, "parameter SEED .* takes a int"),
])
def test_bad_parameters_are_refused(demo_notebook, wanted, message):
    with pytest.raises(ValueError, match=message):
        runner.check_parameters("dq_sync", wanted)


def test_assignments_parse_literals_and_reject_malformed_text():
    assert runner.parse_assignment("SEED=3") == ("SEED", 3)
    assert runner.parse_assignment("SCALE=full") == ("SCALE", "full")
    with pytest.raises(ValueError, match="NAME=VALUE"):
        runner.parse_assignment("3=SEED")


def test_command_line_reports_errors_with_status_2(capsys):
    assert runner.main(["no_such_chapter"]) == 2
    assert "unknown chapter 'no_such_chapter'; valid chapters: dq_sync" in capsys.readouterr().err


def test_command_line_refuses_a_misspelled_parameter(demo_notebook, capsys):
    assert runner.main(["dq_sync", "-p", "SCAEL=full"]) == 2
    assert "declares no parameter" in capsys.readouterr().err


def test_a_run_records_paths_not_notebooks_in_its_metadata(demo_notebook):
    """Two runs in a row: the stored metadata names the input by path and does not grow."""
    runner.run_chapter("dq_sync", {"SCALE": "smoke"})
    first = demo_notebook.stat().st_size
    runner.run_chapter("dq_sync", {"SCALE": "smoke"})
    nb = nbformat.read(demo_notebook, as_version=4)
    assert nb.metadata.papermill.input_path == str(demo_notebook)
    # nesting the previous notebook would double the file; timestamps may change a few bytes
    assert demo_notebook.stat().st_size < first + 100
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1


def test_status_summary_reads_the_checked_lines_with_the_ledgers_grammar(tmp_path):
    import json

    from icml26.runner import status_summary

    checked = {"cell_type": "code", "metadata": {"tags": ["nbval-check-output"]}, "source": "ledger.print_check()",
               "outputs": [{"output_type": "stream", "name": "stdout",
                            "text": "C1 REPRODUCED (fragile) (stand-in): a\nC2 INCONCLUSIVE: b\n"
                                    "Verdict: PARTLY REPRODUCED (2 tested claims: 2 partly reproduced)\n"}]}
    path = tmp_path / "demo.ipynb"
    path.write_text(json.dumps({"cells": [checked], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    assert status_summary(path).splitlines() == [
        "  C1 REPRODUCED (fragile) (stand-in)", "  C2 INCONCLUSIVE", "  verdict of this run: PARTLY REPRODUCED"]
