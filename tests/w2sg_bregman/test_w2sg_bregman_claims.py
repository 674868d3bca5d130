"""Decision functions of the w2sg_bregman ledger, on hand-made figures, around every boundary."""

import json

import numpy as np
import pytest

from icml26.common.ledger import (INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTED, PARTLY_REPRODUCED, REPRODUCED,
                                  Competence, Ledger)
from icml26.w2sg_bregman import claims as C


def test_contract_names():
    assert C.CLAIM_IDS == ("C1", "C2", "C3", "C4", "C5")
    assert C.SOURCE_BASIS == "official code" and C.STAND_INS == {}
    Ledger("w2sg_bregman", C.CLAIM_IDS, C.SOURCE_BASIS, C.STAND_INS)


def test_c1_boundary_and_marks():
    ok = C.decide_c1([1e-15, -3e-9, 2e-16])
    assert ok.status == REPRODUCED and ok.by_construction and ok.property_claim and not ok.fragile
    assert C.decide_c1([0.0, C.C1_IDENTITY_TOL]).status == NOT_REPRODUCED
    assert C.decide_c1([0.0, np.nextafter(C.C1_IDENTITY_TOL, 0)]).status == REPRODUCED
    with pytest.raises(ValueError):
        C.decide_c1([])
    with pytest.raises(ValueError):
        C.decide_c1([float("nan")])


GOOD_R = {"sq": 0.99, "kl": 0.95}
GOOD_GAP = {"sq": [0.05] * 5, "kl": [0.1] * 5}


def test_c2_statuses():
    assert C.decide_c2([True] * 5, GOOD_R, GOOD_GAP).status == REPRODUCED
    at_r = C.decide_c2([True] * 5, {"sq": 0.99, "kl": C.C2_MIN_CORRELATION}, GOOD_GAP)  # r must exceed
    assert at_r.status == PARTLY_REPRODUCED and "correlates" in at_r.reason
    at_g = C.decide_c2([True] * 5, GOOD_R, {"sq": [0.05] * 5, "kl": [C.C2_MAX_RELATIVE_GAP] * 5})  # gap may equal
    assert at_g.status == REPRODUCED
    over = C.decide_c2([True] * 5, GOOD_R, {"sq": [0.05] * 5, "kl": [C.C2_MAX_RELATIVE_GAP + 1e-9] * 5})
    assert over.status == PARTLY_REPRODUCED
    assert C.decide_c2([True, False, True], GOOD_R, {k: v[:3] for k, v in GOOD_GAP.items()}).status == PARTLY_REPRODUCED
    assert C.decide_c2([False] * 3, {"sq": 0.1}, {"sq": [0.9] * 3}).status == NOT_REPRODUCED


def test_c2_fragile_when_the_gap_interval_crosses_its_bar():
    near = {"sq": [0.2, 0.3, 0.22], "kl": [0.1, 0.1, 0.1]}
    assert C.decide_c2([True] * 3, GOOD_R, near).fragile
    assert not C.decide_c2([True] * 3, GOOD_R, {k: v[:3] for k, v in GOOD_GAP.items()}).fragile


def test_c2_bad_input():
    with pytest.raises(TypeError):
        C.decide_c2([1, 1, 1], {"sq": 0.9}, {"sq": [0.1] * 3})
    with pytest.raises(ValueError):
        C.decide_c2([True] * 3, {"sq": 0.9}, {"kl": [0.1] * 3})
    with pytest.raises(ValueError):
        C.decide_c2([True] * 2, {"sq": 0.9}, {"sq": [0.1] * 2})  # fewer than 3 seeds
    with pytest.raises(ValueError):
        C.decide_c2([True] * 3, {"sq": 0.9}, {"sq": [0.1] * 4})  # one gap per seed


def test_c3_not_tested():
    c3 = C.decide_c3()
    assert c3.status == NOT_TESTED and c3.reason


def _comp(ce=0.7, rce=0.7, sl=0.7, bar=0.5):
    return {"ce": Competence("CE", ce, bar), "rce": Competence("RCE alone", rce, bar),
            "sl": Competence("CE + RCE", sl, bar)}


def test_student_competence_uses_the_worst_temperature():
    acc = np.array([[0.8, 0.6], [0.8, 0.4]])  # (seeds, temperatures): worst temperature mean 0.5
    c = C.student_competence("sl", acc, np.array([0.5, 0.5]))
    assert c.figure == pytest.approx(0.5) and c.bar == pytest.approx(0.5) and c.passed
    assert not C.student_competence("sl", acc, np.array([0.51, 0.51])).passed
    with pytest.raises(ValueError):
        C.student_competence("sl", acc, np.array([0.5]))


def test_c4_less_sensitive_in_every_seed():
    rise = {"ce": [0.3] * 3, "rce": [0.0] * 3, "sl": [0.1] * 3}
    spread = {"ce": [0.02] * 3, "rce": [0.01] * 3, "sl": [0.01] * 3}
    out = C.decide_c4(rise, spread, _comp())
    assert out.status == REPRODUCED and [c.arm for c in out.competence] == ["CE", "RCE alone", "CE + RCE"]


def test_c4_more_sensitive_is_not_reproduced_and_mixed_is_partly():
    rise = {"ce": [0.3] * 3, "rce": [0.7] * 3, "sl": [0.7] * 3}
    spread = {"ce": [0.01] * 3, "rce": [0.02] * 3, "sl": [0.02] * 3}
    assert C.decide_c4(rise, spread, _comp()).status == NOT_REPRODUCED
    spread_ok = {"ce": [0.03] * 3, "rce": [0.02] * 3, "sl": [0.02] * 3}
    mixed = C.decide_c4(rise, spread_ok, _comp())
    assert mixed.status == PARTLY_REPRODUCED and "entropy: NOT REPRODUCED" in mixed.reason
    equal = C.decide_c4({k: [0.3] * 3 for k in rise}, {k: [0.01] * 3 for k in rise}, _comp())
    assert equal.status == NOT_REPRODUCED  # equal is not less


def test_c4_leaves_out_a_student_that_did_not_learn():
    """The flat reverse-CE student that never reaches its teacher decides nothing (rule 2)."""
    rise = {"ce": [0.3] * 3, "rce": [0.0] * 3, "sl": [0.7] * 3}
    spread = {"ce": [0.01] * 3, "rce": [0.0] * 3, "sl": [0.02] * 3}
    out = C.decide_c4(rise, spread, _comp(rce=0.24))
    assert out.status == NOT_REPRODUCED and "RCE alone" in out.reason
    assert "RCE alone" not in [c.arm for c in out.competence]
    assert out.figures["left out (did not learn)"] == "RCE alone 0.24"
    # with only the flat student learning, it alone decides
    assert C.decide_c4(rise, spread, _comp(sl=0.2)).status == REPRODUCED


def test_c4_inconclusive_when_forward_ce_or_every_reverse_arm_fails():
    rise = {"ce": [0.3] * 3, "rce": [0.0] * 3, "sl": [0.1] * 3}
    spread = {"ce": [0.02] * 3, "rce": [0.01] * 3, "sl": [0.01] * 3}
    no_ce = C.decide_c4(rise, spread, _comp(ce=0.4))
    assert no_ce.status == INCONCLUSIVE and "CE: 0.4" in no_ce.reason
    none = C.decide_c4(rise, spread, _comp(rce=0.2, sl=0.2))
    assert none.status == INCONCLUSIVE and "no reverse-CE student learned" in none.reason


def test_c4_seeds_disagree():
    rise = {"ce": [0.3] * 3, "rce": [0.0, 0.5, 0.0], "sl": [0.0, 0.5, 0.0]}
    spread = {"ce": [0.02] * 3, "rce": [0.01] * 3, "sl": [0.01] * 3}
    out = C.decide_c4(rise, spread, _comp())
    assert out.status == PARTLY_REPRODUCED and out.fragile  # entropy undecided, accuracy holds


def test_c4_bad_input():
    with pytest.raises(ValueError):
        C.decide_c4({"rce": [0.0] * 3}, {"rce": [0.0] * 3}, _comp())
    with pytest.raises(ValueError):
        C.decide_c4({"ce": [0.1] * 3, "sl": [0.0] * 2}, {"ce": [0.1] * 3, "sl": [0.0] * 2}, _comp())


def test_c5_per_temperature():
    temps = [1.0, 4.0]
    comp = [Competence("CE + RCE", 0.7, 0.5), Competence("CE", 0.7, 0.5)]
    ce = np.full((3, 2), 0.7)
    assert C.decide_c5(ce + 0.05, ce, temps, comp).status == REPRODUCED
    one_t = C.decide_c5(ce + np.array([0.05, -0.01]), ce, temps, comp)
    assert one_t.status == PARTLY_REPRODUCED and "T=4: NOT REPRODUCED" in one_t.reason
    assert one_t.figures["T=4: seeds improved"] == "0/3"
    assert C.decide_c5(ce, ce, temps, comp).status == NOT_REPRODUCED  # equal: no improvement
    undecided = C.decide_c5(ce + np.array([[0.05], [-0.05], [0.05]]), ce, temps, comp)
    assert undecided.status == INCONCLUSIVE and undecided.fragile


def test_c5_competence_gate():
    temps = [1.0, 4.0]
    ce = np.full((3, 2), 0.7)
    weak = C.decide_c5(ce + 0.05, ce, temps, [Competence("CE + RCE", 0.4, 0.5), Competence("CE", 0.7, 0.5)])
    assert weak.status == INCONCLUSIVE and "CE + RCE: 0.4" in weak.reason
    with pytest.raises(ValueError):
        C.decide_c5(ce, ce[:, :1], temps, [])
    with pytest.raises(ValueError):
        C.decide_c5(ce, ce, [1.0], [])


def test_e1():
    assert C.decide_e1({"sq": 1.0, "kl": C.E1_MIN_FRACTION}, [0.1] * 3).status == REPRODUCED
    assert C.decide_e1({"sq": 1.0, "kl": 0.79}, [0.1] * 3).status == NOT_REPRODUCED
    assert C.decide_e1({"sq": 1.0}, [0.1, -0.1, 0.1]).status == NOT_REPRODUCED
    with pytest.raises(TypeError):
        C.decide_e1({"sq": 1.0}, ["yes"] * 3)


def test_build_ledger_rejects_bad_results():
    with pytest.raises(ValueError, match="part_a"):
        C.build_ledger({"seeds": [0]})
    with pytest.raises(ValueError, match="part_a_rows"):
        C.build_ledger({"part_a": [], "part_b": [{"loss": "ce"}]})


def _rows_b(seeds=3, temps=(1.0, 4.0), acc=None):
    acc = acc or {"ce": 0.7, "rce": 0.3, "sl": 0.75, "cace": 0.72, "aux": 0.7}
    rows = []
    for s in range(seeds):
        for t in temps:
            for loss, a in acc.items():
                rows.append(dict(seed=s, temperature=t, loss=loss, teacher_acc=0.5, teacher_entropy=1.0,
                                 student_acc=a + 0.01 * s, student_entropy=0.2 * t if loss != "rce" else 0.3,
                                 ceiling_acc=0.9, pgr=0.5))
        rows.append(dict(seed=s, temperature=float("nan"), loss="ceiling", teacher_acc=0.5,
                         teacher_entropy=float("nan"), student_acc=0.9, student_entropy=0.1, ceiling_acc=0.9, pgr=1.0))
    return rows


def _rows_a(seeds=3):
    rows = []
    for loss in ("squared", "kl"):
        for s in range(seeds):
            for noise in (0.5, 1.5):
                for width, dist in ((4, 1.0), (64, 0.1)):
                    misfit = noise * (1 + 0.1 * s)
                    rows.append(dict(loss=loss, seed=s, noise=noise, width=width, gain=misfit * 0.95,
                                     misfit=misfit, to_posterior_mean=dist, identity_residual=1e-15,
                                     bv_residual=1e-15))
    return rows


def test_build_ledger_wires_the_figures_and_survives_a_json_round_trip():
    from icml26.evidence import from_plain, to_plain

    results = {"seeds": [0, 1, 2], "part_a": _rows_a(), "part_b": _rows_b()}
    ledger = C.build_ledger(results)
    again = C.build_ledger(from_plain(json.loads(json.dumps(to_plain(results)))))
    assert again.check_lines() == ledger.check_lines()
    status = {k: e.status for k, e in ledger.entries.items()}
    # the flat RCE-alone student (0.3 < teacher 0.5) is left out; the mixtures' entropy rises more
    assert status["C4"] == NOT_REPRODUCED and status["C2"] == REPRODUCED
    assert "RCE alone" not in [c.arm for c in ledger.entries["C4"].competence]
    assert status["C5"] == REPRODUCED and status["C1"] == REPRODUCED and status["C3"] == NOT_TESTED
