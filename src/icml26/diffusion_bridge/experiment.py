"""The chapter's experiment: SDB and the paired-only latent bridge (LDDBM-lite) trained for every
pairing fraction and seed in one batched ensemble each, the nearest-upsampling reference, the
evaluation (class preservation, PSNR, RBF-MMD), the reproduction check and the 2-D toy."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from sklearn.linear_model import LogisticRegression

from icml26.common import Timer, progress, resolve_device

from .bridge import AutoEncoder, BridgeDenoiser, sample_translation, train_autoencoder
from .config import BridgeConfig
from .data import Digits, draw, load_data, pairing_pools, stack_pools, upsample_nearest
from .sdb import endpoint_cycle_loss, marginal_matching_loss, paired_loss, trajectory_cycle_loss, wta_bridge_loss

CLAIM = ("With few pairs, marginal matching + cycle constraints beat the same latent bridge trained on pairs alone "
         "and approach fully paired quality; with no pairs SDB still lands on the target distribution")


@dataclass
class Setup:
    """Data, frozen autoencoders, cached training latents and the evaluation classifier."""

    data: Digits
    ae_x: AutoEncoder
    ae_y: AutoEncoder
    zx: torch.Tensor  # (N_train, d) standardised latents of the high-res images
    zy: torch.Tensor  # (N_train, d) of the low-res images
    classifier: LogisticRegression
    device: torch.device


def prepare(config: BridgeConfig, seed: int = 0) -> Setup:
    """Load digits, pre-train both autoencoders (then frozen) and the class-preservation probe."""
    device = resolve_device(config.device)
    data = load_data(config.n_train, config.lr_noise, seed, device)
    ae_x = train_autoencoder(data.x_train, 128, config.latent_dim, config.ae_steps, config.ae_lr, seed)
    ae_y = train_autoencoder(data.y_train, 64, config.latent_dim, config.ae_steps, config.ae_lr, seed + 1)
    with torch.no_grad():
        zx, zy = ae_x.encode(data.x_train), ae_y.encode(data.y_train)
    clf = LogisticRegression(max_iter=1000).fit(data.x_train.cpu().numpy(), data.label_train)
    return Setup(data, ae_x, ae_y, zx, zy, clf, device)


@dataclass
class Ensemble:
    """M runs trained together: one (rho, seed) per member; `den_xy` is None for paired-only."""

    kind: str
    rhos: list[float]
    seeds: list[int]
    den_yx: BridgeDenoiser
    den_xy: BridgeDenoiser | None
    losses: np.ndarray  # (steps, M) total loss per member
    seconds: float = 0.0


def train_ensemble(setup: Setup, config: BridgeConfig, kind: str, rhos, seeds, use_mm: bool = True,
                   use_cyc_end: bool = True, use_cyc_traj: bool = True, capacity: int | None = None,
                   steps: int | None = None, show_progress: bool = True, mm_form: str | None = None) -> Ensemble:
    """Train `kind` = 'sdb' (both directions; L = w_pair L_pair + ramp (w_mm L_MM + w_e L_end +
    w_tau L_traj)) or 'paired' (Y->X bridge + predictive loss on the pairs only) for every
    (rho, seed) in one batched pass. Members are independent networks. `mm_form` picks the
    marginal-matching term: 'wta_dsm' (the paper's: bridge loss of the winning candidate condition)
    or 'output_ot' (our earlier reconstruction: sampled outputs assigned to real targets)."""
    if kind not in ("sdb", "paired"):
        raise ValueError(f"kind must be 'sdb' or 'paired', got {kind!r}")
    mm_form = config.mm_form if mm_form is None else mm_form
    if mm_form not in ("wta_dsm", "output_ot"):
        raise ValueError(f"mm_form must be 'wta_dsm' or 'output_ot', got {mm_form!r}")
    members = [(float(r), int(s)) for r in rhos for s in seeds]
    if not members:
        raise ValueError("need at least one (rho, seed)")
    if kind == "paired" and any(r <= 0 for r, _ in members):
        raise ValueError("paired-only training is undefined at rho = 0 (no pairs)")
    capacity = config.capacity if capacity is None else capacity
    steps = config.steps if steps is None else steps
    dev, M, B, d = setup.device, len(members), config.batch, config.latent_dim
    pools = [pairing_pools(config.n_train, r, s) for r, s in members]
    p_pool, p_cnt = stack_pools([p.paired for p in pools], dev)
    s_pool, s_cnt = stack_pools([p.src for p in pools], dev)
    t_pool, t_cnt = stack_pools([p.tgt for p in pools], dev)
    has_pairs = (p_cnt > 0).float()  # (M,) the paired term vanishes at rho = 0
    g_init = torch.Generator().manual_seed(int(seeds[0]) * 104729 + (1 if kind == "sdb" else 2))  # deterministic
    den_yx = BridgeDenoiser(M, d, config.hidden, config.t_emb_dim, g_init).to(dev)
    den_xy = BridgeDenoiser(M, d, config.hidden, config.t_emb_dim, g_init).to(dev) if kind == "sdb" else None
    params = list(den_yx.parameters()) + ([] if den_xy is None else list(den_xy.parameters()))
    opt = torch.optim.Adam(params, lr=config.lr)
    gen = torch.Generator(device=dev).manual_seed(int(seeds[0]) * 7919 + (1 if kind == "sdb" else 0))
    X, ZX, ZY = setup.data.x_train, setup.zx, setup.zy
    dec_x = setup.ae_x.decode
    losses = np.zeros((steps, M))
    it = range(steps)
    if show_progress:
        it = progress(it, desc=f"{kind} x{M} runs", leave=False)
    K, tmin, tmax = config.train_sampler_steps, config.t_min, config.t_max
    with Timer(dev) as timer:
        for step in it:
            ip = draw(p_pool, p_cnt, B, gen)  # (M, B) paired indices
            loss = config.w_pair * has_pairs * paired_loss(den_yx, den_xy, X[ip], ZX[ip], ZY[ip], dec_x,
                                                           config.w_pred, tmin, tmax, gen)
            if kind == "sdb" and (use_mm or use_cyc_end or use_cyc_traj):
                ramp = min(1.0, (step + 1) / max(1.0, config.warmup_frac * steps))
                zT_u = ZY[draw(s_pool, s_cnt, B, gen)]  # (M, B, d) unpaired sources
                z0_u = ZX[draw(t_pool, t_cnt, B, gen)]  # (M, B, d) independent unpaired targets
                x_hat = sample_translation(den_yx, zT_u, K, tmax, tmin)
                y_hat = sample_translation(den_xy, z0_u, K, tmax, tmin)
                extra = torch.zeros(M, device=dev)
                if use_mm and mm_form == "wta_dsm":  # both directions: targets z0_u (Y->X), zT_u (X->Y)
                    extra = extra + config.w_mm * (
                        wta_bridge_loss(den_yx, z0_u, zT_u, config.wta_candidates, capacity, tmin, tmax, gen)
                        + wta_bridge_loss(den_xy, zT_u, z0_u, config.wta_candidates, capacity, tmin, tmax, gen))
                elif use_mm:
                    extra = extra + config.w_mm * (marginal_matching_loss(x_hat, z0_u, capacity)
                                                   + marginal_matching_loss(y_hat, zT_u, capacity))
                if use_cyc_end:
                    extra = extra + config.w_cyc_end * endpoint_cycle_loss(den_yx, den_xy, zT_u, z0_u, K, tmax, tmin,
                                                                           x_hat, y_hat)
                if use_cyc_traj:
                    extra = extra + config.w_cyc_traj * trajectory_cycle_loss(den_yx, den_xy, zT_u, z0_u, x_hat,
                                                                              y_hat, tmin, tmax, gen)
                loss = loss + ramp * extra
            opt.zero_grad(set_to_none=True)
            loss.sum().backward()  # members are independent: the sum separates
            opt.step()
            losses[step] = loss.detach().cpu().numpy()
    return Ensemble(kind, [r for r, _ in members], [s for _, s in members], den_yx, den_xy, losses, timer.seconds)


def rbf_mmd(a: torch.Tensor, b: torch.Tensor, bandwidth: float) -> torch.Tensor:
    """Biased RBF-kernel MMD^2 between sample sets a (..., n, D) and b (n', D)."""
    k = lambda u, v: torch.exp(-torch.cdist(u, v) ** 2 / (2 * bandwidth ** 2))  # noqa: E731
    bb = b.expand(*a.shape[:-2], *b.shape)
    return k(a, a).mean((-1, -2)) + k(bb, bb).mean((-1, -2)) - 2 * k(a, bb).mean((-1, -2))


def median_bandwidth(x: torch.Tensor) -> float:
    """The median pairwise distance of a sample (the RBF bandwidth heuristic)."""
    return float(torch.cdist(x, x).median())


def evaluate_images(x_gen: torch.Tensor, setup: Setup) -> dict[str, np.ndarray]:
    """Class preservation (probe accuracy vs the true label), PSNR (data range 2) vs the true
    high-res image, and RBF-MMD to the real test images. x_gen: (M, N_test, 64) -> (M,) each."""
    d = setup.data
    if x_gen.ndim != 3 or x_gen.shape[1:] != d.x_test.shape:
        raise ValueError(f"expected translations (M, {d.x_test.shape[0]}, 64), got {tuple(x_gen.shape)}")
    x_gen = x_gen.clamp(-1, 1)
    M, N, _ = x_gen.shape
    pred = setup.classifier.predict(x_gen.reshape(M * N, 64).cpu().numpy()).reshape(M, N)  # (M*N, 64) -> (M, N)
    acc = (pred == d.label_test[None]).mean(1)
    mse = ((x_gen - d.x_test[None]) ** 2).mean(-1)  # (M, N)
    psnr = (10 * torch.log10(4.0 / mse.clamp(min=1e-10))).mean(-1)
    mmd = rbf_mmd(x_gen, d.x_test, median_bandwidth(d.x_test))
    return {"acc": acc, "psnr": psnr.cpu().numpy(), "mmd": mmd.cpu().numpy()}


@torch.no_grad()
def translate(ens: Ensemble, setup: Setup, config: BridgeConfig, y: torch.Tensor | None = None) -> torch.Tensor:
    """S_YX on low-res inputs (default: the test set) for every member, decoded: (M, N, 64)."""
    y = setup.data.y_test if y is None else y
    zT = setup.ae_y.encode(y).expand(len(ens.rhos), -1, -1).contiguous()  # (M, N, d)
    z0 = sample_translation(ens.den_yx, zT, config.eval_sampler_steps, config.t_max, config.t_min)
    return setup.ae_x.decode(z0)


@dataclass
class ExperimentResult:
    """Per-(method, rho) metrics (arrays over seeds) and stored translations for the plots."""

    config: BridgeConfig
    metrics: dict = field(default_factory=dict)  # (method, rho) -> {"acc": (S,), "psnr": (S,), "mmd": (S,)}
    translations: dict = field(default_factory=dict)  # (method, rho) -> (N_test, 64) of the first seed
    losses: dict = field(default_factory=dict)  # method -> (steps, M)
    seconds: dict = field(default_factory=dict)
    setup: Setup | None = None
    ensembles: dict = field(default_factory=dict)

    def mean(self, method: str, rho: float, metric: str) -> float:
        return float(np.mean(self.metrics[(method, float(rho))][metric]))


def _collect(res: ExperimentResult, ens: Ensemble, setup: Setup, config: BridgeConfig, name: str) -> None:
    x_gen = translate(ens, setup, config)
    m = evaluate_images(x_gen, setup)
    rhos = np.array(ens.rhos)
    for r in sorted(set(ens.rhos)):
        sel = np.nonzero(rhos == r)[0]
        res.metrics[(name, r)] = {k: v[sel] for k, v in m.items()}
        res.translations[(name, r)] = x_gen[sel[0]].cpu()
    res.losses[name] = ens.losses
    res.seconds[name] = ens.seconds
    res.ensembles[name] = ens


def run_experiment(config: BridgeConfig, seed: int = 0, show_progress: bool = True) -> ExperimentResult:
    """All runs of the reduced plan: SDB at config.rhos_sdb, paired-only at config.rhos_paired,
    each over config.seeds, plus nearest upsampling and the autoencoder's own ceiling."""
    setup = prepare(config, seed)
    res = ExperimentResult(config, setup=setup)
    torch.manual_seed(seed)
    sdb = train_ensemble(setup, config, "sdb", config.rhos_sdb, config.seeds, show_progress=show_progress)
    _collect(res, sdb, setup, config, "SDB")
    pai = train_ensemble(setup, config, "paired", config.rhos_paired, config.seeds, show_progress=show_progress)
    _collect(res, pai, setup, config, "paired-only")
    d = setup.data
    with torch.no_grad():
        refs = torch.stack([upsample_nearest(d.y_test), setup.ae_x.decode(setup.ae_x.encode(d.x_test))])
    m = evaluate_images(refs, setup)
    for i, name in enumerate(("nearest upsampling", "AE reconstruction of true HR")):
        res.metrics[(name, 1.0)] = {k: v[i:i + 1] for k, v in m.items()}
        res.translations[(name, 1.0)] = refs[i].cpu()
    return res


def claim_figures(res: ExperimentResult) -> tuple[str, dict, dict]:
    """The measured figures and the pass criterion of the reduced plan (fixed in BridgeConfig):
    at the lowest shared rho (0.05): acc gain >= 0.10 and PSNR gain >= 0.5 dB over paired-only;
    acc(SDB, 0.1) >= acc(paired, 1) - 0.05; MMD(SDB, 0) <= 1.5 MMD(paired, 1);
    acc(SDB, 1) >= acc(paired, 1) - 0.01. Means over seeds."""
    c = res.config
    shared = sorted(set(c.rhos_sdb) & set(c.rhos_paired))
    if not shared or 0.0 not in c.rhos_sdb or 1.0 not in shared:
        raise ValueError("the criterion needs SDB at rho=0 and both methods at rho=1 and one low rho")
    low = shared[0]
    mid = 0.1 if 0.1 in c.rhos_sdb else low
    a = lambda m, r: res.mean(m, r, "acc")  # noqa: E731
    p = lambda m, r: res.mean(m, r, "psnr")  # noqa: E731
    mmd0, mmd_full = res.mean("SDB", 0.0, "mmd"), res.mean("paired-only", 1.0, "mmd")
    measured = {
        f"acc SDB/paired@{low}": f"{a('SDB', low):.2f}/{a('paired-only', low):.2f}",
        f"PSNR SDB/paired@{low}": f"{p('SDB', low):.1f}/{p('paired-only', low):.1f}",
        f"acc SDB@{mid}": round(a("SDB", mid), 2),
        "acc paired@1": round(a("paired-only", 1.0), 2),
        "acc SDB@1": round(a("SDB", 1.0), 2),
        # chance level (10 classes), in no check; one decimal because its second decimal (0.10 vs 0.11)
        # differs between CPU models even under the same ATen kernels
        "acc SDB@0": round(a("SDB", 0.0), 1),
        "MMD ratio SDB@0/paired@1": round(mmd0 / mmd_full, 1),
    }
    checks = {
        "acc gain at low rho": a("SDB", low) - a("paired-only", low) >= c.min_acc_gain_low,
        "PSNR gain at low rho": p("SDB", low) - p("paired-only", low) >= c.min_psnr_gain_low,
        "SDB@0.1 near fully paired": a("SDB", mid) >= a("paired-only", 1.0) - c.max_acc_gap_to_full,
        "SDB@0 on target marginal": mmd0 <= c.max_mmd_ratio_unpaired * mmd_full,
        "SDB@1 not worse": a("SDB", 1.0) >= a("paired-only", 1.0) - c.max_acc_drop_full,
    }
    return CLAIM, measured, checks


# ---------------------------------------------------------------- the 2-D teaching toy

def toy_domains(n: int = 200, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """X = points on the unit circle at angle theta, Y = points on a parabola at s = theta / 2 pi.
    Returns theta (n,), x (n, 2), y (n, 2) (the true coupling pairs x[i] with y[i])."""
    theta = np.sort(np.random.default_rng(seed).uniform(0, 2 * np.pi, n))
    s = theta / (2 * np.pi)
    x = np.stack([np.cos(theta), np.sin(theta)], 1)
    y = np.stack([2 * s - 1, (2 * s - 1) ** 2 - 1.5], 1)
    return theta, x, y


def toy_coupling_scores(n: int = 200, n_pairs: int = 3, seed: int = 0) -> dict[str, dict[str, float]]:
    """Score two maps Y -> X, the true one (s -> theta = 2 pi s) and the mirrored one
    (s -> theta = 2 pi (1 - s)), with the SDB terms: marginal matching (WTA assignment cost of the
    translated sources to independent real targets), endpoint cycle (both maps are bijections with
    exact inverses, so 0) and the paired error on `n_pairs` known pairs."""
    _, x, y = toy_domains(n, seed)
    _, x_real, _ = toy_domains(n, seed + 1)  # independent targets
    s = (y[:, 0] + 1) / 2
    maps = {"true": 2 * np.pi * s, "mirrored": 2 * np.pi * (1 - s)}
    pairs = np.random.default_rng(seed + 2).choice(n, n_pairs, replace=False)
    out = {}
    for name, th in maps.items():
        x_hat = np.stack([np.cos(th), np.sin(th)], 1)
        cost = ((x_hat[:, None] - x_real[None]) ** 2).sum(-1)
        from .sdb import wta_capacity_assignment
        pi = wta_capacity_assignment(cost, 1)
        s_back = th / (2 * np.pi) if name == "true" else 1 - th / (2 * np.pi)  # the map's exact inverse
        out[name] = {"marginal matching": float(cost[np.arange(n), pi].mean()),
                     "endpoint cycle": float(np.abs(s_back - s).max()),
                     f"paired error ({n_pairs} pairs)": float(((x_hat[pairs] - x[pairs]) ** 2).sum(-1).mean())}
    return out
