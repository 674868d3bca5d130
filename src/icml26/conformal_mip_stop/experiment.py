"""The chapter's experiment: generate instances, record trajectories with HiGHS, train the
gap predictor, calibrate, and compare the conformal rule with the baselines over many
calibration/test re-splits (offline replay) and on live solves."""

from __future__ import annotations

import multiprocessing as mp
import time
from dataclasses import dataclass, field

import numpy as np
import torch

from icml26.common import progress, resolve_device, seed_everything

from .config import ConformalMIPConfig
from .conformal import (TrajectoryBatch, conformal_scores, conformal_threshold, evaluate_stops, first_index,
                        kth_incumbent_outcome, stop_on_prediction, stop_solve_to_eps)
from .instances import generate, is_feasible
from .predictor import GapPredictor, fit_predictor
from .solver import Trajectory, record, solve

METHODS = ("conformal", "uncalibrated", "first incumbent", "k-th incumbent", "solve to eps")


def _record_one(job):
    family, seed, config = job
    return record(generate(family, seed, config), seed=seed, rel_gap=config.record_gap)


def record_family(family: str, seeds, config: ConformalMIPConfig, desc: str = "solve") -> list[Trajectory]:
    """Solve every instance `seed` of `family` to the recording gap; `config.workers` processes."""
    jobs = [(family, int(s), config) for s in seeds]
    if config.workers > 1 and "fork" in mp.get_all_start_methods():
        with mp.get_context("fork").Pool(config.workers) as pool:
            return list(progress(pool.imap(_record_one, jobs), total=len(jobs), desc=desc))
    return [_record_one(j) for j in progress(jobs, desc=desc)]


def instance_seed(family: str, index: int, seed: int) -> int:
    """Distinct, reproducible instance seeds per family and run seed."""
    return 1_000_003 * (seed + 1) + 100_000 * (1 + list(("mis", "cflp")).index(family)) + index


def rule_outcomes(batch: TrajectoryBatch, pred: np.ndarray, eps: float, tau: float, k: int) -> dict[str, dict]:
    """Per-instance outcome (`evaluate_stops` keys) of every compared rule on the same recorded solves."""
    stops = {"conformal": stop_on_prediction(batch, pred, tau, eps, strict=True),
             "uncalibrated": stop_on_prediction(batch, pred, eps, eps, strict=False),
             "solve to eps": stop_solve_to_eps(batch, eps)}
    out = {m: evaluate_stops(batch, stop, eps) for m, stop in stops.items()}
    out["first incumbent"] = kth_incumbent_outcome(batch, 1, eps)
    out["k-th incumbent"] = kth_incumbent_outcome(batch, k, eps)
    return {m: out[m] for m in METHODS}


def resplit_evaluation(batch: TrajectoryBatch, pred: np.ndarray, eps: float, alpha: float, n_cal: int,
                       n_resplits: int, k: int, rng: np.random.Generator) -> dict[str, dict[str, np.ndarray]]:
    """Re-split the held-out pool `n_resplits` times into calibration (n_cal) and test; per
    split and method: coverage (fraction eps-good at the stop) and total work saved
    1 - sum(work at stop) / sum(work to eps). Also the threshold tau per split."""
    n = len(batch)
    if not 1 <= n_cal < n:
        raise ValueError(f"need 1 <= n_cal < pool size {n}, got {n_cal}")
    scores = conformal_scores(pred, batch.gap, batch.mask, eps)  # (n,)
    out = {m: {"coverage": np.empty(n_resplits), "work_saved": np.empty(n_resplits),
               "wall_saved": np.empty(n_resplits)} for m in METHODS}
    taus = np.empty(n_resplits)
    for r in range(n_resplits):
        perm = rng.permutation(n)
        cal, test = perm[:n_cal], perm[n_cal:]
        taus[r] = conformal_threshold(scores[cal], alpha)
        sub = batch.subset(test)
        for method, ev in rule_outcomes(sub, pred[test], eps, taus[r], k).items():
            out[method]["coverage"][r] = ev["covered"].mean()
            out[method]["work_saved"][r] = 1.0 - ev["work"].sum() / ev["work_ref"].sum()
            out[method]["wall_saved"][r] = 1.0 - ev["wall"].sum() / max(ev["wall_ref"].sum(), 1e-12)
    out["tau"] = taus
    return out


def alpha_sweep(batch, pred, eps, alphas, n_cal, n_resplits, k, seed=0):
    """Mean conformal coverage and work saved for each alpha (the Explore slider's replay)."""
    cov, saved = [], []
    for a in alphas:
        res = resplit_evaluation(batch, pred, eps, float(a), n_cal, n_resplits, k, np.random.default_rng(seed))
        cov.append(res["conformal"]["coverage"].mean())
        saved.append(res["conformal"]["work_saved"].mean())
    return np.array(cov), np.array(saved)


@dataclass
class LiveRun:
    """Live solves of test instances with the conformal rule inside the HiGHS callback."""

    tau: float
    stop_work: np.ndarray         # checkpoints done when the live rule fired (or the solver stopped by itself)
    replay_work: np.ndarray       # checkpoints the offline replay predicts
    ref_work: np.ndarray          # checkpoints to reach gap <= eps
    covered: np.ndarray           # live incumbent eps-good
    feasible: np.ndarray          # returned incumbent feasible (checked independently)
    interrupted: np.ndarray
    seconds: np.ndarray           # live solve seconds
    ref_seconds: np.ndarray       # recording solve seconds to gap <= eps
    return_work: np.ndarray = field(default_factory=lambda: np.zeros(0))  # checkpoints until HiGHS returned
    example: dict = field(default_factory=dict)


def live_solves(family, seeds, trajectories, predictor: GapPredictor, tau: float, eps: float,
                config: ConformalMIPConfig) -> LiveRun:
    """Re-solve `seeds` with the online rule; compare with the replay of the recorded runs."""
    rows = {k: [] for k in ("stop_work", "replay_work", "ref_work", "covered", "feasible", "interrupted",
                            "seconds", "ref_seconds", "return_work")}
    example = {}
    for seed, traj in progress(list(zip(seeds, trajectories)), desc=f"live {family}"):
        instance = generate(family, int(seed), config)
        stopper = predictor.stopper(tau)
        res = solve(instance, seed=int(seed), rel_gap=config.record_gap, stop_rule=stopper)
        batch = TrajectoryBatch.from_trajectories([traj])
        pred = predictor.predict(batch)
        replay = stop_on_prediction(batch, pred, tau, eps)[0]
        ref = stop_solve_to_eps(batch, eps)[0]
        fired = res.extra.get("fired_at")
        rows["stop_work"].append((fired if fired is not None else res.trajectory.work[-1]) + 1)
        rows["return_work"].append(res.trajectory.work[-1] + 1)
        rows["replay_work"].append(batch.work[0, replay] + 1)
        rows["ref_work"].append(batch.work[0, ref] + 1)
        rows["covered"].append(res.objective - traj.optimum <= eps)
        rows["feasible"].append(res.x is not None and is_feasible(instance, res.x))
        rows["interrupted"].append(res.interrupted)
        rows["seconds"].append(res.seconds)
        rows["ref_seconds"].append(batch.wall[0, ref])
        if not example or (res.interrupted and not example["interrupted"]):  # show an early stop if any
            example = {"interrupted": res.interrupted, "trajectory": res.trajectory, "recorded": traj, "live_pred": np.array(stopper.predictions),
                       "live_work": np.array(stopper.works), "replay_pred": pred[0, batch.mask[0]],
                       "replay_work": batch.work[0, batch.mask[0]], "seed": int(seed)}
    return LiveRun(tau, **{k: np.asarray(v) for k, v in rows.items()}, example=example)


@dataclass
class FamilyResult:
    family: str
    eps: float
    train: TrajectoryBatch
    heldout: TrajectoryBatch
    heldout_trajectories: list
    predictor: GapPredictor
    pred: np.ndarray
    scores: np.ndarray
    resplits: dict
    live: LiveRun
    solve_seconds: float


def run_family(family: str, config: ConformalMIPConfig, device: torch.device, seed: int = 0) -> FamilyResult:
    """The whole pipeline for one family (Algorithm 1 of the paper, plus evaluation)."""
    eps = config.eps_of(family)
    seeds = [instance_seed(family, i, seed) for i in range(config.n_train + config.n_heldout)]
    t0 = time.perf_counter()
    trajs = record_family(family, seeds, config, desc=f"solve {family}")
    solve_seconds = time.perf_counter() - t0
    train_t, held_t = trajs[:config.n_train], trajs[config.n_train:]
    train = TrajectoryBatch.from_trajectories(train_t)
    heldout = TrajectoryBatch.from_trajectories(held_t)
    gen = seed_everything(seed)
    predictor = fit_predictor(train, config.ewma_rates, config.max_bound, device, config.hidden, config.layers,
                              config.epochs, config.batch_size, config.lr, config.loss_scale, config.loss_sigma,
                              generator=gen, desc=f"train {family}", loss=config.loss, eps=eps,
                              band_weight=config.loss_band_weight, norm_sd_scale=config.norm_sd_scale,
                              norm_tie_bounds=config.norm_tie_bounds)
    pred = predictor.predict(heldout)
    scores = conformal_scores(pred, heldout.gap, heldout.mask, eps)
    resplits = resplit_evaluation(heldout, pred, eps, config.alpha, config.n_cal, config.n_resplits,
                                  config.kth_incumbent, np.random.default_rng(seed))
    # live: calibrate on the first n_cal held-out instances, solve the next n_live live
    tau = conformal_threshold(scores[:config.n_cal], config.alpha)
    live_idx = list(range(config.n_cal, min(config.n_cal + config.n_live, config.n_heldout)))
    live = live_solves(family, [seeds[config.n_train + i] for i in live_idx], [held_t[i] for i in live_idx],
                       predictor, tau, eps, config)
    return FamilyResult(family, eps, train, heldout, held_t, predictor, pred, scores, resplits, live, solve_seconds)


def run_seed(config: ConformalMIPConfig, device, seed: int = 0) -> dict[str, FamilyResult]:
    """Every family of `config` for one run seed (its own instances and its own trained predictor)."""
    return {family: run_family(family, config, device, seed) for family in config.families}


def summary(results: dict[str, FamilyResult]) -> dict[str, dict[str, dict[str, float]]]:
    """Mean coverage and mean work/wall saved (over re-splits) per family and method."""
    return {fam: {m: {k: float(np.mean(r.resplits[m][k])) for k in ("coverage", "work_saved", "wall_saved")}
                  for m in METHODS} for fam, r in results.items()}


def fixed_split_work(r: FamilyResult, config: ConformalMIPConfig) -> tuple[np.ndarray, np.ndarray]:
    """The paired items of claim C2: calibrate on the first `n_cal` held-out instances (the
    live split) and return, for each of the other instances, (work to eps, work at the
    conformal stop), in checkpoints."""
    tau = conformal_threshold(r.scores[:config.n_cal], config.alpha)
    test = np.arange(config.n_cal, len(r.heldout))
    sub = r.heldout.subset(test)
    ev = evaluate_stops(sub, stop_on_prediction(sub, r.pred[test], tau, r.eps, strict=True), r.eps)
    return ev["work_ref"].astype(float), ev["work"].astype(float)


def predictor_competence(r: FamilyResult, band_weight: float) -> dict[str, float]:
    """Rule 2 for the trained predictor: its held-out training criterion (``band_l1``) against the
    untrained network's output, the midpoint (U - L) / 2 of the feasible range (o_t = 0)."""
    from .model import band_l1

    target = torch.as_tensor(r.heldout.gap, dtype=torch.float64)
    mask = torch.as_tensor(r.heldout.mask)
    pred = torch.as_tensor(r.pred, dtype=torch.float64)
    mid = torch.as_tensor((r.heldout.upper - r.heldout.lower) / 2.0, dtype=torch.float64)
    return {"loss": float(band_l1(pred, target, mask, r.eps, band_weight)),
            "midpoint_loss": float(band_l1(mid, target, mask, r.eps, band_weight))}


def family_record(r: FamilyResult, config: ConformalMIPConfig) -> dict:
    """One family of one seed as plain data: what the ledger decides on and what the page plots."""
    rows = np.arange(len(r.heldout))
    first_good = first_index(r.heldout.gap <= r.eps, r.heldout.mask)  # (B,) checkpoint index
    ref = stop_solve_to_eps(r.heldout, r.eps)
    oracle_saved = 1.0 - (r.heldout.work[rows, first_good] + 1).sum() / (r.heldout.work[rows, ref] + 1).sum()
    work_ref, work_stop = fixed_split_work(r, config)
    tau = conformal_threshold(r.scores[:config.n_cal], config.alpha)
    test = np.arange(config.n_cal, len(r.heldout))
    sub = r.heldout.subset(test)
    ev = evaluate_stops(sub, stop_on_prediction(sub, r.pred[test], tau, r.eps, strict=True), r.eps)
    L = r.live
    return {
        "eps": r.eps,
        "mean": {m: {k: float(np.mean(r.resplits[m][k])) for k in ("coverage", "work_saved", "wall_saved")}
                 for m in METHODS},
        "coverage": {m: r.resplits[m]["coverage"].tolist() for m in ("conformal", "uncalibrated", "first incumbent")},
        "work_saved": r.resplits["conformal"]["work_saved"].tolist(),
        "wall_saved": r.resplits["conformal"]["wall_saved"].tolist(),
        "tau": r.resplits["tau"].tolist(),
        "finite_tau_share": float(np.mean(np.isfinite(r.resplits["tau"]))),
        "first_good_index": first_good.tolist(),
        "first_good_share": float(np.mean(first_good == 0)),
        "oracle_work_saved": float(oracle_saved),
        "fixed_split": {"tau": tau, "work_ref": work_ref.tolist(), "work_stop": work_stop.tolist(),
                        "wall_ref": ev["wall_ref"].tolist(), "wall_stop": ev["wall"].tolist()},
        "predictor": predictor_competence(r, config.loss_band_weight),
        "live": {"tau": L.tau, "stop_work": L.stop_work.tolist(), "replay_work": L.replay_work.tolist(),
                 "ref_work": L.ref_work.tolist(), "return_work": L.return_work.tolist(),
                 "covered": L.covered.tolist(), "feasible": L.feasible.tolist(),
                 "interrupted": L.interrupted.tolist(), "seconds": L.seconds.tolist(),
                 "ref_seconds": L.ref_seconds.tolist()},
        "solve_seconds": r.solve_seconds,
    }


def run_experiment(config: ConformalMIPConfig, seed: int = 0, device=None, keep: dict | None = None) -> dict:
    """The whole experiment behind the ledger: for each of ``config.seeds`` independent seeds
    (fresh instances, a freshly trained predictor), every family's pipeline (:func:`run_family`),
    as plain data: ``{"seeds", "alpha", "n_pool", "n_cal", "families", "per_seed": [{"seed",
    "families": {family: family_record}}]}``. ``keep``: a dict that receives the first seed's
    :class:`FamilyResult` objects (the page's live-solve plot and replay controls use them)."""
    if not isinstance(config, ConformalMIPConfig):
        raise TypeError(f"config must be a ConformalMIPConfig (get_config(...)), got {type(config).__name__}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    device = resolve_device("auto") if device is None else torch.device(device)
    seeds = [seed + s for s in range(config.seeds)]
    per_seed = []
    for s in seeds:
        fams = run_seed(config, device, s)
        if keep is not None and not keep:
            keep.update(fams)
        per_seed.append({"seed": s, "families": {f: family_record(r, config) for f, r in fams.items()}})
    return {"seeds": seeds, "alpha": config.alpha, "n_pool": config.n_heldout, "n_cal": config.n_cal,
            "families": list(config.families), "per_seed": per_seed}
