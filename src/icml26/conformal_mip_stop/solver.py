"""A real MIP solver (HiGHS through highspy) whose callbacks record the solver-state
trajectory and can interrupt the solve (Sec. "Online stopping"; the release does this with a
Gurobi callback at MIP/MIPSOL events).

Checkpoints are HiGHS's MIP-interrupt callbacks, which fire at every root separation round
and B&B node. The *work clock* is the checkpoint index: deterministic for a given instance
and seed (single thread), unlike wall seconds, which are recorded next to it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import highspy
import numpy as np

from .instances import build_model


@dataclass
class Trajectory:
    """The solver state at each checkpoint t_1 < t_2 < ... of one solve (minimisation sense).

    `upper` U(t) (incumbent, +inf before the first one), `lower` L(t) (dual bound), `work`
    (checkpoint index, the deterministic clock), `wall` (seconds), `nodes` (B&B nodes),
    `n_incumbents` (improving solutions found so far). `optimum` is z*, filled in from a
    tight-gap solve."""

    upper: np.ndarray
    lower: np.ndarray
    work: np.ndarray
    wall: np.ndarray
    nodes: np.ndarray
    n_incumbents: np.ndarray
    optimum: float = float("nan")
    wall_total: float = float("nan")
    # every improving solution in the order found (also those found before the first
    # checkpoint with a finite bound): objective, checkpoints done when it was found, seconds
    inc_value: np.ndarray = field(default_factory=lambda: np.zeros(0))
    inc_work: np.ndarray = field(default_factory=lambda: np.zeros(0))
    inc_wall: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def __len__(self) -> int:
        return int(self.upper.size)

    def true_gap(self) -> np.ndarray:
        """g(t) = U(t) - z*, the unobservable quantity the predictor learns."""
        return self.upper - self.optimum

    def ready(self) -> np.ndarray:
        """Checkpoints with an incumbent and a finite bound (where a stop is allowed)."""
        return np.isfinite(self.upper) & np.isfinite(self.lower)


@dataclass
class SolveResult:
    """What one (possibly interrupted) solve returns."""

    trajectory: Trajectory
    x: Optional[np.ndarray]
    objective: float
    status: str
    interrupted: bool
    seconds: float
    extra: dict = field(default_factory=dict)


StopRule = Callable[[float, float, int], bool]  # (U, L, work) -> interrupt now?


def solve(instance, seed: int = 0, rel_gap: float = 1e-4, abs_gap: float = 1e-6,
          stop_rule: Optional[StopRule] = None, time_limit: float = 60.0) -> SolveResult:
    """Solve `instance` with HiGHS, recording a checkpoint at every MIP-interrupt callback.

    `stop_rule(U, L, work)` is called at each checkpoint that has an incumbent and a finite
    bound; when it returns True the callback sets `user_interrupt` (and keeps setting it until HiGHS
    returns, which can take a few more checkpoints) and HiGHS returns the incumbent (the online
    rule, Sec. "Online stopping"). Never stops without an incumbent.
    """
    if rel_gap < 0 or abs_gap < 0:
        raise ValueError(f"gaps must be non-negative, got rel_gap={rel_gap}, abs_gap={abs_gap}")
    h = highspy.Highs()
    for key, value in (("output_flag", False), ("threads", 1), ("presolve", "off"),
                       ("random_seed", int(seed) % 2**31), ("mip_rel_gap", float(rel_gap)),
                       ("mip_abs_gap", float(abs_gap)), ("time_limit", float(time_limit))):
        h.setOptionValue(key, value)
    build_model(instance, h)
    rec = {k: [] for k in ("upper", "lower", "work", "wall", "nodes", "n_incumbents")}
    state = {"n_inc": 0, "best": np.inf, "overhead": 0.0, "stopped": False}
    incumbents = {"value": [], "work": [], "wall": []}

    def on_improving(event) -> None:
        value = event.data_out.objective_function_value
        if value < state["best"] - 1e-9:
            state["n_inc"] += 1
            state["best"] = value
            incumbents["value"].append(float(value))
            incumbents["work"].append(len(rec["upper"]))  # checkpoints done when it was found
            incumbents["wall"].append(float(event.data_out.running_time) - state["overhead"])

    def on_checkpoint(event) -> None:
        start = time.perf_counter()
        out = event.data_out
        upper, lower = float(out.mip_primal_bound), float(out.mip_dual_bound)
        if upper < state["best"] - 1e-9:  # an incumbent not announced by the improving callback
            state["n_inc"] += 1
            state["best"] = upper
            incumbents["value"].append(upper)
            incumbents["work"].append(len(rec["upper"]))
            incumbents["wall"].append(float(out.running_time) - state["overhead"])
        upper = min(upper, state["best"])  # the improving callback can be ahead of the reported bound
        # the bound never loosens and the incumbent never worsens: make that explicit
        if rec["upper"]:
            upper = min(upper, rec["upper"][-1])
            lower = max(lower, rec["lower"][-1])
        work = len(rec["upper"])
        rec["upper"].append(upper), rec["lower"].append(lower), rec["work"].append(work)
        rec["nodes"].append(int(out.mip_node_count)), rec["n_incumbents"].append(state["n_inc"])
        rec["wall"].append(float(out.running_time) - state["overhead"])
        if state["stopped"]:
            # HiGHS honours the interrupt only at some of its callback points: keep asking until it returns
            event.data_in.user_interrupt = True
        elif stop_rule is not None and np.isfinite(upper) and np.isfinite(lower):
            if stop_rule(upper, lower, work):
                event.data_in.user_interrupt = True
                state["stopped"] = True
                state["fired_at"] = work
        state["overhead"] += time.perf_counter() - start  # callback + prediction time is not solver time

    h.cbMipImprovingSolution.subscribe(on_improving)
    h.cbMipInterrupt.subscribe(on_checkpoint)
    t0 = time.perf_counter()
    h.run()
    seconds = time.perf_counter() - t0 - state["overhead"]
    status = h.modelStatusToString(h.getModelStatus())
    info = h.getInfo()
    x = None
    if info.primal_solution_status == 2:  # kSolutionStatusFeasible
        x = np.array(h.getSolution().col_value)
    arrays = {k: np.asarray(v, dtype=float if k in ("upper", "lower", "wall") else np.int64) for k, v in rec.items()}
    traj = Trajectory(**arrays, inc_value=np.asarray(incumbents["value"], float),
                      inc_work=np.asarray(incumbents["work"], float), inc_wall=np.asarray(incumbents["wall"], float))
    objective = float(info.objective_function_value) if x is not None else float("inf")
    if len(traj) and x is not None and objective < traj.upper[-1] - 1e-9:
        # the solver improved the incumbent after the last checkpoint: close the record with it
        for k in ("upper", "lower", "work", "wall", "nodes", "n_incumbents"):
            setattr(traj, k, np.append(getattr(traj, k), getattr(traj, k)[-1]))
        traj.upper[-1], traj.work[-1], traj.n_incumbents[-1] = objective, len(traj) - 1, traj.n_incumbents[-1] + 1
        traj.lower[-1] = max(traj.lower[-1], float(info.mip_dual_bound))
        if not traj.inc_value.size or objective < traj.inc_value[-1] - 1e-9:  # not announced by a callback
            traj.inc_value = np.append(traj.inc_value, objective)
            traj.inc_work = np.append(traj.inc_work, float(len(traj) - 1))
            traj.inc_wall = np.append(traj.inc_wall, seconds)
        traj.n_incumbents[-1] = traj.inc_value.size  # every improving solution so far
    if x is not None and status == "Optimal" and len(traj):
        traj.lower[-1] = max(traj.lower[-1], float(info.mip_dual_bound))
    # `fired_at`: the checkpoint at which the stop rule fired (the solver may return a few checkpoints later)
    return SolveResult(traj, x, objective, status, state["stopped"], seconds, extra={"fired_at": state.get("fired_at")})


def record(instance, seed: int = 0, rel_gap: float = 1e-4) -> Trajectory:
    """Solve to a tight gap and attach z* := the final incumbent (Sec. "Training data")."""
    result = solve(instance, seed=seed, rel_gap=rel_gap)
    if result.x is None:
        raise RuntimeError(f"HiGHS found no feasible solution (status {result.status})")
    traj = result.trajectory
    traj.optimum = result.objective
    traj.wall_total = result.seconds
    return traj
