"""Figures and tables of the chapter (matplotlib, the book's colours: METHOD = DQGPM,
BASELINE = EIG-SE(3))."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from icml26.common import BASELINE, METHOD, PALETTE
from icml26.common.plotting import COLUMN_WIDTH_IN, book_figure, integer_ticks

from .algebra import dq_to_rt
from .experiment import METHODS, BenchmarkResult, summary_table

def _plain_log_ticks(ax, axis: str = "y", values=None) -> None:
    """Plain numbers on a log axis (4, 6, 10, 20 rather than 4x10^0 ...): major ticks at 1, 2, 5
    times a power of ten, or at `values`, and no minor labels, so the labels never crowd."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

    a = getattr(ax, f"{axis}axis")
    a.set_major_locator(FixedLocator(values) if values is not None else LogLocator(subs=(1.0, 2.0, 5.0)))
    a.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}"))
    a.set_minor_formatter(NullFormatter())


LABELS = {"dq_spectral": "DQ spectral (stage 1)", "dqgpm": "DQ spectral + DQGPM (paper)", "eig_se3": "EIG-SE(3)"}
COLORS = {"dq_spectral": PALETTE[2], "dqgpm": METHOD, "eig_se3": BASELINE}


def plot_problem(x_true, edges, ax=None):
    """The poses (frames) and the measurement graph of one instance, in 3D."""
    R, t = dq_to_rt(x_true.cpu())
    R, t, e = R.numpy(), t.numpy(), edges.cpu().numpy()
    fig = None
    if ax is None:
        fig = plt.figure(figsize=(4.5, 4.5))
        ax = fig.add_subplot(projection="3d")
    for a, b in e:
        ax.plot(*np.stack([t[a], t[b]]).T, color="0.75", lw=0.5)
    for axis, color in zip(range(3), ("#D55E00", "#009E73", "#0072B2")):
        ax.quiver(*t.T, *(0.35 * R[:, :, axis]).T, color=color, lw=1)
    ax.set_title(f"{len(t)} poses, {len(e)} relative measurements")
    return fig


def plot_contraction(bench: BenchmarkResult, seed: int = 0):
    """Left: rotation error of x^k vs k per sigma (to the truth; EIG-SE(3) dashed).
    Right: distance of x^k to the DQGPM limit (log scale): a straight line = linear rate."""
    cfg = bench.config
    fig, (a1, a2) = book_figure(1, 2, height=3.0)
    cmap = plt.get_cmap("viridis")
    for c, sigma in enumerate(cfg.sigmas):
        col = cmap(c / max(1, len(cfg.sigmas) - 1))
        a1.semilogy(bench.curves_rot[c, seed], color=col, label=f"$\\sigma_R$={sigma:.3g} rad")
        a1.axhline(bench.rot["eig_se3"][0, 0, c, seed], color=col, ls="--", lw=0.8)
        a2.semilogy(np.maximum(bench.curves_to_limit[c, seed], 1e-14), color=col)
    a1.set(xlabel="DQGPM iteration k", ylabel="rot. error to truth (deg)",
           title="noise floor (dashed: EIG-SE(3))")
    a2.set(xlabel="DQGPM iteration k", ylabel="rot. distance to limit (deg)",
           title=f"linear rate (median {np.median(bench.rates):.2f})")
    integer_ticks(a1, "x")
    integer_ticks(a2, "x")
    _plain_log_ticks(a1)
    fig.legend(*a1.get_legend_handles_labels(), loc="outside lower center", ncols=len(cfg.sigmas))  # off the curves
    return fig


def plot_noise_sweep(bench: BenchmarkResult):
    """Mean (+- std over seeds) rotation and translation errors against sigma_R."""
    cfg = bench.config
    s = np.array(cfg.sigmas)
    fig, axes = book_figure(1, 2, height=3.0)
    dodge = {name: 1.04 ** (k - (len(METHODS) - 1) / 2) for k, name in enumerate(METHODS)}  # side by side on log x
    for ax, table, label in ((axes[0], bench.rot, "rotation error (deg)"), (axes[1], bench.trans, "translation error")):
        for name in METHODS:
            v = table[name][0, 0]
            ax.errorbar(s * dodge[name], v.mean(1), v.std(1), color=COLORS[name], label=LABELS[name],
                        marker="s" if name == "eig_se3" else "o", ms=4, capsize=2, ls="--" if name == "eig_se3" else "-")
        ax.set(xscale="log", yscale="log", xlabel="rotation noise $\\sigma_R$ (rad)", ylabel=label)
        _plain_log_ticks(ax, "x", list(s))
        _plain_log_ticks(ax, "y")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=3, fontsize=8.5,
               columnspacing=1.0, handlelength=1.6)  # each level's three methods drawn a little apart
    fig.suptitle(f"n={cfg.ns[0]}, p={cfg.edge_prob}, {cfg.n_seeds} seeds")
    return fig


def plot_scale_sweep(sweep: dict, scales):
    """Rotation error and relative translation error against the translation scale s."""
    fig, axes = book_figure(1, 2, height=3.0)
    for ax, key, label in ((axes[0], "rot", "rotation error (deg)"), (axes[1], "trans_rel", "translation error / s")):
        ax.plot(scales, sweep[f"{key}_dqgpm"].mean(1), "o-", color=METHOD, label=LABELS["dqgpm"])
        ax.plot(scales, sweep[f"{key}_eig"].mean(1), "s--", color=BASELINE, label=LABELS["eig_se3"], mfc="none")
        ax.set(xscale="log", xlabel="translation scale s", ylabel=label)
    axes[0].legend()
    return fig


def plot_timing(timing: dict):
    fig, ax = book_figure(1, 1, height=3.0)
    ax.loglog(timing["n"], timing["seconds_dq"], "o-", color=METHOD, label="DQ spectral + DQGPM", zorder=4)
    # each exact solver as large hollow markers (the faster one coincides with the dashed line, so
    # its marker rings the dashed line's small square instead of hiding under it)
    for s, m in zip(timing.get("solvers", []), ("^", "v")):
        ax.loglog(timing["n"], np.min(timing[f"seconds_{s}_all"], axis=1), m + ":", color=BASELINE, ms=11, mfc="none",
                  mew=1.3, alpha=0.8, label=f"EIG-SE(3), {s} solver", zorder=2)
    ax.loglog(timing["n"], timing["seconds_eig"], "s--", color=BASELINE, ms=5, label="EIG-SE(3), faster of the two",
              zorder=3)
    ax.set(xlabel="number of poses n", ylabel="wall time (s), min of repeats", title="same machine, same run")
    _plain_log_ticks(ax, "x", list(timing["n"]))
    _plain_log_ticks(ax, "y")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def plot_registration(view: dict):
    """The raw scans in their own frames (overlaid as they come), and the merged clouds; `view`
    is `run_experiment(...)["registration"]["view"]` (`experiment.registration_view`)."""
    scan = np.asarray(view["scan_of"])
    panels = [("scans as measured\n(each in its own frame)", np.asarray(view["local"])),
              (f"merged by DQGPM\nRMSE {view['rmse']['dqgpm']:.3f}", np.asarray(view["merged"]["dqgpm"])),
              (f"merged by EIG-SE(3)\nRMSE {view['rmse']['eig_se3']:.3f}", np.asarray(view["merged"]["eig_se3"]))]
    fig = plt.figure(figsize=(COLUMN_WIDTH_IN, 2.8))
    for k, (title, pts) in enumerate(panels):
        ax = fig.add_subplot(1, 3, k + 1, projection="3d")
        ax.scatter(*pts.T, c=scan, cmap="tab20", s=2)
        ax.set_title(title, fontsize=9)  # two lines each: the three titles no longer run into each other
        ax.set_xticks([]), ax.set_yticks([]), ax.set_zticks([])
    return fig


def plot_explore(result: dict):
    """The widget's figure: DQGPM errors vs iteration with the EIG-SE(3) level as a line."""
    fig, (a1, a2) = book_figure(1, 2, height=3.0)
    a1.plot(result["rot"], "o-", ms=3, color=METHOD, label="DQGPM iterate $x^k$")
    a1.axhline(result["eig"]["rot_deg"], color=BASELINE, ls="--", label="EIG-SE(3)")
    a2.plot(result["trans"], "o-", ms=3, color=METHOD)
    a2.axhline(result["eig"]["trans"], color=BASELINE, ls="--")
    a1.set(xlabel="iteration k", ylabel="rotation error (deg)")
    a2.set(xlabel="iteration k", ylabel="translation error")
    a1.legend()
    fig.suptitle(f"sigma_R={result['sigma']}, p={result['edge_prob']}, s={result['trans_scale']}, "
                 f"{result['edges']} edges", fontsize=10)
    return fig


def results_markdown(bench: BenchmarkResult, digits: int = 3, paper: list[str] | None = None) -> str:
    """A markdown table of mean errors per sigma; `paper` optionally gives one text cell per
    sigma with the paper's reported numbers (otherwise "n/a")."""
    rows = summary_table(bench)
    paper = paper if paper is not None else ["n/a"] * len(rows)
    head = ("| $\\sigma_R$ | paper | DQ spectral rot / trans | **DQGPM** rot / trans | EIG-SE(3) rot / trans |\n"
            "|---|---|---|---|---|\n")
    body = ""
    for r, ref in zip(rows, paper):
        cells = [f"{r[f'{m} rot (deg)']:.{digits}g}° / {r[f'{m} trans']:.{digits}g}" for m in METHODS]
        body += f"| {r['sigma_R']:.3g} | {ref} | {cells[0]} | **{cells[1]}** | {cells[2]} |\n"
    return head + body


def reference_markdown(rows: list[dict], digits: int = 4) -> str:
    """Markdown table of `experiment.reference_rows`: mean errors against the least-squares
    reference, and the per-seed relative difference of DQGPM vs EIG-SE(3)."""
    head = ("| p | $\\sigma_R$ | | DQGPM | EIG-SE(3) | EIG-SE(3), empty diagonal | LS reference "
            "| DQGPM vs EIG, per seed: median [min, max] | excess over reference: DQGPM / EIG |\n"
            "|---|---|---|---|---|---|---|---|---|\n")
    body = ""
    for r in rows:
        for kind, unit in (("rot", "rotation (deg)"), ("trans", "translation")):
            cells = " | ".join(f"{r[f'{kind} {k}']:.{digits}g}" for k in ("dqgpm", "eig_se3", "eig_se3_nodiag", "reference"))
            rel = f"{r[f'{kind} rel med']:+.1f}% [{r[f'{kind} rel min']:+.1f}, {r[f'{kind} rel max']:+.1f}]"
            exc = f"{r[f'{kind} excess dqgpm']:+.1f}% / {r[f'{kind} excess eig_se3']:+.1f}%"
            body += f"| {r['p']:g} | {np.degrees(r['sigma_R']):.0f}° | {unit} | {cells} | {rel} | {exc} |\n"
    return head + body


def attribution_markdown(rows: list[dict], digits: int = 4) -> str:
    """Markdown table: mean translation error of DQGPM's frozen-rotation fixed point with
    the rotation-agreement weights and/or the rotation-translation coupling term."""
    head = ("| p | $\\sigma_R$ | DQGPM (weights + coupling) | coupling only | weights only "
            "| neither = LS reference |\n|---|---|---|---|---|---|\n")
    body = ""
    for r in rows:
        if "trans fixed point weights" not in r:
            continue
        body += (f"| {r['p']:g} | {np.degrees(r['sigma_R']):.0f}° | {r['trans dqgpm']:.{digits}g} "
                 f"| {r['trans fixed point coupling']:.{digits}g} | {r['trans fixed point weights']:.{digits}g} "
                 f"| {r['trans reference']:.{digits}g} |\n")
    return head + body


def start_limit_markdown(rows: list[dict]) -> str:
    """Markdown table of `experiment.start_vs_limit`."""
    head = ("| p | $\\sigma_R$ | seed | rotation error: start / DQGPM limit / chordal LS (deg) "
            "| quaternion LS fit (larger = better): start / limit | chordal cost: start / limit / chordal LS |\n"
            "|---|---|---|---|---|---|\n")
    body = ""
    for r in rows:
        body += (f"| {r['p']:g} | {np.degrees(r['sigma_R']):.0f}° | {r['seed']} "
                 f"| {r['rot start']:.4f} / {r['rot limit']:.4f} / {r['rot chordal LS']:.4f} "
                 f"| {r['fit start']:.4f} / {r['fit limit']:.4f} "
                 f"| {r['chordal start']:.4f} / {r['chordal limit']:.4f} / {r['chordal LS']:.4f} |\n")
    return head + body


def variant_markdown(rows: list[dict], digits: int = 3) -> str:
    """Markdown table of `experiment.variant_rows`: per (p, sigma), each EIG-SE(3) variant's
    mean ± sd rotation / translation error, its failures (rotation error > 30 deg) and the
    fraction of seeds where DQGPM is at least as accurate (rotation / translation)."""
    variants = (("eig_se3", "EIG-SE(3), compared"), ("eig_se3_anchor", "anchor rounding"),
                ("eig_se3_noflip", "no reflection fix"))
    additive = any("add rot eig_se3" in r for r in rows)
    head = "| p | $\\sigma_R$ | DQGPM rot / trans | " + " | ".join(v for _, v in variants)
    head += " | additive DQ noise: DQGPM / EIG-SE(3) |" if additive else " |"
    head += "\n|" + "---|" * (3 + len(variants) + additive) + "\n"
    body = ""
    for r in rows:
        cells = [f"{r['rot dqgpm']:.{digits}g}° / {r['trans dqgpm']:.{digits}g}"]
        for k, _ in variants:
            cells.append(f"{r[f'rot {k}']:.{digits}g}±{r[f'rot {k} sd']:.2g}° / {r[f'trans {k}']:.{digits}g}; "
                         f"fails {r[f'fails {k}']}; DQGPM wins {r[f'rot win {k}']:.1f} / {r[f'trans win {k}']:.1f}")
        if additive:
            cells.append(f"{r['add rot dqgpm']:.{digits}g}° / {r['add trans dqgpm']:.{digits}g} vs "
                         f"{r['add rot eig_se3']:.{digits}g}° / {r['add trans eig_se3']:.{digits}g}; "
                         f"DQGPM wins {r['add rot win eig_se3']:.1f} / {r['add trans win eig_se3']:.1f}")
        body += f"| {r['p']:g} | {np.degrees(r['sigma_R']):.0f}° | " + " | ".join(cells) + " |\n"
    return head + body


def plot_reference(benches: dict, kinds: tuple[str, ...] = ("rot", "trans")):
    """Per-seed relative error (%) of DQGPM and of EIG-SE(3) over the least-squares reference,
    one group per (p, sigma): 0 means "as accurate as the reference"."""
    fig, axes = book_figure(1, len(kinds), height=3.0)
    axes = np.atleast_1d(axes)
    for ax, kind in zip(axes, kinds):
        labels, pos = [], 0
        for p, bench in benches.items():
            table = bench.rot if kind == "rot" else bench.trans
            for c, sigma in enumerate(bench.config.sigmas):
                ref = table["reference"][0, 0, c]
                for off, name in ((-0.15, "dqgpm"), (0.15, "eig_se3")):
                    rel = 100.0 * (table[name][0, 0, c] - ref) / ref
                    ax.scatter(np.full(rel.shape, pos + off), rel, s=12, color=COLORS[name],
                               marker="o" if name == "dqgpm" else "s", label=LABELS[name] if pos == 0 else None)
                labels.append(f"{np.degrees(sigma):.0f}°")
                pos += 1
            start = pos - len(bench.config.sigmas)
            labels[(start + pos - 1) // 2] += f"\np = {p:g}"  # the density once, under its group's middle tick
            if start:
                ax.axvline(start - 0.5, color="0.6", lw=0.8, ls=":")
        ax.axhline(0.0, color="0.4", lw=0.8)
        ax.set_xticks(range(len(labels)), labels)
        ax.set_xlabel("noise $\\sigma_R$, per edge density p")
        ax.set(ylabel="% over LS reference",
               title="rotation (chordal LS reference)" if kind == "rot" else "translation (LS = ML reference)")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=2)  # off the points
    return fig
