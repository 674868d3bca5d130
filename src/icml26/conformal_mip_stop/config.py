"""Configuration of the conformal early-stopping chapter: one frozen dataclass, three presets."""

from __future__ import annotations

from dataclasses import dataclass

from icml26.common import select_preset


@dataclass(frozen=True)
class ConformalMIPConfig:
    """Every knob of one run (instances, solver, predictor, calibration, evaluation).

    Instances (Sec. "Experiments"): weighted maximum independent set on random graphs with
    `mis_nodes` nodes (drawn uniformly in the closed range) and integer node weights
    U{1..`mis_max_weight`}; `mis_graph` "ba" (Barabasi-Albert, attachment `mis_m`) or "er"
    (Erdos-Renyi, edge probability `mis_p`, the graph model of Distributional MIPLIB's MIS);
    capacitated facility location with `cflp_customers` x `cflp_facilities` and capacity
    ratio `cflp_ratio` (Cornuejols et al. generator).
    Solver: HiGHS, one thread, presolve off (the paper's Gurobi runs use Presolve 0), the
    recording solve stops at relative gap `record_gap` (its final incumbent is z*).
    Targets: `eps` is the absolute epsilon per family (paper: about 0.1% of a typical optimum).
    Predictor (Sec. "Gap prediction"): LSTM with `hidden` units and `layers` layers, trained by
    Adam on `loss`: "band_l1", the loss the release's training script uses for its configs'
    `rescaled_mse` setting (relative absolute error, gaps within a decade of eps weighted
    `loss_band_weight` times the rest), or "rescaled_mse" (scale `loss_scale`, floor `loss_sigma`).
    Features are normalised by (x - mean) / (`norm_sd_scale` * sd + 1), with U sharing L's
    statistics if `norm_tie_bounds` (both as in the release's trainer).
    Calibration (Sec. "Conformal calibration"): level `alpha`; the held-out pool of
    `n_heldout` instances is re-split `n_resplits` times into `n_cal` calibration instances
    and the rest for testing.
    """

    families: tuple[str, ...] = ("mis", "cflp")
    mis_nodes: tuple[int, int] = (80, 90)
    mis_m: int = 8
    mis_max_weight: int = 100
    mis_graph: str = "ba"
    mis_p: float = 0.1
    cflp_customers: int = 50
    cflp_facilities: int = 25
    cflp_ratio: float = 5.0
    eps: tuple[tuple[str, float], ...] = (("mis", 1.5), ("cflp", 7.0))
    record_gap: float = 1e-4
    n_train: int = 40
    n_heldout: int = 60
    n_cal: int = 30
    n_resplits: int = 200
    alpha: float = 0.1
    ewma_rates: tuple[float, ...] = (0.01, 1.0, 5.0)
    max_bound: float = 1e6
    hidden: int = 16
    layers: int = 1
    epochs: int = 250
    batch_size: int = 64
    lr: float = 1e-2
    norm_sd_scale: float = 10.0
    norm_tie_bounds: bool = True
    loss: str = "band_l1"
    loss_band_weight: float = 10.0
    loss_scale: float = 1000.0
    loss_sigma: float = 1.0
    n_live: int = 6
    workers: int = 2
    kth_incumbent: int = 3
    seeds: int = 1

    def __post_init__(self):
        def bad(name, allowed):
            raise ValueError(f"ConformalMIPConfig.{name} = {getattr(self, name)!r}; allowed: {allowed}")

        if not self.families or not set(self.families) <= {"mis", "cflp"}:
            bad("families", "a non-empty tuple of 'mis' and 'cflp'")
        if not 0.0 < self.alpha < 1.0:
            bad("alpha", "a number in (0, 1)")
        if not 1 <= self.n_cal < self.n_heldout:
            bad("n_cal", f"1 <= n_cal < n_heldout = {self.n_heldout}")
        if self.mis_graph not in ("ba", "er"):
            bad("mis_graph", "'ba' or 'er'")
        if self.loss not in ("band_l1", "rescaled_mse"):
            bad("loss", "'band_l1' or 'rescaled_mse'")
        for name in ("n_train", "n_heldout", "n_resplits", "hidden", "layers", "epochs", "batch_size", "workers",
                     "kth_incumbent", "seeds", "cflp_customers", "cflp_facilities", "mis_max_weight"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                bad(name, "an integer >= 1")
        if not isinstance(self.n_live, int) or self.n_live < 0:
            bad("n_live", "an integer >= 0")
        if not (len(self.mis_nodes) == 2 and 1 <= self.mis_nodes[0] <= self.mis_nodes[1]):
            bad("mis_nodes", "(n_min, n_max) with 1 <= n_min <= n_max")
        if not 0.0 < self.mis_p < 1.0:
            bad("mis_p", "a number in (0, 1)")
        for name in ("lr", "record_gap", "max_bound", "loss_scale", "loss_sigma"):
            if not getattr(self, name) > 0:
                bad(name, "a number > 0")
        if self.cflp_ratio < 1:
            bad("cflp_ratio", "a number >= 1")
        table = dict(self.eps)
        if any(f not in table or not table[f] > 0 for f in self.families):
            bad("eps", "an epsilon > 0 for every family")
    def eps_of(self, family: str) -> float:
        """The absolute epsilon of one family."""
        table = dict(self.eps)
        if family not in table:
            raise ValueError(f"no epsilon configured for family {family!r}; have {sorted(table)}")
        return float(table[family])


PRESETS: dict[str, ConformalMIPConfig] = {
    # seconds: unit tests and a first look
    "smoke": ConformalMIPConfig(mis_nodes=(40, 50), mis_m=6, cflp_customers=15, cflp_facilities=8,
                                eps=(("mis", 1.0), ("cflp", 3.0)), n_train=8, n_heldout=10,
                                n_cal=5, n_resplits=20, alpha=0.2, hidden=8, epochs=10,
                                n_live=2, workers=1),
    # the stored run (about 60 s on 2 CPU cores)
    "reduced": ConformalMIPConfig(),
    "evidence": ConformalMIPConfig(seeds=3),
    # a GPU/Colab run: larger, paper-like instances (Erdos-Renyi MIS as in Distributional MIPLIB,
    # which HiGHS does not solve at the root), the paper's LSTM (3 x 200, lr 1e-4), alpha = 0.05
    "full": ConformalMIPConfig(mis_graph="er", mis_nodes=(100, 110), mis_p=0.1, cflp_customers=100,
                               cflp_facilities=40, eps=(("mis", 1.9), ("cflp", 15.0)), n_train=1000, n_heldout=200,
                               n_cal=100, n_resplits=500, alpha=0.05, hidden=200, layers=3,
                               epochs=300, batch_size=16, lr=1e-4, n_live=20, workers=8, seeds=3),
}


#: How long each preset takes (the banner, the chapter's Time section and the scoreboard read it).
EXPECTED_TIME = {
    "smoke": "about 10 s on 2 CPU cores",
    "reduced": "about 40 s on 2 CPU cores",
    "evidence": "about 3 min on 2 CPU cores",
    "full": "several hours on a Colab-class machine",
}


def get_config(name: str = "reduced", **overrides) -> ConformalMIPConfig:
    """The preset `name` (smoke, reduced, evidence, full) with optional field overrides (validated
    by the dataclass)."""
    return select_preset(PRESETS, name, **overrides)
