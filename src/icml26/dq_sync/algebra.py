"""Batched quaternion, dual-number and dual-quaternion algebra in torch.

Storage conventions (used by the whole chapter):

* a quaternion is a tensor `(..., 4)` ordered `(w, x, y, z)`;
* a dual number is a tensor `(..., 2)` holding `[standard, dual]`;
* a dual quaternion (DQ) `q = q_s + eps q_d` is a tensor `(..., 2, 4)` holding
  `[q_s; q_d]`, with `eps**2 = 0`;
* a pose `T = (R, t)` in SE(3) maps a point `p` to `R p + t`; it corresponds to the unit
  dual quaternion (UDQ) `q_s = quat(R)`, `q_d = 0.5 * (0, t) * q_s` (paper Sec. 2, the
  standard embedding also used by Hadi, Bendory & Sharon 2024), so that composition of
  poses is the DQ product and the inverse of a UDQ is its conjugate.

Every function works on arbitrary leading batch dimensions and on any device/dtype.
"""

from __future__ import annotations

import torch

Tensor = torch.Tensor

_EPS = 1e-12


def _check_last(x: Tensor, shape: tuple[int, ...], name: str) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if tuple(x.shape[-len(shape):]) != shape or x.dim() < len(shape):
        raise ValueError(f"{name} must have shape (..., {', '.join(map(str, shape))}), got {tuple(x.shape)}")


# --------------------------------------------------------------------------- quaternions
_L_INDEX = torch.tensor([[0, 1, 2, 3], [1, 0, 3, 2], [2, 3, 0, 1], [3, 2, 1, 0]])
_L_SIGN = torch.tensor([[1.0, -1.0, -1.0, -1.0], [1.0, 1.0, -1.0, 1.0], [1.0, 1.0, 1.0, -1.0], [1.0, -1.0, 1.0, 1.0]])


def quat_left_matrix(q: Tensor) -> Tensor:
    """The left-multiplication matrix L(q), so that `q * p = L(q) @ p`
    (Hamilton product).

    L(q) = [[w,-x,-y,-z],[x,w,-z,y],[y,z,w,-x],[z,-y,x,w]];
    q: (..., 4) -> (..., 4, 4).
    """
    _check_last(q, (4,), "q")
    # (..., 4, 4)
    return q[..., _L_INDEX.to(q.device)] * _L_SIGN.to(q.device, q.dtype)


def quat_mul(p: Tensor, q: Tensor) -> Tensor:
    """Hamilton product `p * q = L(p) q` of quaternions (..., 4), broadcasting over leading dims."""
    _check_last(q, (4,), "q")
    return (quat_left_matrix(p) @ q[..., None])[..., 0]


def quat_conj(q: Tensor) -> Tensor:
    """Quaternion conjugate `(w, -x, -y, -z)`."""
    _check_last(q, (4,), "q")
    return q * q.new_tensor([1.0, -1.0, -1.0, -1.0])


def quat_to_rotmat(q: Tensor) -> Tensor:
    """Rotation matrix (..., 3, 3) of a quaternion (..., 4); q is normalised first."""
    _check_last(q, (4,), "q")
    q = q / q.norm(dim=-1, keepdim=True).clamp_min(_EPS)
    w, x, y, z = q.unbind(-1)
    return torch.stack(
        [
            torch.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            torch.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            torch.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )


def rotmat_to_quat(R: Tensor) -> Tensor:
    """Unit quaternion (..., 4) with w >= 0 of a rotation matrix (..., 3, 3).

    Shepperd's method: of the four algebraically equivalent formulas, each entry uses the
    one with the largest pivot, so it is stable for every rotation angle.
    """
    _check_last(R, (3, 3), "R")
    m00, m01, m02 = R[..., 0, 0], R[..., 0, 1], R[..., 0, 2]
    m10, m11, m12 = R[..., 1, 0], R[..., 1, 1], R[..., 1, 2]
    m20, m21, m22 = R[..., 2, 0], R[..., 2, 1], R[..., 2, 2]
    pivots = torch.stack(
        [1 + m00 + m11 + m22, 1 + m00 - m11 - m22, 1 - m00 + m11 - m22, 1 - m00 - m11 + m22], -1
    )  # (..., 4)
    r = 0.5 * pivots.clamp_min(_EPS).sqrt()  # the pivot component of each candidate
    cand = torch.stack(
        [
            torch.stack([r[..., 0], (m21 - m12) / (4 * r[..., 0]), (m02 - m20) / (4 * r[..., 0]), (m10 - m01) / (4 * r[..., 0])], -1),
            torch.stack([(m21 - m12) / (4 * r[..., 1]), r[..., 1], (m01 + m10) / (4 * r[..., 1]), (m02 + m20) / (4 * r[..., 1])], -1),
            torch.stack([(m02 - m20) / (4 * r[..., 2]), (m01 + m10) / (4 * r[..., 2]), r[..., 2], (m12 + m21) / (4 * r[..., 2])], -1),
            torch.stack([(m10 - m01) / (4 * r[..., 3]), (m02 + m20) / (4 * r[..., 3]), (m12 + m21) / (4 * r[..., 3]), r[..., 3]], -1),
        ],
        -2,
    )  # (..., 4 candidates, 4)
    best = pivots.argmax(-1)  # (...)
    q = torch.take_along_dim(cand, best[..., None, None].expand(*best.shape, 1, 4), dim=-2)[..., 0, :]
    q = q / q.norm(dim=-1, keepdim=True)
    return torch.where(q[..., :1] < 0, -q, q)


def quat_exp(v: Tensor) -> Tensor:
    """Unit quaternion of the rotation vector v (..., 3): angle |v| about axis v/|v|."""
    _check_last(v, (3,), "v")
    theta = v.norm(dim=-1, keepdim=True)
    # sin(theta/2)/theta = 0.5 * sinc(theta / (2 pi)) with torch's normalised sinc; smooth at 0.
    scale = 0.5 * torch.sinc(theta / (2 * torch.pi))
    return torch.cat([torch.cos(theta / 2), scale * v], -1)


def rotation_angle(R: Tensor) -> Tensor:
    """Geodesic angle (radians) of rotation matrices (..., 3, 3), stable near 0 and pi."""
    _check_last(R, (3, 3), "R")
    q = rotmat_to_quat(R)
    return 2 * torch.atan2(q[..., 1:].norm(dim=-1), q[..., 0].abs())


def project_so3(M: Tensor) -> Tensor:
    """Nearest rotation (Frobenius) to each 3x3 matrix: U diag(1,1,det(UV^T)) V^T."""
    _check_last(M, (3, 3), "M")
    U, _, Vh = torch.linalg.svd(M)
    det = torch.det(U @ Vh)
    D = torch.ones_like(M[..., 0])  # (..., 3)
    D = torch.cat([D[..., :2], det[..., None]], -1)
    return (U * D[..., None, :]) @ Vh


def random_unit_quaternion(shape: tuple[int, ...], generator: torch.Generator | None = None,
                           dtype=torch.float64) -> Tensor:
    """Uniform random rotations as unit quaternions (*shape, 4) (normalised Gaussians), on CPU."""
    q = torch.randn(*shape, 4, generator=generator, dtype=dtype)
    return q / q.norm(dim=-1, keepdim=True)


# --------------------------------------------------------------------------- dual numbers
def dual_mul(a: Tensor, b: Tensor) -> Tensor:
    """Product of dual numbers (..., 2): (a_s + eps a_d)(b_s + eps b_d) = a_s b_s + eps(a_s b_d + a_d b_s)."""
    _check_last(a, (2,), "a")
    _check_last(b, (2,), "b")
    return torch.stack([a[..., 0] * b[..., 0], a[..., 0] * b[..., 1] + a[..., 1] * b[..., 0]], -1)


def dual_div(u: Tensor, a: Tensor) -> Tensor:
    """Divide a dual object u (..., 2, k) by a dual number a (..., 2) with a_s != 0.

    (u_s + eps u_d) / (a_s + eps a_d) = u_s / a_s + eps (u_d / a_s - a_d u_s / a_s^2).
    """
    _check_last(a, (2,), "a")
    if u.dim() < 2 or u.shape[-2] != 2:
        raise ValueError(f"u must have shape (..., 2, k), got {tuple(u.shape)}")
    a_s, a_d = a[..., 0:1], a[..., 1:2]  # (..., 1) each, broadcast over k
    if bool((a_s.abs() < _EPS).any()):
        raise ZeroDivisionError("dual division by a dual number with zero standard part")
    u_s, u_d = u[..., 0, :], u[..., 1, :]
    return torch.stack([u_s / a_s, u_d / a_s - a_d * u_s / a_s**2], -2)


# --------------------------------------------------------------------------- dual quaternions
def dq_mul(p: Tensor, q: Tensor) -> Tensor:
    """DQ product (..., 2, 4): p q = p_s q_s + eps (p_s q_d + p_d q_s)."""
    _check_last(p, (2, 4), "p")
    _check_last(q, (2, 4), "q")
    Ls = quat_left_matrix(p[..., 0, :])  # (..., 4, 4)
    both = Ls @ q.transpose(-1, -2)  # (..., 4, 2) = [p_s q_s, p_s q_d]
    dual = both[..., 1] + (
        quat_left_matrix(p[..., 1, :]) @ q[..., 0, :, None]
    )[..., 0]
    return torch.stack([both[..., 0], dual], -2)


def dq_conj(q: Tensor) -> Tensor:
    """DQ conjugate q^* = q_s^* + eps q_d^* (the inverse of a unit DQ)."""
    _check_last(q, (2, 4), "q")
    return q * q.new_tensor([1.0, -1.0, -1.0, -1.0])


def dq_identity(*shape: int, dtype=torch.float64, device=None) -> Tensor:
    """The unit DQ 1 + eps 0, shape (*shape, 2, 4)."""
    one = torch.zeros(*shape, 2, 4, dtype=dtype, device=device)
    one[..., 0, 0] = 1.0
    return one


def dq_norm(q: Tensor) -> Tensor:
    """Dual-number magnitude |q| = ||q_s|| + eps <q_s, q_d> / ||q_s|| of DQs (..., 2, 4) -> (..., 2)."""
    _check_last(q, (2, 4), "q")
    ns = q[..., 0, :].norm(dim=-1)
    nd = (q[..., 0, :] * q[..., 1, :]).sum(-1) / ns.clamp_min(_EPS)
    return torch.stack([ns, nd], -1)


def dq_vector_norm(x: Tensor) -> Tensor:
    """Dual-number 2-norm of a DQ vector x (n, 2, 4) -> (2,): ||x_s|| + eps <x_s, x_d>/||x_s||.

    Inner products are taken on R^{4n}; this is the normalisation of the DQ power method
    (Cui & Qi 2024, used in the paper's spectral initializer).
    """
    _check_last(x, (2, 4), "x")
    xs, xd = x[..., 0, :], x[..., 1, :]
    ns = xs.norm()
    if float(ns) < _EPS:
        raise ZeroDivisionError("DQ vector has zero standard part; its dual norm is undefined")
    return torch.stack([ns, (xs * xd).sum() / ns])


def project_udq(q: Tensor) -> Tensor:
    """Entrywise projection onto unit dual quaternions:
    P(q) = s + eps (d - s <s, d>).

    s = q_s/||q_s||, d = q_d/||q_s||. This is q divided by its dual magnitude
    |q|, i.e. the normalisation of Cui & Qi (2024) that the paper uses for
    rounding and for the DQGPM step; the result satisfies ||s|| = 1 and
    <s, d> = 0 exactly. A zero standard part raises.
    """
    _check_last(q, (2, 4), "q")
    ns = q[..., 0, :].norm(dim=-1, keepdim=True)  # (..., 1)
    if bool((ns < _EPS).any()):
        raise ZeroDivisionError("cannot project a DQ with zero standard part onto UDQ")
    s = q[..., 0, :] / ns
    d = q[..., 1, :] / ns
    d = d - s * (s * d).sum(-1, keepdim=True)
    return torch.stack([s, d], -2)


def is_udq(q: Tensor, atol: float = 1e-8) -> Tensor:
    """Boolean (...): ||q_s|| = 1 and <q_s, q_d> = 0 up to atol."""
    _check_last(q, (2, 4), "q")
    ns = q[..., 0, :].norm(dim=-1)
    return ((ns - 1).abs() <= atol) & ((q[..., 0, :] * q[..., 1, :]).sum(-1).abs() <= atol)


# --------------------------------------------------------------------------- conversions
def dq_from_quat_translation(qs: Tensor, t: Tensor) -> Tensor:
    """UDQ (..., 2, 4) of a rotation quaternion qs (..., 4) and translation t (..., 3).

    q_d = 0.5 * (0, t) * q_s (translation applied after the rotation).
    """
    _check_last(qs, (4,), "qs")
    _check_last(t, (3,), "t")
    t_quat = torch.cat([torch.zeros_like(t[..., :1]), t], -1)  # (..., 4) pure quaternion
    return torch.stack([qs, 0.5 * quat_mul(t_quat, qs)], -2)


def dq_from_rt(R: Tensor, t: Tensor) -> Tensor:
    """UDQ (..., 2, 4) of the pose p -> R p + t; R (..., 3, 3), t (..., 3)."""
    return dq_from_quat_translation(rotmat_to_quat(R), t)


def dq_to_rt(q: Tensor) -> tuple[Tensor, Tensor]:
    """(R (..., 3, 3), t (..., 3)) of UDQs (..., 2, 4): t = vec(2 q_d q_s^*)."""
    _check_last(q, (2, 4), "q")
    R = quat_to_rotmat(q[..., 0, :])
    t = 2 * quat_mul(q[..., 1, :], quat_conj(q[..., 0, :]))[..., 1:]
    return R, t


def dq_to_matrix(q: Tensor) -> Tensor:
    """Homogeneous 4x4 matrices (..., 4, 4) of UDQs (..., 2, 4)."""
    R, t = dq_to_rt(q)
    T = torch.zeros(*q.shape[:-2], 4, 4, dtype=q.dtype, device=q.device)
    T[..., :3, :3] = R
    T[..., :3, 3] = t
    T[..., 3, 3] = 1.0
    return T


def dq_from_matrix(T: Tensor) -> Tensor:
    """UDQs (..., 2, 4) of homogeneous matrices (..., 4, 4) (bottom row must be 0 0 0 1)."""
    _check_last(T, (4, 4), "T")
    bottom = T[..., 3, :]
    target = bottom.new_tensor([0.0, 0.0, 0.0, 1.0])
    if not torch.allclose(bottom, target.expand_as(bottom), atol=1e-6):
        raise ValueError("not a homogeneous rigid transform: the bottom row must be [0, 0, 0, 1]")
    return dq_from_rt(T[..., :3, :3], T[..., :3, 3])


def dq_apply(q: Tensor, points: Tensor) -> Tensor:
    """Apply the pose of a UDQ q (..., 2, 4) to points (..., P, 3): R p + t."""
    R, t = dq_to_rt(q)
    return points @ R.transpose(-1, -2) + t[..., None, :]


def random_udq(n: int, trans_scale: float = 1.0, generator: torch.Generator | None = None,
               dtype=torch.float64) -> Tensor:
    """n random poses as UDQs (n, 2, 4): uniform rotations, translations N(0, trans_scale^2 I)."""
    if n < 1:
        raise ValueError(f"n must be positive, got {n}")
    qs = random_unit_quaternion((n,), generator, dtype)
    t = trans_scale * torch.randn(n, 3, generator=generator, dtype=dtype)
    return dq_from_quat_translation(qs, t)
