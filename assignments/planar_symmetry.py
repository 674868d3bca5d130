"""Graded exercises for planar_symmetry (chapter exercises 2-5). Format: assignments/README.md."""

TITLE = "Planar symmetric pattern generation: graded exercises"

SETUP = """
import icml26.numerics; icml26.numerics.pin_cpu_numerics()
import torch
from icml26.planar_symmetry import experiment, fields, get_config, groups, metrics

# The graded variants (the chapter prints none of these answers):
# exercise 2: the group p31m;
# exercise 3: the group p4gm, bases drawn with seed 3;
# exercise 4: the group cm at the `smoke` preset with 24 x 24 training pixels, 300 steps;
# exercise 5: the group p3m1 with a 3-level grid (4 to 16 cells) on 32 x 32 points.
"""

QUESTIONS = [
    dict(name="count_generators", exercise=2, points=1,
         prompt="""
**Exercise 2 (easy).** For `g = groups.get_group("p31m")`, count $|W/\\mathbb Z^2|$ and $|G/\\mathbb Z^2|$
(`len(g.w_elements)`, `len(g.elements)`), then evaluate `g.eta` at the images `g.w_orbit(u)` of the point
`u` below and study the matrix `g.eta(g.w_orbit(u))[0]`.

*Deliverable:* `n_w`, `n_g`, `rank` (the matrix rank of that matrix) and `distinct_rows` (how many
different rows it has, after rounding to 8 decimals), all ints.
""",
         solution="""
g = groups.get_group("p31m")
u = torch.rand(1, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
# BEGIN SOLUTION
n_w, n_g = len(g.w_elements), len(g.elements)
M = g.eta(g.w_orbit(u))[0]  # (n_w, r)
rank = int(torch.linalg.matrix_rank(M))
distinct_rows = int(M.round(decimals=8).unique(dim=0).shape[0])
# END SOLUTION
""",
         public=["assert all(isinstance(x, int) for x in (n_w, n_g, rank, distinct_rows))",
                 "assert isinstance(n_w, int) and n_w % n_g == 0 and n_w // n_g == groups.get_group('p31m').rank, 'the ratio is the rank r'"],
         hidden=["assert isinstance(n_w, int) and (n_w, n_g) == (12, 6)",
                 "assert isinstance(rank, int) and (rank, distinct_rows) == (2, 2)"],
         wrong="n_w, n_g, rank, distinct_rows = 12, 6, 12, 12"),
    dict(name="fourier_tears", exercise=3, points=2,
         prompt="""
**Exercise 3 (easy).** For p4gm, build Eq. 3 and the naive wrap on a Fourier-feature base,
`fields.make_field(kind, g, fields.make_base("fourier", torch.Generator().manual_seed(3)))`, and Eq. 3 on
the grid base `fields.make_base("grid", torch.Generator().manual_seed(3))`. Measure with the default
number of pairs and `seed=3`.

*Deliverable:* `tear_eq3` and `tear_naive` (floats: `metrics.tear_ratio` of Eq. 3 and of the naive wrap,
Fourier base), `lip_grid` and `lip_fourier` (floats: `metrics.lipschitz_estimate` of Eq. 3 at
$h=5\\times10^{-3}$ with the grid and with the Fourier base).
""",
         solution="""
g = groups.get_group("p4gm")
base = lambda kind: fields.make_base(kind, torch.Generator().manual_seed(3))
# BEGIN SOLUTION
eq3_f = fields.make_field("symmetrized", g, base("fourier"))
tear_eq3 = metrics.tear_ratio(eq3_f, g, seed=3)
tear_naive = metrics.tear_ratio(fields.make_field("naive_wrap", g, base("fourier")), g, seed=3)
lip_grid = metrics.lipschitz_estimate(fields.make_field("symmetrized", g, base("grid")), g, 5e-3, seed=3)
lip_fourier = metrics.lipschitz_estimate(eq3_f, g, 5e-3, seed=3)
# END SOLUTION
""",
         public=["assert all(isinstance(x, float) and x > 0 for x in (tear_eq3, tear_naive, lip_grid, lip_fourier))",
                 "assert isinstance(tear_eq3, float) and tear_eq3 < 2 < tear_naive, 'Eq. 3 has no seam; the naive wrap has'"],
         hidden=["assert isinstance(tear_eq3, float) and abs(tear_eq3 - 1.0119) < 0.01 and abs(tear_naive - 10.0889) < 0.05",
                 "assert isinstance(lip_grid, float) and abs(lip_grid - 60.6865) < 0.2 and abs(lip_fourier - 5.1618) < 0.02"],
         wrong="tear_eq3, tear_naive = 1.0, 1.0\nlip_grid = lip_fourier = 60.0"),
    dict(name="too_fine", exercise=4, points=2,
         prompt="""
**Exercise 4 (medium, experimental).** Fit Eq. 3 for cm with its base read at the full resolution
of the alcove's bounding box, at the `cfg4` below (`smoke` with 24 x 24 training pixels) for 300 steps:
`experiment.run_fitting(cfg4, groups=("cm",), kinds=("symmetrized",), resolution="box", steps=300)`.
Then count the distinct alcove rows that the 24 training rows reach:
`g.fold(experiment.cell_grid(24).reshape(-1, 2))[:, 1]`, rounded to 9 decimals.

*Deliverable:* `train_psnr` and `heldout_psnr` (floats, dB, from the fit's `train_psnr` and `psnr`
at the key `("cm", "symmetrized")`) and `alcove_rows` (int).
""",
         solution="""
cfg4 = get_config("smoke", fit_res=24, eval_res=29)
g = groups.get_group("cm")
# BEGIN SOLUTION
fit = experiment.run_fitting(cfg4, groups=("cm",), kinds=("symmetrized",), resolution="box", steps=300)
train_psnr, heldout_psnr = fit.train_psnr[("cm", "symmetrized")], fit.psnr[("cm", "symmetrized")]
alcove_rows = int(g.fold(experiment.cell_grid(24).reshape(-1, 2))[:, 1].round(decimals=9).unique().numel())
# END SOLUTION
""",
         public=["assert isinstance(train_psnr, float) and isinstance(heldout_psnr, float) and isinstance(alcove_rows, int)",
                 "assert isinstance(train_psnr, float) and train_psnr > heldout_psnr, 'the base fits its training pixels better than the rest'"],
         hidden=["assert isinstance(train_psnr, float) and train_psnr > 100",
                 "assert isinstance(heldout_psnr, float) and abs(heldout_psnr - 13.08) < 0.05",
                 "assert isinstance(alcove_rows, int) and alcove_rows == 6"],
         wrong="train_psnr, heldout_psnr = 40.0, 38.0\nalcove_rows = 24"),
    dict(name="capacity", exercise=5, points=3,
         prompt="""
**Exercise 5 (hard, experimental).** For p3m1, count how many independent functions each construction
can put on the 32 x 32 points `u` below, with the 3-level grid `base` (4 to 16 cells):
`metrics.effective_dimension(fields.make_field(kind, g, base), u)` for `kind` in `"symmetrized"` and
`"group_average"`.

*Deliverable:* `dim_eq3` and `dim_avg` (ints) and `avg_gains` (bool: is `dim_avg` at least 1.5 times
`dim_eq3`?).
""",
         solution="""
g = groups.get_group("p3m1")
base = fields.make_base("grid", levels=3, base_res=4, max_res=16)
u = experiment.cell_grid(32).reshape(-1, 2)
# BEGIN SOLUTION
dim_eq3 = metrics.effective_dimension(fields.make_field("symmetrized", g, base), u)
dim_avg = metrics.effective_dimension(fields.make_field("group_average", g, base), u)
avg_gains = bool(dim_avg >= 1.5 * dim_eq3)
# END SOLUTION
""",
         public=["assert isinstance(dim_eq3, int) and isinstance(dim_avg, int) and 0 < dim_eq3 <= 1024 and 0 < dim_avg <= 1024",
                 "assert isinstance(avg_gains, bool) and avg_gains == (dim_avg >= 1.5 * dim_eq3)"],
         hidden=["assert isinstance(dim_eq3, int) and abs(dim_eq3 - 83) <= 1 and abs(dim_avg - 153) <= 1",
                 "assert avg_gains is True"],
         wrong="dim_eq3, dim_avg = 153, 83\navg_gains = False"),
]
