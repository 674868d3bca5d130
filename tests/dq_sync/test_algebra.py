"""Dual quaternion algebra: identities, UDQ closure and round trips."""

import math

import pytest
import torch

from icml26.dq_sync.algebra import (
    dq_apply, dq_conj, dq_from_matrix, dq_from_rt, dq_identity, dq_mul, dq_norm, dq_to_matrix, dq_to_rt,
    dq_vector_norm, dual_div, dual_mul, is_udq, project_udq, quat_conj, quat_exp, quat_left_matrix, quat_mul,
    quat_to_rotmat, random_udq, rotation_angle, rotmat_to_quat,
)

G = torch.Generator().manual_seed(0)


def rand_dq(*shape, device="cpu"):
    return torch.randn(*shape, 2, 4, generator=G, dtype=torch.float64).to(device)


def test_quat_mul_matches_left_matrix_and_known_products():
    i = torch.tensor([0.0, 1, 0, 0], dtype=torch.float64)
    j = torch.tensor([0.0, 0, 1, 0], dtype=torch.float64)
    k = torch.tensor([0.0, 0, 0, 1], dtype=torch.float64)
    assert torch.allclose(quat_mul(i, j), k)  # Hamilton: ij = k
    assert torch.allclose(quat_mul(j, i), -k)
    p, q = torch.randn(5, 4, generator=G, dtype=torch.float64), torch.randn(5, 4, generator=G, dtype=torch.float64)
    assert torch.allclose(quat_mul(p, q), (quat_left_matrix(p) @ q[..., None])[..., 0])


def test_dq_product_is_associative_and_conjugate_reverses_order(device):
    a, b, c = rand_dq(7, device=device), rand_dq(7, device=device), rand_dq(7, device=device)
    assert torch.allclose(dq_mul(dq_mul(a, b), c), dq_mul(a, dq_mul(b, c)), atol=1e-12)
    assert torch.allclose(dq_conj(dq_mul(a, b)), dq_mul(dq_conj(b), dq_conj(a)), atol=1e-12)


def test_dual_norm_is_multiplicative(device):
    a, b = rand_dq(9, device=device), rand_dq(9, device=device)
    assert torch.allclose(dq_norm(dq_mul(a, b)), dual_mul(dq_norm(a), dq_norm(b)), atol=1e-10)


def test_udq_closure_inverse_and_projection(device):
    x, y = random_udq(20, 3.0, G).to(device), random_udq(20, 3.0, G).to(device)
    assert bool(is_udq(x).all()) and bool(is_udq(dq_mul(x, y)).all())
    assert torch.allclose(dq_mul(x, dq_conj(x)), dq_identity(20, device=device), atol=1e-12)  # inverse = conjugate
    p = project_udq(rand_dq(50, device=device))
    assert bool(is_udq(p, 1e-12).all())
    assert torch.allclose(project_udq(x), x, atol=1e-12)  # P is the identity on UDQ
    # P(q) = q / |q| with dual division; and P(a q) = P(q) for a positive dual scalar a
    q = rand_dq(6, device=device)
    assert torch.allclose(project_udq(q), dual_div(q, dq_norm(q)), atol=1e-12)
    scale = torch.tensor([2.5, -0.7], dtype=torch.float64, device=device)
    assert torch.allclose(project_udq(torch.stack([scale[0] * q[:, 0], scale[0] * q[:, 1] + scale[1] * q[:, 0]], 1)),
                          project_udq(q), atol=1e-12)


def test_dual_vector_norm_normalises():
    v = rand_dq(10)
    u = dual_div(v, dq_vector_norm(v))
    nrm = dq_vector_norm(u)
    assert torch.allclose(nrm, torch.tensor([1.0, 0.0], dtype=torch.float64), atol=1e-12)


def test_round_trips_rt_dq_matrix():
    x = random_udq(30, 5.0, G)
    R, t = dq_to_rt(x)
    assert torch.allclose(R @ R.transpose(-1, -2), torch.eye(3, dtype=torch.float64).expand(30, 3, 3), atol=1e-12)
    assert torch.allclose(torch.det(R), torch.ones(30, dtype=torch.float64))
    back = dq_from_rt(R, t)
    sign = torch.sign((back[:, 0] * x[:, 0]).sum(-1))[:, None, None]  # q and -q: same pose
    assert torch.allclose(back * sign, x, atol=1e-10)
    T = dq_to_matrix(x)
    assert torch.allclose(dq_to_matrix(dq_from_matrix(T)), T, atol=1e-10)


def test_composition_matches_matrix_product_and_point_action():
    a, b = random_udq(8, 2.0, G), random_udq(8, 2.0, G)
    assert torch.allclose(dq_to_matrix(dq_mul(a, b)), dq_to_matrix(a) @ dq_to_matrix(b), atol=1e-10)
    pts = torch.randn(8, 5, 3, generator=G, dtype=torch.float64)
    R, t = dq_to_rt(a)
    assert torch.allclose(dq_apply(a, pts), pts @ R.transpose(-1, -2) + t[:, None], atol=1e-12)


def test_rotmat_quat_stable_for_all_angles():
    axis = torch.nn.functional.normalize(torch.randn(6, 3, generator=G, dtype=torch.float64), dim=-1)
    angles = torch.tensor([0.0, 1e-8, 0.5, 2.0, math.pi - 1e-9, math.pi], dtype=torch.float64)
    q = quat_exp(axis * angles[:, None])
    R = quat_to_rotmat(q)
    q2 = rotmat_to_quat(R)
    assert torch.allclose(quat_to_rotmat(q2), R, atol=1e-10)
    assert torch.allclose(rotation_angle(R), angles, atol=1e-7)
    assert torch.allclose(quat_conj(quat_conj(q)), q)


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="shape"):
        dq_mul(torch.zeros(3, 4), torch.zeros(3, 2, 4))
    with pytest.raises(ZeroDivisionError):
        project_udq(torch.zeros(2, 2, 4, dtype=torch.float64))
    with pytest.raises(ValueError, match="bottom row"):
        dq_from_matrix(torch.ones(4, 4, dtype=torch.float64))
    with pytest.raises(TypeError):
        quat_mul([1, 0, 0, 0], torch.zeros(4))
