"""The chapter's experiments: invariance and continuity of the three constructions on every
group, fitting symmetric targets made from a scikit-image picture, VTM paper cutting, the
reproduction check and the widget's cheap re-render."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from icml26.common import progress, resolve_device

from .config import FIT_RESOLUTIONS, PlanarSymmetryConfig
from .fields import CONSTRUCTIONS, PixelBase, make_base, make_field, matched_grid_factor
from .groups import Lattice, default_lattice, get_group
from .metrics import invariance_error, psnr, tear_ratio
from .topology import periodic_components, solve_vtm, vtm_score

IMAGES = ("camera", "coins", "brick", "moon", "text", "grass", "gravel")


def load_image(name: str = "camera", res: int = 64) -> torch.Tensor:
    """A grayscale picture bundled inside the scikit-image wheel (no download), resized to
    (res, res), values in [0, 1], float64."""
    if name not in IMAGES:
        raise ValueError(f"unknown image {name!r}; valid: {', '.join(IMAGES)}")
    from skimage import data, transform

    img = np.asarray(getattr(data, name)(), dtype=float)
    if img.ndim == 3:
        img = img[..., :3].mean(-1)
    h, w = img.shape
    s = min(h, w)
    img = img[(h - s) // 2:(h - s) // 2 + s, (w - s) // 2:(w - s) // 2 + s]
    img = transform.resize(img, (res, res), anti_aliasing=True)
    img = (img - img.min()) / max(img.max() - img.min(), 1e-12)
    return torch.as_tensor(img, dtype=torch.float64)


def cell_grid(res: int, device=None, offset: float = 0.5) -> torch.Tensor:
    """(res, res, 2) pixel centres of the unit cell in fractional coordinates."""
    t = (torch.arange(res, dtype=torch.float64, device=device) + offset) / res
    return torch.stack(torch.meshgrid(t, t, indexing="ij"), -1)


PERIODIZATIONS = ("blend", "mirror")


def periodic_picture(image: torch.Tensor, u: torch.Tensor, periodization: str = "blend") -> torch.Tensor:
    """The picture turned into a continuous Z^2-periodic function of u (..., 2) -> (..., 1).

    'blend' (the fitting targets): a seamless texture with no symmetry beyond Z^2. The picture
    (2R, 2R) is cut into its four quadrants T_s, s in {0, 1}^2; tile T_s is laid out with period
    1, shifted by s / 2, and weighted by w_s(u) = prod_k (sin^2(pi u_k) if s_k = 0 else
    cos^2(pi u_k)). Each weight vanishes on the lines where its tile's edges lie, and the
    weights sum to 1, so the texture is continuous and periodic. Because the four tiles differ,
    no mirror, rotation or half translation maps it onto itself.
    'mirror': the picture (R, R) read through the triangle wave tri(t) = 1 - |1 - 2 (t mod 1)|.
    Continuous, but symmetric under u_k -> -u_k and creased on the lines u_k in Z / 2, so its
    orbit average has extra symmetry (for pg and p4 it is invariant under all of W)."""
    if periodization not in PERIODIZATIONS:
        raise ValueError(f"unknown periodization {periodization!r}; valid: {', '.join(PERIODIZATIONS)}")
    if image.ndim != 2:
        raise ValueError(f"image must have shape (H, W), got {tuple(image.shape)}")
    unit = ((0.0, 1.0), (0.0, 1.0))
    if periodization == "mirror":
        return PixelBase(unit, image[None].to(u))(1 - (1 - 2 * (u - torch.floor(u))).abs())
    h, w = image.shape
    if h % 2 or w % 2:
        raise ValueError(f"'blend' needs an even-sized picture, got {tuple(image.shape)}")
    s2 = torch.sin(math.pi * u) ** 2  # (..., 2) weights of the unshifted tiles per axis
    out = 0.0
    for s1 in (0, 1):
        for s2_ in (0, 1):
            tile = image[s1 * h // 2:(s1 + 1) * h // 2, s2_ * w // 2:(s2_ + 1) * w // 2]  # (R, R)
            shifted = u + torch.tensor([s1 / 2, s2_ / 2], dtype=u.dtype, device=u.device)
            weight = (s2[..., 0] if s1 == 0 else 1 - s2[..., 0]) * (s2[..., 1] if s2_ == 0 else 1 - s2[..., 1])
            out = out + weight[..., None] * PixelBase(unit, tile[None].to(u))(shifted - torch.floor(shifted))
    return out


def symmetric_target(group_name: str, image: torch.Tensor, u: torch.Tensor, periodization: str = "blend") -> torch.Tensor:
    """A continuous G-invariant target: the periodic picture (`periodic_picture`) averaged
    over the orbit of G, (..., 2) -> (..., 1)."""
    group = get_group(group_name)
    orb = group.orbit(u)  # (..., P, 2)
    return periodic_picture(image, orb, periodization).mean(-2)  # (..., 1)


# ------------------------------------------------------------------ invariance / continuity
def run_invariance(config: PlanarSymmetryConfig, seed: int = 0) -> dict[tuple[str, str, str], float]:
    """Max invariance error under every generator: {(group, construction, base): error}.
    Eq. 3 is tested with both a grid and a Fourier-MLP base, the baselines with the grid."""
    device = resolve_device(config.device)
    out = {}
    for name in progress(config.groups, desc="invariance"):
        group = get_group(name)
        for kind in CONSTRUCTIONS:
            for base in (("grid", "fourier") if kind == "symmetrized" else ("grid",)):
                fld = make_field(kind, group, make_base(base, torch.Generator().manual_seed(seed))).to(device)
                out[(name, kind, base)] = invariance_error(fld, group, config.invariance_points, seed, device)
    return out


def run_continuity(config: PlanarSymmetryConfig, seed: int = 0) -> dict[tuple[str, str], float]:
    """Tear ratio (see `metrics.tear_ratio`) of every construction with the same random
    multi-resolution grid base: {(group, construction): ratio}."""
    device = resolve_device(config.device)
    out = {}
    for name in progress(config.groups, desc="continuity"):
        group = get_group(name)
        for kind in CONSTRUCTIONS:
            fld = make_field(kind, group, make_base("grid", torch.Generator().manual_seed(seed))).to(device)
            out[(name, kind)] = tear_ratio(fld, group, config.continuity_step, config.continuity_factor,
                                           config.continuity_pairs, seed, device)
    return out


# ------------------------------------------------------------------------------ fitting
def fit(field_module: torch.nn.Module, u: torch.Tensor, target: torch.Tensor, steps: int, lr: float,
        schedule: str = "cosine") -> list[float]:
    """Full-batch Adam on the mean squared error, learning rate `lr` decayed to 0 by a cosine
    over `steps` ('cosine') or kept fixed ('constant'); returns the loss curve.

    The reduced preset (lr 0.3, 1000 cosine steps) brings the slowest model, group averaging
    on p3, to the training loss of 3000 constant steps at lr 0.01 (2.29e-5 vs 2.28e-5); the
    earlier 300 constant steps at lr 0.01 left it at 4.95e-5 (held-out 44.0 instead of 46.6 dB)."""
    if schedule not in ("cosine", "constant"):
        raise ValueError(f"unknown schedule {schedule!r}; valid: cosine, constant")
    opt = torch.optim.Adam(field_module.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps) if schedule == "cosine" else None
    losses = []
    for _ in range(steps):
        # region: fit_step
        opt.zero_grad()
        # full batch: every training pixel
        loss = ((field_module(u) - target) ** 2).mean()
        # gradients reach the base's grid through the fold and the eta weights
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()  # cosine decay of the learning rate to 0
        # endregion
        losses.append(float(loss.detach()))
    return losses


@dataclass
class FitResult:
    psnr: dict[tuple[str, str], float] = field(default_factory=dict)
    train_psnr: dict[tuple[str, str], float] = field(default_factory=dict)
    evals: dict[tuple[str, str], int] = field(default_factory=dict)
    params: dict[tuple[str, str], int] = field(default_factory=dict)
    scale_factor: dict[str, float] = field(default_factory=dict)  # Eq. 3's grid refinement per group
    seconds: dict[tuple[str, str], float] = field(default_factory=dict)
    preds: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)
    targets: dict[str, np.ndarray] = field(default_factory=dict)
    curves: dict[tuple[str, str], list[float]] = field(default_factory=dict)


def _grid_factory(config: PlanarSymmetryConfig, seed: int, init_std: float = 0.01):
    return make_base("grid", torch.Generator().manual_seed(seed), levels=config.grid_levels,
                     base_res=config.grid_base_res, max_res=config.grid_max_res, init_std=init_std)


def run_fitting(config: PlanarSymmetryConfig, seed: int = 0, groups: tuple[str, ...] | None = None,
                kinds: tuple[str, ...] = tuple(CONSTRUCTIONS), resolution: str | None = None,
                steps: int | None = None, lr: float | None = None, schedule: str = "cosine") -> FitResult:
    """Fit the constructions `kinds` (same multi-resolution grid base settings) to the continuous
    symmetric target of each group in `groups` (default `config.fit_groups`); PSNR on a
    held-out offset grid, and on the training pixels. `resolution` (default
    `config.grid_resolution`) sets how Eq. 3's base reads the grid resolution: 'params'
    refines the 'lattice' reading by `fields.matched_grid_factor`, so that Eq. 3's grid has
    the baselines' parameter count. `steps`, `lr`, `schedule` override the training budget."""
    device = resolve_device(config.device)
    if resolution is not None and resolution not in FIT_RESOLUTIONS:
        raise ValueError(f"unknown resolution {resolution!r}; valid: {', '.join(FIT_RESOLUTIONS)}")
    image = load_image(config.image, 128)  # four 64 x 64 tiles for the seamless texture
    res = FitResult()
    u_train = cell_grid(config.fit_res, device).reshape(-1, 2)  # (N, 2)
    u_eval = cell_grid(config.eval_res, device, offset=0.25).reshape(-1, 2)
    resolution = resolution or config.grid_resolution
    steps, lr = steps or config.fit_steps, lr or config.fit_lr
    jobs = [(g, k) for g in (groups or config.fit_groups) for k in kinds]
    for name, kind in progress(jobs, desc="fitting"):
        group = get_group(name)
        y_train = symmetric_target(name, image, u_train)
        y_eval = symmetric_target(name, image, u_eval)
        factor = 1.0
        if resolution == "params":
            factor = matched_grid_factor(group, 1, config.grid_levels, config.grid_base_res, config.grid_max_res)
        res.scale_factor[name] = factor
        torch.manual_seed(seed)
        fld = make_field(kind, group, _grid_factory(config, seed), resolution="box" if resolution == "box" else "lattice",
                         scale_factor=factor).to(device)
        t0 = time.perf_counter()
        res.curves[(name, kind)] = fit(fld, u_train, y_train, steps, lr, schedule)
        res.seconds[(name, kind)] = time.perf_counter() - t0
        with torch.no_grad():
            pred = fld(u_eval)
            res.train_psnr[(name, kind)] = psnr(fld(u_train).clamp(0, 1), y_train)
        res.psnr[(name, kind)] = psnr(pred.clamp(0, 1), y_eval)
        res.evals[(name, kind)] = fld.evaluations_per_point
        res.params[(name, kind)] = sum(p.numel() for p in fld.parameters())
        res.preds[(name, kind)] = pred.reshape(config.eval_res, config.eval_res).cpu().numpy()
        res.targets[name] = y_eval.reshape(config.eval_res, config.eval_res).cpu().numpy()
    return res


# ------------------------------------------------------------------------- paper cutting
def project(rho: torch.Tensor, beta: float, eta: float = 0.5) -> torch.Tensor:
    """Smoothed Heaviside projection (Wang, Lazarov & Sigmund 2011):
    tanh(beta eta) + tanh(beta (rho - eta)), normalised to map [0, 1] onto
    [0, 1]. beta -> infinity gives the step 1[rho > eta]; continuation raises
    beta during the run so that the design ends 0/1."""
    a, b = math.tanh(beta * eta), math.tanh(beta * (1 - eta))
    return (a + torch.tanh(beta * (rho - eta))) / (a + b)


def greyness(rho: np.ndarray) -> float:
    """Measure of non-discreteness 4 mean(rho (1 - rho)): 0 for a 0/1 design, 1 for all-grey 0.5."""
    r = np.asarray(rho, dtype=float)
    return float(4.0 * np.mean(r * (1.0 - r)))


def beta_schedule(step: int, steps: int, beta_max: float) -> float:
    """Continuation: beta = 1, 2, 4, ... up to beta_max, in equal stages over the run (the last
    stage at beta_max)."""
    stages = int(round(math.log2(beta_max))) + 1
    return float(min(2.0 ** (step * stages // max(steps, 1)), beta_max))


@dataclass
class TopologyResult:
    target: np.ndarray
    rho: dict[str, np.ndarray]
    score: dict[str, float]
    components: dict[str, int]
    target_components: int
    island_score: float
    connected_score: float
    grey: dict[str, float] = field(default_factory=dict)  # greyness of the final design


def run_topology(config: PlanarSymmetryConfig, seed: int = 0) -> TopologyResult:
    """Paper cutting at small scale: a `topo_group`-symmetric density rho = H_beta(sigmoid(4 f)),
    f from Eq. 3, H_beta the projection with continuation (beta doubles up to `topo_beta_max`),
    fitted to a binarized symmetric target made of islands, without and with the VTM term
    lambda log J(rho). Connectivity of rho > 1/2 is checked by a periodic flood fill; the
    design's greyness says whether that cut is the design (binarised) or not."""
    n, group = config.topo_n, get_group(config.topo_group)
    u = cell_grid(n).reshape(-1, 2)  # element centres (CPU: the FE solve is scipy)
    soft = symmetric_target(config.topo_group, load_image("coins", 64), u, "mirror").reshape(n, n)  # its mirrors lie in p4mm
    target = (soft > torch.quantile(soft, 0.6)).double()  # the 40% brightest: islands
    rho_out, score, comps, grey = {}, {}, {}, {}
    for label, lam in (("fit only", 0.0), ("fit + VTM", config.topo_weight)):
        # no baseline to match here: the grid is read in lattice units ('params' only matters for comparisons)
        torch.manual_seed(seed)
        fld = make_field("symmetrized", group, _grid_factory(config, seed),
                         resolution="box" if config.grid_resolution == "box" else "lattice")
        opt = torch.optim.Adam(fld.parameters(), lr=config.lr * 5)
        for step in progress(range(config.topo_steps), desc=f"paper cutting ({label})", leave=False):
            # region: projection
            beta = beta_schedule(step, config.topo_steps, config.topo_beta_max)
            opt.zero_grad()
            rho = project(torch.sigmoid(4 * fld(u)), beta).reshape(n, n).clamp(1e-3, 1.0)
            loss = ((rho - target) ** 2).mean()
            if lam > 0:
                loss = loss + lam * torch.log(vtm_score(rho))
            # endregion
            loss.backward()
            opt.step()
        with torch.no_grad():
            rho = project(torch.sigmoid(4 * fld(u)), config.topo_beta_max).reshape(n, n).clamp(1e-3, 1.0)
        binary = (rho > 0.5).double().clamp(1e-3, 1.0)
        rho_out[label] = rho.numpy()
        score[label] = solve_vtm(binary.numpy())[0]
        comps[label] = periodic_components(rho.numpy() > 0.5)
        grey[label] = greyness(rho.numpy())
    island = solve_vtm(target.clamp(1e-3, 1).numpy())[0]
    sheet = solve_vtm(np.maximum(target.numpy(), _cross(n)).clip(1e-3, 1))[0]
    return TopologyResult(target.numpy(), rho_out, score, comps, periodic_components(target.numpy() > 0.5),
                          island, sheet, grey)


def _cross(n: int) -> np.ndarray:
    """Bars along the sink lines u1 = 0 and u2 = 0 and through the cell centre (a connected sheet)."""
    m = np.zeros((n, n))
    w = max(n // 16, 1)
    for c in (0, n // 2):
        m[max(c - w, 0):c + w + 1, :] = 1
        m[:, max(c - w, 0):c + w + 1] = 1
    m[-w:, :] = 1
    m[:, -w:] = 1
    return m


# ------------------------------------------------------------------- base-size sweep (C3)
@dataclass
class BaseSweep:
    """Eq. 3 fitted with growing bases: `sizes` (levels, max_res) from smallest to largest,
    one FitResult per size (grid read in lattice units), and the held-out squared error per
    pixel of the smallest and the largest base, for C3's paired test."""
    sizes: tuple[tuple[int, int], ...]
    fits: list[FitResult]
    err_smallest: dict[str, np.ndarray] = field(default_factory=dict)
    err_largest: dict[str, np.ndarray] = field(default_factory=dict)

    def psnr(self, group: str) -> list[float]:
        return [f.psnr[(group, "symmetrized")] for f in self.fits]

    def params(self, group: str) -> list[int]:
        return [f.params[(group, "symmetrized")] for f in self.fits]


def pixel_errors(fits: FitResult, group: str, kind: str = "symmetrized") -> np.ndarray:
    """Squared error per held-out pixel (prediction clamped to [0, 1], as in the PSNR)."""
    return ((np.clip(fits.preds[(group, kind)], 0, 1) - fits.targets[group]) ** 2).ravel()


def run_base_sweep(config: PlanarSymmetryConfig, seed: int = 0) -> BaseSweep:
    """Fit Eq. 3 on every group of `config.sweep_groups` with each base size
    of `config.base_sizes` (grid levels and finest resolution; the coarsest
    stays `grid_base_res`), read in lattice units, with the same training as
    the comparison."""
    fits = []
    for levels, max_res in config.base_sizes:
        sized = replace(config, grid_levels=levels, grid_max_res=max_res)
        fits.append(run_fitting(sized, seed, groups=config.sweep_groups,
                                kinds=("symmetrized",), resolution="lattice"))
    sweep = BaseSweep(tuple(config.base_sizes), fits)
    for g in config.sweep_groups:
        sweep.err_smallest[g], sweep.err_largest[g] = (
            pixel_errors(fits[0], g), pixel_errors(fits[-1], g))
    return sweep


# ----------------------------------------------------------------------- run_experiment
def run_experiment(config: PlanarSymmetryConfig, seed: int = 0, device=None) -> dict:
    """The whole experiment behind the ledger (CONTRIBUTING.md, section 1), as plain data.

    Invariance and continuity on every group, the equal-size fits (E1) on `fit_groups`, the
    growing-base sweep (C3) on `sweep_groups` with the one-sided paired test over held-out
    pixels per group, and the paper-cutting design (C4) from `topo_seeds` independent
    initialisations. `device=None` means `resolve_device("auto")`."""
    from icml26.common.ledger import paired_test_p

    config = replace(config, device=str(resolve_device(config.device if device is None else device)))
    inv = run_invariance(config, seed)
    cont = run_continuity(config, seed)
    fits = run_fitting(config, seed)
    sweep = run_base_sweep(config, seed)
    topos = [run_topology(config, seed + k) for k in range(config.topo_seeds)]
    groups_run = list(dict.fromkeys(g for g, _, _ in inv))
    kinds = list(CONSTRUCTIONS)
    return {
        "seeds": [seed + k for k in range(config.topo_seeds)], "groups": groups_run,
        "invariance": {g: {f"{k} {b}": inv[(g, k, b)] for (h, k, b) in inv if h == g} for g in groups_run},
        "tear": {g: {k: cont[(g, k)] for k in kinds} for g in groups_run},
        "fitting": {g: {"psnr": {k: fits.psnr[(g, k)] for k in kinds}, "train_psnr": {k: fits.train_psnr[(g, k)] for k in kinds},
                        "evals": {k: fits.evals[(g, k)] for k in kinds}, "params": {k: fits.params[(g, k)] for k in kinds},
                        # images for the figures only (the PSNRs above are computed at full precision)
                        "target": np.round(fits.targets[g], 4),
                        "preds": {k: np.round(fits.preds[(g, k)], 4) for k in kinds}}
                    for g in config.fit_groups},
        "base_sweep": {"sizes": [list(s) for s in sweep.sizes],
                       "groups": {g: {"psnr": sweep.psnr(g), "params": sweep.params(g),
                                      "p_paired": paired_test_p(sweep.err_smallest[g], sweep.err_largest[g])}
                                  for g in config.sweep_groups}},
        "topology": [{"target": t.target, "rho": {k: np.round(v, 4) for k, v in t.rho.items()}, "score": t.score, "components": t.components,
                      "grey": t.grey, "target_components": t.target_components, "island_score": t.island_score,
                      "connected_score": t.connected_score} for t in topos],
    }


# ------------------------------------------------------------------------------ explore
def render_patterns(group_name: str, gamma: float = 75.0, aspect: float = 1.0, image: str = "camera",
                    res: int = 160, cells: float = 2.5, blur: float = 6.0) -> dict[str, np.ndarray]:
    """Cheap re-render for the widget: the three constructions with a fixed pixel-grid base
    (the picture itself; no training) on a Cartesian window of `cells` lattice lengths, for
    `group_name` on its lattice (gamma and b/a apply where the lattice system allows).
    Returns {'symmetrized'|'naive_wrap'|'group_average': (res, res) image, '<kind>_grad': its
    finite-difference gradient magnitude, '<kind>_seam': the gradient magnitude of the same
    construction over a Gaussian-blurred picture (sigma `blur` pixels), where the picture's own
    edges are gone and only the construction's jumps (seams) stay sharp, and 'extent'}."""
    group = get_group(group_name)
    pic = load_image(image, 96)
    if group.periodic:
        lattice = default_lattice(group_name, gamma, aspect)
        scale = cells * max(lattice.a, lattice.b)
    else:
        lattice, scale = Lattice(), 2.0
    t = torch.linspace(-scale / 2, scale / 2, res, dtype=torch.float64)
    xy = torch.stack(torch.meshgrid(t, t.flip(0), indexing="xy"), -1)  # (res, res, 2), row 0 at the top
    u = lattice.to_frac(xy) if group.periodic else xy / (scale / 2) * 0.99
    from scipy.ndimage import gaussian_filter

    smooth = torch.as_tensor(gaussian_filter(pic.numpy(), blur, mode="nearest"), dtype=pic.dtype)
    out = {"extent": np.array([-scale / 2, scale / 2, -scale / 2, scale / 2])}
    for picture, suffix in ((pic, ""), (smooth, "_seam")):
        stack = torch.stack([picture, picture.flip(0), picture.T, picture.flip(1)][:group.rank])  # (r, H, W): one per eta
        for kind in CONSTRUCTIONS:
            if kind == "symmetrized":
                base = PixelBase(group.alcove_box,
                                 stack * torch.tensor([1.0, 0.5, 0.5, 0.5][:group.rank], dtype=picture.dtype)[:, None, None])
            else:
                box = ((0.0, 1.0), (0.0, 1.0)) if group.periodic else ((-1.0, 1.0), (-1.0, 1.0))
                base = PixelBase(box, picture[None])
            with torch.no_grad():
                img = make_field(kind, group, base)(u)[..., 0].numpy()
            gy, gx = np.gradient(img)
            if suffix:
                out[kind + suffix] = np.hypot(gx, gy)
            else:
                out[kind], out[kind + "_grad"] = img, np.hypot(gx, gy)
    return out
