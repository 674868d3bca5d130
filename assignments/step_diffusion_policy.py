"""Graded exercises for step_diffusion_policy (chapter exercises 2-4). Format: assignments/README.md."""

TITLE = "STEP: graded exercises"

SETUP = """
import icml26.numerics; icml26.numerics.pin_cpu_numerics()
import math
import torch
from icml26.step_diffusion_policy import env, sampling

# The graded variant: scenes and stall batch from seed 3, and the `smoke` preset's 20-timestep
# schedule (the chapter works with seed 0 and the 100-timestep schedule; the answers below are
# printed nowhere).
SEED = 3
layouts = env.sample_layouts(500, torch.Generator().manual_seed(SEED))  # 500 scenes for exercise 3
sched = sampling.make_scheduler("ddim", 20)  # the smoke preset's DDIM (leading spacing), exercise 4

# Exercise 2's batch: ten robots, their two latest output chunks (H = 16, raw units), which the
# chapter's stall test compares, and the n_a = 8 actions of the latest chunk that they execute.
g = torch.Generator().manual_seed(SEED)
speeds = torch.tensor([0.0, 0.003, 0.006, 0.009, 0.015, 0.03, 0.0, 0.003, 0.02, 0.04])  # per step
heading = 2 * math.pi * torch.rand(10, generator=g)
direction = torch.stack([heading.cos(), heading.sin()], -1)  # (10, 2)
steps = torch.arange(1, 25, dtype=torch.float32)  # 24 steps: three chunks' worth
path = torch.rand(10, 1, 2, generator=g) - 0.5 + speeds[:, None, None] * steps[None, :, None] * direction[:, None]
path = path + 0.001 * torch.randn(path.shape, generator=g)  # (10, 24, 2) with tracking jitter
refine_noise = torch.tensor([0.0] * 6 + [0.002] * 4)  # robots 6-9: each call refines from fresh noise
older = path[:, :16] + refine_noise[:, None, None] * torch.randn(10, 16, 2, generator=g)  # (10, 16, 2)
cache = path[:, 8:24] + refine_noise[:, None, None] * torch.randn(10, 16, 2, generator=g)  # (10, 16, 2)
executed = cache[:, 1:9]  # (10, 8, 2): actions [T_o - 1, T_o - 1 + n_a) of the latest chunk
"""

QUESTIONS = [
    dict(name="velocity_stall", exercise=2, points=2,
         prompt="""
**Exercise 2 (coding, medium).** Write a stall indicator on the *executed* actions: a robot is
stalled when the mean displacement between consecutive executed actions,
$\\frac{1}{n-1}\\sum_k\\lVert a_{k+1}-a_k\\rVert$, is below $\\varepsilon_v$. Apply it with
$\\varepsilon_v=0.01$ to `executed`, and apply the chapter's chunk test,
`sampling.chunk_change(cache, older) < 0.01`, to the same ten robots.

*Deliverable:* `velocity_stall(actions, eps_v)` (takes a `(B, n, 2)` tensor and a float, returns a
`(B,)` bool tensor); `n_velocity` and `n_chunk` (ints: how many of the ten robots each indicator
flags, seed 3 batch from the setup cell).
""",
         solution="""
# BEGIN SOLUTION
def velocity_stall(actions, eps_v):
    return (actions[:, 1:] - actions[:, :-1]).norm(dim=-1).mean(1) < eps_v


n_velocity = int(velocity_stall(executed, 0.01).sum())
n_chunk = int((sampling.chunk_change(cache, older) < 0.01).sum())
# END SOLUTION
""",
         public=["assert callable(velocity_stall) and isinstance(n_velocity, int) and isinstance(n_chunk, int)",
                 "out = velocity_stall(executed, 0.01)\n"
                 "assert isinstance(out, torch.Tensor) and out.dtype == torch.bool and out.shape == (10,), "
                 "'velocity_stall returns a (B,) bool tensor'",
                 "assert isinstance(n_velocity, int) and 0 <= n_velocity <= 10 and 0 <= n_chunk <= 10"],
         hidden=["assert callable(velocity_stall)\n"
                 "a = torch.tensor([[[0., 0.], [0.003, 0.004], [0.006, 0.008]], [[0., 0.], [0.03, 0.04], [0.06, 0.08]]])\n"
                 "assert velocity_stall(a, 0.01).tolist() == [True, False]\n"
                 "assert velocity_stall(a, 0.004).tolist() == [False, False]",
                 "assert isinstance(n_velocity, int) and (n_velocity, n_chunk) == (6, 1)"],
         wrong="def velocity_stall(actions, eps_v):\n    return actions.norm(dim=-1).mean(1) < eps_v\n"
               "n_velocity, n_chunk = 2, 2"),
    dict(name="mode_blend", exercise=3, points=2,
         prompt="""
**Exercise 3 (experimental, medium).** Roll out the blend of the expert's two modes as a policy:
with weight $w$ on the left detour, its detour point sits $(2w-1)(r+m)$ to the side of the
obstacle's centre, which is `env.expert_waypoints(layout, side, radius)` with the real number
`side` $=2w-1$ in every scene. Follow the polyline at speed 0.04 per step
(`env.point_on_polyline(way, (k + 1) * 0.04)` is the target at step `k`) in
`env.ObstacleReach2D(layout)` until every episode is done.

*Deliverable:* `blend_success(layout, w)` (returns the success rate, a float);
`success` (a dict `{0.86: ..., 0.87: ..., 0.88: ...}` of floats, on the 500 scenes `layouts` of
seed 3); `w_min` (a float: the smallest $w$ on the grid $0.80, 0.81, \\dots, 1.00$ whose success
rate is at least 0.99).
""",
         solution="""
# BEGIN SOLUTION
def blend_success(layout, w, speed=0.04):
    n = layout.n
    way = env.expert_waypoints(layout, torch.full((n,), 2 * w - 1), 0.3)
    sim = env.ObstacleReach2D(layout)
    for k in range(sim.max_steps):
        sim.step(env.point_on_polyline(way, torch.full((n,), (k + 1) * speed)))
        if bool(sim.done.all()):
            break
    return float(sim.success.float().mean())


success = {w: blend_success(layouts, w) for w in (0.86, 0.87, 0.88)}
w_min = next(w / 100 for w in range(80, 101) if blend_success(layouts, w / 100) >= 0.99)
# END SOLUTION
""",
         public=["assert callable(blend_success) and isinstance(success, dict) and isinstance(w_min, float)",
                 "assert isinstance(success, dict) and set(success) == {0.86, 0.87, 0.88}, 'keys 0.86, 0.87, 0.88'",
                 "assert isinstance(success, dict) and all(isinstance(v, float) and 0 <= v <= 1 for v in success.values())",
                 "assert isinstance(w_min, float) and 0.8 <= w_min <= 1.0"],
         hidden=["assert callable(blend_success)\n"
                 "assert blend_success(layouts, 0.5) == 0.0 and blend_success(layouts, 1.0) == 1.0",
                 "assert isinstance(success, dict)\n"
                 "assert abs(success[0.86] - 0.286) < 0.01 and abs(success[0.87] - 0.566) < 0.01\n"
                 "assert abs(success[0.88] - 0.818) < 0.01",
                 "assert isinstance(w_min, float) and abs(w_min - 0.90) < 1e-9"],
         wrong="def blend_success(layout, w):\n    return float(w > 0.75)\n"
               "success = {0.86: 1.0, 0.87: 1.0, 0.88: 1.0}\nw_min = 0.76"),
    dict(name="warm_start_signal", exercise=4, points=2,
         prompt="""
**Exercise 4 (a) (coding, hard).** For the smoke preset's 20-step schedule `sched` (leading spacing),
find the first timestep $\\tau_1$ of $K'$ steps (`sampling.set_steps(sched, K)`) and the share of the
warm start that survives the forward noising, $\\sqrt{\\bar\\alpha_{\\tau_1}}$, for $K'=1,2,4,8$.

*Deliverable:* `tau1` and `kept` (dicts keyed by $K'\\in\\{1,2,4,8\\}$: ints and floats).
""",
         solution="""
# BEGIN SOLUTION
tau1 = {K: int(sampling.set_steps(sched, K)[0]) for K in (1, 2, 4, 8)}
kept = {K: float(sched.alphas_cumprod[t]) ** 0.5 for K, t in tau1.items()}
# END SOLUTION
""",
         public=["assert isinstance(tau1, dict) and isinstance(kept, dict) and set(tau1) == set(kept) == {1, 2, 4, 8}",
                 "assert isinstance(tau1, dict) and all(isinstance(t, int) and 0 <= t < 20 for t in tau1.values())",
                 "assert isinstance(kept, dict) and all(0 < v <= 1 for v in kept.values())"],
         hidden=["assert isinstance(tau1, dict) and tau1 == {1: 0, 2: 10, 4: 15, 8: 14}",
                 "assert isinstance(kept, dict)\n"
                 "ref = {1: 0.9960, 2: 0.6452, 4: 0.3067, 8: 0.3798}\n"
                 "assert all(abs(kept[K] - ref[K]) < 1e-3 for K in ref)"],
         wrong="tau1 = {1: 0, 2: 10, 4: 15, 8: 17}\nkept = {1: 1.0, 2: 0.69, 4: 0.37, 8: 0.23}"),
    dict(name="lipschitz_bound", exercise=4, points=2,
         prompt="""
**Exercise 4 (b) (coding, hard).** The bound on the Lipschitz constant of one DDIM jump from timestep $t$ to an
earlier timestep $s$ (with $\\epsilon_\\theta$ $L$-Lipschitz) is
$c=\\sqrt{\\bar\\alpha_s/\\bar\\alpha_t}+\\big|\\sqrt{1-\\bar\\alpha_s}-\\sqrt{\\bar\\alpha_s(1-\\bar\\alpha_t)/\\bar\\alpha_t}\\big|L$;
after the last timestep the scheduler jumps to $\\bar\\alpha_s=1$ (`set_alpha_to_one=True`).
Compute it for the jumps of $K'=3$ steps on the 20-step schedule `sched`.

*Deliverable:* `jump_bound(abar_t, abar_s, L)` (a float); `bounds_L0` (a list of 3 floats, the
jumps in sampling order, $L=0$); `product_L0` (their product, a float); `bounds_L1` (the same 3
jumps with $L=1$, a list of floats).
""",
         solution="""
# BEGIN SOLUTION
def jump_bound(abar_t, abar_s, L):
    return (abar_s / abar_t) ** 0.5 + abs((1 - abar_s) ** 0.5 - (abar_s * (1 - abar_t) / abar_t) ** 0.5) * L


ts = sampling.set_steps(sched, 3).tolist()
abar = [float(sched.alphas_cumprod[t]) for t in ts] + [1.0]
bounds_L0 = [jump_bound(abar[i], abar[i + 1], 0.0) for i in range(3)]
product_L0 = math.prod(bounds_L0)
bounds_L1 = [jump_bound(abar[i], abar[i + 1], 1.0) for i in range(3)]
# END SOLUTION
""",
         public=["assert callable(jump_bound) and isinstance(bounds_L0, list) and isinstance(bounds_L1, list)",
                 "assert isinstance(bounds_L0, list) and len(bounds_L0) == 3 and all(b >= 1 for b in bounds_L0), "
                 "'at L = 0 every jump has a bound of at least 1'",
                 "assert isinstance(product_L0, float) and abs(product_L0 - math.prod(bounds_L0)) < 1e-9",
                 "assert isinstance(bounds_L1, list) and all(b1 >= b0 for b0, b1 in zip(bounds_L0, bounds_L1))"],
         hidden=["assert callable(jump_bound) and abs(jump_bound(0.25, 1.0, 0.0) - 2.0) < 1e-9\n"
                 "assert abs(jump_bound(0.5, 0.8, 2.0) - (1.6 ** 0.5 + abs(0.2 ** 0.5 - 0.8 ** 0.5) * 2)) < 1e-9",
                 "assert isinstance(bounds_L0, list)\n"
                 "assert all(abs(a - b) < 1e-3 for a, b in zip(bounds_L0, [1.6354, 1.1739, 1.0040]))",
                 "assert isinstance(product_L0, float) and abs(product_L0 - 1.9275) < 1e-3",
                 "assert isinstance(bounds_L1, list)\n"
                 "assert all(abs(a - b) < 1e-3 for a, b in zip(bounds_L1, [2.5041, 1.7058, 1.0938]))"],
         wrong="def jump_bound(abar_t, abar_s, L):\n    return (abar_t / abar_s) ** 0.5\n"
               "bounds_L0 = [1.0, 1.0, 1.0]\nproduct_L0 = 1.0\nbounds_L1 = [1.0, 1.0, 1.0]"),
]
