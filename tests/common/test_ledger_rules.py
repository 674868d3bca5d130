"""Ledger revision 2 (CLAIMS.md rules 1-8): each rule on both sides of its boundary."""

from __future__ import annotations

import pytest

from icml26.common.ledger import (
    ALPHA, INCONCLUSIVE, MIN_SEEDS, NOT_REPRODUCED, NOT_TESTED, PARTLY_REPRODUCED, REPRODUCED, ClaimStatus,
    Competence, Ledger, ThresholdChange, bootstrap_interval, chapter_verdict, competence_reason,
    gate_competence, half_size, is_fragile, paired_gain, parse_check_output, replicated_status, seed_interval,
    seed_statuses, seed_test_p, size_against_achievable,
)


# Rule 1: replication with the training seed as the unit.
def test_rule1_every_seed_holding_reproduces_and_none_holding_does_not():
    assert replicated_status([0.1, 0.2, 0.05]) == REPRODUCED
    assert replicated_status([-0.1, 0.0, -0.05]) == NOT_REPRODUCED  # 0.0 is not above the threshold


def test_rule1_two_of_three_seeds_need_the_seed_as_unit_test():
    # 3 of 4 seeds hold and the t-test over seeds is significant -> REPRODUCED
    strong = [0.30, 0.32, 0.31, -0.01]
    assert seed_test_p(strong) < ALPHA and replicated_status(strong) == REPRODUCED
    # 2 of 3 hold but the t-test is not significant -> INCONCLUSIVE
    weak = [0.1, 0.2, -0.01]
    assert seed_test_p(weak) >= ALPHA and replicated_status(weak) == INCONCLUSIVE
    # significant overall but only half the seeds hold -> INCONCLUSIVE (2 of 3 is the bar)
    half = [0.9, 0.9, -0.001, -0.001]
    assert replicated_status(half) == INCONCLUSIVE


def test_rule1_size_and_threshold():
    assert replicated_status([0.3, 0.3, 0.3], size_ok_per_seed=[True, False, True]) == PARTLY_REPRODUCED
    assert replicated_status([0.3, 0.3, 0.3], threshold=0.3) == NOT_REPRODUCED
    assert replicated_status([0.31, 0.32, 0.33], threshold=0.3) == REPRODUCED


def test_rule1_needs_three_independently_trained_seeds():
    assert MIN_SEEDS == 3
    with pytest.raises(ValueError, match="at least 3"):
        replicated_status([0.1, 0.2])
    with pytest.raises(ValueError, match="2 size checks for 3 seeds"):
        replicated_status([0.1, 0.2, 0.3], size_ok_per_seed=[True, True])
    assert seed_statuses([True, False]) == [REPRODUCED, NOT_REPRODUCED]
    assert seed_test_p([0.2, 0.2, 0.2]) == 0.0 and seed_test_p([0.0, 0.0, 0.0]) == 1.0


def test_rule1_paired_gain_over_items_for_a_fixed_procedure():
    base = [float(i % 5) / 5 for i in range(40)]
    better = paired_gain([b + 0.1 for b in base], base, min_gain=0.05)
    assert better["status"] == REPRODUCED and better["p"] < ALPHA and better["interval"][0] > 0
    small = paired_gain([b + 0.1 for b in base], base, min_gain=0.2)
    assert small["status"] == PARTLY_REPRODUCED
    worse = paired_gain(base, [b + 0.1 for b in base])
    assert worse["status"] == NOT_REPRODUCED
    flat = paired_gain([1.0] * 40, [1.0] * 40)
    assert flat["status"] == INCONCLUSIVE and flat["floor_or_ceiling"]
    with pytest.raises(ValueError, match="at least 30"):
        paired_gain(base[:29], base[:29])


# Rule 2: competence before comparison.
def test_rule2_a_failed_arm_makes_the_claim_inconclusive():
    ok, bad = Competence("method", 0.8, 0.6), Competence("baseline", 0.55, 0.6)
    assert ok.passed and not bad.passed
    assert Competence("loss", 0.1, 0.2, higher_is_better=False).passed
    assert not Competence("loss", 0.3, 0.2, higher_is_better=False).passed
    assert gate_competence(REPRODUCED, [ok]) == REPRODUCED
    assert gate_competence(NOT_REPRODUCED, [ok, bad]) == INCONCLUSIVE
    assert gate_competence(NOT_REPRODUCED, [ok, bad], arm_failure_is_claim=True) == NOT_REPRODUCED
    assert "baseline: 0.55 (needs >= 0.6) FAILS" in competence_reason([ok, bad])
    assert competence_reason([ok]) == ""


def test_rule2_a_decided_status_with_a_failed_arm_is_refused():
    bad = Competence("student", 0.24, 0.48)
    with pytest.raises(ValueError, match="rule 2"):
        ClaimStatus("C4", "claim", REPRODUCED, competence=[bad])
    with pytest.raises(ValueError, match="rule 2"):
        ClaimStatus("C4", "claim", NOT_REPRODUCED, reason="r", competence=[bad])
    ClaimStatus("C4", "claim", INCONCLUSIVE, reason="r", competence=[bad])
    ClaimStatus("C4", "claim", NOT_REPRODUCED, reason="r", competence=[bad], arm_failure_is_claim=True)
    with pytest.raises(ValueError, match="finite number"):
        Competence("arm", float("nan"), 0.5)


# Rule 3: tests that can fail.
def test_rule3_a_check_by_construction_decides_only_a_property_claim():
    with pytest.raises(ValueError, match="rule 3"):
        ClaimStatus("C1", "monotone score", REPRODUCED, by_construction=True)
    identity = ClaimStatus("C1", "risk gap equals misfit", REPRODUCED, by_construction=True, property_claim=True)
    assert identity.check_line() == "C1 REPRODUCED (by construction): risk gap equals misfit"
    untested = ClaimStatus("C1", "monotone score", NOT_TESTED, reason="true by construction", by_construction=True)
    assert parse_check_output(untested.check_line())["claims"]["C1"]["by_construction"]


# Rule 4: stand-ins.
def test_rule4_a_stand_in_counts_as_partly_at_most():
    stand_in = ClaimStatus("C1", "agent wins", REPRODUCED, stand_in=True)
    assert stand_in.counted_status == PARTLY_REPRODUCED
    assert chapter_verdict([stand_in, ClaimStatus("C2", "x", REPRODUCED)]) == PARTLY_REPRODUCED
    assert chapter_verdict([ClaimStatus("C1", "x", REPRODUCED), ClaimStatus("C2", "x", REPRODUCED)]) == REPRODUCED
    assert ClaimStatus("C1", "x", NOT_REPRODUCED, reason="r", stand_in=True).counted_status == NOT_REPRODUCED
    assert stand_in.check_line() == "C1 REPRODUCED (stand-in): agent wins"


def test_rule4_the_ledger_refuses_an_unmarked_stand_in():
    ledger = Ledger("demo", ["C1"], "abstract only", stand_ins={"C1": "a scripted planner"})
    with pytest.raises(ValueError, match="rule 4"):
        ledger.add(ClaimStatus("C1", "agent wins", REPRODUCED))
    ledger.add(ClaimStatus("C1", "agent wins", REPRODUCED, stand_in=True))
    assert ledger.verdict() == PARTLY_REPRODUCED
    assert ledger.verdict_line() == "Verdict: PARTLY REPRODUCED (1 tested claim: 1 partly reproduced)"
    with pytest.raises(ValueError, match="not claims of demo"):
        Ledger("demo", ["C1"], stand_ins={"C2": "x"})


# Rule 5: fragile for every status.
def test_rule5_fragile_across_seeds_when_the_interval_crosses_the_threshold():
    assert is_fragile([0.61, 0.66, 0.58], 0.60)
    assert not is_fragile([0.70, 0.72, 0.71], 0.60)
    lo, hi = seed_interval([0.70, 0.72, 0.71])
    assert lo < 0.71 < hi and hi - lo < 0.05


def test_rule5_a_single_run_is_fragile_by_its_bootstrap_interval():
    # TAM-like: 0.63 against a 0.60 bar over 100 items crosses the bar
    items = [1.0] * 63 + [0.0] * 37
    assert is_fragile([0.63], 0.60, items=items)
    assert not is_fragile([0.95], 0.60, items=[1.0] * 95 + [0.0] * 5)
    with pytest.raises(ValueError, match="rule 5"):
        is_fragile([0.63], 0.60)


def test_rule5_an_extra_seed_that_changes_the_status_makes_it_fragile():
    assert is_fragile([0.9, 0.95, 0.92], 0.5, [REPRODUCED, REPRODUCED, REPRODUCED, INCONCLUSIVE])
    assert not is_fragile([0.9, 0.95, 0.92], 0.5, [REPRODUCED] * 4)


def test_rule5_bootstrap_is_seeded_and_checks_its_input():
    items = [float(i % 3) for i in range(50)]
    assert bootstrap_interval(items) == bootstrap_interval(items)
    with pytest.raises(ValueError, match="level"):
        bootstrap_interval(items, level=1.5)
    with pytest.raises(ValueError, match="non-finite"):
        bootstrap_interval([1.0, float("inf")])


# Rule 6: size against the achievable.
def test_rule6_size_is_judged_only_where_the_task_can_reach_it():
    assert half_size(3.48, ratio=True) == pytest.approx(2.24) and half_size(0.6) == 0.3
    reachable = size_against_achievable(0.25, 0.6, 1.0)
    assert reachable.comparable and not reachable.size_ok
    assert size_against_achievable(0.35, 0.6, 1.0).size_ok
    capped = size_against_achievable(1.8, 3.48, 2.5, ratio=True)  # the course caps the ratio at 2.5x
    assert not capped.comparable and capped.size_ok
    assert capped.fraction_of_achievable == pytest.approx(0.8 / 1.5)
    assert "not comparable" in capped.text()


# Rule 7: thresholds fixed before the run.
def test_rule7_a_changed_threshold_is_listed_and_forces_fragile():
    change = ThresholdChange("timing batch", "50", "1", "latency is the paper's setting")
    claim = ClaimStatus("C2", "faster", REPRODUCED, changes=[change])
    assert claim.fragile and claim.check_line() == "C2 REPRODUCED (fragile): faster"
    ledger = Ledger("demo", ["C2"])
    ledger.add(claim)
    assert "changed after a result (rule 7): timing batch: 50 -&gt; 1" in ledger.html_table()
    with pytest.raises(ValueError, match="one-line 'why'"):
        ThresholdChange("a", "b", "c", "")


# Rule 8: the chapter verdict.
@pytest.mark.parametrize("statuses, verdict", [
    ((INCONCLUSIVE, INCONCLUSIVE, NOT_TESTED), INCONCLUSIVE),
    ((INCONCLUSIVE, NOT_REPRODUCED), NOT_REPRODUCED),
    ((INCONCLUSIVE, PARTLY_REPRODUCED), PARTLY_REPRODUCED),
    ((REPRODUCED, REPRODUCED), REPRODUCED),
    ((REPRODUCED, INCONCLUSIVE), PARTLY_REPRODUCED),
])
def test_rule8_verdict(statuses, verdict):
    assert chapter_verdict(statuses) == verdict


# Rule 9: the page shows the evidence record beside this run.
def test_rule9_the_table_shows_the_evidence_status_beside_this_run():
    run = Ledger("demo", ["C1"])
    run.add(ClaimStatus("C1", "wins", INCONCLUSIVE, {"gain": 0.01}, reason="seeds disagree"))
    record = {"scale": "evidence", "device": "cpu", "provenance": {"seeds": [0, 1, 2, 3, 4]},
              "ledger": {"claims": [{"id": "C1", "status": REPRODUCED, "counted_status": REPRODUCED,
                                     "extension": False, "fragile": False, "figures": {"gain": "0.2"},
                                     "competence": [], "threshold": "gain > 0 in every seed"}],
                         "verdict": REPRODUCED,
                         "verdict_line": "Verdict: REPRODUCED (an older record's wording)"}}
    table = run.html_table(record)
    assert "status at evidence (evidence, cpu, 5 seeds)" in table
    assert table.index("<b>REPRODUCED</b>") < table.index("<b>INCONCLUSIVE</b>")
    # the record's verdict is summarised from its claims, in today's wording, whatever line it stored
    assert "gain = 0.2" in table and ("Chapter verdict</b> (evidence record: evidence, cpu, 5 seeds): "
                                      "REPRODUCED (1 tested claim: 1 reproduced)") in table
    assert "older record" not in table
    assert "no evidence record is stored yet" in run.html_table(None)


def test_a_long_checked_line_continues_on_indented_lines_and_parses_back():
    long_claim = "the model's own words " * 6
    entry = ClaimStatus("C1", long_claim.strip(), INCONCLUSIVE, reason="r", fragile=True, stand_in=True)
    lines = entry.check_line().splitlines()
    assert len(lines) > 1 and all(len(line) <= 100 for line in lines)
    assert lines[0].startswith("C1 INCONCLUSIVE (fragile) (stand-in): ") and lines[1].startswith("    ")
    parsed = parse_check_output(entry.check_line() + "\nVerdict: INCONCLUSIVE (1 tested claim: 1 inconclusive)")
    assert parsed["claims"]["C1"]["status"] == INCONCLUSIVE and parsed["verdict"] == INCONCLUSIVE
    assert ClaimStatus("C1", "short", REPRODUCED).check_line() == "C1 REPRODUCED: short"
