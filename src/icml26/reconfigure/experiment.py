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
from .scheduler import constant_chooser, greedy_chooser, run_hierarchy, train_scheduler

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


def run_seed(cfg: ReconfigConfig, seed: int, device=None) -> dict:
    """Every arm for one seed. Returns progress[arm][course], switches, designs and curves."""
    device = resolve_device(cfg.device) if device is None else device
    gen = torch.Generator().manual_seed(seed)
    n_per = max(cfg.n_envs // len(COURSE_NAMES), 1)
    full = lambda g: make_courses(COURSE_NAMES, n_per, g, device)[0]  # noqa: E731
    res = {"progress": {}, "switches": {}, "curves": {}, "items": {}}
    # the method: specialised primitives + eps-greedy scheduler
    prims = train_primitives(cfg, gen, device)
    q, res["curves"]["scheduler"] = train_scheduler(prims, full, cfg, gen)
    res["progress"]["ours"], res["switches"]["ours"], res["rollout"] = evaluate(prims, greedy_chooser(q), cfg, device, seed)
    res["items"]["ours"] = res["rollout"]["progress"].cpu()  # per evaluation course, same courses for every arm
    res["course_ids"] = make_courses(COURSE_NAMES, cfg.n_eval, torch.Generator().manual_seed(10_000 + seed), device)[1].cpu()
    res["designs"] = {CONFIGS[c]: float(physical_size(p.policy.act_mean(make_subtask(PRIMITIVE_TASKS[CONFIGS[c]], 64, torch.Generator().manual_seed(1), device), torch.zeros(64, device=device), True)).mean())
                      for c, p in prims.items()}
    res["curves"]["primitives"] = {CONFIGS[c]: p.curve for c, p in prims.items()}
    res["prims"], res["q"] = prims, q
    # ablation: W/O eps-greedy
    q0, res["curves"]["scheduler_no_eps"] = train_scheduler(prims, full, cfg, gen, epsilon_greedy=False, desc="W/O eps")
    res["progress"]["no_eps"], res["switches"]["no_eps"], out0 = evaluate(prims, greedy_chooser(q0), cfg, device, seed)
    res["items"]["no_eps"] = out0["progress"].cpu()
    # ablation: W/O stage opt -- the same primitives trained with one head / one value chain,
    # compared on their own sub-tasks (progress after prim_horizon steps, deterministic policy)
    prims1 = train_primitives(cfg, gen, device, multi_tail=False)
    res["subtask_items"] = {"multi_tail": {}, "no_stage": {}}
    res["subtask"] = {"multi_tail": subtask_progress(prims, cfg, device, seed, res["subtask_items"]["multi_tail"]),
                      "no_stage": subtask_progress(prims1, cfg, device, seed, res["subtask_items"]["no_stage"])}
    res["tail_leak"] = {"multi_tail": max(tail_gradient_leak(p.policy) for p in prims.values()),
                        "no_stage": max(tail_gradient_leak(p.policy) for p in prims1.values())}
    # baselines on the whole course, one body each: fixed body + PPO, and co-design (xi learned)
    for arm, fixed in (("fixed", 0.5), ("codesign", None)):
        per_conf, per_item = {}, {}
        for c, name in enumerate(CONFIGS):
            p = train_primitive(full, c, cfg, gen, fixed_xi=fixed, T=cfg.horizon, desc=f"{arm} {name}")
            per_conf[name], _, o = evaluate({c: p}, constant_chooser(c), cfg, device, seed)
            per_item[name] = o["progress"].cpu()
        res[f"{arm}_per_config"] = per_conf
        # the best single body per course (chosen with hindsight: generous to the baseline)
        best = {k: max(CONFIGS, key=lambda n: per_conf[n][k]) for k in COURSE_NAMES}
        res["progress"][arm] = {k: per_conf[best[k]][k] for k in COURSE_NAMES}
        ids = res["course_ids"]
        res["items"][arm] = torch.stack([per_item[best[COURSE_NAMES[int(j)]]][i] for i, j in enumerate(ids)])
    return res


def run_experiment(cfg: ReconfigConfig, seed: int = 0, device=None) -> list[dict]:
    """`cfg.n_seeds` independent seeds (seed, seed + 1, ...)."""
    return [run_seed(cfg, seed + s, device) for s in range(cfg.n_seeds)]


def summarize(results: list[dict]) -> dict:
    """Mean progress per arm and course over seeds, mean switches, mean designs."""
    prog = {a: {k: float(np.mean([r["progress"][a][k] for r in results])) for k in COURSE_NAMES} for a in ARMS}
    sw = {a: {k: float(np.mean([r["switches"][a][k] for r in results])) for k in COURSE_NAMES}
          for a in ("ours", "no_eps")}
    designs = {n: float(np.mean([r["designs"][n] for r in results])) for n in CONFIGS}
    sub = {arm: {n: float(np.mean([r["subtask"][arm][n] for r in results])) for n in CONFIGS}
           for arm in ("multi_tail", "no_stage")}
    return {"progress": prog, "switches": sw, "designs": designs, "subtask": sub}
