"""Instance families drawn from a distribution (Sec. "Experiments": MIS and CFLP), their
HiGHS models, and an independent feasibility check of a returned solution.

Every model is written as a *minimisation* (MIS maximises the total weight of the set, so its
objective is the negated weight), which is the sign convention of the paper's notation (U >= z* >= L).
"""

from __future__ import annotations

from dataclasses import dataclass

import highspy
import networkx as nx
import numpy as np


@dataclass(frozen=True)
class MISInstance:
    """Weighted maximum independent set: max sum_v w_v x_v s.t. x_u + x_v <= 1 on every edge,
    x binary. `weights` None means unit weights (the cardinality version)."""

    n_nodes: int
    edges: np.ndarray  # (E, 2) int
    weights: np.ndarray | None = None  # (n_nodes,) positive

    def __post_init__(self):
        edges = np.asarray(self.edges)
        if not isinstance(self.n_nodes, (int, np.integer)) or self.n_nodes < 1:
            raise ValueError(f"MIS needs a positive integer node count, got {self.n_nodes!r}")
        if edges.ndim != 2 or edges.shape[1] != 2:
            raise ValueError(f"MIS edges must have shape (E, 2), got {edges.shape}")
        if edges.size and (edges.min() < 0 or edges.max() >= self.n_nodes):
            raise ValueError(f"MIS edge endpoints must lie in [0, {self.n_nodes}), got range "
                             f"[{edges.min()}, {edges.max()}]")
        if edges.size and np.any(edges[:, 0] == edges[:, 1]):
            raise ValueError("MIS edges must not be self-loops (the instance would be malformed)")
        if self.weights is not None:
            w = np.asarray(self.weights, float)
            if w.shape != (int(self.n_nodes),):
                raise ValueError(f"MIS weights must have shape ({self.n_nodes},), got {w.shape}")
            if not np.all(np.isfinite(w)) or np.any(w <= 0):
                raise ValueError("MIS weights must be finite and positive")

    @property
    def sense_sign(self) -> float:
        """+1 for a minimisation family, -1 for one whose paper objective is maximised."""
        return -1.0


@dataclass(frozen=True)
class CFLPInstance:
    """Capacitated facility location: open facilities (binary y_j) and serve each customer's
    demand fractionally (x_ij in [0, 1]) within capacities, at minimum fixed + transport cost."""

    demand: np.ndarray          # (C,)
    capacity: np.ndarray        # (F,)
    fixed_cost: np.ndarray      # (F,)
    transport_cost: np.ndarray  # (C, F): cost of serving all of customer i from facility j

    def __post_init__(self):
        d, cap, f, c = (np.asarray(a, float) for a in (self.demand, self.capacity, self.fixed_cost,
                                                         self.transport_cost))
        if d.ndim != 1 or cap.ndim != 1 or f.shape != cap.shape:
            raise ValueError(f"CFLP needs demand (C,), capacity (F,), fixed_cost (F,); got "
                             f"{d.shape}, {cap.shape}, {f.shape}")
        if c.shape != (d.size, cap.size):
            raise ValueError(f"CFLP transport_cost must have shape {(d.size, cap.size)}, got {c.shape}")
        for name, a in (("demand", d), ("capacity", cap), ("fixed_cost", f), ("transport_cost", c)):
            if not np.all(np.isfinite(a)) or np.any(a < 0):
                raise ValueError(f"CFLP {name} must be finite and non-negative")
        if cap.sum() < d.sum():
            raise ValueError(f"CFLP is infeasible: total capacity {cap.sum():.1f} < total demand {d.sum():.1f}")

    @property
    def sense_sign(self) -> float:
        return 1.0


MIS_GRAPHS = ("ba", "er")


def generate_mis(seed: int, n_range: tuple[int, int] = (140, 160), m: int = 4,
                 max_weight: int = 100, graph: str = "ba", p: float = 0.1) -> MISInstance:
    """A random graph with n ~ U{n_range} nodes and integer node weights w_v ~ U{1..max_weight}
    (max_weight = 1: the unweighted problem). `graph` "ba": Barabasi-Albert with attachment m
    (the Gasse et al. / Ecole generator); "er": Erdos-Renyi G(n, p), the graph model of the
    Distributional MIPLIB MIS family that the paper uses (Sec. "Experiments")."""
    lo, hi = n_range
    if graph not in MIS_GRAPHS:
        raise ValueError(f"unknown MIS graph model {graph!r}; valid: {', '.join(MIS_GRAPHS)}")
    if graph == "ba" and not 1 <= m < lo <= hi:
        raise ValueError(f"need 1 <= m < n_min <= n_max, got m={m}, n_range={n_range}")
    if graph == "er" and not (0.0 < p < 1.0 and 1 <= lo <= hi):
        raise ValueError(f"need 0 < p < 1 and 1 <= n_min <= n_max, got p={p}, n_range={n_range}")
    if max_weight < 1:
        raise ValueError(f"max_weight must be >= 1, got {max_weight}")
    rng = np.random.default_rng(seed)
    n = int(rng.integers(lo, hi + 1))
    if graph == "ba":
        graph = nx.barabasi_albert_graph(n, m, seed=int(rng.integers(2**31)))
    else:
        graph = nx.gnp_random_graph(n, p, seed=int(rng.integers(2**31)))
    weights = rng.integers(1, max_weight + 1, n).astype(float)
    return MISInstance(n, np.array(graph.edges(), dtype=np.int64).reshape(-1, 2), weights)


def generate_cflp(seed: int, n_customers: int = 35, n_facilities: int = 15, ratio: float = 5.0) -> CFLPInstance:
    """The Cornuejols et al. (1991) generator as used by Gasse et al. (2019): random points in the
    unit square, demands U{5..35}, capacities U{10..160} rescaled to `ratio` x total demand,
    fixed costs growing with sqrt(capacity), transport cost = 10 x distance x demand."""
    if n_customers < 1 or n_facilities < 1 or ratio < 1:
        raise ValueError("CFLP needs >= 1 customer and facility and a capacity ratio >= 1")
    rng = np.random.default_rng(seed)
    cust, fac = rng.random((n_customers, 2)), rng.random((n_facilities, 2))
    demand = rng.integers(5, 36, n_customers).astype(float)
    capacity = rng.integers(10, 161, n_facilities).astype(float)
    fixed = rng.integers(100, 111, n_facilities) * np.sqrt(capacity) + rng.integers(0, 91, n_facilities)
    capacity = capacity * ratio * demand.sum() / capacity.sum()
    dist = np.linalg.norm(cust[:, None, :] - fac[None, :, :], axis=-1)  # (C, F)
    return CFLPInstance(demand, capacity, fixed.astype(float), 10.0 * dist * demand[:, None])


FAMILIES = {"mis": generate_mis, "cflp": generate_cflp}


def generate(family: str, seed: int, config=None):
    """One instance of `family` ('mis' or 'cflp') with the sizes of `config` (defaults if None)."""
    if family == "mis":
        if config is None:
            return generate_mis(seed)
        return generate_mis(seed, tuple(config.mis_nodes), config.mis_m, config.mis_max_weight,
                            config.mis_graph, config.mis_p)
    if family == "cflp":
        if config is None:
            return generate_cflp(seed)
        return generate_cflp(seed, config.cflp_customers, config.cflp_facilities, config.cflp_ratio)
    raise ValueError(f"unknown family {family!r}; valid families: {', '.join(FAMILIES)}")


def _binary(h: highspy.Highs, start: int, count: int) -> None:
    h.changeColsIntegrality(count, np.arange(start, start + count, dtype=np.int32),
                            np.full(count, highspy.HighsVarType.kInteger))


def build_model(instance, h: highspy.Highs) -> None:
    """Load `instance` into the HiGHS object `h` as a minimisation MIP."""
    inf = highspy.kHighsInf
    if isinstance(instance, MISInstance):
        n, e = instance.n_nodes, np.asarray(instance.edges, dtype=np.int32)
        h.addVars(n, np.zeros(n), np.ones(n))
        w = np.ones(n) if instance.weights is None else np.asarray(instance.weights, float)
        h.changeColsCost(n, np.arange(n, dtype=np.int32), -w)
        _binary(h, 0, n)
        k = len(e)
        if k:
            h.addRows(k, np.full(k, -inf), np.ones(k), 2 * k, np.arange(0, 2 * k, 2, dtype=np.int32),
                      e.reshape(-1), np.ones(2 * k))  # (E, 2) -> (2E,): row r holds e[r]
        return
    if isinstance(instance, CFLPInstance):
        d, cap = np.asarray(instance.demand, float), np.asarray(instance.capacity, float)
        c_, f_ = d.size, cap.size
        nx_ = c_ * f_  # x_ij at column i * F + j, then y_j at column nx_ + j
        h.addVars(nx_ + f_, np.zeros(nx_ + f_), np.ones(nx_ + f_))
        cost = np.concatenate([np.asarray(instance.transport_cost).reshape(-1), instance.fixed_cost])
        h.changeColsCost(nx_ + f_, np.arange(nx_ + f_, dtype=np.int32), cost)
        _binary(h, nx_, f_)
        xid = np.arange(nx_, dtype=np.int32).reshape(c_, f_)  # (C, F) column ids
        # demand rows: sum_j x_ij = 1
        h.addRows(c_, np.ones(c_), np.ones(c_), nx_, np.arange(0, nx_, f_, dtype=np.int32),
                  xid.reshape(-1), np.ones(nx_))
        # capacity rows: sum_i d_i x_ij - cap_j y_j <= 0
        idx = np.concatenate([xid.T, (nx_ + np.arange(f_, dtype=np.int32))[:, None]], axis=1)  # (F, C+1)
        val = np.concatenate([np.tile(d, (f_, 1)), -cap[:, None]], axis=1)                     # (F, C+1)
        h.addRows(f_, np.full(f_, -inf), np.zeros(f_), f_ * (c_ + 1),
                  np.arange(0, f_ * (c_ + 1), c_ + 1, dtype=np.int32), idx.reshape(-1), val.reshape(-1))
        # total capacity covers total demand: sum_j cap_j y_j >= sum_i d_i
        h.addRow(d.sum(), inf, f_, nx_ + np.arange(f_, dtype=np.int32), cap)
        # strengthening: x_ij <= y_j
        yid = np.broadcast_to(nx_ + np.arange(f_, dtype=np.int32), (c_, f_))
        pair = np.stack([xid.reshape(-1), yid.reshape(-1)], axis=1)  # (C*F, 2)
        h.addRows(nx_, np.full(nx_, -inf), np.zeros(nx_), 2 * nx_, np.arange(0, 2 * nx_, 2, dtype=np.int32),
                  pair.reshape(-1), np.tile([1.0, -1.0], nx_))
        return
    raise TypeError(f"expected an MISInstance or CFLPInstance, got {type(instance).__name__}")


def objective(instance, x: np.ndarray) -> float:
    """The minimisation objective of the solution vector `x` (HiGHS column order)."""
    x = np.asarray(x, float)
    if isinstance(instance, MISInstance):
        w = np.ones(instance.n_nodes) if instance.weights is None else np.asarray(instance.weights, float)
        return -float(w @ x[: instance.n_nodes])
    c_, f_ = np.asarray(instance.transport_cost).shape
    return float(np.asarray(instance.transport_cost).reshape(-1) @ x[: c_ * f_] + instance.fixed_cost @ x[c_ * f_:])


def is_feasible(instance, x: np.ndarray, tol: float = 1e-6) -> bool:
    """Check `x` against the instance's constraints directly (independent of the solver)."""
    x = np.asarray(x, float)
    if isinstance(instance, MISInstance):
        if x.shape != (instance.n_nodes,):
            return False
        integral = np.all(np.abs(x - np.round(x)) <= tol) and np.all((x > -tol) & (x < 1 + tol))
        e = np.asarray(instance.edges)
        return bool(integral and (e.size == 0 or np.all(x[e[:, 0]] + x[e[:, 1]] <= 1 + tol)))
    c_, f_ = np.asarray(instance.transport_cost).shape
    if x.shape != (c_ * f_ + f_,):
        return False
    xs, y = x[: c_ * f_].reshape(c_, f_), x[c_ * f_:]  # (C*F,) -> (C, F)
    ok = np.all(xs > -tol) and np.all(xs <= y[None, :] + tol)
    ok &= np.all(np.abs(xs.sum(1) - 1) <= 1e-5) and np.all(np.abs(y - np.round(y)) <= tol)
    ok &= np.all(instance.demand @ xs <= instance.capacity * y + 1e-4 * instance.capacity.max())
    return bool(ok)
