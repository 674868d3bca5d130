"""Unit tests of the Bregman math and the W2S losses (they can fail)."""

import pytest
import torch

from icml26.w2sg_bregman import (bias_variance, bregman_divergence, dual_mean, misfit_decomposition,
                                 reverse_ce, reverse_ce_grad, teacher_probs, w2s_loss)
from icml26.w2sg_bregman.losses import LOSS_NAMES, smooth_labels



@pytest.fixture(autouse=True)
def _float64():
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)


def _random_simplex(gen, *shape, device="cpu"):
    """Drawn on the CPU (the same numbers on every device), then moved to the test's device."""
    return torch.softmax(2 * torch.randn(*shape, generator=gen), dim=-1).to(device)


def _random(gen, loss, *shape, device="cpu"):
    return _random_simplex(gen, *shape, device=device) if loss == "kl" else torch.randn(*shape, generator=gen).to(device)


@pytest.mark.parametrize("loss", ["squared", "kl"])
def test_bias_variance_identity(loss, device):
    gen = torch.Generator().manual_seed(0)
    g, teacher = _random(gen, loss, 50, 4, device=device), _random(gen, loss, 50, 30, 4, device=device)
    out = bias_variance(g, teacher, loss)
    assert out["residual"].abs().max() < 1e-6
    assert (out["bias"] >= 0).all() and (out["variance"] >= 0).all()


@pytest.mark.parametrize("loss", ["squared", "kl"])
def test_three_point_identity_and_posterior_mean(loss, device):
    gen = torch.Generator().manual_seed(1)
    g, student, teacher = _random(gen, loss, 40, 5, device=device), _random(gen, loss, 40, 5, device=device), _random(gen, loss, 40, 25, 5, device=device)
    out = misfit_decomposition(g, student, teacher, loss)
    assert out["residual"].abs().max() < 1e-6
    # a student equal to the posterior mean: the cross term vanishes, gain == misfit == variance
    at_mean = misfit_decomposition(g, dual_mean(teacher, loss, dim=1), teacher, loss)
    assert at_mean["cross"].abs().max() < 1e-6
    torch.testing.assert_close(at_mean["gain"], at_mean["misfit"], atol=1e-6, rtol=0)
    torch.testing.assert_close(at_mean["misfit"], at_mean["variance"], atol=1e-6, rtol=0)


def test_arithmetic_mean_breaks_kl_identity(device):
    gen = torch.Generator().manual_seed(2)
    g, teacher = _random_simplex(gen, 30, 4, device=device), _random_simplex(gen, 30, 20, 4, device=device)
    arith = teacher.mean(1)
    gap = (bregman_divergence(g[:, None], teacher, "kl").mean(1) - bregman_divergence(g, arith, "kl")
           - bregman_divergence(arith[:, None], teacher, "kl").mean(1))
    assert gap.abs().max() > 1e-3  # only the geometric (dual) mean makes it exact


@pytest.mark.parametrize("loss", ["squared", "kl"])
def test_divergence_nonnegative_and_zero_only_at_equality(loss, device):
    gen = torch.Generator().manual_seed(3)
    a, b = _random(gen, loss, 200, 3, device=device), _random(gen, loss, 200, 3, device=device)
    d = bregman_divergence(a, b, loss)
    assert (d > 0).all()
    assert bregman_divergence(a, a, loss).abs().max() < 1e-12
    assert torch.allclose(bregman_divergence(a, b, "squared"), ((a - b) ** 2).sum(-1))


def test_kl_divergence_matches_torch(device):
    gen = torch.Generator().manual_seed(4)
    p, q = _random_simplex(gen, 10, 6, device=device), _random_simplex(gen, 10, 6, device=device)
    ref = torch.nn.functional.kl_div(q.log(), p, reduction="none").sum(-1)
    torch.testing.assert_close(bregman_divergence(p, q, "kl"), ref)


@pytest.mark.parametrize("eps", [0.0, 1e-4, 0.1])
def test_reverse_ce_gradient_matches_autograd(eps, device):
    gen = torch.Generator().manual_seed(5)
    z = torch.randn(16, 7, generator=gen).to(device).requires_grad_(True)
    p_t = _random_simplex(gen, 16, 7, device=device)
    reverse_ce(z, p_t, eps).sum().backward()
    torch.testing.assert_close(z.grad, reverse_ce_grad(z.detach(), p_t, eps))


def test_reverse_ce_gradient_direction_is_temperature_invariant(device):
    gen = torch.Generator().manual_seed(6)
    z, z_t = torch.randn(8, 5, generator=gen).to(device), 3 * torch.randn(8, 5, generator=gen).to(device)
    g1 = reverse_ce_grad(z, teacher_probs(z_t, 1.0), eps=0.0)
    g4 = reverse_ce_grad(z, teacher_probs(z_t, 4.0), eps=0.0)
    torch.testing.assert_close(g4, g1 / 4)  # rescaled, never turned


def test_reverse_ce_is_misfit_plus_entropy(device):
    gen = torch.Generator().manual_seed(7)
    z, p_t = torch.randn(9, 4, generator=gen).to(device), _random_simplex(gen, 9, 4, device=device)
    p_s = torch.softmax(z, -1)
    entropy = -(p_s * p_s.log()).sum(-1)
    torch.testing.assert_close(reverse_ce(z, p_t, 0.0), bregman_divergence(p_s, p_t, "kl") + entropy)


def test_losses_shapes_and_values(device):
    gen = torch.Generator().manual_seed(8)
    z, p_t = torch.randn(3, 11, 10, generator=gen).to(device), _random_simplex(gen, 3, 11, 10, device=device)
    for name in LOSS_NAMES:
        out = w2s_loss(name, z, p_t, threshold=0.3, step_frac=0.5)
        assert out.shape == (3, 11) and torch.isfinite(out).all()
    torch.testing.assert_close(w2s_loss("sl", z, p_t, beta=0.5),
                               w2s_loss("ce", z, p_t) + 0.5 * w2s_loss("rce", z, p_t))
    # CACE: all-confident -> CE, none-confident -> RCE
    torch.testing.assert_close(w2s_loss("cace", z, p_t, threshold=0.0), w2s_loss("ce", z, p_t))
    torch.testing.assert_close(w2s_loss("cace", z, p_t, threshold=1.1), w2s_loss("rce", z, p_t))
    assert torch.allclose(smooth_labels(p_t, 0.2).sum(-1), torch.ones(3, 11, device=device))


def test_bad_inputs_are_rejected():
    p = torch.tensor([[0.5, 0.5]])
    with pytest.raises(ValueError, match="sum to 1"):
        bregman_divergence(torch.tensor([[0.7, 0.7]]), p, "kl")
    with pytest.raises(ValueError, match="negative"):
        reverse_ce(torch.zeros(1, 2), torch.tensor([[1.5, -0.5]]))
    with pytest.raises(ValueError, match="NaN"):
        reverse_ce(torch.zeros(1, 2), torch.tensor([[float("nan"), 0.5]]))
    with pytest.raises(ValueError, match="unknown Bregman loss"):
        bregman_divergence(p, p, "hinge")
    with pytest.raises(ValueError, match="unknown w2s loss"):
        w2s_loss("mse", torch.zeros(1, 2), p)
    with pytest.raises(ValueError, match="differ in shape"):
        reverse_ce(torch.zeros(1, 3), p)
    with pytest.raises(ValueError, match="do not broadcast"):
        bregman_divergence(torch.zeros(3, 2), torch.zeros(4, 2), "squared")
    with pytest.raises(ValueError, match="expected g"):
        bias_variance(p, p, "kl")
    for bad in (0.0, -1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="temperature"):
            teacher_probs(torch.zeros(1, 3), bad)
    with pytest.raises(TypeError, match="temperature"):
        teacher_probs(torch.zeros(1, 3), "hot")
    with pytest.raises(ValueError, match="eps"):
        reverse_ce(torch.zeros(1, 2), p, eps=1.0)
