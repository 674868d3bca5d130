"""STEP chapter: schedulers, the environment, windows/horizon alignment, the predictor's
warm start, the perturbation, the smoke run and bad input."""

import numpy as np
import pytest
import torch

from icml26.step_diffusion_policy import experiment as E
from icml26.step_diffusion_policy import get_config
from icml26.step_diffusion_policy.data import LinearNormalizer, make_windows
from icml26.step_diffusion_policy.env import Layout, ObstacleReach2D, collect_demos, point_on_polyline, sample_layouts
from icml26.step_diffusion_policy.models import (ActionPredictorTransformer, ConditionalMLPDenoiser,
                                                 ConditionalTemporalDenoiser)
from icml26.step_diffusion_policy.policy import MethodSpec
from icml26.step_diffusion_policy.sampling import (chunk_change, make_scheduler, set_steps, shift_chunk,
                                                   stall_perturbation, warm_start_refine)


def test_scheduler_timesteps_and_forward_noising_round_trip(device):
    s = make_scheduler("ddpm", 100)
    assert set_steps(s, 2).tolist() == [50, 0]
    assert set_steps(s, 4).tolist() == [75, 50, 25, 0]
    d = make_scheduler("ddim", 100, "trailing")
    assert set_steps(d, 2).tolist() == [99, 49]
    x0, eps = torch.rand(5, 16, 2, device=device) * 2 - 1, torch.randn(5, 16, 2, device=device)
    t = torch.tensor([50], device=device)
    xt = s.add_noise(x0, eps, t)
    ab = s.alphas_cumprod[50].to(device)
    assert torch.allclose(xt, ab.sqrt() * x0 + (1 - ab).sqrt() * eps, atol=1e-6)
    # with the exact noise as the model's prediction, one DDIM step recovers x0 (round trip)
    set_steps(d, 1)
    tt = d.timesteps[0]
    xt = d.add_noise(x0, eps, tt.reshape(1).to(device))
    back = d.step(eps, tt, xt, eta=0.0).pred_original_sample
    assert torch.allclose(back, x0, atol=1e-3)  # t=99: division by sqrt(abar) ~ 0.03 amplifies float32 error


class OracleEps(torch.nn.Module):
    """eps_theta that knows the clean chunk x0: eps = (x - sqrt(ab) x0) / sqrt(1 - ab)."""

    def __init__(self, sched, x0):
        super().__init__()
        self.ab, self.x0 = sched.alphas_cumprod.to(x0.device), x0

    def forward(self, x, t, obs):
        ab = self.ab[int(t)]
        return (x - ab.sqrt() * self.x0) / (1 - ab).sqrt()


def test_warm_start_refine_with_oracle_returns_the_target(device):
    x0 = torch.rand(3, 16, 2, device=device) * 1.6 - 0.8
    for kind in ("ddpm", "ddim"):
        s = make_scheduler(kind, 100)
        out = warm_start_refine(OracleEps(s, x0), s, 2, torch.zeros(3, 2, 6, device=device),
                                torch.zeros(3, 16, 2, device=device), torch.Generator(device=device).manual_seed(0))
        assert torch.allclose(out, x0, atol=1e-3), kind


def test_environment_success_and_collision_on_scripted_paths():
    lay = Layout(torch.tensor([[0.0, -0.8], [0.0, -0.8]]), torch.tensor([[0.0, 0.8], [0.0, 0.8]]), torch.zeros(2, 2))
    env = ObstacleReach2D(lay, max_steps=80)
    # episode 0 goes straight (through the obstacle), episode 1 detours far right
    way = torch.tensor([[[0.0, -0.8], [0.0, 0.0], [0.0, 0.8]], [[0.0, -0.8], [0.6, 0.0], [0.0, 0.8]]])
    for k in range(80):
        env.step(point_on_polyline(way, torch.full((2,), 0.05 * (k + 1))))
    assert env.collided.tolist() == [True, False]
    assert env.success.tolist() == [False, True]
    # a point that never moves neither succeeds nor collides, and is marked as stalled
    env2 = ObstacleReach2D(lay, max_steps=20)
    for _ in range(20):
        env2.step(env2.pos.clone())
    assert not env2.success.any() and not env2.collided.any() and env2.stalled.all() and env2.done.all()


def test_expert_is_bimodal_and_always_succeeds():
    d = collect_demos(64, torch.Generator().manual_seed(0))
    assert 10 < int((d.side > 0).sum()) < 54
    mid = d.obs[torch.arange(64), d.lengths // 2, 0]  # x position halfway
    assert bool(((mid > 0) == (d.side > 0)).all())


def test_windows_horizon_alignment_and_zero_padding():
    d = collect_demos(6, torch.Generator().manual_seed(1))
    on, an = LinearNormalizer(d.obs.reshape(-1, 6)), LinearNormalizer(d.actions.reshape(-1, 2))
    w = make_windows(d, on, an, 2, 16, 8)
    assert w.obs.shape[1:] == (2, 6) and w.action.shape[1:] == (16, 2) and w.prev_action.shape[1:] == (8, 2)
    assert len(w) == int(d.lengths.sum())
    # for t >= 1, chunk index T_o-1 is the action at t and index 0 is the last executed action
    t1 = torch.cat([torch.tensor([0]), d.lengths.cumsum(0)[:-1]]) + 1  # window index of t=1 in each episode
    assert torch.allclose(w.action[t1, 0], w.prev_action[t1, -1])
    assert torch.allclose(an.unnormalize(w.action[t1, 1]), d.actions[:, 1], atol=1e-5)
    assert bool((w.prev_action[t1, :-1] == 0).all())  # zeros before the episode start
    assert torch.allclose(an.unnormalize(an.normalize(d.actions)), d.actions, atol=1e-5)


def test_predictor_warm_start_shapes_and_shift_alignment():
    p = ActionPredictorTransformer(2, 6, 2, 16, 8, dim=16, heads=2)
    out = p(torch.zeros(5, 8, 2), torch.zeros(5, 2, 6))
    assert out.shape == (5, 16, 2)
    chunk = torch.arange(16.0)[None, :, None].expand(1, 16, 2)
    shifted = shift_chunk(chunk, 8)
    assert shifted[0, :8, 0].tolist() == list(range(8, 16)) and shifted[0, 8:, 0].tolist() == [15.0] * 8
    for den in (ConditionalTemporalDenoiser(2, 6, 2, 16, 1), ConditionalMLPDenoiser(2, 6, 2, 16, 32, 1)):
        assert den(torch.zeros(5, 16, 2), torch.tensor(3), torch.zeros(5, 2, 6)).shape == (5, 16, 2)


def test_perturbation_acts_only_when_the_two_latest_chunks_barely_differ(device):
    warm = torch.ones(2, 16, 2, device=device)
    older = torch.zeros(2, 16, 2, device=device)
    cache = torch.stack([torch.full((16, 2), 0.05), torch.full((16, 2), 1e-4)]).to(device)  # norms 0.28 and 0.0006
    d = chunk_change(cache, older)
    assert d[0] > 0.2 and d[1] < 0.01
    out, stalled = stall_perturbation(warm, cache, older, 0.01, 1.0, 0.5, torch.Generator(device=device).manual_seed(0))
    assert stalled.tolist() == [False, True]
    assert torch.equal(out[0], warm[0]) and not torch.allclose(out[1], warm[1])
    out2, _ = stall_perturbation(warm, cache, older, 0.01, 0.5, 0.0)  # sigma applies only when stalled
    assert torch.equal(out2[0], warm[0]) and torch.equal(out2[1], 0.5 * warm[1])
    with pytest.raises(ValueError):
        chunk_change(cache, older[:1])


def test_spatial_only_predictor_ignores_the_action_history(device):
    torch.manual_seed(0)
    sp = ActionPredictorTransformer(2, 6, 2, 16, 8, dim=16, heads=2, dropout=0.0, use_history=False).to(device).eval()
    st = ActionPredictorTransformer(2, 6, 2, 16, 8, dim=16, heads=2, dropout=0.0).to(device).eval()
    obs = torch.randn(3, 2, 6, device=device)
    h1, h2 = torch.zeros(3, 8, 2, device=device), torch.randn(3, 8, 2, device=device)
    assert torch.allclose(sp(h1, obs), sp(h2, obs))
    assert not torch.allclose(st(h1, obs), st(h2, obs))


def test_official_ddim_configuration():
    s = make_scheduler("ddim", 100)  # the official evaluation's DDIM: leading spacing, offset 0
    assert set_steps(s, 2).tolist() == [50, 0]
    assert s.config.set_alpha_to_one and s.config.steps_offset == 0 and s.config.clip_sample
    assert s.config.beta_schedule == "squaredcos_cap_v2"


@pytest.fixture(scope="module")
def smoke_results():
    return E.run_experiment(get_config("smoke"), device="cpu")


def test_smoke_run_end_to_end(smoke_results):
    r, c = smoke_results, get_config("smoke")
    assert r["seeds"] == [0] and len(r["per_seed"]) == c.train_seeds
    s = r["per_seed"][0]
    assert set(s["success"]) == set(E.method_names(c).values()) == set(r["methods"])
    assert all(len(v) == len(c.eval_seeds) * c.episodes_per_seed for v in s["success"].values())
    assert set(s["stall"]) == {"with perturbation", "without perturbation"}
    # C3 measures STEP's own refinement: K' steps from its own tau_1
    assert np.asarray(s["contraction"]["per_state_error"]).shape[1] == c.refine_steps + 1
    assert list(s["contraction"]["timesteps"]) == [c.num_train_timesteps // 2, 0]
    assert set(s["latency_batch_s"]) == {"STEP-2", f"DDPM-{c.num_train_timesteps}"}
    assert len(s["latency_batch1_s"]["STEP-2"]) == c.latency_repeats
    assert len(s["startup"]) == 3 and "| variant |" in E.startup_table(r)
    assert set(s["explore"]) == {f"{k}-{w}" for k in E.EXPLORE_STEPS for w in ("warm", "noise")}


#: At smoke the denoiser trains 40 steps: DDPM fails its competence check (rule 2), so every claim
#: that samples from it is INCONCLUSIVE, and the comparisons have one training seed (rule 1).
SMOKE_STATUSES = {k: "INCONCLUSIVE" for k in ("C1", "C2", "C3", "C4", "E1", "E2")}


def test_smoke_statuses(smoke_results):
    """The smoke run's ledger: one training seed, so the trained comparisons are INCONCLUSIVE
    (rule 1), C2 is decided and flagged fragile (rule 7)."""
    from icml26.step_diffusion_policy import claims
    ledger = claims.build_ledger(smoke_results)
    got = {k: e.status for k, e in ledger.entries.items()}
    assert got == SMOKE_STATUSES, got
    assert ledger.entries["C2"].fragile and ledger.entries["C2"].changes
    assert "rule 2" in ledger.entries["C1"].reason and ledger.verdict() == "INCONCLUSIVE"


def test_results_are_plain_data_and_the_ledger_survives_json(smoke_results):
    import json
    from icml26.evidence import from_plain, to_plain
    from icml26.step_diffusion_policy import claims
    plain = json.loads(json.dumps(to_plain(smoke_results)))
    assert claims.build_ledger(from_plain(plain)).check_lines() == claims.build_ledger(smoke_results).check_lines()


class CountingPredictor(torch.nn.Module):
    """A stand-in predictor that counts its calls and returns a constant chunk."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, prev, obs):
        self.calls += 1
        return torch.full((obs.shape[0], 16, 2), 0.25)


@pytest.mark.parametrize("startup", ["predictor", "noise", "full"])
def test_startup_only_changes_the_first_decision(startup):
    """STEP's first decision uses the predictor (the official code); the start-up diagnostics
    produce only the first chunk from noise and use the predictor from the second decision on."""
    from types import SimpleNamespace
    from icml26.step_diffusion_policy.policy import ChunkPolicy
    c = get_config("smoke")
    norm = LinearNormalizer(torch.stack([torch.full((6,), -1.0), torch.ones(6)]))
    anorm = LinearNormalizer(torch.stack([torch.full((2,), -1.0), torch.ones(2)]))
    den = ConditionalMLPDenoiser(2, 6, c.obs_horizon, c.pred_horizon, 8, 1)
    pred = CountingPredictor()
    trained = SimpleNamespace(config=c, denoiser=den, predictor=pred, spatial_predictor=pred, obs_norm=norm,
                              act_norm=anorm, device=torch.device("cpu"))
    calls = []
    orig = den.forward
    den.forward = lambda x, t, o: (calls.append(int(t)), orig(x, t, o))[1]
    pol = ChunkPolicy(trained, MethodSpec("S", "predictor", 2, "ddpm", perturb=True, startup=startup), 3,
                      torch.Generator().manual_seed(0))
    chunk = pol.act(torch.zeros(3, c.obs_horizon, 6))
    assert chunk.shape == (3, c.pred_horizon, 2)
    n_first = {"predictor": 2, "noise": 2, "full": c.num_train_timesteps}[startup]
    assert len(calls) == n_first and pred.calls == (1 if startup == "predictor" else 0)
    if startup == "noise":
        assert calls[0] == c.num_train_timesteps - 1  # trailing spacing starts at the last timestep
    pol.executed(chunk[:, 1:1 + c.action_horizon])
    pol.act(torch.zeros(3, c.obs_horizon, 6))
    assert pred.calls == (2 if startup == "predictor" else 1) and len(calls) == n_first + 2


def test_first_decision_counts_as_a_stall_and_later_ones_compare_the_latest_chunks():
    """Before two chunks exist the missing ones are the zero fallback, so the first decision
    stalls; later the two latest output chunks are compared."""
    from types import SimpleNamespace
    from icml26.step_diffusion_policy.policy import ChunkPolicy
    c = get_config("smoke")
    norm = LinearNormalizer(torch.stack([torch.full((6,), -1.0), torch.ones(6)]))
    anorm = LinearNormalizer(torch.stack([torch.full((2,), -1.0), torch.ones(2)]))
    pred = CountingPredictor()
    trained = SimpleNamespace(config=c, denoiser=ConditionalMLPDenoiser(2, 6, c.obs_horizon, c.pred_horizon, 8, 1),
                              predictor=pred, spatial_predictor=pred, obs_norm=norm, act_norm=anorm,
                              device=torch.device("cpu"))
    pol = ChunkPolicy(trained, MethodSpec("S", "predictor", 2, "ddpm", perturb=True), 2, torch.Generator().manual_seed(0))
    pol.act(torch.zeros(2, c.obs_horizon, 6))
    assert pol.n_stalled == 2  # both episodes start at rest
    pol.cache = pol.older.clone()
    pol.cache[0] += 0.5  # episode 0's chunks changed, episode 1's did not
    pol.act(torch.zeros(2, c.obs_horizon, 6))
    assert pol.n_stalled == 3
    no = ChunkPolicy(trained, MethodSpec("S", "predictor", 2, "ddpm", perturb=False), 2, torch.Generator().manual_seed(0))
    no.act(torch.zeros(2, c.obs_horizon, 6))
    assert no.n_stalled == 0


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match="train_seeds"):
        get_config("smoke", train_seeds=0)
    with pytest.raises(ValueError, match="predictor_dropout"):
        get_config("smoke", predictor_dropout=1.0)
    with pytest.raises(ValueError, match="lr must be > 0"):
        get_config("smoke", lr=0.0)
    with pytest.raises(ValueError, match="do not fit"):
        get_config("smoke", pred_horizon=4, action_horizon=8)
    with pytest.raises(ValueError, match="positive"):
        get_config("smoke", refine_steps=0)
    with pytest.raises(ValueError, match="must be <="):
        get_config("smoke", refine_steps=500)
    with pytest.raises(ValueError, match="unknown predictor"):
        MethodSpec("x", "predictor", 2, predictor="oracle")
    with pytest.raises(ValueError, match="stall_dead_band"):
        get_config("smoke", stall_dead_band=0.5)
    with pytest.raises(ValueError, match="prev_horizon must be >= 2"):
        get_config("smoke", prev_horizon=1)
    with pytest.raises(ValueError, match="unknown sampler"):
        get_config("smoke", sampler="euler")
    with pytest.raises(ValueError, match="denoising steps"):
        set_steps(make_scheduler("ddpm", 100), 101)
    with pytest.raises(ValueError, match="spacing"):
        make_scheduler("ddim", 100, "linspace-ish")
    with pytest.raises(ValueError, match="steps must be >= 1"):
        MethodSpec("x", "noise", 0)
    with pytest.raises(ValueError, match="unknown start"):
        MethodSpec("x", "oracle", 2)
    with pytest.raises(ValueError, match="unknown startup"):
        MethodSpec("x", "predictor", 2, startup="expert")
    with pytest.raises(ValueError, match="needs start='predictor'"):
        MethodSpec("x", "reuse", 2, startup="full")
    with pytest.raises(ValueError, match="needs start='predictor'"):
        MethodSpec("x", "predictor", 0, startup="noise")
    with pytest.raises(ValueError, match="prev_action"):
        ActionPredictorTransformer(2, 6, 2, 16, 8, dim=16, heads=2)(torch.zeros(5, 4, 2), torch.zeros(5, 2, 6))
    with pytest.raises(ValueError, match="target"):
        ObstacleReach2D(sample_layouts(3, torch.Generator())).step(torch.zeros(2, 2))
    with pytest.raises(ValueError, match="n_exec"):
        shift_chunk(torch.zeros(1, 16, 2), 16)
