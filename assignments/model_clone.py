"""Graded exercises for model_clone (chapter exercises 1-4). Format: assignments/README.md."""

TITLE = "Deep learning model cloning: graded exercises"

SETUP = """
import icml26.numerics; icml26.numerics.pin_cpu_numerics()
import contextlib, copy, io, logging
import torch
from torch import nn
from icml26.model_clone import GraphExportError, get_config, graph, detector, experiment, baselines, clones
from icml26.model_clone.models import layer_chain, load_digits_halves, make_mlp, train_full_batch

logging.getLogger("torch.fx.experimental.symbolic_shapes").disabled = True  # a failed export's trace

# The graded variant: seed 7 and the `smoke` preset's small models (an MLP 64-32-10); the chapter
# prints seed 0 at `reduced` (an MLP 64-128-64-10). The answers below are printed nowhere.
SEED = 7
ex = experiment.example_input("cpu")
data = load_digits_halves("cpu", SEED)  # digits halves A and B


def quiet():
    \"\"\"Silence stderr: a failed export prints the graph it traced.\"\"\"
    return contextlib.redirect_stderr(io.StringIO())


def scores(a, b):
    \"\"\"S_G, S_W and S of the pair (a, b), with the chapter's detector settings.\"\"\"
    return detector.clone_scores(detector.fingerprint(a, ex), detector.fingerprint(b, ex))
"""

QUESTIONS = [
    dict(name="branch_clone", exercise=1, points=1,
         prompt="""
**Exercise 1 (easy, coding).** Take `torch.manual_seed(SEED); base = make_mlp((64, 32, 10))`. Write
`Branchy(nn.Module)`, which holds `self.net = base` and returns `self.net(x)` if `x.sum() > 0` and
`-self.net(x)` otherwise, and pass `Branchy(base)` to `graph.normalised_graph(model, ex)` (inside
`with quiet():` from the setup cell, since a failed export prints the graph it traced). Then write
`Where(Branchy)`, whose `forward` computes the same thing with `torch.where(x.sum() > 0, y, -y)`, and
compare `Where(base)` with `base`.

*Deliverable:* `error_type` (str: the name of the exception class the export of `Branchy(base)`
raises), `sg_where` and `sw_where` (floats: $S_G$ and $S_W$ of the pair `(base, Where(base))`, with
`scores` from the setup cell). Graded variant: seed 7, an MLP 64-32-10.
""",
         solution="""
torch.manual_seed(SEED)
base = make_mlp((64, 32, 10))
# BEGIN SOLUTION
class Branchy(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        y = self.net(x)
        if x.sum() > 0:
            return y
        return -y


class Where(Branchy):
    def forward(self, x):
        y = self.net(x)
        return torch.where(x.sum() > 0, y, -y)


try:
    with quiet():
        graph.normalised_graph(Branchy(base), ex)
    error_type = "none"
except Exception as error:
    error_type = type(error).__name__
s = scores(base, Where(base))
sg_where, sw_where = s["S_G"], s["S_W"]
# END SOLUTION
""",
         public=["assert isinstance(error_type, str) and isinstance(sg_where, float) and isinstance(sw_where, float)",
                 "assert isinstance(sg_where, float) and 0 <= sg_where < 1, 'the extra nodes change the graph'"],
         hidden=["assert isinstance(error_type, str) and error_type == 'GraphExportError'",
                 "assert isinstance(sg_where, float) and abs(sg_where - 0.2033) < 1e-3",
                 "assert isinstance(sw_where, float) and abs(sw_where - 1.0) < 1e-9"],
         wrong="""
torch.manual_seed(SEED)
base = make_mlp((64, 32, 10))
error_type = "RuntimeError"
sg_where, sw_where = 1.0, 1.0
"""),
    dict(name="per_unit_rescale", exercise=2, points=2,
         prompt="""
**Exercise 2 (medium, coding).** Write `rescale_units(model, a)`: a copy of `model` in which row $j$
of the first layer's weight and entry $j$ of its bias are multiplied by $a_j$ and column $j$ of the
second layer's weight is divided by $a_j$ (the layers from `layer_chain`). Apply it to the trained
base `base = experiment.train_base("mlp", 0, data, get_config("smoke"), SEED, "cpu")` with
`a = 0.5 + 1.5 * torch.rand(32, generator=torch.Generator().manual_seed(SEED))`.

*Deliverable:* `rescale_units`, and four floats: `out_diff` (the largest absolute difference of the
two models' outputs on `data.x[1]`), `sw_unit` ($S_W$ of the pair, with `scores`), `b1_unit` (the
aligned cosine B1, `baselines.aligned_cosine`) and `sv_gap` (the largest absolute difference between
the singular values of $W_2W_1$ in the base and in the copy). Graded variant: seed 7, the `smoke`
base MLP 64-32-10.
""",
         solution="""
base = experiment.train_base("mlp", 0, data, get_config("smoke"), SEED, "cpu")
a = 0.5 + 1.5 * torch.rand(32, generator=torch.Generator().manual_seed(SEED))
# BEGIN SOLUTION
@torch.no_grad()
def rescale_units(model, a):
    out = copy.deepcopy(model)
    first, second = layer_chain(out)[:2]
    first.weight.mul_(a[:, None])  # (hidden, in): row j times a_j
    first.bias.mul_(a)
    second.weight.div_(a[None, :])  # (out, hidden): column j divided by a_j
    return out


def product_svs(model):
    first, second = layer_chain(model)[:2]
    return torch.linalg.svdvals(second.weight.detach() @ first.weight.detach())


clone = rescale_units(base, a)
with torch.no_grad():
    out_diff = float((base(data.x[1]) - clone(data.x[1])).abs().max())
sw_unit = scores(base, clone)["S_W"]
b1_unit = baselines.aligned_cosine(base, clone)
sv_gap = float((product_svs(base) - product_svs(clone)).abs().max())
# END SOLUTION
""",
         public=["assert all(isinstance(x, float) for x in (out_diff, sw_unit, b1_unit, sv_gap))",
                 "assert isinstance(out_diff, float) and out_diff < 1e-3, 'the function is unchanged'",
                 "assert isinstance(sv_gap, float) and sv_gap < 1e-3, 'W2 W1 does not see the rescaling'"],
         hidden=["assert isinstance(sw_unit, float) and abs(sw_unit - 0.1804) < 0.005",
                 "assert isinstance(b1_unit, float) and abs(b1_unit - 0.9473) < 0.005",
                 "assert callable(rescale_units)\n"
                 "_ = torch.manual_seed(1)\n"
                 "m = make_mlp((64, 16, 10))\n"
                 "a2 = torch.linspace(0.5, 2.0, 16)\n"
                 "r = rescale_units(m, a2)\n"
                 "assert torch.allclose(layer_chain(r)[0].weight, layer_chain(m)[0].weight * a2[:, None])\n"
                 "assert torch.allclose(m(data.x[0][:8]), r(data.x[0][:8]), atol=1e-5)"],
         wrong="""
base = experiment.train_base("mlp", 0, data, get_config("smoke"), SEED, "cpu")
a = 0.5 + 1.5 * torch.rand(32, generator=torch.Generator().manual_seed(SEED))

def rescale_units(model, a):
    return clones.rescale_layers(model, 2.0)

out_diff, sw_unit, b1_unit, sv_gap = 0.0, 1.0, 1.0, 0.0
"""),
    dict(name="structure_level", exercise=3, points=2,
         prompt="""
**Exercise 3 (medium, coding).** Build the clone benchmark of the `smoke` preset with a two-stage
CNN, `bench = experiment.run_benchmark(get_config("smoke", cnn_channels=(4, 8)), seed=SEED)`. Read
`experiment.level_facts(bench)` and the sweep `experiment.combination_sweep(bench, (0.0, 0.5))`.

*Deliverable:* five values: `min_sw_clones` and `max_sw_cross` (floats: the smallest $S_W$ over the
clone pairs and the largest over the cross-architecture non-clones), `auc_w` and `auc_half` (floats:
the ROC-AUC over all pairs at $\\lambda=0$ and at $\\lambda=0.5$), and `structure_helps` (bool: is
`auc_half > auc_w`?). Graded variant: seed 7, `smoke` with `cnn_channels=(4, 8)`.
""",
         solution="""
bench = experiment.run_benchmark(get_config("smoke", cnn_channels=(4, 8)), seed=SEED)
# BEGIN SOLUTION
facts = experiment.level_facts(bench)
min_sw_clones = facts["min S_W over clones"]
max_sw_cross = facts["max S_W over cross-arch non-clones"]
sweep = {row["lam"]: row["AUC all pairs"] for row in experiment.combination_sweep(bench, (0.0, 0.5))}
auc_w, auc_half = sweep[0.0], sweep[0.5]
structure_helps = bool(auc_half > auc_w)
# END SOLUTION
""",
         public=["assert all(isinstance(x, float) for x in (min_sw_clones, max_sw_cross, auc_w, auc_half))",
                 "assert isinstance(structure_helps, bool)",
                 "assert isinstance(auc_w, float) and 0.5 <= auc_w <= 1 and 0.5 <= auc_half <= 1"],
         hidden=["assert isinstance(min_sw_clones, float) and abs(min_sw_clones - 0.0257) < 0.003\n"
                 "assert abs(max_sw_cross - 0.0045) < 0.002",
                 "assert isinstance(auc_w, float) and abs(auc_w - 0.9861) < 0.002 and abs(auc_half - 0.9503) < 0.002",
                 "assert structure_helps is False"],
         wrong="""
bench = experiment.run_benchmark(get_config("smoke", cnn_channels=(4, 8)), seed=SEED)
min_sw_clones, max_sw_cross = 0.0001, 0.0168
auc_w, auc_half = 0.9474, 0.9503
structure_helps = True
"""),
    dict(name="random_inits", exercise=4, points=2,
         prompt="""
**Exercise 4 (hard, experimental).** How alike are two random initialisations, and what does
training do to that? With `init(widths, s)` = `torch.manual_seed(s)` followed by `make_mlp(widths)`:

- `sw_init_small`: $S_W$ of `init((64, 32, 10), SEED)` and `init((64, 32, 10), SEED + 1)`;
- `sw_init_large`: the same with widths `(64, 512, 10)`;
- `sw_independent`: $S_W$ of those two small initialisations after each is trained with
  `train_full_batch(model, data.x[0], data.y[0], 150, 1e-2)`;
- `sw_finetune`: $S_W$ of the first trained model and its 20-step fine-tune on the other half,
  `clones.fine_tune(model, data.x[1], data.y[1], 20, 1e-3)`.

*Deliverable:* the four floats. Graded variant: seeds 7 and 8, digits halves from seed 7.
""",
         solution="""
def init(widths, s):
    torch.manual_seed(s)
    return make_mlp(widths)

# BEGIN SOLUTION
sw_init_small = scores(init((64, 32, 10), SEED), init((64, 32, 10), SEED + 1))["S_W"]
sw_init_large = scores(init((64, 512, 10), SEED), init((64, 512, 10), SEED + 1))["S_W"]
first = train_full_batch(init((64, 32, 10), SEED), data.x[0], data.y[0], 150, 1e-2)
second = train_full_batch(init((64, 32, 10), SEED + 1), data.x[0], data.y[0], 150, 1e-2)
sw_independent = scores(first, second)["S_W"]
sw_finetune = scores(first, clones.fine_tune(first, data.x[1], data.y[1], 20, 1e-3))["S_W"]
# END SOLUTION
""",
         public=["assert all(isinstance(x, float) and 0 < x <= 1 for x in (sw_init_small, sw_init_large, sw_independent, sw_finetune))",
                 "assert isinstance(sw_init_large, float) and sw_init_large > sw_init_small, "
                 "'more entries per tensor: closer empirical quantiles and spectra'"],
         hidden=["assert isinstance(sw_init_small, float) and abs(sw_init_small - 0.3362) < 0.005",
                 "assert isinstance(sw_init_large, float) and abs(sw_init_large - 0.8312) < 0.005",
                 "assert isinstance(sw_independent, float) and abs(sw_independent - 0.0973) < 0.01",
                 "assert isinstance(sw_finetune, float) and abs(sw_finetune - 0.8479) < 0.01"],
         wrong="""
def init(widths, s):
    torch.manual_seed(s)
    return make_mlp(widths)

sw_init_small = sw_init_large = 0.99
sw_independent, sw_finetune = 0.5, 0.5
"""),
]
