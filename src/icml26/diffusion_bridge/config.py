"""Presets for the chapter: `smoke` (seconds, unit tests), `reduced` (the stored run) and
`full` (one GPU: a longer, wider run with more seeds and pairing fractions).

The pass criterion of the reproduction check is fixed here, before any result is seen; it is
the one of the paper summary's reduced-scale plan (the summary of the paper we worked from).
"""

from __future__ import annotations

from dataclasses import dataclass

from icml26.common import select_preset


@dataclass(frozen=True)
class BridgeConfig:
    """All knobs of the chapter's experiments (digits, 4x4 low-res -> 8x8 high-res)."""

    # data (sklearn digits; 1,400 train / 397 test)
    n_train: int = 1400
    lr_noise: float = 0.05  # std of the low-res sensor noise (pixels in [-1, 1])
    # latent space: 'joint' (the paper's: one shared latent space, encoders/decoders trained with the
    # bridges and aligned) or 'frozen' (pre-trained separate autoencoders; the extension)
    latent: str = "joint"
    latent_dim: int = 16
    codec_lr: float = 3e-3  # Adam for the jointly trained encoders/decoders
    w_rec: float = 1.0  # reconstruction of both modalities (joint latent space)
    w_align: float = 1.0  # alignment: InfoNCE on pairs + RBF-MMD between the encoders' unpaired latents
    # trajectory cycle: 'reversed' (the paper's: z_t of X->Y against z_{T-t} of Y->X) or 'pseudo_pair'
    traj_form: str = "reversed"
    # pre-trained autoencoders (the frozen latent spaces of the extension, and the AE reference)
    ae_steps: int = 400
    ae_lr: float = 3e-3
    # bridge (VE DDBM, T = sigma_max = 1)
    t_min: float = 0.002
    t_max: float = 0.999  # T (1 - 1e-3): the bridge std vanishes at T
    hidden: int = 96
    t_emb_dim: int = 16
    # training
    steps: int = 300
    batch: int = 128
    lr: float = 1e-3
    train_sampler_steps: int = 3  # differentiable sampler steps inside the SDB losses (3: one interior state)
    eval_sampler_steps: int = 10
    warmup_frac: float = 0.3  # SDB constraint weights ramp up from 0 over this fraction of steps
    # loss weights: (pair, marginal matching, endpoint cycle, trajectory cycle), all 1 as in the
    # paper's Eq. 10, and LDDBM's predictive loss
    w_pair: float = 1.0
    w_mm: float = 1.0
    w_cyc_end: float = 1.0
    w_cyc_traj: float = 1.0
    w_pred: float = 0.1
    # marginal matching: 'wta_dsm' (paper: K candidate conditions per real target, the winner by bridge
    # loss, each condition wins at most C_y = capacity targets) or 'output_ot' (earlier reconstruction:
    # sampled outputs assigned to real targets, each target won at most `capacity` times)
    mm_form: str = "wta_dsm"
    wta_candidates: int = 8  # K (not given in what we could read of the paper)
    capacity: int = 2  # C_y = 2 as in the paper
    # runs
    rhos_sdb: tuple[float, ...] = (0.0, 0.05, 0.1, 1.0)
    rhos_paired: tuple[float, ...] = (0.05, 0.1, 1.0)
    seeds: tuple[int, ...] = (0, 1, 2)
    rhos_legacy: tuple[float, ...] = (0.0,)  # the extension (frozen AEs, pseudo-pair cycle); () skips it
    device: str = "auto"

    def __post_init__(self) -> None:
        if not 0 < self.n_train < 1797:
            raise ValueError(f"n_train must lie in (0, 1797), got {self.n_train}")
        if not 0.0 < self.t_min < self.t_max < 1.0:
            raise ValueError(f"need 0 < t_min < t_max < T = 1, got {self.t_min}, {self.t_max}")
        for name, low in (("steps", 1), ("ae_steps", 1), ("batch", 2), ("train_sampler_steps", 1),
                          ("eval_sampler_steps", 1), ("hidden", 1), ("latent_dim", 1), ("t_emb_dim", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
        for name in ("lr", "codec_lr", "ae_lr"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")
        if self.capacity < 1:
            raise ValueError(f"capacity kappa must be >= 1, got {self.capacity}")
        if self.latent not in ("joint", "frozen") or self.traj_form not in ("reversed", "pseudo_pair"):
            raise ValueError(f"latent must be 'joint' or 'frozen', traj_form 'reversed' or 'pseudo_pair'; "
                             f"got {self.latent!r}, {self.traj_form!r}")
        if self.mm_form not in ("wta_dsm", "output_ot"):
            raise ValueError(f"mm_form must be 'wta_dsm' or 'output_ot', got {self.mm_form!r}")
        if not 1 <= self.wta_candidates <= self.batch:
            raise ValueError(f"wta_candidates must lie in [1, batch={self.batch}], got {self.wta_candidates}")
        for r in (*self.rhos_sdb, *self.rhos_paired):
            if not 0.0 <= r <= 1.0:
                raise ValueError(f"pairing fractions must lie in [0, 1], got {r}")
        if any(r <= 0.0 for r in self.rhos_paired):
            raise ValueError("paired-only training needs rho > 0 (it is undefined without pairs)")
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"seeds must be a non-empty tuple of distinct seeds, got {self.seeds!r}")
        if self.lr_noise < 0:
            raise ValueError("lr_noise must be >= 0")


PRESETS: dict[str, BridgeConfig] = {
    "smoke": BridgeConfig(ae_steps=60, steps=25, batch=32, hidden=32, seeds=(0, 1, 2), eval_sampler_steps=3,
                          rhos_sdb=(0.0, 0.05, 1.0), rhos_paired=(0.05, 1.0)),
    "reduced": BridgeConfig(steps=200),
    # the most training steps 5 minutes on 2 CPU cores allow, 3 seeds, the claims' arms only
    "evidence": BridgeConfig(steps=900, rhos_sdb=(0.0, 0.05, 1.0), rhos_paired=(0.05, 1.0), rhos_legacy=()),
    "full": BridgeConfig(ae_steps=3000, steps=20000, batch=256, hidden=512, train_sampler_steps=4,
                         eval_sampler_steps=40, lr=2e-4, rhos_sdb=(0.0, 0.01, 0.05, 0.1, 0.5, 1.0),
                         rhos_paired=(0.01, 0.05, 0.1, 0.5, 1.0), seeds=(0, 1, 2, 3, 4)),
}

EXPECTED_TIME = {"smoke": "about 10 s on 2 CPU cores", "reduced": "about 100 s on 2 CPU cores (200 steps)",
                 "evidence": "about 5 minutes on 2 CPU cores",
                 "full": "about 1-1.5 hours on a T4 GPU (estimated, not yet timed)"}


def get_config(name: str = "reduced", **overrides) -> BridgeConfig:
    """The preset `name` ('smoke', 'reduced', 'evidence', 'full') with optional field overrides."""
    return select_preset(PRESETS, name, **overrides)
