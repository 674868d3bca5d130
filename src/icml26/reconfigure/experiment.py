"""The chapter's experiment: primitives + scheduler (the method), single fixed robots with PPO
(Domain-Expert-like), reconfiguration-free co-design (BodyGen-like), the two ablations, and the
reproduction criterion."""

from __future__ import annotations

import numpy as np
import torch

from icml26.common import resolve_device

from .config import CONFIGS, COURSES, PRIMITIVE_TASKS, ReconfigConfig
from .env import STEP_RANGE, config_index, make_courses, make_subtask, physical_size
from .primitives import tail_gradient_leak, train_primitive
from .scheduler import constant_chooser, greedy_chooser, random_chooser, run_hierarchy, train_scheduler

COURSE_NAMES = tuple(COURSES)
ARMS = ("ours", "no_eps", "fixed", "codesign")


def train_primitives(cfg, gen, device, multi_tail=True):
    """One primitive per configuration, each on the sub-task it specialises in (then frozen)."""
    prims = {}
    for name, terrain in PRIMITIVE_TASKS.items():
        c = config_index(name)
        prims[c] = train_primitive(lambda g, t=terrain: make_subtask(t, cfg.n_envs, g, device), c, cfg, gen,
                                   multi_tail=multi_tail, desc=f"primitive {name}")
    return prims


def subtask_progress(prims, cfg, device, seed, items: dict | None = None):
    """Distance covered by each primitive on its own sub-task in `prim_horizon` steps (mean xi,
    mean effort), per configuration name; `items`, if given, receives the per-episode distances."""
    out = {}
    for c, p in prims.items():
        name = CONFIGS[c]
        env = make_subtask(PRIMITIVE_TASKS[name], cfg.n_eval, torch.Generator().manual_seed(20_000 + seed), device)
        xi = p.policy.act_mean(env, torch.zeros(env.n, device=device), True)
        cvec = torch.full((env.n,), c, dtype=torch.long, device=device)
        for _ in range(cfg.prim_horizon):
            env.step(cvec, xi, p.policy.act_mean(env, xi, False))
        out[name] = float(env.x.mean())
        if items is not None:
            items[name] = env.x.cpu()
    return out


def evaluate(prims, chooser, cfg, device, seed):
    """Progress per course (mean over n_eval randomised courses) and mean switches."""
    env, ids = make_courses(COURSE_NAMES, cfg.n_eval, torch.Generator().manual_seed(10_000 + seed), device)
    out = run_hierarchy(prims, env, chooser, cfg)
    prog = {name: float(out["progress"][ids == i].mean()) for i, name in enumerate(COURSE_NAMES)}
    sw = {name: float(out["switches"][ids == i].float().mean()) for i, name in enumerate(COURSE_NAMES)}
    return prog, sw, out


def oracle_subtask_distance(cfg, device, seed) -> dict:
    """The achievable distance of each body on its own sub-task in `prim_horizon` steps: the best
    constant design on a grid of 11 values, driven at full effort (computed in the simulator; the
    competence bar of C3's primitives is a fraction of it)."""
    out = {}
    for c, name in enumerate(CONFIGS):
        best = 0.0
        for xi_val in torch.linspace(0, 1, 11).tolist():
            env = make_subtask(PRIMITIVE_TASKS[name], cfg.n_eval, torch.Generator().manual_seed(20_000 + seed), device)
            xi = torch.full((env.n,), xi_val, device=device)
            cvec = torch.full((env.n,), c, dtype=torch.long, device=device)
            for _ in range(cfg.prim_horizon):
                env.step(cvec, xi, torch.ones(env.n, device=device))
            best = max(best, float(env.x.mean()))
        out[name] = best
    return out


def switch_timing(rollout: dict, window: float) -> dict:
    """C4's figures from one evaluation rollout: the share of the scheduler's switches that happen
    within `window` of a segment boundary, and the same share for switches at random decision times
    with the same count per course (exact expectation: a course with k switches contributes k times
    the share of its decisions, after the first, that lie within the window)."""
    gaps, sw = rollout["decision_gaps"][1:], rollout["decision_switches"][1:]  # [D-1, N]; t=0 is no switch
    near = (gaps <= window).float()
    k = sw.float().sum(0)  # [N] switches per course
    n = float(k.sum())
    share = float((near * sw.float()).sum() / n) if n else 0.0
    chance = float((k * near.mean(0)).sum() / n) if n else 0.0
    return {"switches": n, "share": share, "chance_share": chance}


def run_seed(cfg: ReconfigConfig, seed: int, device=None, keep_models: bool = False) -> dict:
    """Every arm, trained afresh from `seed`: progress[arm][course], switches, designs, curves,
    sub-task distances, the competence figures and C4's switch timing (plain data). With
    `keep_models`, also the trained primitives and scheduler (under "models", not plain data)."""
    from .claims import C4_WINDOW

    device = resolve_device(cfg.device) if device is None else device
    gen = torch.Generator().manual_seed(seed)
    n_per = max(cfg.n_envs // len(COURSE_NAMES), 1)
    full = lambda g: make_courses(COURSE_NAMES, n_per, g, device)[0]  # noqa: E731
    res = {"seed": seed, "progress": {}, "switches": {}, "curves": {}}
    # the method: specialised primitives + eps-greedy scheduler
    prims = train_primitives(cfg, gen, device)
    q, res["curves"]["scheduler"] = train_scheduler(prims, full, cfg, gen)
    res["progress"]["ours"], res["switches"]["ours"], rollout = evaluate(prims, greedy_chooser(q), cfg, device, seed)
    ids = make_courses(COURSE_NAMES, cfg.n_eval, torch.Generator().manual_seed(10_000 + seed), device)[1].cpu()
    res["schedule"] = {name: rollout["configs"][:, int((ids == i).nonzero()[0])].cpu().numpy()
                       for i, name in enumerate(COURSE_NAMES)}  # [T] configuration in use, first course of each
    res["switch_timing"] = switch_timing(rollout, C4_WINDOW)
    # competence of the scheduler: the same primitives under a scheduler that picks at random
    res["progress"]["random"], res["switches"]["random"], _ = evaluate(
        prims, random_chooser(torch.Generator().manual_seed(30_000 + seed)), cfg, device, seed)
    env0, _ = make_courses(COURSE_NAMES, cfg.n_eval, torch.Generator().manual_seed(10_000 + seed), device)
    first = (env0.lengths[:, 0] / env0.total).cpu()
    res["first_segment_share"] = {name: float(first[ids == i].mean()) for i, name in enumerate(COURSE_NAMES)}
    res["designs"] = {CONFIGS[c]: float(physical_size(p.policy.act_mean(make_subtask(PRIMITIVE_TASKS[CONFIGS[c]], 64, torch.Generator().manual_seed(1), device), torch.zeros(64, device=device), True)).mean())
                      for c, p in prims.items()}
    res["curves"]["primitives"] = {CONFIGS[c]: p.curve for c, p in prims.items()}
    # ablation: W/O eps-greedy
    q0, res["curves"]["scheduler_no_eps"] = train_scheduler(prims, full, cfg, gen, epsilon_greedy=False, desc="W/O eps")
    res["progress"]["no_eps"], res["switches"]["no_eps"], _ = evaluate(prims, greedy_chooser(q0), cfg, device, seed)
    # ablation: W/O stage opt -- the same primitives trained with one head / one value chain,
    # compared on their own sub-tasks (progress after prim_horizon steps, deterministic policy)
    prims1 = train_primitives(cfg, gen, device, multi_tail=False)
    res["subtask"] = {"multi_tail": subtask_progress(prims, cfg, device, seed),
                      "no_stage": subtask_progress(prims1, cfg, device, seed)}
    res["subtask_oracle"] = oracle_subtask_distance(cfg, device, seed)
    res["tail_leak"] = {"multi_tail": max(tail_gradient_leak(p.policy) for p in prims.values()),
                        "no_stage": max(tail_gradient_leak(p.policy) for p in prims1.values())}
    # baselines on the whole course, one body each: fixed body + PPO, and co-design (xi learned)
    for arm, fixed in (("fixed", 0.5), ("codesign", None)):
        per_conf = {}
        for c, name in enumerate(CONFIGS):
            p = train_primitive(full, c, cfg, gen, fixed_xi=fixed, T=cfg.horizon, desc=f"{arm} {name}")
            per_conf[name], _, _ = evaluate({c: p}, constant_chooser(c), cfg, device, seed)
        res[f"{arm}_per_config"] = per_conf
        # the best single body per course (chosen with hindsight: generous to the baseline)
        best = {k: max(CONFIGS, key=lambda n: per_conf[n][k]) for k in COURSE_NAMES}
        res["progress"][arm] = {k: per_conf[best[k]][k] for k in COURSE_NAMES}
        res[f"{arm}_best_body"] = best
    if keep_models:
        res["models"] = {"prims": prims, "q": q}
    return res


def run_experiment(config: ReconfigConfig, seed: int = 0, device=None, keep_models: bool = False) -> dict:
    """The chapter's experiment: `config.n_seeds` independently trained seeds (seed, seed + 1, ...),
    each training every arm afresh. Returns plain data: {"seeds", "courses", "per_seed": [one
    `run_seed` dict per seed], "summary"}; with `keep_models`, seed 0's trained primitives and
    scheduler under "models" (for the page's explorer; not plain data)."""
    device = resolve_device(config.device) if device is None else device
    seeds = [seed + s for s in range(config.n_seeds)]
    per_seed = [run_seed(config, s, device, keep_models=keep_models and s == seed) for s in seeds]
    out = {"seeds": seeds, "courses": list(COURSE_NAMES), "configs": list(CONFIGS), "n_eval": config.n_eval,
           "per_seed": per_seed}
    if keep_models:
        out["models"] = per_seed[0].pop("models")
    out["summary"] = summarize(per_seed)
    return out


def summarize(per_seed: list[dict]) -> dict:
    """Mean progress per arm and course over seeds, mean switches, mean designs and sub-task distances."""
    prog = {a: {k: float(np.mean([r["progress"][a][k] for r in per_seed])) for k in COURSE_NAMES}
            for a in ARMS + ("random",)}
    sw = {a: {k: float(np.mean([r["switches"][a][k] for r in per_seed])) for k in COURSE_NAMES}
          for a in ("ours", "no_eps")}
    designs = {n: float(np.mean([r["designs"][n] for r in per_seed])) for n in CONFIGS}
    sub = {arm: {n: float(np.mean([r["subtask"][arm][n] for r in per_seed])) for n in CONFIGS}
           for arm in ("multi_tail", "no_stage")}
    return {"progress": prog, "switches": sw, "designs": designs, "subtask": sub}
