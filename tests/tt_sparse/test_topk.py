import pytest
import torch

from icml26.tt_sparse import hard_topk, soft_topk, soft_topk_st, straight_through_weights, temperature_schedule


def test_soft_topk_sums_to_k_and_is_a_relaxation(device):
    s = torch.randn(5, 40, generator=torch.Generator().manual_seed(0)).to(device)
    p = soft_topk(s, 4, 0.5)
    assert torch.allclose(p.sum(-1), torch.full((5,), 4.0, device=device), atol=1e-5)
    assert ((p > 0) & (p < 1)).all()
    # at a tiny temperature the relaxation approaches the hard mask
    assert torch.allclose(soft_topk(s, 4, 1e-6), hard_topk(s, 4), atol=1e-3)


def test_straight_through_forward_is_exactly_k_hot_and_gradient_nonzero(device):
    s = torch.randn(6, 30, generator=torch.Generator().manual_seed(1)).to(device).requires_grad_()
    m = soft_topk_st(s, 3, 0.1)
    assert set(m.detach().unique().tolist()) <= {0.0, 1.0}
    assert torch.equal(m.detach().sum(-1), torch.full((6,), 3.0, device=device))
    (m * torch.randn(6, 30, generator=torch.Generator().manual_seed(2)).to(device)).sum().backward()
    assert s.grad.abs().sum() > 0
    # unselected inputs receive gradient too (the backward is the soft mask)
    assert (s.grad[m.detach() == 0].abs() > 0).any()


def test_soft_topk_jacobian_matches_finite_differences(device):
    s = torch.randn(2, 7, dtype=torch.float64, generator=torch.Generator().manual_seed(3)).to(device).requires_grad_()
    assert torch.autograd.gradcheck(lambda x: soft_topk(x, 2, 0.7), (s,), eps=1e-6, atol=1e-5)


def test_straight_through_weights_gradients(device):
    w = torch.randn(4, 20, generator=torch.Generator().manual_seed(4)).to(device).requires_grad_()
    s = torch.randn(4, 20, generator=torch.Generator().manual_seed(5)).to(device).requires_grad_()
    w_eff, hard = straight_through_weights(w, s, 3, 0.1)
    assert torch.equal(w_eff.detach(), w.detach() * hard)  # exactly sparse forward
    w_eff.sum().backward()
    assert (w.grad[hard == 0].abs() > 0).any() and s.grad.abs().sum() > 0


def test_temperature_schedule_endpoints():
    assert temperature_schedule(0, 10, 0.1, 0.01) == pytest.approx(0.1)
    assert temperature_schedule(9, 10, 0.1, 0.01) == pytest.approx(0.01)


@pytest.mark.parametrize("k,tau,bad", [(11, 0.1, False), (0, 0.1, False), (2, 0.0, False), (2, 0.1, True)])
def test_soft_topk_rejects_bad_input(k, tau, bad):
    s = torch.randn(3, 10)
    if bad:
        s[0, 0] = float("nan")
    with pytest.raises(ValueError):
        soft_topk(s, k, tau)
