"""The TAM chapter's decision functions on hand-made figures, on both sides of every boundary."""

import pytest

from icml26.common.ledger import (INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTED, PARTLY_REPRODUCED, REPRODUCED,
                                  Competence)
from icml26.tam import claims as cl

CONV = {"TAM": True, "fixed": True, "fixed-H": True, "fixed-L": True}
TOKENS = {"TAM": 64, "fixed": 72, "fixed-H": 64, "fixed-L": 64}
OK = [Competence("TAM (mean)", 0.8, 0.375), Competence("fixed-H (counting)", 0.6, 0.35),
      Competence("fixed-L (temporal)", 0.9, 0.4)]
BAD = OK[:1] + [Competence("fixed-H (counting)", 0.3, 0.35)] + OK[2:]


def items(k_right, n=100):
    return [1] * k_right + [0] * (n - k_right)


def test_claim_ids_basis_and_stand_ins():
    assert cl.CLAIM_IDS == ("C1", "C2", "C3", "C4")
    assert cl.SOURCE_BASIS == "abstract only" and cl.STAND_INS == {}


def test_c1_boundary_seeds_and_bootstrap():
    bar = cl.C1_MIN_ACC
    assert cl.decide_c1([bar, 1.0, 1.0]).status == REPRODUCED
    assert cl.decide_c1([bar - 0.01] * 3).status == NOT_REPRODUCED
    s = cl.decide_c1([bar - 0.01, 1.0, 1.0])
    assert s.status == INCONCLUSIVE and s.fragile
    assert not cl.decide_c1([1.0, 1.0, 1.0]).fragile
    # one seed: the bootstrap over the held-out queries decides the fragile flag (rule 5)
    assert not cl.decide_c1([1.0], items(100)).fragile
    assert cl.decide_c1([0.96], items(96)).fragile
    with pytest.raises(ValueError, match="items"):
        cl.decide_c1([1.0])  # a single value needs its items
    for bad in ([1.5], [-0.1], "0.9"):
        with pytest.raises((ValueError, TypeError)):
            cl.decide_c1(bad, items(10))


def _c2(tam, fh, fl, fixed=(0.9, 0.9, 0.9), conv=None, checks=OK, item_list=None):
    conv = conv or [CONV] * len(tam)
    return cl.decide_c2(tam, {"fixed-H": fh, "fixed-L": fl, "fixed": fixed}, TOKENS, conv, checks, 600, item_list)


def test_c2_best_fixed_at_equal_budget_over_seeds():
    # the comparator is the best fixed pipeline with at most TAM's tokens; the 72-token one is ignored
    s = _c2([0.80, 0.81, 0.79], [0.65, 0.66, 0.64], [0.75, 0.76, 0.74])
    assert s.status == REPRODUCED and s.figures["best fixed at <= TAM's tokens per seed"] == ["fixed-L"] * 3
    assert s.figures["gain per seed"] == pytest.approx([0.05, 0.05, 0.05])
    assert _c2([0.70, 0.70, 0.70], [0.65] * 3, [0.75] * 3).status == NOT_REPRODUCED  # fixed-L wins in every seed
    assert _c2([0.75] * 3, [0.65] * 3, [0.75] * 3).status == NOT_REPRODUCED  # a tie is no gain
    s = _c2([0.80, 0.70, 0.76], [0.6] * 3, [0.75] * 3)  # seeds disagree, no significant mean
    assert s.status == INCONCLUSIVE and s.fragile


def test_c2_needs_three_seeds_competence_and_convergence():
    s = _c2([0.8], [0.6], [0.75], fixed=[0.9], item_list=[[1] * 10 + [0] * 90])
    assert s.status == INCONCLUSIVE and "rule 1" in s.reason
    with pytest.raises(ValueError, match="items"):
        _c2([0.8], [0.6], [0.75], fixed=[0.9])  # one seed needs the per-clip items for rule 5
    s = _c2([0.8] * 3, [0.6] * 3, [0.75] * 3, checks=BAD)
    assert s.status == INCONCLUSIVE and "fixed-H" in s.reason and "rule 2" in s.reason
    s = _c2([0.8] * 3, [0.6] * 3, [0.75] * 3, conv=[CONV, dict(CONV, **{"fixed-L": False}), CONV])
    assert s.status == INCONCLUSIVE and "fixed-L" in s.reason and "600" in s.reason
    # the 72-token pipeline's convergence does not matter to C2 (it is not a comparator)
    assert _c2([0.8] * 3, [0.6] * 3, [0.75] * 3, conv=[dict(CONV, fixed=False)] * 3).status == REPRODUCED
    with pytest.raises(TypeError):
        _c2([0.8] * 3, [0.6] * 3, [0.75] * 3, conv=[dict(CONV, TAM=1)] * 3)
    with pytest.raises(ValueError):
        _c2([0.8] * 3, [0.6] * 2, [0.75] * 3)  # one figure per seed


def _c3(fh, fl, tt, tc, conv=None, checks=OK, item_map=None):
    conv = conv or [CONV] * len(fh)
    return cl.decide_c3(fh, fl, tt, tc, conv, checks, 600, item_map)


def test_c3_both_sides_of_every_boundary():
    bar = cl.C3_BAR
    assert _c3([0.4] * 3, [0.5] * 3, [1.0] * 3, [0.7] * 3).status == REPRODUCED
    # TAM must pass the same bar on both tasks: just under it on counting -> only the time part holds
    s = _c3([0.4] * 3, [0.5] * 3, [1.0] * 3, [bar - 0.01] * 3)
    assert s.status == PARTLY_REPRODUCED and "space (low resolution): NOT REPRODUCED" in s.reason
    assert _c3([0.4] * 3, [0.5] * 3, [1.0] * 3, [bar] * 3).status == REPRODUCED  # at the bar passes
    # fixed-L at the bar does not fail its mismatched task
    s = _c3([0.4] * 3, [bar] * 3, [1.0] * 3, [0.7] * 3)
    assert s.status == PARTLY_REPRODUCED and "time (few frames): REPRODUCED" in s.reason
    assert _c3([0.7] * 3, [0.7] * 3, [1.0] * 3, [0.7] * 3).status == NOT_REPRODUCED
    # TAM's counting near the bar, one seed under it: the space part is undecided, the claim fragile
    s = _c3([0.4] * 3, [0.5] * 3, [1.0] * 3, [0.63, 0.58, 0.66])
    assert s.status == PARTLY_REPRODUCED and s.fragile and "seeds disagree" in s.reason
    # above the bar in every seed but its interval crosses it: decided and fragile
    s = _c3([0.4] * 3, [0.5] * 3, [1.0] * 3, [0.61, 0.63, 0.68])
    assert s.status == REPRODUCED and s.fragile
    assert not _c3([0.4] * 3, [0.5] * 3, [1.0] * 3, [0.9, 0.91, 0.92]).fragile
    # three seeds at 0.63-0.65: the seed interval clears the bar, but each seed's own bootstrap over
    # its 100 test clips crosses it (evaluation noise): fragile (a figure that close can flip per machine)
    near = {"fixed-H temporal": [items(20)] * 3, "fixed-L counting": [items(30)] * 3, "TAM temporal": [items(100)] * 3,
            "TAM counting": [items(63), items(64), items(65)]}
    s = _c3([0.2] * 3, [0.3] * 3, [1.0] * 3, [0.63, 0.64, 0.65], item_map=near)
    assert s.status == REPRODUCED and s.fragile
    assert not _c3([0.2] * 3, [0.3] * 3, [1.0] * 3, [0.63, 0.64, 0.65]).fragile  # without the clips it would not be
    clear = dict(near, **{"TAM counting": [items(90), items(91), items(92)]})
    assert not _c3([0.2] * 3, [0.3] * 3, [1.0] * 3, [0.9, 0.91, 0.92], item_map=clear).fragile
    with pytest.raises(ValueError, match="item lists"):
        _c3([0.2] * 3, [0.3] * 3, [1.0] * 3, [0.9, 0.91, 0.92], item_map=dict(clear, **{"TAM counting": [items(90)]}))


def test_c3_one_seed_bootstrap_competence_and_convergence():
    one = {"fixed-H temporal": [items(40)], "fixed-L counting": [items(50)], "TAM temporal": [items(100)],
           "TAM counting": [items(63)]}
    s = _c3([0.4], [0.5], [1.0], [0.63], item_map=one)
    assert s.status == INCONCLUSIVE and "rule 1" in s.reason
    assert s.fragile  # 0.63 over 100 clips: the bootstrap interval crosses the 0.60 bar
    far = dict(one, **{"TAM counting": [items(95)], "fixed-L counting": [items(40)]})
    assert not _c3([0.4], [0.4], [1.0], [0.95], item_map=far).fragile
    s = _c3([0.4] * 3, [0.5] * 3, [1.0] * 3, [0.7] * 3, checks=BAD)
    assert s.status == INCONCLUSIVE and "rule 2" in s.reason
    s = _c3([0.4] * 3, [0.5] * 3, [1.0] * 3, [0.7] * 3, conv=[dict(CONV, TAM=False)] * 3)
    assert s.status == INCONCLUSIVE and "TAM" in s.reason
    with pytest.raises(ValueError):
        _c3([0.4] * 3, [0.5] * 3, [1.0] * 2, [0.7] * 3)


def test_competence_bars():
    assert cl.competence("fixed-H", [0.6, 0.35, 0.7]).passed  # worst seed exactly at chance + margin
    assert not cl.competence("fixed-H", [0.6, 0.34, 0.7]).passed
    assert cl.competence("fixed-L", [cl.CHANCE["temporal"] + cl.COMPETENCE_MARGIN]).passed
    assert not cl.competence("TAM", [cl.CHANCE["mean"] + cl.COMPETENCE_MARGIN - 0.01]).passed
    with pytest.raises(ValueError, match="unknown arm"):
        cl.competence("oracle", [0.9])


def test_c4_not_tested_and_extensions():
    assert cl.decide_c4().status == NOT_TESTED
    e = cl.E1_MIN_ACC
    assert cl.decide_e1([e] * 3, [1.0] * 3, [False] * 3, 600).status == REPRODUCED
    assert cl.decide_e1([e - 0.01] * 3, [1.0] * 3, [True] * 3, 600).status == NOT_REPRODUCED
    assert cl.decide_e1([e - 0.01] * 3, [1.0] * 3, [True, False, True], 600).status == INCONCLUSIVE
    assert cl.decide_e1([e - 0.01], [1.0], [True], 600, items(84)).status == NOT_REPRODUCED
    with pytest.raises(TypeError):
        cl.decide_e1([0.9], [0.9], [1], 600, items(90))
    g = cl.E2_MAX_GAP
    assert cl.decide_e2([0.8] * 3, [0.8 + g - 0.001] * 3).status == REPRODUCED
    assert cl.decide_e2([0.8] * 3, [0.8 + g + 0.01] * 3).status == NOT_REPRODUCED
    assert cl.decide_e2([0.8], [0.8], [0.0] * 100).status == REPRODUCED
    with pytest.raises(ValueError):
        cl.decide_e2([0.8], [2.0], [0.0] * 10)


def _seed(tam, fh, fl, fixed, converged=True, ind=1.0):
    """One seed's plain-data record (100 clips per task, consistent with the accuracies)."""
    def arm(c, t):
        return {"counting": c, "temporal": t, "mean": (c + t) / 2, "right_counting": items(round(100 * c)),
                "right_temporal": items(round(100 * t))}
    acc = {"TAM": arm(*tam), "TAM (oracle budget)": arm(*tam), "fixed": arm(*fixed), "fixed-H": arm(*fh),
           "fixed-L": arm(*fl)}
    training = {n: {"converged": converged} for n in ("TAM", "fixed", "fixed-H", "fixed-L")}
    return {"inductor_acc": ind, "inductor_right": [1] * 10, "acc": acc, "training": training}


def test_build_ledger_wiring():
    seed = _seed((0.8, 1.0), (0.65, 0.4), (0.45, 0.95), (0.6, 0.6))
    results = {"seeds": [0, 1, 2], "cap": 600, "tokens": TOKENS, "per_seed": [seed] * 3}
    ledger = cl.build_ledger(results)
    assert ledger.check_lines().splitlines() == [
        "C1 REPRODUCED: a small text-only Inductor infers the task type from the query",
        "C2 REPRODUCED: task-aware routing beats the best fixed pipeline at no larger token budget",
        "C3 REPRODUCED: each fixed tier fails its mismatched task while TAM passes both",
        "C4 NOT TESTED: state-of-the-art video benchmark results with a 7B LLM",
        "E1 (ours) NOT REPRODUCED: TAM solves both tasks (absolute bar)",
        "E2 (ours) REPRODUCED: the Inductor's budget is as good as the oracle budget",
        "Verdict: REPRODUCED (3 tested claims: 3 reproduced; 1 not tested)"]
    one = dict(results, seeds=[0], per_seed=[seed])
    lines = cl.build_ledger(one).check_lines()
    assert "C2 INCONCLUSIVE" in lines and "C3 INCONCLUSIVE" in lines and "Verdict: PARTLY REPRODUCED" in lines
