"""Graded exercises for lmac (chapter exercises 2-4). Format: assignments/README.md."""

TITLE = "LMAC: graded exercises"

SETUP = """
import icml26.numerics; icml26.numerics.pin_cpu_numerics()
from dataclasses import replace
import torch
from icml26.lmac import (RuleBasedDesigner, collect_dataset, compile_protocol, get_config, observation_names,
                         protocol_code, state_awareness)
from icml26.lmac import marl, refine
from icml26.lmac.experiment import obs_dims

# The graded variant: data, reconstructors and learners from seed 7 (the chapter prints seed 0 and
# the evidence record seeds 0-4), on a smaller budget than the page: 4000 offline transitions,
# reconstructor batches of 512 and 24 PPO iterations per learner (greedy evaluation on 256 episodes).
cfg = get_config("reduced", data_steps=4000, recon_batch=512, iterations=24, eval_episodes=256)
SEED = 7
data = collect_dataset(cfg, "cpu", SEED)
names = [observation_names(a, cfg.n_distract) for a in range(cfg.n_agents)]


def awareness(protocol, config, seed):
    \"\"\"The criterion (an `Awareness`) of `protocol` on `data`. The reconstructors' dropout draws from
    torch's global generator, so it is seeded here too: the same call then gives the same figures.\"\"\"
    torch.manual_seed(seed)
    return state_awareness(protocol, data, config, seed)


def selection_protocol(striker_cells):
    \"\"\"The overseer sends the target to every striker; with `striker_cells`, every striker also sends
    its own cell to every other agent (the selection the refined protocol ends with).\"\"\"
    sends = {0: {i: ["target_x", "target_y"] for i in range(1, cfg.n_agents)}}
    if striker_cells:
        for j in range(1, cfg.n_agents):
            sends[j] = {i: ["self_x", "self_y"] for i in range(cfg.n_agents) if i != j}
    return compile_protocol(protocol_code(sends, names), obs_dims(cfg))
"""

QUESTIONS = [
    dict(name="stricter_criterion", exercise=2, points=2,
         prompt="""
**Exercise 2 (medium, coding).** Write `min_sr_at(protocol, thres, seed)`: the criterion's accuracy
$A=\\min_i \\mathrm{SR}_i$ of `protocol` on `data` when a step counts as recovered only if its squared
error is below `thres` (`awareness(protocol, replace(cfg, mse_thres=thres), seed)`, the setup cell's
seeded call of `state_awareness`).
Score the protocol that sends the target and every striker's cell, `selection_protocol(True)`.

*Deliverable:* `min_sr_at`, and `strict`, a dict `{0.01: A, 0.02: A, 0.05: A}` of floats for that
protocol with reconstructor seed `SEED`. Graded variant: data and reconstructor seed 7, the setup
cell's budget.
""",
         solution="""
proto = selection_protocol(True)
# BEGIN SOLUTION
def min_sr_at(protocol, thres, seed):
    return float(awareness(protocol, replace(cfg, mse_thres=thres), seed).accuracy)


strict = {t: min_sr_at(proto, t, SEED) for t in (0.01, 0.02, 0.05)}
# END SOLUTION
""",
         public=["assert isinstance(strict, dict) and sorted(strict) == [0.01, 0.02, 0.05]",
                 "assert isinstance(strict, dict) and all(isinstance(v, float) and 0 <= v <= 1 for v in strict.values())",
                 "assert isinstance(strict, dict) and strict[0.01] <= strict[0.02] <= strict[0.05], "
                 "'the same predictions pass a looser threshold at least as often'"],
         hidden=["assert isinstance(strict, dict) and sorted(strict) == [0.01, 0.02, 0.05]\n"
                 "assert abs(strict[0.05] - 0.9571) < 0.01 and abs(strict[0.02] - 0.8163) < 0.01",
                 "assert isinstance(strict, dict) and abs(strict[0.01] - 0.6632) < 0.01",
                 "assert callable(min_sr_at)\n"
                 "assert abs(min_sr_at(proto, 0.05, SEED) - strict[0.05]) < 1e-6"],
         wrong="""
proto = selection_protocol(True)

def min_sr_at(protocol, thres, seed):
    return 0.9

strict = {0.01: 0.9, 0.02: 0.9, 0.05: 0.9}
"""),
    dict(name="retrying_designer", exercise=3, points=2,
         prompt="""
**Exercise 3 (medium, coding).** Write `FlakyDesigner(k)`, a designer that answers each new prompt
with `k` protocols that break the rules (each reads `state`, in a ```python block) before it gives
the rule-based stand-in's answer (`RuleBasedDesigner().complete(prompt)`). A prompt is new when it
does not contain "Your previous answer was rejected" (the loop appends that sentence to a retry).
Run the refinement loop with `FlakyDesigner(2)`, `refine.refine(cfg, data, FlakyDesigner(2), seed=SEED)`,
and again with `replace(cfg, max_retries=1)`; call `torch.manual_seed(SEED)` before each run (the
criterion inside the loop uses dropout).

*Deliverable:* `n_rejected` and `n_rejected_fallback` (ints: the rounds of each run's `history`
whose `reason` starts with "rejected"), `final_size` and `fallback_size` (ints: each run's
`final.message_size`). Graded variant: `k = 2`, seed 7, the setup cell's budget.
""",
         solution="""
# BEGIN SOLUTION
class FlakyDesigner:
    name = "flaky designer"

    def __init__(self, k):
        self.k, self.left = k, 0

    def complete(self, prompt):
        if "Your previous answer was rejected" not in prompt:  # a new prompt
            self.left = self.k
        if self.left > 0:
            self.left -= 1
            return "```python\\ndef messages(agent_id, obs):\\n    return {1: state[:2]}\\n```"
        return RuleBasedDesigner().complete(prompt)


def rejected(run):
    return sum(r.reason.startswith("rejected") for r in run.history)


torch.manual_seed(SEED)
run = refine.refine(cfg, data, FlakyDesigner(2), seed=SEED)
torch.manual_seed(SEED)
short = refine.refine(replace(cfg, max_retries=1), data, FlakyDesigner(2), seed=SEED)
n_rejected, final_size = rejected(run), int(run.final.message_size)
n_rejected_fallback, fallback_size = rejected(short), int(short.final.message_size)
# END SOLUTION
""",
         public=["assert all(isinstance(x, int) and not isinstance(x, bool) "
                 "for x in (n_rejected, final_size, n_rejected_fallback, fallback_size))",
                 "assert isinstance(n_rejected, int) and n_rejected >= 3, 'each of the three stages starts with rejections'"],
         hidden=["assert isinstance(n_rejected, int) and n_rejected == 6",
                 "assert isinstance(final_size, int) and final_size == 24",
                 "assert isinstance(n_rejected_fallback, int) and n_rejected_fallback == 3",
                 "assert isinstance(fallback_size, int) and fallback_size == 0"],
         wrong="""
n_rejected, final_size = 2, 24
n_rejected_fallback, fallback_size = 1, 24
"""),
    dict(name="task_vs_criterion", exercise=4, points=3,
         prompt="""
**Exercise 4 (hard, experimental).** The criterion prefers the protocol that also shares the
strikers' cells. Does the learner? Score `selection_protocol(False)` (the target only) and
`selection_protocol(True)` (target and every striker's cell) with
`awareness(protocol, cfg, SEED).accuracy`, then train the LMAC arm with each,
`marl.train_arm("LMAC", protocol, cfg, SEED, "cpu").success`.

*Deliverable:* `a_target`, `a_cells` (floats, the criterion's accuracy), `s_target`, `s_cells`
(floats, greedy success) and `criterion_agrees` (bool: does the protocol with the higher accuracy
also reach the higher success?). Graded variant: seed 7, 24 PPO iterations of 96 environments.
""",
         solution="""
p_target, p_cells = selection_protocol(False), selection_protocol(True)
# BEGIN SOLUTION
a_target = float(awareness(p_target, cfg, SEED).accuracy)
a_cells = float(awareness(p_cells, cfg, SEED).accuracy)
s_target = marl.train_arm("LMAC", p_target, cfg, SEED, "cpu").success
s_cells = marl.train_arm("LMAC", p_cells, cfg, SEED, "cpu").success
criterion_agrees = bool((a_cells > a_target) == (s_cells > s_target))
# END SOLUTION
""",
         public=["assert all(isinstance(x, float) and 0 <= x <= 1 for x in (a_target, a_cells, s_target, s_cells))",
                 "assert isinstance(criterion_agrees, bool)",
                 "assert isinstance(a_cells, float) and a_cells > a_target, 'sharing the cells lets every agent recover them'"],
         hidden=["assert isinstance(a_target, float) and abs(a_target - 0.5094) < 0.01 and abs(a_cells - 0.9571) < 0.01",
                 "assert isinstance(s_target, float) and abs(s_target - 0.5000) < 0.01",
                 "assert isinstance(s_cells, float) and abs(s_cells - 0.3477) < 0.01",
                 "assert criterion_agrees is False"],
         wrong="""
p_target, p_cells = selection_protocol(False), selection_protocol(True)
a_target, a_cells, s_target, s_cells = 0.40, 0.96, 0.30, 0.60
criterion_agrees = True
"""),
]
