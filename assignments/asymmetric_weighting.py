"""Graded exercises for asymmetric_weighting (chapter exercises 1, 3, 4 and 5). Format: assignments/README.md."""

TITLE = "Asymmetric prompt weighting: graded exercises"

SETUP = """
import icml26.numerics; icml26.numerics.pin_cpu_numerics()
import math
import numpy as np
import torch
from icml26.asymmetric_weighting import SCHEMES, group_advantages, lm, simulator, theory
from icml26.asymmetric_weighting.task import make_task

# The graded variant (the chapter's exercises use other groups, the response clock and model seeds 0-2;
# the answers below are printed nowhere in the book):
# exercise 1 a group of 10 with 7 correct; exercises 3 and 5 model seed 7; exercise 4 the update clock.
SEED = 7
LR = 5e-3  # one untuned learning rate for every scheme
task = make_task(3, 7)  # the chapter's 25 additions a+b with a, b in 3..7
"""

QUESTIONS = [
    dict(name="small_group", exercise=1, points=1,
         prompt="""
**Exercise 1 (easy).** A group of $n=10$ answers has $k=7$ correct ones ($\\hat\\rho=0.7$). Work out the
advantage of a correct and of a wrong answer under RLOO, GRPO, Linear-R, Sqrt-R, Uniform-R and Plateau-R from
$a_1=w/\\hat\\rho$ and $a_0=w/(1-\\hat\\rho)$, and check them with `group_advantages` (rewards of shape `(1, 10)`).

*Deliverable:* `adv_correct` and `adv_wrong`, dicts from each of the six scheme names `"rloo", "grpo",
"linear", "sqrt", "uniform", "plateau"` to a float (the advantage of one correct, one wrong answer; a wrong
answer's advantage is negative), and `sums_to_zero` (bool: do the ten advantages sum to zero under every
scheme of `SCHEMES`?).
""",
         solution="""
# BEGIN SOLUTION
rewards = torch.zeros(1, 10)
rewards[0, :7] = 1.0
adv_correct, adv_wrong = {}, {}
for s in ("rloo", "grpo", "linear", "sqrt", "uniform", "plateau"):
    a = group_advantages(rewards, s)[0]
    adv_correct[s], adv_wrong[s] = float(a[0]), float(a[-1])
sums_to_zero = all(abs(float(group_advantages(rewards, s).sum())) < 1e-5 for s in SCHEMES)
# END SOLUTION
""",
         public=["assert isinstance(adv_correct, dict) and isinstance(adv_wrong, dict), 'two dicts'",
                 "assert isinstance(adv_correct, dict) and set(adv_correct) == set(adv_wrong) == "
                 "{'rloo', 'grpo', 'linear', 'sqrt', 'uniform', 'plateau'}, 'one entry per scheme'",
                 "assert isinstance(adv_wrong, dict) and all(float(v) < 0 for v in adv_wrong.values()), "
                 "'a wrong answer in a group with a success is pushed down'",
                 "assert isinstance(sums_to_zero, bool)"],
         hidden=["assert isinstance(adv_correct, dict) and all(abs(adv_correct[s] - v) < 1e-3 for s, v in "
                 "{'rloo': 0.3333, 'grpo': 0.6547, 'linear': 0.4286, 'sqrt': 0.7825, 'uniform': 1.4286, "
                 "'plateau': 0.8571}.items())",
                 "assert isinstance(adv_wrong, dict) and all(abs(adv_wrong[s] - v) < 1e-3 for s, v in "
                 "{'rloo': -0.7778, 'grpo': -1.5275, 'linear': -1.0, 'sqrt': -1.8257, 'uniform': -3.3333, "
                 "'plateau': -2.0}.items())",
                 "assert isinstance(sums_to_zero, bool) and sums_to_zero is True"],
         wrong=("adv_correct = {'rloo': 0.7778, 'grpo': 1.5275, 'linear': 2.3333, 'sqrt': 2.7889, 'uniform': 3.3333, "
                "'plateau': 3.3333}\n"
                "adv_wrong = {'rloo': -0.3333, 'grpo': -0.6547, 'linear': -1.0, 'sqrt': -1.1952, 'uniform': -1.4286, "
                "'plateau': -1.4286}\n"
                "sums_to_zero = False")),
    dict(name="dapo_cost", exercise=3, points=2,
         prompt="""
**Exercise 3 (medium).** Train GRPO and DAPO on the language model from the same random initialisation,
model and sampling seed `SEED`, at the one rate `LR`, with 32 prompts × 8 responses per update, a cap of 100
updates and a target of 30% accuracy:
`lm.train_rl(lm.build_model(32, 2, 2, seed=SEED), task, scheme, 100, 32, 8, lr=LR, seed=SEED, stop_at=0.3)`.

*Deliverable:* `updates_to_target` and `responses_to_target`, dicts `{"grpo": float, "dapo": float}` (from
`simulator.time_to_target(h.accuracy, 0.3)` and `simulator.time_to_target(h.accuracy, 0.3, h.responses)`;
`inf` if the cap was hit), and `dapo_cheaper_in_responses` (bool), at seed 7.
""",
         solution="""
# BEGIN SOLUTION
updates_to_target, responses_to_target = {}, {}
for s in ("grpo", "dapo"):
    h = lm.train_rl(lm.build_model(32, 2, 2, seed=SEED), task, s, 100, 32, 8, lr=LR, seed=SEED, stop_at=0.3)
    updates_to_target[s] = simulator.time_to_target(h.accuracy, 0.3)
    responses_to_target[s] = simulator.time_to_target(h.accuracy, 0.3, h.responses)
dapo_cheaper_in_responses = bool(responses_to_target["dapo"] < responses_to_target["grpo"])
# END SOLUTION
""",
         public=["assert isinstance(updates_to_target, dict) and set(updates_to_target) == {'grpo', 'dapo'}",
                 "assert isinstance(responses_to_target, dict) and set(responses_to_target) == {'grpo', 'dapo'}",
                 "assert isinstance(updates_to_target, dict) and isinstance(responses_to_target, dict) and all("
                 "math.isinf(responses_to_target[s]) or responses_to_target[s] >= 256 * updates_to_target[s] "
                 "for s in ('grpo', 'dapo')), 'every update generates at least 32 x 8 responses'",
                 "assert isinstance(dapo_cheaper_in_responses, bool)"],
         hidden=["assert isinstance(updates_to_target, dict) and abs(updates_to_target['grpo'] - 61) <= 2 "
                 "and abs(updates_to_target['dapo'] - 28) <= 2",
                 "assert isinstance(responses_to_target, dict) and abs(responses_to_target['grpo'] / 15616 - 1) < 0.05 "
                 "and abs(responses_to_target['dapo'] / 18432 - 1) < 0.05",
                 "assert isinstance(dapo_cheaper_in_responses, bool) and dapo_cheaper_in_responses is False"],
         wrong=("updates_to_target = {'grpo': 61.0, 'dapo': 28.0}\n"
                "responses_to_target = {'grpo': 61.0 * 256, 'dapo': 28.0 * 256}\n"
                "dapo_cheaper_in_responses = True")),
    dict(name="power_weights", exercise=4, points=2,
         prompt="""
**Exercise 4 (medium).** For a power weight $\\omega(\\rho)=\\rho^{-a}$, the theory's time at a fixed budget
relative to the optimum is $J(\\omega)/J(\\omega^\\star)$ with $J=TB$. Write it as a function on the grid
`theory.rho_grid(rho0, target)` (use `theory.normalized_time` and `theory.optimal_weight`). Then derive, by
keeping only the leading powers of $\\rho$ in $T$, $B$ and $J^\\star$, its limit as $\\rho_0\\to0$ on the
**update** clock ($c\\equiv1$), for $0<a<1$.

*Deliverable:* `power_excess(a, rho0, target, clock)` (floats and a clock name in, a float out) and
`limit_updates(a)` (your closed form, a float for $0<a<1$).
""",
         solution="""
# BEGIN SOLUTION
def power_excess(a, rho0, target, clock):
    rho = theory.rho_grid(rho0, target)
    J = theory.normalized_time(rho ** -a, rho, clock)
    return float(J / theory.normalized_time(theory.optimal_weight(rho, clock), rho, clock))

def limit_updates(a):
    return 1.0 / (4.0 * a * (1.0 - a))
# END SOLUTION
""",
         public=["assert callable(power_excess) and callable(limit_updates), 'two functions'",
                 "assert callable(power_excess) and isinstance(power_excess(1.0, 1e-5, 0.9, 'responses'), float)",
                 "assert callable(power_excess) and abs(power_excess(1.0, 1e-5, 0.9, 'responses') - 1.0) < 1e-3, "
                 "'rho^-1 behaves like the optimum (Sqrt-R) near 0 on the response clock'",
                 "assert callable(limit_updates) and abs(float(limit_updates(0.5)) - 1.0) < 1e-9, "
                 "'a = 1/2 behaves like GRPO, the optimum on the update clock'"],
         hidden=["assert callable(power_excess) and abs(power_excess(0.25, 1e-4, 0.8, 'updates') - 1.23484) < 1e-3",
                 "assert callable(power_excess) and abs(power_excess(0.75, 1e-3, 0.8, 'responses') - 1.06337) < 1e-3",
                 "assert callable(limit_updates) and abs(float(limit_updates(0.25)) - 4 / 3) < 1e-9 "
                 "and abs(float(limit_updates(0.4)) - 1 / 0.96) < 1e-9"],
         wrong=("def power_excess(a, rho0, target, clock):\n"
                "    rho = theory.rho_grid(rho0, target)\n"
                "    J = theory.normalized_time(rho ** -a, rho, clock)\n"
                "    return float(J / theory.normalized_time(theory.optimal_weight(rho, clock), rho, clock))\n"
                "\n"
                "def limit_updates(a):\n"
                "    return 1.0 / (a * (2.0 - a))")),
    dict(name="group_size", exercise=5, points=2,
         prompt="""
**Exercise 5 (hard, experimental).** With only $M=4$ responses per prompt, train GRPO and Sqrt-R from the same
random initialisation (model and sampling seed `SEED`, rate `LR`, 32 prompts per update) for exactly 40
updates, with no early stop:
`lm.train_rl(lm.build_model(32, 2, 2, seed=SEED), task, scheme, 40, 32, 4, lr=LR, seed=SEED)`.

*Deliverable:* `final_acc` and `zero_mass`, dicts `{"grpo": float, "sqrt": float}`: the accuracy after the
last update (`h.accuracy[-1]`) and the zero-gradient mass (the mean of `h.zero_frac`, the fraction of groups
with no correct answer), at seed 7. In a sentence (not graded): what share of a prompt's groups would be
all wrong at success probability 0.1 with $M=4$, and with $M=16$?
""",
         solution="""
# BEGIN SOLUTION
final_acc, zero_mass = {}, {}
for s in ("grpo", "sqrt"):
    h = lm.train_rl(lm.build_model(32, 2, 2, seed=SEED), task, s, 40, 32, 4, lr=LR, seed=SEED)
    final_acc[s], zero_mass[s] = float(h.accuracy[-1]), float(h.zero_frac.mean())
# END SOLUTION
""",
         public=["assert isinstance(final_acc, dict) and set(final_acc) == {'grpo', 'sqrt'}",
                 "assert isinstance(zero_mass, dict) and set(zero_mass) == {'grpo', 'sqrt'} and "
                 "all(0.0 <= v <= 1.0 for v in zero_mass.values()), 'a fraction of groups'",
                 "assert isinstance(final_acc, dict) and all(0.0 <= v <= 1.0 for v in final_acc.values())"],
         hidden=["assert isinstance(final_acc, dict) and abs(final_acc['grpo'] - 0.1591) < 0.01 "
                 "and abs(final_acc['sqrt'] - 0.1331) < 0.01",
                 "assert isinstance(zero_mass, dict) and abs(zero_mass['grpo'] - 0.7938) < 0.02 "
                 "and abs(zero_mass['sqrt'] - 0.7586) < 0.02"],
         wrong="final_acc = {'grpo': 0.3, 'sqrt': 0.3}\nzero_mass = {'grpo': 0.5, 'sqrt': 0.5}"),
]
