"""Graded exercises for tt_sparse (chapter exercises 1-3). Format: assignments/README.md."""

TITLE = "TT-Sparse: graded exercises"

SETUP = """
import icml26.numerics; icml26.numerics.pin_cpu_numerics()
from dataclasses import replace
from icml26.tt_sparse import check_exact, explain, fit_tt_sparse, formula_complexity, get_config, load_split
from icml26.tt_sparse.baselines import tree_complexity

# The graded variant: the `smoke` preset on breast_cancer with split and training seed 7
# (the chapter prints seed 0 at `reduced`; the answers below are printed nowhere).
cfg = get_config("smoke")
SEED = 7
split = load_split("breast_cancer", SEED, cfg.test_size, cfg.val_fraction, cfg.n_thresholds)
"""

QUESTIONS = [
    dict(name="count_formula", exercise=1, points=1,
         prompt="""
**Exercise 1 (easy).** Our complexity measure counts literals plus connectives. By hand, give the
complexity of the DNF $(a\\wedge \\neg b)\\vee c \\vee (\\neg d\\wedge e\\wedge f)$, then check it with
`formula_complexity` (literals are `(bit, positive)` pairs; a clause is a tuple of literals).

*Deliverable:* `by_hand` (an int) and `by_code` (the value `formula_complexity` returns).
""",
         solution="""
by_hand = 11  # SOLUTION
by_code = formula_complexity((((0, True), (1, False)), ((2, True),), ((3, False), (4, True), (5, True))))  # SOLUTION
""",
         public=["assert isinstance(by_hand, int) and isinstance(by_code, int), 'both answers are ints'",
                 "assert isinstance(by_hand, int) and by_hand == by_code, 'your count by hand should agree with formula_complexity'"],
         hidden=["assert by_hand == 11 and by_code == 11"],
         wrong="by_hand = 9\nby_code = 9"),
    dict(name="dont_cares", exercise=2, points=2,
         prompt="""
**Exercise 2 (medium).** Fit one model, `best = fit_tt_sparse(split, cfg, SEED)`, and extract its
rules with `dont_cares="unseen"` and with `dont_cares="structural"`.

*Deliverable:* `complexity_unseen`, `complexity_structural` (ints, from `RuleSet.complexity()`), and
`exact_on_test_unseen` (bool: are the "unseen" rules exact on `split.X_test`? use `check_exact`).
""",
         solution="""
best = fit_tt_sparse(split, cfg, SEED)
# BEGIN SOLUTION
unseen = explain(best.frozen, split.encoder, split.X_train, dont_cares="unseen")
structural = explain(best.frozen, split.encoder, split.X_train, dont_cares="structural")
complexity_unseen, complexity_structural = unseen.complexity(), structural.complexity()
exact_on_test_unseen = bool(check_exact(best.frozen, unseen, split.X_test)[0])
# END SOLUTION
""",
         public=["assert isinstance(complexity_unseen, int) and isinstance(complexity_structural, int)",
                 "assert complexity_unseen <= complexity_structural, 'unseen frees more patterns, so it cannot be longer'",
                 "assert isinstance(exact_on_test_unseen, bool)"],
         hidden=["assert (complexity_unseen, complexity_structural) == (15, 19)",
                 "assert exact_on_test_unseen is False"],
         wrong="best = fit_tt_sparse(split, cfg, SEED)\ncomplexity_unseen = complexity_structural = 10\nexact_on_test_unseen = True"),
    dict(name="temperature", exercise=3, points=2,
         prompt="""
**Exercise 3 (medium, experimental).** Train with a fixed temperature $\\tau=1$ and with a fixed
$\\tau=10^{-4}$ (`replace(cfg, tau_start=t, tau_end=t)`), same split and seed.

*Deliverable:* `auc_hot` and `auc_cold` (the `test_metric` of each fit, floats), and `colder_is_worse`
(bool). In a sentence (not graded): why does a tiny $\\tau$ freeze the selection?
""",
         solution="""
# BEGIN SOLUTION
auc_hot = fit_tt_sparse(split, replace(cfg, tau_start=1.0, tau_end=1.0), SEED).test_metric
auc_cold = fit_tt_sparse(split, replace(cfg, tau_start=1e-4, tau_end=1e-4), SEED).test_metric
colder_is_worse = bool(auc_cold < auc_hot)
# END SOLUTION
""",
         public=["assert 0.0 <= auc_hot <= 1.0 and 0.0 <= auc_cold <= 1.0, 'AUCs lie in [0, 1]'",
                 "assert isinstance(colder_is_worse, bool)"],
         hidden=["assert abs(auc_hot - 0.9723) < 0.005 and abs(auc_cold - 0.9322) < 0.005",
                 "assert colder_is_worse is True"],
         wrong="auc_hot, auc_cold = 0.95, 0.96\ncolder_is_worse = False"),
]
