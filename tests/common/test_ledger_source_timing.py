import json

import matplotlib
import pytest

matplotlib.use("Agg")

from icml26.common import Timer, excerpt, source_of
from icml26.common.ledger import (
    INCONCLUSIVE,
    LEDGER_KEY,
    NOT_REPRODUCED,
    NOT_TESTED,
    PARTLY_REPRODUCED,
    REPRODUCED,
    ClaimStatus,
    Ledger,
    chapter_verdict,
    combine_sub_results,
    is_fragile,
    paired_test_p,
    parse_check_output,
    per_seed_flags,
    per_seed_values,
    read_ledger,
    robust_status,
)
from icml26.common.plotting import (COLUMN_WIDTH_IN, add_colorbar, book_figure, check_figure, integer_ticks,
                                    use_book_style)


def _ledger(*entries):
    ledger = Ledger("demo", ["C1", "C2", "C3"], "abstract only")
    for e in entries:
        ledger.add(e)
    return ledger


def _c(cid, status, fragile=False):
    return ClaimStatus(cid, f"claim {cid}", status, {"x": 0.5}, "x >= T", "" if status == REPRODUCED else "why",
                       fragile)


@pytest.mark.parametrize("statuses, verdict", [
    ((REPRODUCED, REPRODUCED, NOT_TESTED), REPRODUCED),
    ((REPRODUCED, PARTLY_REPRODUCED, REPRODUCED), PARTLY_REPRODUCED),
    ((REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE), PARTLY_REPRODUCED),
    ((PARTLY_REPRODUCED, NOT_REPRODUCED, NOT_TESTED), PARTLY_REPRODUCED),
    ((NOT_REPRODUCED, INCONCLUSIVE, NOT_TESTED), NOT_REPRODUCED),
    ((INCONCLUSIVE, INCONCLUSIVE, INCONCLUSIVE), INCONCLUSIVE),
    ((INCONCLUSIVE, NOT_TESTED, INCONCLUSIVE), INCONCLUSIVE),
])
def test_chapter_verdict_rule(statuses, verdict):
    assert chapter_verdict(statuses) == verdict


def test_verdict_needs_a_tested_claim_and_known_statuses():
    with pytest.raises(ValueError, match="tested claim"):
        chapter_verdict([NOT_TESTED, NOT_TESTED])
    with pytest.raises(ValueError, match="unknown status 'PASSED'"):
        chapter_verdict(["PASSED"])


def test_checked_lines_hold_statuses_and_verdict_but_no_figures(capsys):
    ledger = _ledger(_c("C1", REPRODUCED), _c("C2", PARTLY_REPRODUCED, fragile=True), _c("C3", NOT_TESTED),
                     _c("E1", NOT_REPRODUCED))
    ledger.print_check()
    assert capsys.readouterr().out.splitlines() == [
        "C1 REPRODUCED: claim C1",
        "C2 PARTLY REPRODUCED (fragile): claim C2",
        "C3 NOT TESTED: claim C3",
        "E1 (ours) NOT REPRODUCED: claim E1",
        "Verdict: PARTLY REPRODUCED (2 tested claims: 1 reproduced, 1 partly reproduced; 1 not tested)",
    ]
    many = Ledger("demo", ["C1", "C2", "C3", "C4", "C5"]).extend(
        [_c("C1", REPRODUCED), _c("C2", PARTLY_REPRODUCED), _c("C3", INCONCLUSIVE), _c("C4", NOT_REPRODUCED),
         _c("C5", NOT_TESTED)])
    verdict = many.check_lines().splitlines()[-2:]  # a long verdict continues on an indented line
    assert verdict[0].startswith("Verdict: PARTLY REPRODUCED (4 tested claims: 1 reproduced, 1 partly")
    assert verdict[1].startswith("    ") and verdict[1].endswith("1 not tested)")
    assert all(len(line) <= 100 for line in verdict)
    assert parse_check_output(many.check_lines())["verdict"] == PARTLY_REPRODUCED
    assert parse_check_output(ledger.check_lines())["claims"]["C2"] == {
        "status": PARTLY_REPRODUCED, "fragile": True, "stand_in": False, "by_construction": False,
        "claim": "claim C2"}


def test_extensions_never_count_in_the_verdict():
    ledger = _ledger(_c("C1", REPRODUCED), _c("C2", REPRODUCED), _c("C3", REPRODUCED), _c("E1", NOT_REPRODUCED))
    assert ledger.verdict() == REPRODUCED


def test_ledger_refuses_a_missing_or_foreign_claim_id():
    ledger = _ledger(_c("C1", REPRODUCED), _c("C2", REPRODUCED))
    with pytest.raises(ValueError, match="lacks C3"):
        ledger.check_lines()
    with pytest.raises(ValueError, match="C4 is not a claim of demo"):
        ledger.add(_c("C4", REPRODUCED))
    with pytest.raises(ValueError, match="already added"):
        ledger.add(_c("C1", REPRODUCED))
    with pytest.raises(TypeError):
        ledger.add({"claim_id": "C3"})


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(claim_id="X1"), ValueError, "C1 or E1"),
    (dict(claim_id="C0"), ValueError, "C1 or E1"),
    (dict(status="PASSED"), ValueError, "unknown status"),
    (dict(status=NOT_REPRODUCED, reason=""), ValueError, "needs a one-line reason"),
    (dict(fragile="yes"), TypeError, "fragile must be a bool"),
    (dict(claim="gap is 0.14"), ValueError, "no decimal"),
    (dict(claim="two\nlines"), ValueError, "one non-empty line"),
])
def test_claim_status_rejects_bad_input(kwargs, error, match):
    args = dict(claim_id="C1", claim="a claim", status=REPRODUCED, figures={}, threshold="", reason="", fragile=False)
    args.update({k: (v.replace("\\n", "\n") if isinstance(v, str) else v) for k, v in kwargs.items()})
    with pytest.raises(error, match=match):
        ClaimStatus(**args)


@pytest.mark.parametrize("holds, size, status", [
    ([True, True, True], None, REPRODUCED),
    ([True, True, True], [True, False, True], PARTLY_REPRODUCED),
    ([False, False, False], None, NOT_REPRODUCED),
    ([True, False, True], None, INCONCLUSIVE),
])
def test_robustness_rule_over_seeds(holds, size, status):
    assert robust_status(holds, size) == status


def test_robustness_rule_rejects_bad_input():
    with pytest.raises(ValueError, match="at least 3 independently trained seeds"):
        robust_status([True, True])
    with pytest.raises(TypeError, match="must be a bool"):
        robust_status([True, 1, True])
    with pytest.raises(ValueError, match="2 size checks for 3 seeds"):
        robust_status([True] * 3, [True, True])


def test_per_seed_values_accepts_numbers_and_refuses_the_rest():
    import numpy as np

    assert per_seed_values([1, 0.5, np.float32(0.25)], "acc") == [1.0, 0.5, 0.25]
    assert per_seed_values(np.array([0.1, 0.2, 0.3]), "acc", n=3, min_count=3) == [0.1, 0.2, 0.3]
    with pytest.raises(TypeError, match="acc must be a sequence of numbers"):
        per_seed_values("0.9", "acc")
    with pytest.raises(TypeError, match="acc must hold numbers, got bool"):
        per_seed_values([0.9, True], "acc")
    with pytest.raises(TypeError, match="must hold numbers, got str"):
        per_seed_values([0.9, "0.8"], "acc")
    with pytest.raises(ValueError, match="non-finite"):
        per_seed_values([0.9, float("nan")], "acc")
    with pytest.raises(ValueError, match="acc has 2 values for 3 seeds"):
        per_seed_values([0.9, 0.8], "acc", n=3)
    with pytest.raises(ValueError, match="needs at least 3 values, got 2"):
        per_seed_values([0.9, 0.8], "acc", min_count=3)
    with pytest.raises(ValueError, match="at least 1"):
        per_seed_values([], "acc")


def test_sub_results_combine_into_one_claim_status():
    assert combine_sub_results([REPRODUCED, REPRODUCED]) == REPRODUCED
    assert combine_sub_results([REPRODUCED, INCONCLUSIVE]) == PARTLY_REPRODUCED
    assert combine_sub_results([PARTLY_REPRODUCED, NOT_REPRODUCED]) == PARTLY_REPRODUCED
    assert combine_sub_results([NOT_REPRODUCED, NOT_REPRODUCED]) == NOT_REPRODUCED
    assert combine_sub_results([NOT_REPRODUCED, INCONCLUSIVE]) == INCONCLUSIVE
    with pytest.raises(ValueError, match="at least one sub-result"):
        combine_sub_results([])
    with pytest.raises(ValueError, match="unknown status"):
        combine_sub_results(["REPRODUCED!"])


def test_per_seed_flags_accepts_bools_only():
    import numpy as np

    assert per_seed_flags([True, np.bool_(False)], "holds") == [True, False]
    with pytest.raises(TypeError, match="holds must be a bool, got int"):
        per_seed_flags([True, 1], "holds")
    with pytest.raises(TypeError, match="holds must be a sequence of bools"):
        per_seed_flags(True, "holds")


def test_paired_test_detects_a_consistent_gain_and_not_noise():
    base = [float(i % 7) for i in range(40)]
    assert paired_test_p([b + 0.3 for b in base], base) < 0.05
    assert paired_test_p(base, [b + 0.3 for b in base]) > 0.5
    assert paired_test_p(base, base) == 1.0
    with pytest.raises(ValueError, match="at least 30 items"):
        paired_test_p(base[:10], base[:10])
    with pytest.raises(ValueError, match="equal lengths"):
        paired_test_p(base, base[:-1])


def test_fragile_flag():
    assert is_fragile([0.904, 0.95, 0.86], 0.90)           # threshold inside the 95% interval
    assert not is_fragile([0.99, 0.98, 0.995], 0.90)
    assert is_fragile([0.99, 0.98, 0.995], 0.90, [REPRODUCED, REPRODUCED, NOT_REPRODUCED])
    with pytest.raises(ValueError, match="unknown status"):
        is_fragile([1.0], 0.5, ["OK"])


def test_ledger_record_is_read_back_from_a_stored_notebook(tmp_path):
    ledger = _ledger(_c("C1", REPRODUCED), _c("C2", NOT_REPRODUCED), _c("C3", NOT_TESTED))
    table = {"output_type": "display_data", "metadata": {LEDGER_KEY: ledger.record()},
             "data": {"text/html": ledger.html_table()}}
    checked = {"cell_type": "code", "metadata": {"tags": ["nbval-check-output"]}, "source": "ledger.print_check()",
               "outputs": [{"output_type": "stream", "name": "stdout", "text": ledger.check_lines() + "\n"}]}
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "source": "ledger.show()", "outputs": [table]}, checked],
          "metadata": {"papermill": {"duration": 42.5, "parameters": {"SCALE": "reduced"}}},
          "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "demo.ipynb"
    path.write_text(json.dumps(nb))
    stored = read_ledger(path)
    assert stored.record["verdict"] == PARTLY_REPRODUCED == stored.checked["verdict"]
    assert [c["id"] for c in stored.record["claims"]] == ["C1", "C2", "C3"]
    assert stored.record["claims"][1]["reason"] == "why" and stored.duration_s == 42.5


def test_source_of_returns_the_real_source():
    assert source_of(chapter_verdict).startswith("def chapter_verdict(")
    with pytest.raises(TypeError, match="cannot show the source"):
        source_of(1)


def _demo(x, n=3):
    """Doc."""
    if n < 1:
        raise ValueError("n")
    assert x is not None
    y = x * 2
    # region: core
    z = y + n
    # endregion
    return z


def test_excerpt_drops_argument_checks_and_cuts_regions():
    text = excerpt(_demo)
    assert "raise" not in text and "assert" not in text and "# region" not in text
    assert text.count("argument checks omitted") == 1 and "z = y + n" in text
    assert excerpt(_demo, region="core") == "z = y + n"
    assert '"""Doc."""' not in excerpt(_demo, drop_docstring=True)
    with pytest.raises(ValueError, match="regions: \\['core'\\]"):
        excerpt(_demo, region="other")
    with pytest.raises(ValueError, match="max_lines=3"):
        excerpt(_demo, max_lines=3)


def test_figure_policy():
    use_book_style()
    fig, axes = book_figure(1, 3)
    assert fig.get_size_inches()[0] == COLUMN_WIDTH_IN
    image = axes[0].imshow([[0, 1], [2, 3]])
    assert add_colorbar(image, axes[0], "value").ax.get_ylabel() == "value"
    axes[1].plot([0, 1.5, 3], [0, 1, 2])
    integer_ticks(axes[1], "x")
    fig.canvas.draw()
    assert all(float(t).is_integer() for t in axes[1].get_xticks())
    check_figure(fig)
    axes[2].set_title("tiny", fontsize=6)
    with pytest.raises(ValueError, match="6.0\\] pt"):
        check_figure(fig)
    import matplotlib.pyplot as plt
    wide = plt.figure(figsize=(12, 4))
    with pytest.raises(ValueError, match="12.0 in wide"):
        check_figure(wide)
    with pytest.raises(ValueError, match="at most 4"):
        book_figure(1, 5)
    with pytest.raises(ValueError, match="needs a label"):
        add_colorbar(image, axes[0], "")
    plt.close("all")


def test_timer_measures_wall_time_and_memory():
    with Timer("cpu") as timer:
        sum(range(200000))
    assert 0 < timer.seconds < 5 and timer.peak_mb > 0
