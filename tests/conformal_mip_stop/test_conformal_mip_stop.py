"""Tests of the conformal early-stopping chapter: generators, the recorded trajectory, the
conformal guarantee on synthetic scores, the live interrupt, online/offline agreement, bad input."""

import numpy as np
import pytest
import torch

from icml26.conformal_mip_stop import (CFLPInstance, Trajectory, GapLSTM, GapPredictor, MISInstance, Normalizer,
                                       TrajectoryBatch, conformal_scores, conformal_threshold, generate,
                                       get_config, is_feasible, kth_incumbent_outcome, record, rescaled_mse,
                                       run_experiment, solve, stop_on_prediction, trajectory_features)

SMALL = get_config("smoke")


@pytest.mark.parametrize("family", ["mis", "cflp"])
def test_generators_are_seed_reproducible_and_feasible(family):
    a, b, c = generate(family, 3, SMALL), generate(family, 3, SMALL), generate(family, 4, SMALL)
    fa, fb, fc = (np.concatenate([np.ravel(getattr(x, f.name)) for f in x.__dataclass_fields__.values()])
                  for x in (a, b, c))
    assert np.array_equal(fa, fb) and (fa.shape != fc.shape or not np.array_equal(fa, fc))
    result = solve(a, seed=3)
    assert result.status == "Optimal" and is_feasible(a, result.x)


def test_erdos_renyi_mis_generator():
    """The Distributional-MIPLIB-like MIS option: G(n, p) edges, reproducible, solvable, feasible."""
    from icml26.conformal_mip_stop import generate_mis
    a, b = generate_mis(7, (60, 60), graph="er", p=0.2), generate_mis(7, (60, 60), graph="er", p=0.2)
    assert np.array_equal(a.edges, b.edges) and np.array_equal(a.weights, b.weights) and a.n_nodes == 60
    expected = 0.2 * 60 * 59 / 2
    assert abs(len(a.edges) - expected) < 5 * np.sqrt(expected)  # binomial edge count
    degrees = np.bincount(a.edges.reshape(-1), minlength=60)
    assert degrees.max() < 30  # no preferential-attachment hubs
    cfg = get_config("smoke", mis_graph="er", mis_nodes=(30, 35), mis_p=0.2)
    inst = generate("mis", 3, cfg)
    result = solve(inst, seed=3)
    assert result.status == "Optimal" and is_feasible(inst, result.x)
    with pytest.raises(ValueError, match="graph model"):
        generate_mis(0, graph="ws")
    with pytest.raises(ValueError, match="0 < p < 1"):
        generate_mis(0, graph="er", p=1.5)
    with pytest.raises(ValueError, match="mis_graph.*allowed"):
        get_config("smoke", mis_graph="ws")


@pytest.mark.parametrize("family", ["mis", "cflp"])
def test_recorded_trajectory_is_monotone_and_brackets_the_optimum(family):
    traj = record(generate(family, 11, SMALL), seed=11)
    ready = traj.ready()
    assert ready.any() and np.all(np.diff(ready.astype(int)) >= 0)        # once ready, always ready
    u, l_ = traj.upper[ready], traj.lower[ready]
    assert np.all(np.diff(u) <= 1e-9) and np.all(np.diff(l_) >= -1e-9)    # incumbent never worsens, bound never loosens
    assert np.all(l_ <= traj.optimum + 1e-6) and np.all(u >= traj.optimum - 1e-6)
    assert np.all(np.diff(traj.work) == 1) and np.all(np.diff(traj.n_incumbents) >= 0)


@pytest.mark.parametrize("family", ["mis", "cflp"])
def test_incumbent_history_is_complete_and_improving(family):
    """Every improving solution is recorded in order (including any found before the first
    checkpoint with a finite bound); the last one is the returned optimum."""
    inst = generate(family, 11, SMALL)
    traj = record(inst, seed=11)
    assert traj.inc_value.size >= 1 and traj.inc_value.size == traj.inc_work.size == traj.inc_wall.size
    assert np.all(np.diff(traj.inc_value) < 0) and np.all(np.diff(traj.inc_work) >= 0)
    assert traj.inc_value[-1] == pytest.approx(traj.optimum)
    assert traj.inc_value.size == traj.n_incumbents[-1]
    ready = traj.ready()
    first_ready = int(np.argmax(ready))
    assert traj.inc_work[0] <= first_ready  # an incumbent exists at the first ready checkpoint
    if family == "mis":
        assert traj.inc_value[0] == 0.0  # HiGHS's trivial heuristic: the empty set


def _batch_with_incumbents(inc_values, inc_works, optimum=0.0):
    """One hand-made trajectory: checkpoints 0..5, ready from checkpoint 2, proof of gap <= 1 at 4."""
    upper = np.array([np.inf, np.inf, 10.0, 10.0, 0.5, 0.0])
    lower = np.array([-np.inf, -np.inf, -5.0, -2.0, -0.4, 0.0])
    work = np.arange(6)
    tr = Trajectory(upper, lower, work, work * 0.1, work, np.array([0, 1, 2, 2, 3, 3]), optimum=optimum,
                    inc_value=np.asarray(inc_values, float), inc_work=np.asarray(inc_works, float),
                    inc_wall=np.asarray(inc_works, float) * 0.1)
    return TrajectoryBatch.from_trajectories([tr])


def test_kth_incumbent_stops_at_the_kth_solution_found():
    # first solution (value 40) found before any checkpoint had a bound: SolutionLimit = 1 returns it
    batch = _batch_with_incumbents([40.0, 10.0, 0.5], [1, 2, 4])
    first = kth_incumbent_outcome(batch, 1, eps=1.0)
    assert first["gap"][0] == 40.0 and first["work"][0] == 1 and not first["covered"][0]
    assert first["work_ref"][0] == 5  # the proof gap <= 1 at checkpoint index 4 -> 5 checkpoints done
    second = kth_incumbent_outcome(batch, 2, eps=1.0)
    assert second["gap"][0] == 10.0 and second["work"][0] == 2
    # the third solution arrives with the proof (4 checkpoints done < 5): it is returned, eps-good
    third = kth_incumbent_outcome(batch, 3, eps=1.0)
    assert third["gap"][0] == 0.5 and third["work"][0] == 4 and third["covered"][0]
    # fewer than k solutions: the solver runs to gap <= eps (the reference)
    fifth = kth_incumbent_outcome(batch, 5, eps=1.0)
    assert fifth["work"][0] == fifth["work_ref"][0] and fifth["work_saved"][0] == 0.0 and fifth["covered"][0]
    with pytest.raises(ValueError, match="k must be"):
        kth_incumbent_outcome(batch, 0, eps=1.0)


def test_conformal_threshold_covers_at_its_level_on_synthetic_scores():
    """Scores i.i.d. Exp(1); the rule errs iff s_test < tau. Theory: P(err) = k/(n+1) <= alpha."""
    rng = np.random.default_rng(0)
    alpha, n, draws = 0.1, 29, 20000
    scores = rng.exponential(size=(draws, n + 1))
    taus = np.array([conformal_threshold(s[:n], alpha) for s in scores])
    errors = scores[:, n] < taus
    k = int(np.floor(alpha * (n + 1)))
    se = np.sqrt(alpha * (1 - alpha) / draws)
    assert errors.mean() <= alpha + 3 * se                     # coverage >= 1 - alpha up to sampling error
    assert abs(errors.mean() - k / (n + 1)) <= 4 * se          # and it is the exact finite-sample value
    # the naive (uncalibrated) threshold = the true alpha-quantile of one draw fails at small n
    naive = np.quantile(scores[:, :n], 0.3, axis=1)
    assert (scores[:, n] < naive).mean() > alpha + 3 * se


def test_conformal_threshold_covers_with_ties_and_small_n():
    rng = np.random.default_rng(1)
    scores = rng.integers(0, 3, size=(20000, 11)).astype(float)  # heavy ties
    taus = np.array([conformal_threshold(s[:10], 0.2) for s in scores])
    assert (scores[:, 10] < taus).mean() <= 0.2 + 3 * np.sqrt(0.2 * 0.8 / 20000)
    assert conformal_threshold(np.ones(5), 0.1) == -np.inf       # k = floor(0.6) = 0: never stop early


def test_conformal_scores_match_hand_computation():
    pred = np.array([[5.0, 2.0, 3.0, 1.0, 0.5], [4.0, 1.0, 1.0, 1.0, 1.0]])
    gap = np.array([[9.0, 6.0, 4.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0]])
    mask = np.array([[True] * 5, [True, True, False, False, False]])
    s = conformal_scores(pred, gap, mask, eps=0.5)
    assert s[0] == 2.0 and s[1] == np.inf  # running min before the eps-good step; eps-good at once -> +inf


def test_rescaled_loss_and_bounded_output():
    model = GapLSTM(9, 8, 1)
    x, alg = torch.randn(3, 7, 9), torch.rand(3, 7) * 10
    pred, _ = model(x, alg)
    assert pred.shape == (3, 7) and torch.all(pred >= 0) and torch.all(pred <= alg)
    target, mask = torch.rand(3, 7), torch.ones(3, 7, dtype=torch.bool)
    assert float(rescaled_mse(target, target, mask)) == 0.0
    p = target.clone().requires_grad_(True)
    rescaled_mse(p + 1.0, target, mask).backward()
    expected = 2.0 / (target / 1000.0 + 1.0) / 21
    assert torch.allclose(p.grad, expected, atol=1e-6)


def test_band_l1_loss_matches_hand_computation():
    """The release's training loss: relative absolute error, gaps in [eps/10, 10 eps] weighted 10x."""
    from icml26.conformal_mip_stop import band_l1
    eps = 2.0
    target = torch.tensor([[0.0, 1.0, 5.0, 100.0]])        # out, band, band, out
    mask = torch.tensor([[True, True, True, True]])
    assert float(band_l1(target, target, mask, eps)) == 0.0
    pred = target + torch.tensor([[1.0, 2.0, -3.0, 50.0]])
    rel = torch.tensor([1 / 2, 2 / 3, 3 / 7, 50 / 102])
    w = torch.tensor([1 / 3, 10 / 3, 10 / 3, 1 / 3]) / 11  # band: 10 / (n_band + 1), out: 1 / (n_out + 1)
    assert torch.isclose(band_l1(pred, target, mask, eps), (w * rel).sum() / 4)
    # padded steps are ignored, and over-prediction at a small gap costs more than at a large one
    padded = torch.tensor([[True, True, True, False]])
    assert torch.isclose(band_l1(pred, target, padded, eps),
                         (torch.tensor([1 / 2, 10 / 3, 10 / 3]) / 11 * rel[:3]).sum() / 3)
    small = band_l1(torch.tensor([[1.0]]), torch.tensor([[0.0]]), torch.tensor([[True]]), eps)
    large = band_l1(torch.tensor([[101.0]]), torch.tensor([[100.0]]), torch.tensor([[True]]), eps)
    assert small > 10 * large
    with pytest.raises(ValueError, match="eps"):
        band_l1(pred, target, mask, 0.0)
    from icml26.conformal_mip_stop.model import train_predictor
    x, alg = torch.randn(2, 3, 9), torch.rand(2, 3) + 1.0
    with pytest.raises(ValueError, match="positive eps"):
        train_predictor(x, alg, torch.rand(2, 3), torch.ones(2, 3, dtype=torch.bool), loss="band_l1", epochs=1)
    with pytest.raises(ValueError, match="unknown loss"):
        train_predictor(x, alg, torch.rand(2, 3), torch.ones(2, 3, dtype=torch.bool), loss="huber", epochs=1)
    with pytest.raises(ValueError, match="loss.*allowed"):
        get_config("smoke", loss="huber")


def test_normalizer_release_options():
    """sd scaled by 10 and the incumbent column sharing the dual bound's statistics (the release's trainer)."""
    rng = np.random.default_rng(0)
    feats = rng.normal(size=(3, 5, 9)) * np.arange(1, 10)
    mask = np.ones((3, 5), bool)
    plain = Normalizer.fit(feats, mask)
    rel = Normalizer.fit(feats, mask, sd_scale=10.0, tie_bounds=True)
    np.testing.assert_allclose(rel.sd[2:], 10 * plain.sd[2:])
    assert rel.mean[1] == plain.mean[0] and rel.sd[1] == 10 * plain.sd[0]
    np.testing.assert_allclose(rel(feats)[..., 2], (feats[..., 2] - plain.mean[2]) / (10 * plain.sd[2] + 1))
    with pytest.raises(ValueError, match="sd_scale"):
        Normalizer.fit(feats, mask, sd_scale=0.0)


def _toy_predictor(batch):
    torch.manual_seed(0)
    feats = trajectory_features(batch.upper, batch.lower, batch.work, (0.01, 1.0, 5.0))
    return GapPredictor(GapLSTM(9, 8, 1).eval(), Normalizer.fit(feats, batch.mask), (0.01, 1.0, 5.0), 1e6,
                        torch.device("cpu"))


def test_live_interrupt_returns_feasible_incumbent_and_matches_replay():
    inst = generate("cflp", 5, SMALL)
    traj = record(inst, seed=5)
    batch = TrajectoryBatch.from_trajectories([traj])
    predictor = _toy_predictor(batch)
    pred = predictor.predict(batch)
    tau = float(np.median(pred[0]))  # some checkpoint fires
    stopper = predictor.stopper(tau)
    live = solve(inst, seed=5, stop_rule=stopper)
    assert live.x is not None and is_feasible(inst, live.x) and live.objective >= traj.optimum - 1e-6
    np.testing.assert_allclose(stopper.predictions, pred[0, :len(stopper.predictions)], rtol=1e-5, atol=1e-5)
    replay = stop_on_prediction(batch, pred, tau, eps=-1.0)[0]
    assert live.interrupted and live.extra["fired_at"] == batch.work[0, replay]
    assert len(stopper.predictions) == np.sum(batch.work[0, :replay + 1] >= batch.work[0, 0])  # no call after firing
    assert live.trajectory.work[-1] >= live.extra["fired_at"]  # HiGHS returns at or after the firing checkpoint
    always = solve(inst, seed=5, stop_rule=lambda u, l, w: True)  # stop at the first chance
    assert always.interrupted and is_feasible(inst, always.x)


def test_small_lstm_training_restores_torch_threads():
    from icml26.conformal_mip_stop.model import train_predictor
    before = torch.get_num_threads()
    x, alg = torch.randn(4, 6, 9), torch.rand(4, 6) + 1.0
    target, mask = torch.rand(4, 6), torch.ones(4, 6, dtype=torch.bool)
    model, losses = train_predictor(x, alg, target, mask, hidden=8, layers=1, epochs=3, batch_size=4, lr=1e-2)
    assert torch.get_num_threads() == before and len(losses) == 3 and np.all(np.isfinite(losses))


def test_bad_input_is_rejected_clearly():
    with pytest.raises(ValueError, match="shape"):
        MISInstance(5, np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="endpoints"):
        MISInstance(3, np.array([[0, 7]]))
    with pytest.raises(ValueError, match="self-loops"):
        MISInstance(3, np.array([[1, 1]]))
    with pytest.raises(ValueError, match="weights must have shape"):
        MISInstance(3, np.array([[0, 1]]), np.ones(4))
    with pytest.raises(ValueError, match="positive"):
        MISInstance(3, np.array([[0, 1]]), np.array([1.0, 0.0, 2.0]))
    with pytest.raises(ValueError, match="infeasible"):
        CFLPInstance(np.array([5.0, 5.0]), np.array([3.0]), np.array([1.0]), np.ones((2, 1)))
    with pytest.raises(ValueError, match="transport_cost"):
        CFLPInstance(np.array([5.0]), np.array([9.0]), np.array([1.0]), np.ones((2, 2)))
    for alpha in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match="alpha"):
            conformal_threshold(np.arange(10.0), alpha)
        with pytest.raises(ValueError, match="alpha"):
            get_config("smoke", alpha=alpha)
    with pytest.raises(ValueError, match="valid families"):
        generate("tsp", 0)
    with pytest.raises(TypeError):
        solve("not an instance")
    with pytest.raises(ValueError, match="shape"):
        GapLSTM(9, 4, 1)(torch.zeros(2, 3, 5), torch.zeros(2, 3))
    with pytest.raises(ValueError, match="n_cal.*allowed"):
        get_config("smoke", n_cal=50)
    for field, value in (("seeds", 0), ("mis_graph", "ws"), ("loss", "l2"), ("families", ("tsp",)),
                         ("eps", (("mis", 1.0),)), ("mis_p", 1.0), ("epochs", 0), ("n_live", -1)):
        with pytest.raises(ValueError, match=f"ConformalMIPConfig.{field} .*allowed"):
            get_config("smoke", **{field: value})
    with pytest.raises(TypeError, match="ConformalMIPConfig"):
        run_experiment({"alpha": 0.1})
    with pytest.raises(ValueError, match="seed"):
        run_experiment(get_config("smoke"), seed=-1)


def test_smoke_end_to_end():
    from icml26.conformal_mip_stop.claims import build_ledger

    cfg = get_config("smoke")
    kept = {}
    results = run_experiment(cfg, seed=0, device="cpu", keep=kept)
    assert results["seeds"] == [0] and set(kept) == {"mis", "cflp"}
    for r in kept.values():
        assert r.live.feasible.all() and np.array_equal(r.live.stop_work, r.live.replay_work)
        assert np.all(r.resplits["solve to eps"]["coverage"] == 1.0)
        assert np.all(r.resplits["conformal"]["work_saved"] >= 0)
    for fam in ("mis", "cflp"):
        rec = results["per_seed"][0]["families"][fam]
        assert len(rec["tau"]) == cfg.n_resplits and 0 <= rec["first_good_share"] <= 1
        assert 0 <= rec["oracle_work_saved"] <= 1
    ledger = build_ledger(results)
    # one seed (each trains its own predictor) decides nothing under rule 1
    assert {k: e.status for k, e in ledger.entries.items() if not e.extension} == \
        {"C1": "INCONCLUSIVE", "C2": "INCONCLUSIVE"}
    assert "rule 1" in ledger.entries["C1"].reason
