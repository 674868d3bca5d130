"""No run figure is typed into a chapter's prose (CONTRIBUTING.md, "Numbers in prose").

`icml26.prose_numbers.typed_run_figures` compares the numbers typed in a notebook's markdown and in
its figure captions (cell metadata, rendered as MyST) with the numbers its stored outputs show (its
docstring states the rule). A hit is a candidate; each one on the stored pages was read in context
and is either

* allowed here, in ``ALLOWED``: a phrase of the markdown that holds the number, and why it is
  legitimately typed, starting with one of ``CATEGORIES``. An entry covers every hit of its number in
  a markdown cell that contains the phrase;
* or a real figure of the run (the page's, or the stored evidence record's that the page shows)
  typed by hand, in ``TYPED_PENDING``, until its page glues it and is re-executed.

A number whose only printed match is a wall-clock timing (it changes from run to run) is allowed in
``TIMING_COINCIDENCES`` instead, which is exempt from the staleness check.

``TYPED_PENDING`` may only shrink: an entry whose figure is glued (or gone) fails the test until it
is removed, and a new typed run figure is never added to it: glue it. Stale ``ALLOWED`` entries fail
the same way. Reads the stored notebooks only (no execution).
"""

from __future__ import annotations

import json

import pytest

from icml26.catalog import SLUGS, chapter_path
from icml26.common.glued import GLUE_MIME
from icml26.prose_numbers import NUMBER, prose_text, typed_run_figures

#: Why a number that the run also prints may stay typed (the first word of every ALLOWED reason).
CATEGORIES = {
    "paper": "the paper's (or the summaries') figure, quoted",
    "setting": "a setting of a preset or the task (sizes, budgets, grids, time estimates), not a result",
    "threshold": "a bar or tolerance fixed in claims.py or in the book's rules, or a confidence level",
    "constant": "a fixed property of the method or the task (a schedule value, a chance level, a grid spacing)",
    "example": "the input of a worked example or its hand calculation",
    "exercise": "a figure of an exercise's own run (other settings or seeds), not printed by the page",
    "label": "a name, not a quantity",
}

#: Chapters the guard does not read yet, with the reason.
NOT_GUARDED: dict[str, str] = {}

ALLOWED: dict[str, dict[str, str]] = {
    "deep_image_search": {
        "DISBench (57 YFCC100M users, 109k photos, 122 human-verified": "paper: the size of DISBench",
        "each user has 24 trips over 3 years": "setting: the preset's events per user",
        "4 users × 24 trips per seed": "setting: the preset's users and events per user",
        "reaches EM 28.7% and F1 55.0%": "paper: the best ImageSeeker agent's EM and F1",
        "against the paper's 28.7% and 55.0%": "paper: the best ImageSeeker agent's EM and F1",
        "the paper's EM 28.7 and F1 55.0": "paper: the best ImageSeeker agent's EM and F1",
        "to 0.14, while direct retrieval's falls to 0.08": "exercise: exercise 3's weak-perception run (0.14 "
                                                           "is also a direct-retrieval figure, by coincidence)",
        "the scripted teacher falls to 0.17 as well": "exercise: exercise 3's weak-perception run",
        "against 0.099 with the oracle": "exercise: the solution's direct_f1('oracle') on the first seed (the "
                                         "same queries and model as the page's seed-0 figure, so it equals it)",
    },
    "dq_sync": {
        "0.098 ± 0.618": "paper: the summaries' EIG rotation error at p = 0.30",
        "0.027 and 0.111 rad": "paper: the summaries' DQGPM errors at p = 0.30",
        "has a 95% interval": "threshold: the interval's confidence level",
        "random rotation, 126.5°": "constant: the mean angle of a uniformly random rotation",
        "| 1.0 | 0.011 | 0.021 |": "exercise: the contraction exercise's own graphs (n = 60, other p)",
        "the rate drops to 0.190": "exercise: the contraction exercise at n = 200",
    },
    "planar_symmetry": {
        "4 to 32 cells per lattice length": "setting: the grid levels of the growing-bases sweep",
        "from 1 to 32 in equal stages": "setting: the continuation schedule of beta",
        "4 levels, 4 to 32 cells": "setting: the grid base",
        "a 32×32 p4mm toy": "setting: the paper-cutting toy's resolution",
        "finest grid level has 32 cells": "setting: the grid base",
    },
    "w2sg_bregman": {
        "while at width 256 the mean": "setting: the widest random-feature student (a figure caption)",
        "use 64 Monte-Carlo draws": "setting: Monte-Carlo draws per input",
        "an MLP (64→64→10)": "setting: the strong student's architecture",
        "a 64-unit MLP": "setting: the strong student's width",
        "(64 Monte-Carlo draws)": "setting: Monte-Carlo draws per input",
        "widths 4–256": "setting: the random-feature widths",
        "120 steps": "setting: the students' training steps",
        "three such draws gave 0.24, 1.12 and -0.50": "exercise: three random draws of exercise 3",
        "| 0 | 0.815 | 0.827 (+0.012, 0.09)": "exercise: the noise sweep at sigma = 0, not run on the page",
        "| 0.25 | 0.699": "setting: a noise level of the exercise's sweep",
        "| 1 | 0.270 | 0.535 (+0.266, 0.38)": "exercise: the noise sweep at sigma = 1, not run on the page",
        "the width-256 figures": "setting: the widest student",
        "at width 256": "setting: the widest student",
        "| 400 inputs | CE | 0.018 | 0.131 |": "exercise: the overfitting exercise's 400-input run",
        "At width 64 the same settings": "setting: a student width",
    },
    "asymmetric_weighting": {
        "(25 prompts)": "setting: the task's prompt count",
        "all 25 prompts": "setting: the task's prompt count",
        "the 95% interval of the mean effect": "threshold: the interval's confidence level",
        "within a factor 1.5 of the speed-up": "threshold: C3_MAX_FACTOR",
        "on 25 single-digit additions": "setting: the task's prompt count",
        "operands 0-9, width 64": "setting: the full preset's model width",
        "within a factor 1.5.": "threshold: C3_MAX_FACTOR",
        "ends at 0.16, 0.24 and 0.24": "exercise: GRPO at the exercise's untuned rate",
        "GRPO's excess is 1.03": "exercise: the power-weight exercise's theory curve",
        "peaks near 1.43": "exercise: the power-weight exercise's theory curve",
        "at most about 43% more": "exercise: the power-weight exercise's theory curve",
        "never (0.23), 48, never (0.24)": "exercise: the group-size exercise at M = 4",
        "| 0.24, 0.29, 0.29 |": "exercise: the group-size exercise at M = 16",
        "(0.23 to 0.30)": "exercise: the group-size exercise at M = 4",
    },
    "conformal_mip_stop": {
        "the 95% interval of its deciding figure": "threshold: the interval's confidence level",
        "= 1.5 (MIS) and 7 (CFLP)": "setting: the absolute epsilon of each family",
        "instead of 1.5": "setting: the page's MIS epsilon",
        "(ii) 95%, (iii) 90%": "exercise: the MIS-family exercise's shares",
        "finite on 92% of the re-splits (median 1.1)": "exercise: the MIS-family exercise's pipeline run",
        "while it saves 91%": "exercise: the MIS-family exercise's pipeline run",
    },
    "tt_sparse": {
        "about 2.5 minutes on 2 CPU cores": "setting: the evidence preset's time estimate",
        "1.2× that of the pruned": "setting: the matched tree's complexity allowance",
        "the paper's 28 OpenML/PMLB/UCI datasets": "paper: the paper's benchmark size",
        "annealed schedule 0.981": "exercise: the temperature exercise's unpruned models",
        "schedule 0.977, 0.979, 0.988": "exercise: the temperature exercise's unpruned models",
        "$\\tau=1$ 0.959, 0.965": "exercise: the temperature exercise's unpruned models",
        "0.963, 0.945, 0.978": "exercise: the temperature exercise's unpruned models",
    },
    "discrete_transformer": {
        "at least 99% of the test sequences": "threshold: C1_MIN_AGREE",
        "(head 1.1)": "label: layer 1, head 1",
        "head 1.1 switches": "label: layer 1, head 1",
        "falls from 2.1 to 1.8": "exercise: the routing exercise's training log",
    },
    "model_clone": {
        "the 95% t interval": "threshold: the interval's confidence level",
        "345 pairs per seed": "setting: the benchmark's pairs per seed",
        "stays at 0.93": "exercise: the per-unit rescaling exercise",
        "0.950 at $\\lambda=0.5$": "exercise: the structure-level exercise at smoke",
        "0.62, 0.77 and 0.91": "exercise: the random-initialisation exercise",
        "score 0.66, while": "exercise: the random-initialisation exercise",
        "stays at 0.81": "exercise: the random-initialisation exercise",
    },
    "prism": {
        "| 0.097 | 0.091 |": "exercise: the hybrid's accuracy with noise after layers 1 and 2, from exercise 1's own "
                            "run (0.091 is also the Transformer's sigma = 1 figure, by coincidence)",
        "uniform attenuation keeps 95% (0.311)": "exercise: exercise 5's LayerNorm model (95% also reads as a "
                                                 "printed 0.950, by coincidence)",
        "| explicit filter | 0.401 |": "exercise: the explicit-filter model trained in exercise 3 (0.401 is also a "
                                      "competence margin, by coincidence)",
        "about 1.5 minutes on 2 CPU cores": "setting: the reduced preset's time estimate",
        "at most 150 steps": "setting: the reduced preset's step budget",
        "a budget of 1,200 steps": "setting: the evidence preset's step budget",
        "with probability 0.12": "setting: the task's private-token rate",
        "(0.198 against 0.072 there)": "paper: the paper's phase-locking figures",
        "figure's 95% interval": "threshold: the interval's confidence level",
        "(97% of quality kept)": "paper: the paper's attenuation result",
        "length 24)": "setting: the task's sequence length",
        "d = 512": "paper: the paper's model width",
        "| 0 | 0.1 | 0.25 | 0.5 |": "setting: the noise grid",
        "300 (still improving), 0.386": "exercise: the budget exercise at 300 steps",
        "budget of 1,200 steps": "setting: the evidence preset's step budget",
    },
    "kskt": {
        "(5 seeds, 360 steps)": "setting: the evidence preset",
        "chance for the style (0.25)": "constant: chance for four styles",
        "five seeds of 360 steps": "setting: the evidence preset",
        "| 0.38 | 0.24 | 0.09 | 0.995 |": "exercise: the alignment-loss exercise (120 steps)",
        "| 0.15 | 0.13 | 0.04 | 1.000 |": "exercise: the alignment-loss exercise (120 steps)",
        "from 0.86 to 0.61": "exercise: the alignment-loss exercise (120 steps)",
        "| self, untied | 0.44 | 0.18 | 0.76 |": "exercise: the tied-embedding exercise (120 steps)",
        "| self, tied | 0.96 |": "exercise: the tied-embedding exercise (120 steps)",
        "| other, untied | 0.44 | 0.43 |": "exercise: the tied-embedding exercise (120 steps)",
        "0.21 and 0.31 against 0.17": "exercise: the tied-embedding exercise (120 steps)",
        "gives probe gaps of 0.14 (self)": "exercise: the alignment-loss exercise (120 steps)",
        "The probe gaps fall from 0.14 and 0.26": "exercise: the tied-embedding exercise (120 steps)",
    },
    "tam": {
        "At the same 64 tokens": "setting: the token budget (a figure caption)",
        "the page's 150-step cap": "setting: the reduced preset's step cap (a figure caption)",
        "about 2.5 hours on one GPU": "setting: the full preset's time estimate",
        "the same 64 visual tokens": "setting: the token budget",
        "(72 tokens, *more* than TAM's 64)": "setting: the token budgets",
        "caps every tower at 150 steps": "setting: the reduced preset's step cap",
        "Inductor (150 steps)": "setting: the Inductor's training steps",
        "its 150-step cap": "setting: the reduced preset's step cap",
        "must reach 0.95 in every seed": "threshold: C1_MIN_ACC",
        "than TAM (64)": "setting: the token budget",
        "The 72-token": "setting: the token budget",
        "by 0.15": "threshold: the competence margin over chance",
        "when the 95% interval": "threshold: the interval's confidence level",
        "absolute bar of 0.85": "threshold: E1_MIN_ACC",
        "TA-116K": "label: the paper's dataset name",
        "at 150 steps; the evidence": "setting: the reduced preset's step cap",
        "trained for 150 steps and frozen": "setting: the Inductor's training steps",
        "(page: 150; full: 6000)": "setting: the step caps",
        "gives 0.29 and 0.34 on counting": "exercise: randomly flipped routings",
        "are 6, 18, 30 and 42": "setting: the frames tier H samples",
        "stops both at 150 steps": "setting: the reduced preset's step cap",
        "the held-out accuracy is 0.78": "exercise: the Inductor at seed 8",
        "seed 2 reaches 0.78": "exercise: the Inductor trained for 300 steps",
        "(0.9475 at 150)": "setting: the Inductor's training steps",
        "C1's bar of 0.95": "threshold: C1_MIN_ACC",
    },
    "step_diffusion_policy": {
        "both score 0.37 there": "paper: BRIDGER-2 and the spatial-only ablation",
        "over the 150 episodes": "setting: evaluation episodes per seed",
        "150 evaluation episodes": "setting: evaluation episodes per seed",
        "1,500 training steps": "setting: the denoiser's training steps",
        "at width 64 with 4 heads": "setting: the predictor's width",
        "at batch 64": "setting: the predictors' batch size",
        "it keeps 69 % of its signal": "constant: the noise schedule's signal share at t = 50 (glued as kept_pct)",
        "at least 0.99, both on 500 scenes": "threshold: the exercise's success bar",
        "| 2 | 50, 0 | 50 | 0.692 |": "constant: the noise schedule's signal share at t = 50",
        "standard deviation 0.025": "constant: the noise schedule's noise at t = 0",
    },
    "usb_rl": {
        "| imagined only (0.0) | −6.39 | 0.77 |": "exercise: the score-batch exercise's own run",
    },
    "dmawm": {
        "(success at least 0.75": "threshold: LEARNED_MIN",
        "probe is 0.54 at $t=0$": "exercise: the probe-over-time exercise",
        "(0.51 at $t=1$)": "exercise: the probe-over-time exercise",
        "0.57 (DMAWM) and 0.54 (joint)": "exercise: the warm-up exercise",
        "by 0.93, and the joint model's by only 0.16": "exercise: the warm-up exercise",
        "against the bar of 0.75": "threshold: LEARNED_MIN",
    },
    "lmac": {
        "by 0.25 once": "example: the worked example's error",
        "25% of the episodes held out": "setting: the held-out share",
        "in 222 numbers per step": "setting: the size of the full broadcast, fixed by the world",
        "at 41,472 environment steps": "setting: the reduced preset's MARL budget",
        "cells are 0.25 apart": "constant: the grid spacing",
        "0.84, 0.79 and 0.85 at 0.02": "exercise: the stricter-criterion exercise",
        "the larger protocol 0.50, 0.56 and 0.61": "exercise: LMAC trained on each protocol",
    },
    "reconfigure": {
        "Reading: about 35 minutes": "setting: the reading-time estimate",
        "state sizes, 5.95 and 9.81 times": "paper: the abstract's gains",
        "beyond 5.95 and 9.81 times": "paper: the abstract's gains",
        "the paper's 5.95 and 9.81 times": "paper: the abstract's gains",
        "48 parallel environments": "setting: the environments",
        "within 0.25 length units": "threshold: C4's window",
        "within 0.25 of a segment boundary": "threshold: C4's window",
        "lie within 0.25 of a boundary": "threshold: C4's window",
    },
    "grasp": {
        "while at n=24 the agent": "setting: the larger held-out graph size (a figure caption)",
        "gains 53 % on average": "paper: the abstract's gain",
        "an average gain of 53.06 %": "paper: the abstract's gain",
        "graphs of 8 to 24 nodes": "setting: the graph sizes",
        "the mean is 0.25 and": "example: the worked example's group of four",
        "32 questions)": "setting: the graded question's size",
    },
    "diffusion_bridge": {
        "about 1-1.5 hours on a T4 GPU": "setting: the full preset's time estimate",
        "The paper reports 0.868 unpaired content accuracy": "paper: the paper's accuracy with the trajectory cycle",
        "(0.662 without)": "paper: the paper's accuracy without the trajectory cycle",
    },
}

#: Typed numbers whose only printed match is a wall-clock timing, by coincidence: allowed like ALLOWED,
#: with a reason, but not reported as stale when a later run prints another time.
TIMING_COINCIDENCES: dict[str, dict[str, str]] = {
    "step_diffusion_policy": {
        "| 8 | 84, 72, …, 12, 0 | 84 | 0.232 |": "constant: the leading-spacing timesteps and tau_1 at K' = 8 "
                                              "(84 ms per decision is also a timing of the start-up table)",
    },
}

#: Figures of the run typed by hand, to be glued (each needs its page re-executed). May only shrink.
TYPED_PENDING: dict[str, list[str]] = {}

GUARDED = [slug for slug in SLUGS if slug not in NOT_GUARDED]


def _numbers(phrase: str) -> set[str]:
    return {m[0] for m in NUMBER.finditer(phrase)}


def _covers(phrase: str, token: str, source: str) -> bool:
    return phrase in source and token in _numbers(phrase)


def _code(text: str) -> dict:
    return {"cell_type": "code", "source": "...",
            "outputs": [{"output_type": "stream", "name": "stdout", "text": text}]}


def _markdown(text: str) -> dict:
    return {"cell_type": "markdown", "source": text}


def _glued(name: str, text: str) -> dict:
    return {"cell_type": "code", "source": "...", "outputs": [{
        "output_type": "display_data", "data": {GLUE_MIME: repr(text)},
        "metadata": {"scrapbook": {"name": name, "mime_prefix": "application/papermill.record/"}}}]}


def test_the_guard_flags_a_typed_run_figure_and_passes_a_glued_one():
    typed = [_code("lead over the baseline: 0.6317 (3 seeds), 1,200 steps\n"),
             _markdown("The method leads by 0.63, after 1,200 steps.")]
    assert {(h.cell, h.token, h.rounded) for h in typed_run_figures("toy", typed)} == {
        (1, "0.63", True), (1, "1,200", False)}
    exact = [_glued("lead", "0.632"), _markdown("The method leads by 0.632 in every seed.")]
    (hit,) = typed_run_figures("toy", exact)
    assert (hit.token, hit.printed.cell, hit.sentence) == ("0.632", 0, "The method leads by 0.632 in every seed.")
    glued = [_glued("lead", "0.632"), _markdown("The method leads by {glue:text}`lead` in every seed.")]
    assert typed_run_figures("toy", glued) == []


def test_what_is_not_prose_or_not_a_figure_is_not_flagged():
    printed = _code("0.632 0.5 63% 2026 12 1.5e-3 1,200 4.25\n")
    prose = _markdown(
        "# 4.25 Results\n\nMath $x=0.632$ and $$y = 1{,}200$$ and `0.632` and {cite}`a2026` and "
        "[a link](https://example.org/0.632) are not prose; Table 4.25 and Section 4.25 are references; "
        "0.5 has one significant digit, 12 is small, 2026 is a year.\n\n"
        "```python\nlead = 0.632\n```\n")
    assert typed_run_figures("toy", [printed, prose]) == []
    # the body of a MyST directive is prose, a percentage stands for its fraction
    note = _markdown("```{admonition} Solution\n:class: dropdown\n\nAbout 63% of the runs.\n```")
    assert [h.token for h in typed_run_figures("toy", [_code("share 0.63\n"), note])] == ["63"]
    assert "0.632" not in prose_text("See ![a plot](fig_0.632.png) and <span title='0.632'>here</span>.")


def test_source_listings_are_not_run_figures():
    listing = {"cell_type": "code", "source": "show_source(f)", "outputs": [{
        "output_type": "display_data", "metadata": {},
        "data": {"text/latex": "\\begin{Verbatim}x = 0.632\\end{Verbatim}", "text/plain": "x = 0.632",
                 "text/html": "<pre>x = 0.632</pre>"}}]}
    assert typed_run_figures("toy", [listing, _markdown("We set x to 0.632.")]) == []


def test_every_allowed_reason_names_a_category_and_every_entry_a_guarded_chapter():
    for slug, entries in [*ALLOWED.items(), *TIMING_COINCIDENCES.items()]:
        assert slug in GUARDED, slug
        for phrase, reason in entries.items():
            assert reason.split(":")[0] in CATEGORIES, f"{slug}: {phrase!r}: {reason!r}"
            assert _numbers(phrase), f"{slug}: {phrase!r} holds no number"
    assert set(TYPED_PENDING) <= set(GUARDED)
    assert set(NOT_GUARDED) <= set(SLUGS)


def _caption_cells(cells: list[dict]) -> list[dict]:
    """Each figure caption (the code cell's ``mystnb.figure.caption`` metadata, which MyST-NB renders as
    MyST, roles included) as a markdown cell, to be appended after the notebook's own cells."""
    caps = [c.get("metadata", {}).get("mystnb", {}).get("figure", {}).get("caption") for c in cells]
    return [_markdown(cap) for cap in caps if cap]


def test_the_guard_reads_figure_captions():
    fig = {"cell_type": "code", "source": "...", "metadata": {"mystnb": {"figure": {"caption": "Leads by 0.632."}}},
           "outputs": [{"output_type": "stream", "name": "stdout", "text": "lead 0.632\n"}]}
    cells = [fig]
    hits = [h for h in typed_run_figures("toy", cells + _caption_cells(cells)) if h.cell >= len(cells)]
    assert [h.token for h in hits] == ["0.632"]
    fig["metadata"]["mystnb"]["figure"]["caption"] = "Leads by {glue:text}`lead`."
    assert typed_run_figures("toy", cells + _caption_cells(cells)) == []


@pytest.mark.parametrize("slug", GUARDED)
def test_no_run_figure_is_typed_in_the_prose(slug):
    """The running prose and the figure captions (an ALLOWED phrase covers either)."""
    cells = json.loads(chapter_path(slug).read_text())["cells"]
    cells = cells + _caption_cells(cells)
    sources = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in cells]
    allowed, pending = ALLOWED.get(slug, {}), TYPED_PENDING.get(slug, [])
    timings = TIMING_COINCIDENCES.get(slug, {})
    used_allowed, used_pending, typed = set(), set(), []
    for hit in typed_run_figures(slug, cells):
        source = sources[hit.cell]
        by_allow = {p for p in allowed if _covers(p, hit.token, source)}
        by_pending = {p for p in pending if _covers(p, hit.token, source)}
        used_allowed |= by_allow
        used_pending |= by_pending
        if not by_allow and not by_pending and not any(_covers(p, hit.token, source) for p in timings):
            typed.append(str(hit))
    assert not typed, (f"{slug}: figures of the run typed into the prose; glue them ({{glue:text}}), or, if one is "
                       "not the run's, add its phrase to ALLOWED with a reason:\n" + "\n".join(typed))
    stale_pending = [p for p in pending if p not in used_pending]
    assert not stale_pending, f"{slug}: no longer typed; remove from TYPED_PENDING (it may only shrink): {stale_pending}"
    stale_allowed = [p for p in allowed if p not in used_allowed]
    assert not stale_allowed, f"{slug}: ALLOWED entries that match no hit any more, remove them: {stale_allowed}"
