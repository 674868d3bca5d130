"""The memory-bounded pieces of Part A compute what the batched versions computed."""

import torch

from icml26.w2sg_bregman.bregman import misfit_decomposition
from icml26.w2sg_bregman.synthetic import seedwise_decomposition, teacher_views


def test_teacher_views_match_one_batched_draw():
    S, L, T, M, d = 3, 2, 5, 8, 4  # L*T*M*d = 320, a multiple of 16
    sig = torch.tensor([0.5, 1.5], dtype=torch.float64)[None, :, None, None]  # (1, L, 1, 1)
    x = torch.randn(S, T, d, dtype=torch.float64)
    gen = torch.Generator().manual_seed(3)
    batched = x[:, None, :, None] + sig[..., None] * torch.randn(S, L, T, M, d, generator=gen, dtype=torch.float64)
    gen = torch.Generator().manual_seed(3)
    per_seed = torch.stack([teacher_views(x[s], sig[0], M, gen) for s in range(S)])
    assert per_seed.shape == (S, L, T, M, d)
    assert torch.equal(per_seed, batched)


def test_seedwise_decomposition_matches_batched():
    S, L, T, M, C = 2, 3, 4, 5, 3
    gen = torch.Generator().manual_seed(0)
    g = torch.softmax(torch.randn(S, T, C, generator=gen, dtype=torch.float64), -1)
    student = torch.softmax(torch.randn(S, L, T, C, generator=gen, dtype=torch.float64), -1)
    teacher = torch.softmax(torch.randn(S, L, T, M, C, generator=gen, dtype=torch.float64), -1)
    per = seedwise_decomposition(g, student, teacher, "kl")
    flat = misfit_decomposition(g[:, None].expand_as(student).reshape(-1, C), student.reshape(-1, C),
                                teacher.reshape(-1, M, C), "kl")
    assert set(per) == set(flat)
    for key, value in flat.items():
        assert per[key].shape == (S, L, T)
        torch.testing.assert_close(per[key], value.reshape(S, L, T), rtol=0, atol=1e-12)
