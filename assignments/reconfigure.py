"""Graded exercises for reconfigure (chapter exercises 2-4). Format: assignments/README.md."""

TITLE = "Learning to Reconfigure: graded exercises"

SETUP = """
import icml26.numerics; icml26.numerics.pin_cpu_numerics()
from dataclasses import replace
import torch
from icml26.reconfigure import CONFIGS, MultiTailPolicy, gae, get_config, make_subtask, staged_advantages, train_primitive
from icml26.reconfigure import experiment
from icml26.reconfigure.env import OBS_DIM, physical_size

# The graded variant: seed 7 everywhere (the chapter prints seed 0, its evidence record seeds 0-2);
# the `reduced` preset's knobs (48 parallel sub-tasks, 15 PPO iterations per primitive).
cfg = get_config("reduced")
SEED = 7

# One batch of a staged episode: T = 30 control steps, N = 4 episodes
g = torch.Generator().manual_seed(SEED)
rewards = torch.rand(30, 4, generator=g)  # [T, N]
v_control = torch.randn(30, 4, generator=g)  # [T, N] V_control(s_t), t = 1..T
v_design = torch.randn(4, generator=g)  # [N] V_design(s_0)


def leg_length(prim):
    \"\"\"The physical leg length L of a trained walker: its design tail's mean on 64 stairs sub-tasks.\"\"\"
    env = make_subtask("stairs", 64, torch.Generator().manual_seed(1), "cpu")
    return float(physical_size(prim.policy.act_mean(env, torch.zeros(64), True)).mean())
"""

QUESTIONS = [
    dict(name="chain_advantage", exercise=2, points=2,
         prompt="""
**Exercise 2 (medium, derivation).** The W/O Stage Opt ablation runs one GAE chain over
[design step with reward 0, control steps], with $V_{\\text{design}}(s_0)$ as the value of the first
step. Show that its design advantage is
$\\hat A^{\\text{chain}}_0=\\gamma V_{\\text{control}}(s_1)-V_{\\text{design}}(s_0)+\\gamma\\lambda\\,\\hat A^{\\text{control}}_1$,
where $\\hat A^{\\text{control}}_1$ is the first entry of the control stage's own GAE, and that at
$\\lambda=1$ it is $\\gamma G-V_{\\text{design}}(s_0)$, while the multi-tail design advantage is
$G-V_{\\text{design}}(s_0)$. Write `design_adv_chain(rewards, v_control, v_design, gamma, lam)` with
`gae` only (not `staged_advantages`), returning a tensor of shape `[N]`.

*Deliverable:* `design_adv_chain`, and `gap_lambda1`, a list of 4 floats: the multi-tail design
advantage minus the single-chain one at $\\lambda=1$ for the tensors `rewards`, `v_control`,
`v_design` of the setup cell, with `cfg.gamma` (use `staged_advantages` with `replace(cfg, lam=1.0)`
here). Graded variant: the setup cell's tensors (seed 7), `reduced` preset.
""",
         solution="""
# BEGIN SOLUTION
def design_adv_chain(rewards, v_control, v_design, gamma, lam):
    # delta_0 = 0 + gamma V_control(s_1) - V_design(s_0); the rest of the chain is the control GAE
    return gamma * v_control[0] - v_design + gamma * lam * gae(rewards, v_control, gamma, lam)[0]


c1 = replace(cfg, lam=1.0)
split = staged_advantages(rewards, v_control, v_design, c1, multi_tail=True)[0]
chain = staged_advantages(rewards, v_control, v_design, c1, multi_tail=False)[0]
gap_lambda1 = (split - chain).tolist()
# END SOLUTION
""",
         public=["assert callable(design_adv_chain), 'design_adv_chain must be a function'",
                 "out = design_adv_chain(rewards, v_control, v_design, cfg.gamma, cfg.lam)\n"
                 "assert isinstance(out, torch.Tensor) and out.shape == (4,), 'one design advantage per episode'",
                 "assert isinstance(gap_lambda1, list) and len(gap_lambda1) == 4 and all(isinstance(x, float) for x in gap_lambda1)",
                 "assert isinstance(gap_lambda1, list) and all(x > 0 for x in gap_lambda1), "
                 "'with positive rewards the multi-tail advantage is the larger one'"],
         hidden=["assert callable(design_adv_chain)\n"
                 "g2 = torch.Generator().manual_seed(11)\n"
                 "r2, vc2, vd2 = torch.randn(12, 5, generator=g2), torch.randn(12, 5, generator=g2), torch.randn(5, generator=g2)\n"
                 "c2 = replace(cfg, gamma=0.9, lam=0.8)\n"
                 "ref = staged_advantages(r2, vc2, vd2, c2, multi_tail=False)[0]\n"
                 "assert torch.allclose(design_adv_chain(r2, vc2, vd2, 0.9, 0.8), ref, atol=1e-5)",
                 "assert isinstance(gap_lambda1, list) and len(gap_lambda1) == 4\n"
                 "key = [0.140738, 0.108221, 0.132425, 0.138306]\n"
                 "assert all(abs(a - b) < 1e-4 for a, b in zip(gap_lambda1, key))"],
         wrong="""
def design_adv_chain(rewards, v_control, v_design, gamma, lam):
    return gae(rewards, v_control, gamma, lam)[0] - v_design

gap_lambda1 = [0.0, 0.0, 0.0, 0.0]
"""),
    dict(name="one_way_leak", exercise=3, points=2,
         prompt="""
**Exercise 3 (medium, coding).** Make the design stage read the mean of both tails: write
`MeanDesignPolicy(MultiTailPolicy)` whose `forward` returns, for design-stage samples, the mean of
the two rows of `mu` and the mean of the two rows of `value` (`log_std` as in the parent: row 1 for
the design stage), and for control-stage samples row 0, as before. Then write
`directional_leaks(policy, n=64, seed=0)`, a two-way version of `primitives.tail_gradient_leak`: on
the same probe (`n` observations `torch.randn(n, OBS_DIM, generator=torch.Generator().manual_seed(seed))`)
and the same loss (`mu.pow(2).sum() + v.pow(2).sum() + log_std.sum()`), return
`(design_to_control, control_to_design)`: the largest absolute gradient that the design-stage loss
puts on row 0 of `mu.weight`, `mu.bias`, `value.weight`, `value.bias`, and the largest that the
control-stage loss puts on row 1. Work on a copy of the policy (`type(policy)(...)` and
`load_state_dict`), as `tail_gradient_leak` does.

*Deliverable:* `MeanDesignPolicy`, `directional_leaks`, and `leaks`, the tuple of two floats for the
policy built by `torch.manual_seed(SEED); policy = MeanDesignPolicy(32)`. Graded variant: seed 7,
hidden width 32.
""",
         solution="""
# BEGIN SOLUTION
class MeanDesignPolicy(MultiTailPolicy):
    def forward(self, obs, design_stage):
        h = self.trunk(obs)
        d = design_stage.bool()
        mu_all, v_all = self.mu(h), self.value(h)  # [N, 2]: row 0 control, row 1 design
        mu = torch.where(d, mu_all.mean(1), mu_all[:, 0])
        value = torch.where(d, v_all.mean(1), v_all[:, 0])
        return mu, self.log_std[d.long()], value


def directional_leaks(policy, n=64, seed=0):
    obs = torch.randn(n, OBS_DIM, generator=torch.Generator().manual_seed(seed))
    out = []
    for stage, other in ((True, 0), (False, 1)):
        p = type(policy)(policy.trunk[0].out_features, policy.multi_tail)
        p.load_state_dict(policy.state_dict())
        p.requires_grad_(True)
        mu, log_std, v = p(obs, torch.full((n,), stage))
        (mu.pow(2).sum() + v.pow(2).sum() + log_std.sum()).backward()
        grads = [p.mu.weight.grad[other], p.mu.bias.grad[other], p.value.weight.grad[other], p.value.bias.grad[other]]
        out.append(max(float(t.abs().max()) for t in grads))
    return tuple(out)


torch.manual_seed(SEED)
policy = MeanDesignPolicy(32)
leaks = directional_leaks(policy)
# END SOLUTION
""",
         public=["assert isinstance(leaks, tuple) and len(leaks) == 2 and all(isinstance(x, float) for x in leaks)",
                 "assert isinstance(leaks, tuple) and leaks[0] > 0, 'the design stage now reads the control row'",
                 "_ = torch.manual_seed(0)\n"
                 "assert directional_leaks(MultiTailPolicy(16)) == (0.0, 0.0), 'the multi-tail network leaks nowhere'"],
         hidden=["assert isinstance(leaks, tuple) and len(leaks) == 2\n"
                 "assert abs(leaks[0] - 2.668976) < 1e-3 and leaks[1] == 0.0",
                 "_ = torch.manual_seed(3)\n"
                 "p3 = MeanDesignPolicy(16)\n"
                 "d, c = directional_leaks(p3, n=32, seed=5)\n"
                 "assert d > 0 and c == 0.0"],
         wrong="""
class MeanDesignPolicy(MultiTailPolicy):
    pass


def directional_leaks(policy, n=64, seed=0):
    return (1.0, 1.0)


leaks = (1.0, 1.0)
"""),
    dict(name="walker_split", exercise=4, points=2,
         prompt="""
**Exercise 4 (hard, experimental).** Train the stairs walker twice from the same generator, with
and without the split: `train_primitive(make, CONFIGS.index("walker"), cfg,
torch.Generator().manual_seed(SEED), multi_tail=m)` for `m = True` and `m = False`, where
`make = lambda gen: make_subtask("stairs", cfg.n_envs, gen, "cpu")`. Measure each on its own
sub-task with `experiment.subtask_progress({0: prim}, cfg, "cpu", SEED)["walker"]` and read its leg
length with `leg_length(prim)` from the setup cell.

*Deliverable:* `dist_split`, `dist_no_split`, `leg_split`, `leg_no_split` (floats) and `split_helps`
(bool: is `dist_split > dist_no_split`?). Graded variant: seed 7, `reduced` preset.
""",
         solution="""
make = lambda gen: make_subtask("stairs", cfg.n_envs, gen, "cpu")
# BEGIN SOLUTION
prims = {m: train_primitive(make, CONFIGS.index("walker"), cfg, torch.Generator().manual_seed(SEED), multi_tail=m)
         for m in (True, False)}
dist = {m: experiment.subtask_progress({0: p}, cfg, "cpu", SEED)["walker"] for m, p in prims.items()}
dist_split, dist_no_split = dist[True], dist[False]
leg_split, leg_no_split = leg_length(prims[True]), leg_length(prims[False])
split_helps = bool(dist_split > dist_no_split)
# END SOLUTION
""",
         public=["assert all(isinstance(x, float) for x in (dist_split, dist_no_split, leg_split, leg_no_split))",
                 "assert isinstance(split_helps, bool)",
                 "assert 0.2 <= leg_split <= 1.0 and 0.2 <= leg_no_split <= 1.0, 'physical sizes lie in [0.2, 1]'"],
         hidden=["assert isinstance(dist_split, float) and isinstance(dist_no_split, float)\n"
                 "assert abs(dist_split - 0.3844) < 0.005 and abs(dist_no_split - 0.2633) < 0.005",
                 "assert isinstance(leg_split, float) and isinstance(leg_no_split, float)\n"
                 "assert abs(leg_split - 0.9871) < 0.005 and abs(leg_no_split - 0.9783) < 0.005",
                 "assert split_helps is True"],
         wrong="""
make = lambda gen: make_subtask("stairs", cfg.n_envs, gen, "cpu")
dist_split, dist_no_split = 0.36, 0.38
leg_split, leg_no_split = 0.83, 0.83
split_helps = False
"""),
]
