"""Bridge marginals (closed form at the endpoints and the midpoint), preconditioning limits,
the sampler reaching the target endpoint, the capacity-constrained WTA assignment (the SDB
structural constraint), the pairing splits, bad input and the smoke run."""

import itertools

import numpy as np
import pytest
import torch

from icml26.diffusion_bridge import get_config
from icml26.diffusion_bridge.bridge import (BridgeDenoiser, EnsembleMLP, bridge_mean_std, precond, sample_bridge,
                                            sample_translation)
from icml26.diffusion_bridge.data import downsample, pairing_pools, upsample_nearest
from icml26.diffusion_bridge.claims import build_ledger
from icml26.diffusion_bridge.experiment import (LEGACY, loss_drop, rbf_mmd, run_experiment, toy_coupling_scores,
                                                train_ensemble, prepare)
from icml26.diffusion_bridge.sdb import marginal_matching_loss, wta_bridge_loss, wta_capacity_assignment


@pytest.mark.parametrize("t, w_T, var", [(1e-6, 0.0, 0.0), (0.5, 0.25, 0.1875), (1.0, 1.0, 0.0)])
def test_bridge_marginal_matches_closed_form(t, w_T, var):
    g = torch.Generator().manual_seed(0)
    z0, zT = torch.tensor([[1.0, -2.0]]), torch.tensor([[3.0, 0.5]])
    n = 200_000
    zt = sample_bridge(z0.expand(n, 2), zT.expand(n, 2), torch.full((n, 1), t), g)
    mean = w_T * zT + (1 - w_T) * z0
    assert torch.allclose(zt.mean(0), mean[0], atol=0.01)
    assert torch.allclose(zt.var(0), torch.full((2,), var), atol=0.01)


def test_precond_limits(device):
    t = torch.tensor([1e-6, 0.3, 0.999], device=device)
    c_skip, c_out, c_in = precond(t)
    assert abs(c_skip[0] - 1) < 1e-6 and abs(c_out[0]) < 1e-5  # D -> z_t = z_0 at t -> 0
    # closed form with sigma0 = sigmaT = 1, sigma0T = 0, c = 1: A = t^4 - t^2 + 1
    A = t ** 4 - t ** 2 + 1
    assert torch.allclose(c_in, A.rsqrt()) and torch.allclose(c_skip, (1 - t ** 2) / A)
    assert torch.allclose(c_out, t / A.sqrt())


class Oracle(torch.nn.Module):
    def __init__(self, z0):
        super().__init__()
        self.z0 = z0

    def forward(self, zt, t, zT):
        return self.z0


def test_sampler_reaches_target_endpoint_and_keeps_marginal():
    g = torch.Generator().manual_seed(1)
    z0, zT = torch.randn(1, 4000, 3, generator=g), torch.randn(1, 4000, 3, generator=g)
    z0_hat, path = sample_translation(Oracle(z0), zT, 20, 0.999, 0.002, return_path=True)
    assert torch.allclose(z0_hat, z0)
    assert (path[-1] - z0).abs().max() < 0.01  # the state at t_min = 0.002 is at the target endpoint
    # a DBIM step with the oracle maps a bridge sample at t to a bridge sample at t'
    t, t2 = 0.8, 0.3
    zt = sample_bridge(z0, zT, torch.full((1, 4000, 1), t), g)
    mu, s = bridge_mean_std(z0, zT, torch.tensor(t))
    mu2, s2 = bridge_mean_std(z0, zT, torch.tensor(t2))
    z2 = mu2 + s2 * (zt - mu) / s
    resid = (z2 - mu2) / s2
    assert abs(float(resid.mean())) < 0.05 and abs(float(resid.std()) - 1) < 0.05


def test_denoiser_identity_at_t0_and_ensemble_members_independent(device):
    den = BridgeDenoiser(3, 4, 16, 8, torch.Generator().manual_seed(0)).to(device)
    torch.nn.init.normal_(den.F.weights[-1])
    z = torch.randn(3, 5, 4, device=device)
    out = den(z, torch.full((3, 5, 1), 1e-7, device=device), torch.randn(3, 5, 4, device=device))
    assert torch.allclose(out, z, atol=1e-4)
    x = torch.randn(3, 5, 8, device=device, requires_grad=True)
    net = EnsembleMLP(3, 8, 16, 2, zero_last=False).to(device)
    net(x)[1].sum().backward()
    assert x.grad[0].abs().sum() == 0 and x.grad[2].abs().sum() == 0 and x.grad[1].abs().sum() > 0


@pytest.mark.parametrize("capacity", [1, 2])
def test_wta_capacity_is_optimal_and_respects_capacity(capacity):
    rng = np.random.default_rng(0)
    n, m = 4, 4 if capacity == 1 else 2
    cost = rng.random((n, m))
    pi = wta_capacity_assignment(cost, capacity)
    assert np.bincount(pi, minlength=m).max() <= capacity
    best = min(sum(cost[i, p[i]] for i in range(n)) for p in itertools.product(range(m), repeat=n)
               if np.bincount(p, minlength=m).max() <= capacity)
    assert abs(cost[np.arange(n), pi].sum() - best) < 1e-12
    if capacity == 1:
        assert sorted(pi) == list(range(m))  # a permutation: no collapse onto a few targets


def test_marginal_matching_prevents_collapse_and_gradient_only_through_samples():
    real = torch.randn(1, 8, 2)
    gen = torch.zeros(1, 8, 2, requires_grad=True)  # all samples collapsed on one point
    loss = marginal_matching_loss(gen, real)
    loss.sum().backward()
    # with capacity 1 every real target is matched once: the gradient spreads the samples
    assert torch.allclose(gen.grad[0], -2 * real[0][torch.as_tensor(
        wta_capacity_assignment(torch.cdist(gen, real)[0] ** 2))] / 8)
    assert float(marginal_matching_loss(real.clone(), real)) < 1e-10  # perfect marginal fit: 0


class PredictCondition(torch.nn.Module):
    """D(z_t, t, z_T) = z_T + b: its bridge loss for a pseudo-pair (z0, zT) is ||zT + b - z0||^2,
    whatever t and the noise are, so the WTA winner can be computed by hand."""

    def __init__(self, d):
        super().__init__()
        self.b = torch.nn.Parameter(torch.zeros(d))

    def forward(self, zt, t, zT):
        return zT + self.b


@pytest.mark.parametrize("capacity", [1, 2, 6])
def test_wta_bridge_loss_picks_capacity_constrained_winners(capacity):
    g = torch.Generator().manual_seed(3)
    z0, src = torch.randn(1, 6, 2, generator=g), torch.randn(1, 6, 2, generator=g)
    den = PredictCondition(2)
    loss = wta_bridge_loss(den, z0, src, n_candidates=6, capacity=capacity, t_min=0.01, t_max=0.99, gen=g)
    cost = (torch.cdist(z0[0], src[0]) ** 2).numpy()  # all sources are candidates (K = B')
    best = min(sum(cost[i, p[i]] for i in range(6)) for p in itertools.product(range(6), repeat=6)
               if np.bincount(p, minlength=6).max() <= capacity) / 6
    assert abs(float(loss[0].detach()) - best) < 1e-4
    if capacity == 6:  # unconstrained: every target takes its nearest condition
        assert abs(float(loss[0].detach()) - cost.min(1).mean()) < 1e-4
    loss.sum().backward()  # the gradient flows through the winners' bridge loss only
    pi = wta_capacity_assignment(cost, capacity)
    assert torch.allclose(den.b.grad, 2 * (src[0, pi] - z0[0]).mean(0), atol=1e-5)


def test_pairing_pools_have_no_hidden_pairs():
    for rho in (0.0, 0.05, 1.0):
        p = pairing_pools(100, rho, 0)
        assert len(p.paired) == round(rho * 100)
        extra_src, extra_tgt = set(p.src) - set(p.paired), set(p.tgt) - set(p.paired)
        assert not extra_src & extra_tgt
        assert set(p.src) | set(p.tgt) == set(range(100))


def test_resampling_ops_and_mmd():
    x = torch.rand(5, 64)
    y = downsample(x)
    assert torch.allclose(downsample(upsample_nearest(y)), y)
    a = torch.randn(200, 3)
    assert float(rbf_mmd(a[None], a, 1.0)) < 1e-6
    assert float(rbf_mmd((a + 3)[None], a, 1.0)) > 0.1


def test_toy_only_pairs_break_the_mirror_symmetry():
    s = toy_coupling_scores(200, 3)
    assert abs(s["true"]["marginal matching"] - s["mirrored"]["marginal matching"]) < 0.05
    assert s["true"]["endpoint cycle"] < 1e-9 and s["mirrored"]["endpoint cycle"] < 1e-9
    assert s["true"]["paired error (3 pairs)"] < 1e-9 < s["mirrored"]["paired error (3 pairs)"]


def test_config_validation_names_the_field():
    for bad, field in (({"steps": 0}, "steps"), ({"batch": 1}, "batch"), ({"lr": 0.0}, "lr"),
                       ({"seeds": ()}, "seeds"), ({"seeds": (0, 0)}, "seeds"), ({"capacity": 0}, "capacity"),
                       ({"eval_sampler_steps": 0}, "eval_sampler_steps"), ({"n_train": 0}, "n_train")):
        with pytest.raises(ValueError, match=field):
            get_config("smoke", **bad)


def test_loss_drop_is_the_relative_fall_over_the_last_fifth():
    flat = np.ones((10, 2))
    assert np.allclose(loss_drop(flat), 0.0)
    falling = np.linspace(2.0, 1.0, 10)[:, None]  # fourth fifth mean 1.278, last 1.0556
    assert loss_drop(falling)[0] == pytest.approx((1.2777778 - 1.0555556) / 1.2777778, rel=1e-5)


def test_bad_input_rejected():
    with pytest.raises(ValueError):
        get_config("smoke", rhos_paired=(0.0, 1.0))
    with pytest.raises(ValueError):
        get_config("smoke", capacity=0)
    with pytest.raises(ValueError):
        get_config("smoke", t_max=1.0)
    with pytest.raises(ValueError, match="mm_form"):
        get_config("smoke", mm_form="gan")
    with pytest.raises(ValueError, match="n_candidates"):
        wta_bridge_loss(PredictCondition(2), torch.zeros(1, 4, 2), torch.zeros(1, 3, 2), 5, 2, 0.01, 0.99)
    with pytest.raises(ValueError):
        wta_capacity_assignment(np.zeros((5, 2)), 2)
    with pytest.raises(ValueError):
        wta_capacity_assignment(np.zeros(3))
    with pytest.raises(ValueError):
        bridge_mean_std(torch.zeros(2, 3), torch.zeros(2, 4), torch.tensor(0.5))
    with pytest.raises(ValueError):
        downsample(torch.zeros(3, 63))
    with pytest.raises(ValueError):
        pairing_pools(10, 1.5, 0)
    with pytest.raises(ValueError):
        BridgeDenoiser(2, 4, 8)(torch.zeros(3, 5, 4), torch.ones(3, 5, 1), torch.zeros(3, 5, 4))


def test_smoke_run():
    import json

    from icml26.evidence import from_plain, to_plain

    cfg = get_config("smoke")
    out = run_experiment(cfg, 0, torch.device("cpu"), show_progress=False, keep_objects=True)
    res = out.pop("objects")
    assert out["seeds"] == [0, 1, 2]
    ledger = build_ledger(out)
    assert build_ledger(from_plain(json.loads(json.dumps(to_plain(out))))).check_lines() == ledger.check_lines()
    assert {c: ledger.entries[c].status for c in ("C1", "C2")} == SMOKE_STATUSES
    assert (LEGACY, 0.0) in res.metrics and "E1 (ours)" in ledger.check_lines()
    assert np.asarray(out["metrics"]["SDB|0.05"]["correct"]).shape == (3, 397)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from icml26.common.plotting import check_figure, use_book_style
    from icml26.diffusion_bridge import plots
    use_book_style()
    for fig in (plots.plot_toy(), plots.plot_metrics(res), plots.plot_losses(res),
                plots.plot_grid({"in": res.setup.data.y_test, "out": res.setup.data.x_test}, 12)):
        check_figure(fig)
        plt.close(fig)
    assert res.translations[("SDB", 0.0)].shape == (397, 64)
    assert all(np.isfinite(v).all() for m in res.metrics.values() for v in m.values())
    with pytest.raises(ValueError, match="undefined"):
        train_ensemble(res.setup, cfg, "paired", (0.0,), (0,))
    with pytest.raises(ValueError, match="kind"):
        train_ensemble(res.setup, cfg, "cyclegan", (0.0,), (0,))


SMOKE_STATUSES = {"C1": "INCONCLUSIVE", "C2": "NOT REPRODUCED"}


def test_reversed_trajectory_cycle_is_zero_exactly_for_time_reversed_paths(device):
    from icml26.diffusion_bridge.sdb import reversed_trajectory_cycle_loss
    g = torch.Generator().manual_seed(0)
    fwd = [torch.randn(2, 5, 3, generator=g).to(device) for _ in range(3)]
    paths = {"path_yx": fwd, "path_xy_back": fwd[::-1], "path_xy": fwd, "path_yx_back": fwd[::-1],
             "times": torch.tensor([0.9, 0.5, 0.1], device=device)}
    assert torch.allclose(reversed_trajectory_cycle_loss(paths), torch.zeros(2, device=device))
    paths["path_xy_back"] = fwd  # same order: not time-reversed, so the loss is positive
    assert (reversed_trajectory_cycle_loss(paths) > 0).all()


def test_joint_codec_shared_space_alignment_losses_and_gradients(device):
    from icml26.diffusion_bridge.latent import JointCodec, info_nce, latent_mmd
    codec = JointCodec(2, 16, torch.Generator().manual_seed(0)).to(device)
    x, y = torch.rand(8, 64, device=device) * 2 - 1, torch.rand(8, 16, device=device) * 2 - 1
    zx, zy = codec.encode_x(x), codec.encode_y(y)
    assert zx.shape == zy.shape == (2, 8, 16)
    assert torch.allclose(zx.norm(dim=-1), torch.full((2, 8), 4.0, device=device), atol=1e-5)  # radius sqrt(d)
    assert codec.decode_x(zx).shape == (2, 8, 64) and codec.decode_y(zy).shape == (2, 8, 16)
    # InfoNCE is low for aligned pairs, high for shuffled ones; MMD is 0 for identical batches
    assert (info_nce(zx, zx) < info_nce(zx, zx.flip(1))).all()
    assert torch.allclose(latent_mmd(zx, zx), torch.zeros(2, device=device), atol=1e-6)
    (info_nce(zx, zy).sum() + latent_mmd(zx, zy).sum()).backward()
    assert codec.enc_x.weights[0].grad.abs().sum() > 0 and codec.enc_y.weights[0].grad.abs().sum() > 0
    with pytest.raises(ValueError, match="pairs"):
        info_nce(zx, zy[:, :4])
