"""Graded exercises for w2sg_bregman (chapter exercises 1, 3, 4 and 5). Format: assignments/README.md."""

TITLE = "Weak-to-strong generalization, a Bregman view: graded exercises"

SETUP = """
import icml26.numerics; icml26.numerics.pin_cpu_numerics()
import numpy as np
import pandas as pd
import torch
from icml26.w2sg_bregman import bias_variance, bregman_divergence, get_config, run_digits, run_synthetic

# The graded variant (the chapter prints other truths, seeds and settings; the answers below are printed
# nowhere in the book): exercise 1 the truth (0.5, 0.3, 0.2) and draw seed 3; exercise 3 the quartic
# phi(y) = sum_k y_k^4 on draws of seed 11; exercise 4 digits seed 11; exercise 5 synthetic seeds 7-9.
gen = torch.Generator().manual_seed(3)
g_truth = torch.tensor([[0.5, 0.3, 0.2]], dtype=torch.float64)  # (1, 3)
p_w = torch.softmax(torch.log(g_truth)[:, None] + 1.2 * torch.randn(1, 200, 3, generator=gen, dtype=torch.float64),
                    -1)  # 200 noisy teacher predictions for one input, (1, 200, 3)
gen_q = torch.Generator().manual_seed(11)
f_w = torch.randn(1000, 3, generator=gen_q, dtype=torch.float64)  # 1000 teacher draws, (1000, 3)
g_q = torch.randn(3, generator=gen_q, dtype=torch.float64)       # the truth for exercise 3, (3,)
"""

QUESTIONS = [
    dict(name="arithmetic_miss", exercise=1, points=1,
         prompt="""
**Exercise 1 (easy).** For the truth `g_truth` and the teacher draws `p_w` of the setup, compute the teacher's risk
$\\mathbb E\\,D(g,p_w)$, the posterior mean $\\bar p$ (`bias_variance(...)["f_bar"]` or `dual_mean`) and the
arithmetic mean $a$ of the draws. How much does $D(g,a)+\\mathbb E\\,D(a,p_w)$ miss the risk by, and what is the
three-point term $D(g,a)+D(a,\\bar p)-D(g,\\bar p)$?

*Deliverable:* `miss` and `three_point` (floats, in nats).
""",
         solution="""
# BEGIN SOLUTION
bv = bias_variance(g_truth, p_w, "kl")
p_bar, a = bv["f_bar"], p_w.mean(1)
miss = float(bregman_divergence(g_truth, a, "kl") + bregman_divergence(a[:, None], p_w, "kl").mean(1) - bv["risk"])
three_point = float(bregman_divergence(g_truth, a, "kl") + bregman_divergence(a, p_bar, "kl")
                    - bregman_divergence(g_truth, p_bar, "kl"))
# END SOLUTION
""",
         public=["assert isinstance(miss, float) and isinstance(three_point, float)",
                 "assert isinstance(miss, float) and isinstance(three_point, float) and abs(miss - three_point) < 1e-10, "
                 "'the miss is the three-point term'"],
         hidden=["assert isinstance(miss, float) and abs(miss - 0.0161004) < 1e-6",
                 "assert isinstance(three_point, float) and abs(three_point - 0.0161004) < 1e-6"],
         wrong="miss = 0.0\nthree_point = 0.0"),
    dict(name="own_bregman", exercise=3, points=2,
         prompt="""
**Exercise 3 (medium).** Take $\\phi(y)=\\sum_k y_k^4$. Write its Bregman divergence and its dual mean
$\\bar f=(\\nabla\\phi)^{-1}(\\mathbb E[\\nabla\\phi(f_w)])$ in torch (mind the sign of a cube root), and split the
risk of the teacher draws `f_w` against the truth `g_q` of the setup into bias $D(g,\\bar f)$ and variance
$\\mathbb E\\,D(\\bar f,f_w)$.

*Deliverable:* `quartic_div(y, y_hat)` (summed over the last axis), `quartic_dual_mean(f, dim=0)`, and the floats
`bias` and `variance` for the draws of seed 11.
""",
         solution="""
# BEGIN SOLUTION
def quartic_div(y, y_hat):
    return (y ** 4 - y_hat ** 4 - 4 * y_hat ** 3 * (y - y_hat)).sum(-1)

def quartic_dual_mean(f, dim=0):
    m = (f ** 3).mean(dim)  # the mean in the dual coordinates grad phi = 4 y^3
    return torch.sign(m) * m.abs() ** (1 / 3)

f_bar = quartic_dual_mean(f_w)
bias = float(quartic_div(g_q, f_bar))
variance = float(quartic_div(f_bar, f_w).mean())
# END SOLUTION
""",
         public=["assert callable(quartic_div) and callable(quartic_dual_mean)",
                 "assert callable(quartic_div) and callable(quartic_dual_mean) and isinstance(bias, float) "
                 "and isinstance(variance, float) and abs(float(quartic_div(g_q, f_w).mean()) - bias - variance) < 1e-9, "
                 "'bias + variance should equal the teacher risk'"],
         hidden=["assert callable(quartic_div) and abs(float(quartic_div(torch.tensor([1.0, 2.0], dtype=torch.float64), "
                 "torch.tensor([0.5, -1.0], dtype=torch.float64))) - 27.6875) < 1e-9",
                 "assert callable(quartic_dual_mean) and abs(float(quartic_dual_mean(torch.tensor([[1.0], [-2.0], [0.5]], "
                 "dtype=torch.float64))[0]) + 1.31841) < 1e-4",
                 "assert isinstance(bias, float) and abs(bias - 1.448248) < 1e-5 and abs(variance - 25.575901) < 1e-5"],
         wrong=("def quartic_div(y, y_hat):\n"
                "    return (y ** 4 - y_hat ** 4 - 4 * y_hat ** 3 * (y - y_hat)).sum(-1)\n"
                "\n"
                "def quartic_dual_mean(f, dim=0):\n"
                "    return f.mean(dim)\n"
                "\n"
                "f_bar = quartic_dual_mean(f_w)\n"
                "bias = float(quartic_div(g_q, f_bar))\n"
                "variance = float(quartic_div(f_bar, f_w).mean())")),
    dict(name="teacher_noise", exercise=4, points=2,
         prompt="""
**Exercise 4 (medium).** Train the forward-CE student of digits seed 11 at temperature 1 with a noise-free teacher
and with a very noisy one: `run_digits(get_config("reduced", b_teacher_noise=sigma), [11], temperatures=(1.0,),
losses=("ce",))` for $\\sigma\\in\\{0, 1\\}$ (each call also trains the strong ceiling).

*Deliverable:* `teacher_acc` and `gain`, dicts `{0.0: float, 1.0: float}`: the teacher's test accuracy and the CE
student's accuracy minus the teacher's, at seed 11.
""",
         solution="""
# BEGIN SOLUTION
teacher_acc, gain = {}, {}
for sigma in (0.0, 1.0):
    rows = run_digits(get_config("reduced", b_teacher_noise=sigma), [11], temperatures=(1.0,), losses=("ce",))
    ce = [row for row in rows if row["loss"] == "ce"][0]
    teacher_acc[sigma], gain[sigma] = ce["teacher_acc"], ce["student_acc"] - ce["teacher_acc"]
# END SOLUTION
""",
         public=["assert isinstance(teacher_acc, dict) and set(teacher_acc) == {0.0, 1.0}",
                 "assert isinstance(gain, dict) and set(gain) == {0.0, 1.0} and all(-1.0 <= v <= 1.0 for v in gain.values())",
                 "assert isinstance(teacher_acc, dict) and teacher_acc[1.0] < teacher_acc[0.0], "
                 "'a noisier view makes a worse teacher'"],
         hidden=["assert isinstance(teacher_acc, dict) and abs(teacher_acc[0.0] - 0.7505) < 0.002 "
                 "and abs(teacher_acc[1.0] - 0.2636) < 0.002",
                 "assert isinstance(gain, dict) and abs(gain[0.0] - 0.0161) < 0.01 and abs(gain[1.0] - 0.1992) < 0.01"],
         wrong="teacher_acc = {0.0: 0.815, 1.0: 0.270}\ngain = {0.0: 0.012, 1.0: 0.266}"),
    dict(name="overfit", exercise=5, points=2,
         prompt="""
**Exercise 5 (hard).** Run Part A for the squared loss with 400 student inputs, one noise level $\\sigma=1$, widths
64 and 256, synthetic seeds 7 to 9, once with the page's ridge penalty $10^{-3}$ and once with $10^{-6}$:
`run_synthetic(get_config("reduced", seeds=3, a_noise_levels=(1.0,), a_widths=(64, 256), a_n_student=400,
a_ridge=ridge), "squared", seed0=7)`.

*Deliverable:* `gain_wide` and `to_pm_wide`, dicts `{1e-3: float, 1e-6: float}`: the width-256 student's gain over its
teacher and its distance $D(\\bar f,f_s)$ to the posterior-mean teacher (`to_posterior_mean`), each the mean over
the three seeds.
""",
         solution="""
# BEGIN SOLUTION
gain_wide, to_pm_wide = {}, {}
for ridge in (1e-3, 1e-6):
    cfg = get_config("reduced", seeds=3, a_noise_levels=(1.0,), a_widths=(64, 256), a_n_student=400, a_ridge=ridge)
    wide = pd.DataFrame(run_synthetic(cfg, "squared", seed0=7)).query("width == 256")
    gain_wide[ridge], to_pm_wide[ridge] = float(wide.gain.mean()), float(wide.to_posterior_mean.mean())
# END SOLUTION
""",
         public=["assert isinstance(gain_wide, dict) and isinstance(to_pm_wide, dict) and set(gain_wide) == set(to_pm_wide) == {1e-3, 1e-6}",
                 "assert isinstance(to_pm_wide, dict) and all(v >= 0.0 for v in to_pm_wide.values()), 'a divergence is never negative'"],
         hidden=["assert isinstance(gain_wide, dict) and abs(gain_wide[1e-3] - 0.89114) < 0.01 and abs(gain_wide[1e-6] + 0.90832) < 0.02",
                 "assert isinstance(to_pm_wide, dict) and abs(to_pm_wide[1e-3] - 0.19201) < 0.005 and abs(to_pm_wide[1e-6] - 1.91646) < 0.04"],
         wrong="gain_wide = {1e-3: 0.89114, 1e-6: 0.83577}\nto_pm_wide = {1e-3: 0.19201, 1e-6: 0.26078}"),
]
