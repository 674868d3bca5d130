"""Advantages on hand-made groups, the zero-success property, the decomposition identity, the
simulator's exact expected update vs Monte Carlo, the theory's optima, the exact reward checker,
bad input and an end-to-end smoke run."""

import math

import numpy as np
import pytest
import torch

from icml26.asymmetric_weighting import get_config
from icml26.asymmetric_weighting import experiment, lm, simulator, task, theory
from icml26.asymmetric_weighting.weighting import (
    ASYMMETRIC, SCHEMES, SYMMETRIC, effective_weight, group_advantages, informative_groups, prompt_weight,
)


def test_hand_made_groups():
    r = torch.tensor([[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1]], dtype=torch.float64)
    A = {s: group_advantages(r, s) for s in SCHEMES}
    c = 4 / 3
    assert torch.allclose(A["rloo"][0], torch.tensor([c * 0.75, -c * 0.25, -c * 0.25, -c * 0.25], dtype=torch.float64))
    # RLOO = reward minus the mean of the other responses
    loo = r - (r.sum(1, keepdim=True) - r) / 3
    assert torch.allclose(A["rloo"], loo)
    s = math.sqrt(0.25 * 0.75)
    assert torch.allclose(A["grpo"][0], torch.tensor([0.75, -0.25, -0.25, -0.25], dtype=torch.float64) / (s + 1e-6))
    assert torch.allclose(A["grpo"][1], torch.tensor([1.0, 1.0, -1.0, -1.0], dtype=torch.float64), atol=1e-5)
    assert torch.allclose(A["linear"][0], torch.tensor([3.0, -1, -1, -1], dtype=torch.float64))
    assert torch.allclose(A["sqrt"][0], torch.tensor([math.sqrt(0.75) / 0.25] + [-1 / math.sqrt(0.75)] * 3, dtype=torch.float64))
    assert torch.allclose(A["uniform"][1], torch.tensor([2.0, 2.0, -2.0, -2.0], dtype=torch.float64))
    assert torch.allclose(A["dapo"], A["grpo"])


def test_advantages_equal_omega_times_centered_reward():
    """A_i = omega(rho_hat)(r_i - rho_hat) wherever 0 < rho_hat < 1 (the decomposition of Sec. 2)."""
    gen = torch.Generator().manual_seed(0)
    r = (torch.rand(200, 8, generator=gen) < 0.4).double()
    rho = r.mean(1, keepdim=True)
    mid = ((rho > 0) & (rho < 1)).squeeze(1)
    for s in SCHEMES:
        A = group_advantages(r, s)[mid]
        expect = prompt_weight(s, rho[mid], n=8) * (r[mid] - rho[mid])
        tol = 1e-4 if s in ("grpo", "dapo") else 1e-10
        assert torch.allclose(A, expect, atol=tol), s


def test_zero_success_groups_get_gradient_only_under_asymmetric_schemes():
    zero = torch.zeros(3, 8)
    full = torch.ones(3, 8)
    for s in SYMMETRIC:
        assert float(group_advantages(zero, s).abs().max()) == 0.0
        assert float(group_advantages(full, s).abs().max()) == 0.0
    for s in ASYMMETRIC:
        A = group_advantages(zero, s)
        assert torch.isfinite(A).all() and bool((A < 0).all()), s  # every sampled wrong answer is pushed down
        assert torch.allclose(A, -torch.ones_like(A)), s
    assert not bool(informative_groups(zero).any()) and not bool(informative_groups(full).any())
    for s in ("linear", "sqrt", "plateau"):  # w(1) = 0: an all-correct group gets no gradient (no clamp leak)
        assert float(group_advantages(full, s).abs().max()) == 0.0, s


def test_effective_weight_symmetry(device):
    rho = torch.linspace(0.01, 0.49, 30, dtype=torch.float64, device=device)
    for s in ("rloo", "grpo"):
        assert torch.allclose(effective_weight(s, rho), effective_weight(s, 1 - rho))
    for s in ("linear", "sqrt"):
        assert bool((effective_weight(s, rho) > effective_weight(s, 1 - rho)).all())


def test_policy_gradient_of_advantages_matches_decomposition(device):
    """Gradient of the surrogate (1/n) sum A_i log pi(y_i) == omega rho(1-rho)(gbar_1 - gbar_0)."""
    torch.manual_seed(0)
    theta = torch.randn(6, dtype=torch.float64, device=device, requires_grad=True)
    y = torch.tensor([0, 2, 0, 5, 1, 3, 0, 4], device=device)
    r = (y == 0).double()[None]
    for s in ("grpo", "linear", "sqrt"):
        A = group_advantages(r, s)[0]
        logp = torch.log_softmax(theta, 0)[y]
        g = torch.autograd.grad((A * logp).mean(), theta)[0]
        grads = torch.stack([torch.autograd.grad(torch.log_softmax(theta, 0)[yi], theta)[0] for yi in y])
        rho = r.mean()
        w = prompt_weight(s, rho, n=8) * rho * (1 - rho)
        expect = w * (grads[r[0] == 1].mean(0) - grads[r[0] == 0].mean(0))
        assert torch.allclose(g, expect, atol=1e-5), s


def test_simulator_expected_update_matches_monte_carlo():
    logits = simulator.initial_logits(torch.tensor([0.05, 0.3, 0.8], dtype=torch.float64), 5)
    reps = 20000
    for s in ("rloo", "grpo", "linear", "sqrt"):
        exact = simulator.expected_update(logits, s, 6)
        u, _ = simulator.sample_update(logits.repeat_interleave(reps, 0), s, 6, torch.Generator().manual_seed(1))
        u = u.reshape(3, reps, 5)  # (K, reps, M)
        se = u.std(1) / math.sqrt(reps)
        assert bool(((u.mean(1) - exact).abs() <= 5 * se + 1e-6).all()), s


def test_expected_update_identities(device):
    """RLOO is unbiased for grad rho; Linear-R equals (1 - (1-rho)^n) grad log rho, exactly."""
    logits = simulator.initial_logits(torch.tensor([0.02, 0.4, 0.9], dtype=torch.float64, device=device), 7)
    pi = torch.softmax(logits, -1)
    rho = pi[:, :1]
    e0 = torch.zeros_like(pi)
    e0[:, 0] = 1
    n = 6
    assert torch.allclose(simulator.expected_update(logits, "rloo", n), rho * (e0 - pi), atol=1e-12)
    assert torch.allclose(simulator.expected_update(logits, "linear", n), (1 - (1 - rho) ** n) * (e0 - pi), atol=1e-12)


def test_initial_logits_and_mean_field_close_to_simulation():
    rho0 = torch.full((300,), 0.05, dtype=torch.float64)
    assert torch.allclose(simulator.success(simulator.initial_logits(rho0, 20)), rho0)
    mc = simulator.simulate(rho0, "sqrt", 8, 1.0, 25, seed=0)
    mf = simulator.mean_field(rho0, "sqrt", 8, 1.0, 25)
    assert abs(mc.accuracy[-1] - mf.accuracy[-1]) < 0.05
    assert mf.accuracy[-1] > mf.accuracy[0]


def test_theory_optimum_closed_form_and_numeric():
    for clock in theory.CLOCKS:
        rho, om = theory.optimal_weight_numeric(0.02, 0.9, clock, points=101)
        cf = theory.optimal_weight(rho, clock)
        assert torch.allclose(om, cf / cf[0], rtol=1e-3), clock
    assert abs(theory.scheme_time("grpo", 0.01, 0.9, "updates") - 1) < 1e-9
    assert abs(theory.scheme_time("sqrt", 0.01, 0.9, "responses") - 1) < 1e-9
    assert theory.scheme_time("sqrt", 0.01, 0.9, "updates") > 1
    assert theory.scheme_time("grpo", 0.01, 0.9, "responses") > 1


def test_reward_checker_is_exact():
    t = task.make_task(0, 9)
    assert t.size == 100
    s = t.prompts[:, 1] + t.prompts[:, 3]
    assert torch.equal(t.lengths, 1 + (s >= 10).long())
    assert torch.equal(torch.where(t.lengths == 2, 10 * t.answers[:, 0] + t.answers[:, 1], t.answers[:, 0]), s)
    assert bool((task.exact_match_reward(t.answers, t.answers, t.lengths) == 1).all())
    resp = t.answers.clone()
    resp[:, 0] = (resp[:, 0] + 1) % 10
    assert bool((task.exact_match_reward(resp, t.answers, t.lengths) == 0).all())
    resp = t.answers.clone()
    resp[:, 1] = (resp[:, 1] + 3) % 10  # the second position only counts for two-digit answers
    assert torch.equal(task.exact_match_reward(resp, t.answers, t.lengths), (t.lengths == 1).float())
    bad = t.answers.clone()
    bad[:, 0] = task.PLUS
    assert float(task.exact_match_reward(bad, t.answers, t.lengths).max()) == 0.0


def test_model_success_probs_are_probabilities():
    m = lm.build_model(16, 1, 2, seed=0)
    t = task.make_task()
    p = lm.success_probs(m, t)
    assert p.shape == (t.size,) and bool(((p > 0) & (p < 1)).all())
    seqs = lm.sample_groups(m, t.prompts[:3], 4, torch.Generator().manual_seed(0))
    assert seqs.shape == (12, task.PROMPT_LEN + task.MAX_ANSWER_LEN)
    assert bool((seqs[:, task.PROMPT_LEN:] < 10).all())
    assert torch.equal(seqs[:4, :task.PROMPT_LEN], t.prompts[:1].expand(4, -1))


def test_answer_table_is_exact_teacher_forcing():
    """The one-pass answer table gives the same success probabilities, log-probabilities and
    gradients as teacher-forced forward passes on the sampled sequences."""
    m = lm.build_model(16, 2, 2, seed=1)
    t = task.make_task()
    lp1, lp2 = lm.answer_table(m, t)
    assert lp1.shape == (t.size, 10) and lp2.shape == (t.size, 10, 10)
    assert torch.allclose(lm.table_success(lp1, lp2, t), lm.success_probs(m, t), atol=1e-6)
    assert torch.allclose(lp1.exp().sum(-1), torch.ones(t.size)) and torch.allclose(lp2.exp().sum(-1), torch.ones(t.size, 10))
    gen = torch.Generator().manual_seed(0)
    idx = torch.randint(t.size, (5,), generator=gen)
    resp = lm.sample_from_table(lp1.detach(), lp2.detach(), idx, 3, gen)  # (15, 2)
    assert resp.shape == (15, 2) and bool((resp < 10).all())
    idx_rep = idx.repeat_interleave(3)
    seqs = torch.cat([t.prompts[idx_rep], resp], dim=1)
    span = (torch.arange(2)[None, :] < t.lengths[idx_rep][:, None]).float()  # scored answer positions
    a = lm.response_logprobs(lp1, lp2, idx_rep, resp) * span
    b = lm.answer_logprobs(m, seqs, task.PROMPT_LEN) * span
    assert torch.allclose(a, b, atol=1e-5)
    w = torch.randn(15, 2, generator=gen)
    ga = torch.autograd.grad((a * w).sum(), list(m.parameters()))
    gb = torch.autograd.grad((b * w).sum(), list(m.parameters()))
    assert all(torch.allclose(x, y, atol=1e-5) for x, y in zip(ga, gb))


def test_sample_from_table_follows_the_policy():
    """Empirical frequencies of sampled answers match pi(d1) pi(d2 | d1) (within 5 standard errors)."""
    m = lm.build_model(16, 1, 2, seed=2)
    t = task.make_task()
    with torch.no_grad():
        lp1, lp2 = lm.answer_table(m, t)
    reps = 40000
    assert int(t.lengths[9]) == 2  # a two-digit prompt: both digits are sampled from the policy
    resp = lm.sample_from_table(lp1, lp2, torch.tensor([9]), reps, torch.Generator().manual_seed(3))
    freq = torch.bincount(resp[:, 0] * 10 + resp[:, 1], minlength=100).double() / reps
    prob = (lp1[9][:, None] + lp2[9]).exp().reshape(100).double()
    se = torch.sqrt(prob * (1 - prob) / reps)
    assert bool(((freq - prob).abs() <= 5 * se + 1e-4).all())


def test_dapo_batch_keeps_only_informative_groups():
    t = task.make_task()
    lp1 = torch.log_softmax(torch.zeros(t.size, 10), -1)
    lp2 = torch.log_softmax(torch.zeros(t.size, 10, 10), -1)
    resp, rewards, idx, used, zero = lm._collect_batch(lp1, lp2, t, "dapo", 16, 8, 4, torch.Generator().manual_seed(0))
    assert bool(informative_groups(rewards).all()) and rewards.shape[0] <= 16 and used % (16 * 8) == 0
    assert resp.shape == (rewards.shape[0] * 8, 2) and 0 <= zero <= 1
    _, rewards, _, used, _ = lm._collect_batch(lp1, lp2, t, "grpo", 16, 8, 4, torch.Generator().manual_seed(0))
    assert rewards.shape == (16, 8) and used == 128


def test_bad_input_rejected():
    with pytest.raises(ValueError, match="valid schemes"):
        group_advantages(torch.zeros(2, 4), "ppo")
    with pytest.raises(ValueError, match="group size"):
        group_advantages(torch.zeros(2, 1), "grpo")
    with pytest.raises(ValueError, match="binary"):
        group_advantages(torch.full((2, 4), 0.5), "grpo")
    with pytest.raises(ValueError, match="num_prompts, group_size"):
        group_advantages(torch.zeros(4), "grpo")
    with pytest.raises(ValueError, match="valid schemes"):
        get_config("smoke", schemes=("grpo", "sqrt", "linear", "ppo"))
    with pytest.raises(ValueError, match="group size"):
        get_config("smoke", group_size=1)
    with pytest.raises(ValueError, match="context_schemes"):
        get_config("smoke", context_schemes=("grpo",))
    with pytest.raises(ValueError, match="learning-rate grids"):
        get_config("smoke", post_sft_lr_grid=(0.0,))
    with pytest.raises(ValueError, match="learning-rate grids"):
        get_config("smoke", lr_grid=())
    with pytest.raises(ValueError, match="seeds must be at least 3"):
        get_config("smoke", seeds=2)
    with pytest.raises(ValueError, match="max_operand"):
        get_config("smoke", max_operand=10)
    with pytest.raises(ValueError, match="sim_lr"):
        get_config("smoke", sim_lr=0.0)
    with pytest.raises(ValueError, match="valid clocks"):
        theory.optimal_weight(torch.tensor([0.5]), "seconds")
    with pytest.raises(ValueError, match="rho0"):
        theory.rho_grid(0.5, 0.2)
    with pytest.raises(ValueError, match="max_operand"):
        task.make_task(0, 12)
    with pytest.raises(ValueError, match="0 < rho < 1"):
        prompt_weight("grpo", torch.tensor([0.0]))
    with pytest.raises(ValueError, match="group size"):
        lm.train_rl(lm.build_model(16, 1, 2), task.make_task(), "grpo", 2, 4, 1)
    with pytest.raises(ValueError, match="must be"):
        task.exact_match_reward(torch.zeros(3, 2), torch.zeros(3, 1), torch.ones(3))


def test_censored_mean_bounds():
    mk = lambda acc: lm.RLHistory("x", np.array(acc), np.zeros(len(acc) - 1), np.zeros(len(acc)))
    never = lambda cap: mk([0.0] * (cap + 1))  # censored: cap updates, target never reached
    m = experiment.censored_mean([never(600), never(600)], 0.5)
    assert (m.lower, m.upper, m.censored, m.runs, m.exact) == (600.0, float("inf"), 2, 2, False)
    m = experiment.censored_mean([mk([0.0, 0.6]), mk([0.0, 0.2, 0.7])], 0.5)
    assert (m.lower, m.upper, m.exact) == (1.5, 1.5, True)
    with pytest.raises(ValueError, match="at least one run"):
        experiment.censored_mean([], 0.5)


def test_responses_to_target_uses_the_response_clock():
    h = lm.RLHistory("x", np.array([0.0, 0.2, 0.6, 0.7]), np.zeros(3), np.array([0.0, 256.0, 1024.0, 1280.0]))
    assert experiment.responses_to_target(h, 0.5) == 1024.0
    assert experiment.steps_to_target(h.accuracy, 0.5) == 2.0
    assert experiment.responses_to_target(h, 0.9) == float("inf")
    assert experiment.steps_to_target(h.accuracy, 0.9) == float("inf")  # censored: no time is made up


def test_early_stop_takes_exactly_the_updates_of_the_uncapped_run():
    t = task.make_task()
    full = lm.train_rl(lm.build_model(16, 1, 2, seed=3), t, "sqrt", 12, 8, 4, lr=1e-2, seed=3)
    target = float(full.accuracy[5])  # the accuracy this run has after 5 updates
    k = int(np.nonzero(full.accuracy >= target)[0][0])
    stopped = lm.train_rl(lm.build_model(16, 1, 2, seed=3), t, "sqrt", 12, 8, 4, lr=1e-2, seed=3, stop_at=target)
    assert len(stopped.accuracy) == k + 1 and len(stopped.zero_frac) == k and len(stopped.responses) == k + 1
    assert np.array_equal(stopped.accuracy, full.accuracy[:k + 1])
    assert np.array_equal(stopped.responses, full.responses[:k + 1])
    capped = lm.train_rl(lm.build_model(16, 1, 2, seed=3), t, "sqrt", 12, 8, 4, lr=1e-2, seed=3, stop_at=1.0)
    assert np.array_equal(capped.accuracy, full.accuracy)  # never reached: the whole cap, as without stop_at
    with pytest.raises(ValueError, match="stop_at"):
        lm.train_rl(lm.build_model(16, 1, 2), t, "grpo", 2, 4, 4, stop_at=1.5)


def test_smoke_end_to_end():
    cfg = get_config("smoke", device="cpu")
    a = experiment.run_part_a(cfg)
    assert set(a) == {"scratch", "post_sft"} and set(a["scratch"]) == set(cfg.sim_schemes)
    tuning = experiment.tune_all(cfg)
    assert set(tuning.scratch) == set(cfg.schemes) and all(v in cfg.lr_grid for v in tuning.scratch.values())
    assert set(tuning.post_sft) == set(cfg.post_sft_schemes)
    b = experiment.run_part_b(cfg, lrs=tuning.scratch)
    c, sft = experiment.run_part_c(cfg, lrs=tuning.post_sft)
    for s, hs in b.items():  # each run either reached the target or used exactly its cap
        cap = cfg.context_steps if s in cfg.context_schemes else cfg.rl_steps
        assert all(h.accuracy[-1] >= cfg.target_acc or len(h.accuracy) == cap + 1 for h in hs)
        assert all(len(h.accuracy) <= cap + 1 and len(h.zero_frac) == len(h.accuracy) - 1 for h in hs)
    table = experiment.results_table(b, c, sft, cfg, tuning)
    assert "Sqrt-R" in set(table["scheme"])
    info = experiment.explore_theory(0.05)
    assert abs(info["grpo"]["omega"] - 1) < 1e-12


def test_smoke_run_experiment_statuses():
    """The contract end to end at smoke: the tiny runs never learn (every arm fails its competence
    check), so every claim is INCONCLUSIVE; the ledger survives a JSON round trip."""
    import json

    from icml26.asymmetric_weighting import claims, run_experiment
    from icml26.evidence import from_plain, to_plain

    results = run_experiment(get_config("smoke"), device="cpu")
    assert results["seeds"] == [0, 1, 2] and len(results["scratch"]["grpo"]) == 3
    ledger = claims.build_ledger(results)
    assert [e.status for e in ledger.entries.values()] == ["INCONCLUSIVE"] * 3
    assert ledger.verdict() == "INCONCLUSIVE"
    assert all(not c.passed for c in ledger.entries["C1"].competence)
    again = claims.build_ledger(from_plain(json.loads(json.dumps(to_plain(results)))))
    assert again.record() == ledger.record()
    part_a, part_b, part_c, sft, tuning = experiment.histories(results)
    assert set(part_b) == set(get_config("smoke").schemes) and len(part_a) == 3
