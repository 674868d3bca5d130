"""Graded exercises for tt_sparse (chapter exercises 1-4). Format: assignments/README.md."""

TITLE = "TT-Sparse: graded exercises"

SETUP = """
import icml26.numerics; icml26.numerics.pin_cpu_numerics()
from dataclasses import replace
from icml26.tt_sparse import check_exact, explain, fit_tt_sparse, formula_complexity, get_config, load_split
from icml26.tt_sparse import predict_rules, predict_scores
import numpy as np

# The graded variant: the `smoke` preset on breast_cancer with split and training seed 7
# (the chapter prints seed 0 at `reduced`; the answers below are printed nowhere).
cfg = get_config("smoke")
SEED = 7
split = load_split("breast_cancer", SEED, cfg.test_size, cfg.val_fraction, cfg.n_thresholds)
"""

QUESTIONS = [
    dict(name="count_formula", exercise=1, points=1,
         prompt="""
**Exercise 1 (easy).** Our complexity measure counts literals plus binary connectives. By hand, give the
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
    dict(name="k_one", exercise=2, points=2,
         prompt="""
**Exercise 2 (easy, experimental).** Fit TT-Sparse with one input per node,
`res = fit_tt_sparse(split, replace(cfg, k=1), SEED)`, and read off its rule set `res.rules`.

*Deliverable:* `n_formulas` (int: the number of formulas in `res.rules.dnf`), `complexity_k1` (int,
`res.complexity`), `auc_k1` (float, `res.test_metric`), all at seed 7, `smoke`. Before you run: what must
`complexity_k1` be as a function of `n_formulas`?
""",
         solution="""
res = fit_tt_sparse(split, replace(cfg, k=1), SEED)
# BEGIN SOLUTION
n_formulas = len(res.rules.dnf)
complexity_k1 = int(res.complexity)
auc_k1 = float(res.test_metric)
# END SOLUTION
""",
         public=["assert isinstance(n_formulas, int) and isinstance(complexity_k1, int) and isinstance(auc_k1, float)",
                 "assert isinstance(n_formulas, int) and isinstance(complexity_k1, int) and complexity_k1 == 2 * n_formulas - 1, "
                 "'each formula is a single literal: n literals joined by n - 1 plus signs'",
                 "assert isinstance(auc_k1, float) and 0.5 <= auc_k1 <= 1.0, 'an AUC in [0.5, 1]'"],
         hidden=["assert (n_formulas, complexity_k1) == (4, 7)",
                 "assert isinstance(auc_k1, float) and abs(auc_k1 - 0.9616) < 0.005"],
         wrong="res = fit_tt_sparse(split, replace(cfg, k=1), SEED)\nn_formulas = 4\ncomplexity_k1 = 4\nauc_k1 = 0.95"),
    dict(name="dont_cares", exercise=3, points=2,
         prompt="""
**Exercise 3 (medium).** Fit one pruned model, `best = fit_tt_sparse(split, cfg, SEED)`, and extract its
rules from `best.frozen` with `dont_cares="none"`, `"structural"` and `"unseen"` (`explain(best.frozen,
split.encoder, split.X_train, dont_cares=...)`).

*Deliverable:* `complexity_none`, `complexity_structural`, `complexity_unseen` (ints, from
`RuleSet.complexity()`); `exact_on_test_unseen` (bool: are the "unseen" rules exact on `split.X_test`? use
`check_exact`); `n_disagree` (int: the number of test rows on which the "unseen" rules' score differs from the
network's, `predict_rules` against `predict_scores`, by more than $10^{-5}(1+|s|)$). Seed 7, `smoke`.
""",
         solution="""
best = fit_tt_sparse(split, cfg, SEED)
# BEGIN SOLUTION
rules = {m: explain(best.frozen, split.encoder, split.X_train, dont_cares=m) for m in ("none", "structural", "unseen")}
complexity_none, complexity_structural, complexity_unseen = (rules[m].complexity() for m in ("none", "structural", "unseen"))
exact_on_test_unseen = bool(check_exact(best.frozen, rules["unseen"], split.X_test)[0])
net = predict_scores(best.frozen, split.X_test)
diff = np.abs(predict_rules(rules["unseen"], split.X_test) - net)
n_disagree = int((diff > 1e-5 * (1 + np.abs(net))).any(1).sum())
# END SOLUTION
""",
         public=["assert all(isinstance(c, int) for c in (complexity_none, complexity_structural, complexity_unseen))",
                 "assert isinstance(complexity_none, int) and complexity_unseen <= complexity_structural <= complexity_none, "
                 "'each option frees at least the patterns of the one before, so it cannot be longer'",
                 "assert isinstance(exact_on_test_unseen, bool)",
                 "assert isinstance(n_disagree, int) and 0 <= n_disagree <= len(split.X_test)",
                 "assert isinstance(n_disagree, int) and not (exact_on_test_unseen is True and n_disagree > 0), "
                 "'rules that disagree with the network on a test row are not exact there'"],
         hidden=["assert (complexity_none, complexity_structural, complexity_unseen) == (19, 19, 15)",
                 "assert exact_on_test_unseen is False and n_disagree == 1"],
         wrong="best = fit_tt_sparse(split, cfg, SEED)\ncomplexity_none = complexity_structural = complexity_unseen = 10\n"
               "exact_on_test_unseen = True\nn_disagree = 0"),
    dict(name="temperature", exercise=4, points=2,
         prompt="""
**Exercise 4 (medium, experimental).** Train unpruned models (`do_prune=False`) with a fixed temperature
$\\tau=1$ and with a fixed $\\tau=10^{-4}$ (`replace(cfg, tau_start=t, tau_end=t)`), with the chapter's
annealed schedule (`cfg` as it is), and the ablation with random fixed connections (`learn_connections=False`),
all on the same split and seed.

*Deliverable:* `auc_hot`, `auc_cold`, `auc_schedule`, `auc_random` (the `test_metric` of each fit, floats) and
`closer_to_random` (str, `"hot"` or `"cold"`: which fixed temperature ends closer to the random-connection
arm), at seed 7, `smoke`. In a sentence (not graded): why does a tiny $\\tau$ freeze the selection?
""",
         solution="""
# BEGIN SOLUTION
fit = lambda c, **kw: float(fit_tt_sparse(split, c, SEED, do_prune=False, **kw).test_metric)
auc_hot = fit(replace(cfg, tau_start=1.0, tau_end=1.0))
auc_cold = fit(replace(cfg, tau_start=1e-4, tau_end=1e-4))
auc_schedule = fit(cfg)
auc_random = fit(cfg, learn_connections=False)
closer_to_random = "hot" if abs(auc_hot - auc_random) < abs(auc_cold - auc_random) else "cold"
# END SOLUTION
""",
         public=["assert all(isinstance(a, float) and 0.0 <= a <= 1.0 for a in (auc_hot, auc_cold, auc_schedule, auc_random)), "
                 "'AUCs are floats in [0, 1]'",
                 "assert closer_to_random in ('hot', 'cold')"],
         hidden=["assert abs(auc_hot - 0.9363) < 0.005 and abs(auc_cold - 0.9322) < 0.005",
                 "assert abs(auc_schedule - 0.9668) < 0.005 and abs(auc_random - 0.9322) < 0.005",
                 "assert closer_to_random == 'cold'"],
         wrong="auc_hot, auc_cold, auc_schedule, auc_random = 0.95, 0.96, 0.97, 0.93\ncloser_to_random = 'hot'"),
]
