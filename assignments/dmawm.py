"""Graded exercises for dmawm (chapter exercises 1-3). Format: assignments/README.md."""

TITLE = "DMAWM: graded exercises"

SETUP = """
import icml26.numerics; icml26.numerics.pin_cpu_numerics()
from dataclasses import replace
import torch
from icml26.dmawm import get_config, experiment

# The graded variant: the `reduced` preset's task (3x1 corridor, 4 steps) and models, seed 5
# (the chapter prints seeds 0-2; the answers below are printed nowhere).
cfg = get_config("reduced")
SEED = 5


def fresh_world_model(method):
    \"\"\"An untrained world model ('dmawm' or 'joint'), initialised from SEED.\"\"\"
    torch.manual_seed(SEED)
    wm, _, _ = experiment.make_agents(cfg, method, "cpu")
    return wm


# 64 real episodes with random actions (obs (64, T+1, 2, 7), prev_act, reward, goal, ...)
episodes = experiment.rollout(experiment.make_env(cfg, 64, "cpu"), fresh_world_model("dmawm"), None,
                              torch.Generator().manual_seed(SEED))
"""

QUESTIONS = [
    dict(name="probe_over_time", exercise=1, points=2,
         prompt="""
**Exercise 1 (easy, experimental).** When does the scout's goal become visible to the follower? Write
`scripted_batch(n, delay)`: `n` episodes of the real task (`env = experiment.make_env(cfg, n, "cpu")`,
`obs = env.reset(torch.Generator().manual_seed(SEED))`) in which, at every step, the scout stays
(action 0) for the first `delay` steps and then moves toward the active site (action 1 when
`env.goal == 0`, else 2), and the follower repeats the scout's previous action (0 at the first step).
Return a dict with `obs` (n, T+1, 2, 7), `prev_act` (n, T+1, 2: the actions taken before each
observation, zeros first) and `goal` (n,). Then probe the follower's latent at every $t=0..T$ with
`experiment.probe_accuracy(fresh_world_model(m), batch, 1, t)` for `m = "dmawm"` and `m = "joint"`
(a fresh model for every probe: the probe samples latents, and a fresh start keeps the numbers
reproducible).

*Deliverable:* `scripted_batch`, and `probe`, a dict `{"dmawm": [5 floats], "joint": [5 floats]}` (the
probe at $t=0..4$) for `scripted_batch(512, delay=2)`. Graded variant: seed 5, the `reduced` task.
""",
         solution="""
# BEGIN SOLUTION
def scripted_batch(n, delay):
    env = experiment.make_env(cfg, n, "cpu")
    obs = env.reset(torch.Generator().manual_seed(SEED))
    toward = torch.where(env.goal == 0, 1, 2)  # (n,)
    prev = torch.zeros(n, 2, dtype=torch.long)
    observations, actions = [obs], [prev]
    for t in range(cfg.episode_len):
        scout = toward if t >= delay else torch.zeros_like(toward)
        a = torch.stack([scout, prev[:, 0]], 1)  # (n, 2): the follower repeats the scout's last move
        obs, _, _ = env.step(a)
        prev = a
        observations.append(obs)
        actions.append(a)
    return {"obs": torch.stack(observations, 1), "prev_act": torch.stack(actions, 1), "goal": env.goal.clone()}

batch = scripted_batch(512, delay=2)
probe = {m: [experiment.probe_accuracy(fresh_world_model(m), batch, 1, t) for t in range(cfg.episode_len + 1)]
         for m in ("dmawm", "joint")}
# END SOLUTION
""",
         public=["assert callable(scripted_batch) and isinstance(probe, dict) and set(probe) == {'dmawm', 'joint'}",
                 "assert isinstance(probe, dict) and all(len(v) == 5 and all(0.0 <= p <= 1.0 for p in v) for v in probe.values())",
                 "assert callable(scripted_batch) and scripted_batch(8, 0)['obs'].shape == (8, 5, 2, 7)"],
         hidden=["assert isinstance(probe, dict) and all(abs(a - b) < 0.005 for a, b in zip(probe['dmawm'], [0.4844, 0.4414, 0.4766, 1.0, 1.0]))",
                 "assert isinstance(probe, dict) and all(abs(a - b) < 0.005 for a, b in zip(probe['joint'], [1.0, 1.0, 1.0, 1.0, 1.0]))",
                 "assert callable(scripted_batch) and torch.equal(scripted_batch(16, 1)['prev_act'][:, :, 1].sum(0), torch.tensor([0, 0, 0, 22, 22]))"],
         wrong="""
def scripted_batch(n, delay):
    return experiment.rollout(experiment.make_env(cfg, n, "cpu"), fresh_world_model("dmawm"), None,
                              torch.Generator().manual_seed(SEED))

probe = {"dmawm": [0.5, 0.5, 0.5, 0.5, 0.5], "joint": [1.0, 1.0, 1.0, 1.0, 1.0]}
"""),
    dict(name="leak_gradient", exercise=2, points=2,
         prompt="""
**Exercise 2 (medium, coding).** Write `leak(wm, batch, decentralized=False)`: the largest absolute
gradient of the follower's posterior logits (agent 1, every step, summed) with respect to the scout's
*private* observation slots (agent 0's goal one-hot, `obs[..., 0, 4:6]`), computed with
`wm.observe(obs, batch["prev_act"], decentralized=decentralized, sample=False)`. It returns a float.

*Deliverable:* `leak`, and `leak_dmawm = leak(fresh_world_model("dmawm"), episodes)`,
`leak_joint = leak(fresh_world_model("joint"), episodes)` and
`leak_joint_exec = leak(fresh_world_model("joint"), episodes, decentralized=True)` (floats). Graded
variant: seed 5.
""",
         solution="""
# BEGIN SOLUTION
def leak(wm, batch, decentralized=False):
    obs = batch["obs"].clone().requires_grad_(True)
    _, _, post = wm.observe(obs, batch["prev_act"], decentralized=decentralized, sample=False)
    post[:, :, 1].sum().backward()
    return float(obs.grad[..., 0, 4:6].abs().max())

leak_dmawm = leak(fresh_world_model("dmawm"), episodes)
leak_joint = leak(fresh_world_model("joint"), episodes)
leak_joint_exec = leak(fresh_world_model("joint"), episodes, decentralized=True)
# END SOLUTION
""",
         public=["assert callable(leak) and all(isinstance(v, float) for v in (leak_dmawm, leak_joint, leak_joint_exec))",
                 "assert isinstance(leak_dmawm, float) and leak_dmawm >= 0.0 and leak_joint >= 0.0 and leak_joint_exec >= 0.0"],
         hidden=["assert isinstance(leak_dmawm, float) and leak_dmawm == 0.0 and leak_joint_exec == 0.0",
                 "assert isinstance(leak_joint, float) and abs(leak_joint - 0.032282) < 1e-3 * 0.032282",
                 """
assert callable(leak)
_wm = fresh_world_model("joint")
_b = {k: v[:8] for k, v in episodes.items() if k in ("obs", "prev_act")}
assert abs(leak(_wm, _b) - 0.029677) < 1e-3 * 0.029677
"""],
         wrong="""
def leak(wm, batch, decentralized=False):
    obs = batch["obs"].clone().requires_grad_(True)
    _, _, post = wm.observe(obs, batch["prev_act"], decentralized=decentralized, sample=False)
    post[:, :, 1].sum().backward()
    return float(obs.grad[..., 1, :].abs().max())  # the follower's own observation: not a leak

leak_dmawm = leak(fresh_world_model("dmawm"), episodes)
leak_joint = leak(fresh_world_model("joint"), episodes)
leak_joint_exec = leak(fresh_world_model("joint"), episodes, decentralized=True)
"""),
    dict(name="warmup", exercise=3, points=3,
         prompt="""
**Exercise 3 (hard, experimental).** Does a longer world-model warm-up give the reward head what the
competence check asks for ($R^2\\ge 0.5$)? Train each world model for one round with no behaviour
updates, `experiment.train_method(replace(cfg, rounds=1, min_rounds=1, wm_warmup=200, wm_updates=30, ac_updates=0),
method, SEED, show_progress=False)` (200 warm-up updates plus the round's 30), and run
`experiment.imagination_diagnostic(cfg, run, seed=SEED)` on it.

*Deliverable:* `r2`, a dict `{"dmawm": float, "joint": float}` (the diagnostic's `"reward_r2"`), and
`toward_minus_away`, a dict of the same keys (`"imagined toward"` minus `"imagined away"`). Graded
variant: seed 5, the `reduced` task, `wm_warmup=200`.
""",
         solution="""
# BEGIN SOLUTION
short = replace(cfg, rounds=1, min_rounds=1, wm_warmup=200, wm_updates=30, ac_updates=0)
diag = {m: experiment.imagination_diagnostic(cfg, experiment.train_method(short, m, SEED, show_progress=False),
                                             seed=SEED) for m in ("dmawm", "joint")}
r2 = {m: float(d["reward_r2"]) for m, d in diag.items()}
toward_minus_away = {m: float(d["imagined toward"] - d["imagined away"]) for m, d in diag.items()}
# END SOLUTION
""",
         public=["assert isinstance(r2, dict) and set(r2) == {'dmawm', 'joint'} and all(isinstance(v, float) and v <= 1.0 for v in r2.values())",
                 "assert isinstance(toward_minus_away, dict) and set(toward_minus_away) == {'dmawm', 'joint'}"],
         hidden=["assert isinstance(r2, dict) and abs(r2['dmawm'] - 0.5259) < 0.01 and abs(r2['joint'] - 0.4460) < 0.01",
                 "assert isinstance(toward_minus_away, dict) and abs(toward_minus_away['dmawm'] - 0.6596) < 0.02 and abs(toward_minus_away['joint'] - 0.3483) < 0.02"],
         wrong="r2 = {'dmawm': 0.09, 'joint': 0.05}\ntoward_minus_away = {'dmawm': 0.0, 'joint': 0.0}"),
]
