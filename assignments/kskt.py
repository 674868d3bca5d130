"""Graded exercises for kskt (chapter exercises 1, 3, 4 and 5). Format: assignments/README.md."""

TITLE = "KSKT: graded exercises"

SETUP = """
import icml26.numerics; icml26.numerics.pin_cpu_numerics()
import math
import torch
import torch.nn.functional as F
from icml26.kskt import get_config, model
from icml26.kskt.data import SLOT_POS, VOCAB_SIZE, context_masks, make_roleplay_data, model_inputs
from icml26.kskt.experiment import alignment_diagnostic, build_models, variance_share
from icml26.kskt.model import build_kskt, tiny_qwen3_config
from icml26.kskt.train import clm_loss, train_model

# The graded variant: model seed 4 and data seed 11 for the checks on untrained models, and the `smoke`
# preset at seed 5 for the trained ones (the chapter prints seed 0 at `reduced`, and model seed 0 with data
# seed 3 for the routing check; the answers below are printed nowhere).
MODEL_SEED, DATA_SEED = 4, 11
SEED = 5
cfg = get_config("smoke")
train_items = make_roleplay_data(cfg.n_train, cfg.conflict_rate, seed=1000 + SEED)
test_items = make_roleplay_data(cfg.n_test, cfg.conflict_rate, seed=2000 + SEED)
"""

QUESTIONS = [
    dict(name="init_gradients", exercise=1, points=2,
         prompt="""
**Exercise 1 (easy).** Build a fresh model, `net = build_kskt(tiny_qwen3_config(VOCAB_SIZE), seed=MODEL_SEED)`,
take one batch `d = make_roleplay_data(16, seed=DATA_SEED)`, run `out = net(d.input_ids,
**model_inputs(d.input_ids))` and backpropagate `clm_loss(out.logits, d.labels)` once. Then look at the
*first* KSKT block, `b = net.blocks[0]`.

*Deliverable:* `gate_learns` (bool: does `b.dsaa.fuse.weight` get a non-zero gradient?), `gate_grad_max`
(float: the largest absolute entry of that gradient) and `n_zero_mupe` (int: how many parameter tensors of
`b.mupe` get a gradient that is exactly zero everywhere). Model seed 4, data seed 11.
""",
         solution="""
net = build_kskt(tiny_qwen3_config(VOCAB_SIZE), seed=MODEL_SEED)
d = make_roleplay_data(16, seed=DATA_SEED)
out = net(d.input_ids, **model_inputs(d.input_ids))
clm_loss(out.logits, d.labels).backward()
b = net.blocks[0]
# BEGIN SOLUTION
g = b.dsaa.fuse.weight.grad
gate_learns = bool((g != 0).any())
gate_grad_max = float(g.abs().max())
n_zero_mupe = sum(int(p.grad is None or not bool((p.grad != 0).any())) for p in b.mupe.parameters())
# END SOLUTION
""",
         public=["assert isinstance(gate_learns, bool) and isinstance(gate_grad_max, float) and isinstance(n_zero_mupe, int)",
                 "assert isinstance(gate_grad_max, float) and gate_grad_max >= 0.0 and gate_learns == (gate_grad_max > 0)",
                 "assert isinstance(n_zero_mupe, int) and 0 <= n_zero_mupe <= len(list(b.mupe.parameters()))"],
         hidden=["assert gate_learns is True and n_zero_mupe == 9",
                 "assert isinstance(gate_grad_max, float) and abs(gate_grad_max - 2.6385e-4) < 0.02 * 2.6385e-4"],
         wrong="gate_learns = False\ngate_grad_max = 0.0\nn_zero_mupe = 11"),
    dict(name="alignment_targets", exercise=3, points=2,
         prompt="""
**Exercise 3 (medium).** What can $L_{\\text{und}}$ teach the other stream about the user's topic? Start with
its target. For `context_source="extracted"` and `"span_mean"`, build the *untrained* KSKT model,
`kskt = build_models(get_config("smoke", context_source=src), SEED, torch.device("cpu"))[0]`, run it on
`test_items` (under `torch.no_grad()`, with `**model_inputs(test_items.input_ids)`) and measure which share of
the variance of the targets $\\bar U_i$ (`out.u_bar`) the topic explains:
`variance_share(out.u_bar.numpy(), test_items.topic.numpy())`.

*Deliverable:* `share_extracted` and `share_span` (floats), at seed 5, `smoke`. Before you run: what ratio
between the two do you expect from the tokens each target averages?
""",
         solution="""
# BEGIN SOLUTION
def topic_share(src):
    kskt = build_models(get_config("smoke", context_source=src), SEED, torch.device("cpu"))[0]
    with torch.no_grad():
        out = kskt(test_items.input_ids, **model_inputs(test_items.input_ids))
    return float(variance_share(out.u_bar.numpy(), test_items.topic.numpy()))

share_extracted = topic_share("extracted")
share_span = topic_share("span_mean")
# END SOLUTION
""",
         public=["assert isinstance(share_extracted, float) and isinstance(share_span, float)",
                 "assert isinstance(share_span, float) and 0.0 <= share_span <= 1.0 and 0.0 <= share_extracted <= 1.0",
                 "assert isinstance(share_span, float) and share_span < share_extracted, "
                 "'fillers in the average can only dilute the topic'"],
         hidden=["assert abs(share_extracted - 0.6440) < 0.005 and abs(share_span - 0.3096) < 0.005"],
         wrong="share_extracted, share_span = 0.5, 0.25"),
    dict(name="leaky_router", exercise=4, points=2,
         prompt="""
**Exercise 4 (hard).** Write `route_over_all_tokens(self, h, ctx)`, a version of `SelfAwarenessMoE.route` that
pools over *all* tokens (no `masked_fill`). On `net = build_kskt(tiny_qwen3_config(VOCAB_SIZE,
intermediate_size=32), seed=MODEL_SEED).eval()` and the items `make_roleplay_data(8, seed=DATA_SEED)`,
change the token at `t = SLOT_POS["r2"]` to the next id (`(ids[:, t] + 1) % VOCAB_SIZE`) and compare the
logits (with `force_system2=True`) before and after the change. Put the book's router back when you are done.

*Deliverable:* `leak_book` (float: the largest change of the logits at positions before `t` with the book's
router), `leak_leaky` (the same with your router in place) and `change_at_t` (float: the largest change at
position `t` with your router). Model seed 4, data seed 11.
""",
         solution="""
# BEGIN SOLUTION
def route_over_all_tokens(self, h, ctx):
    scores = ctx.r_proc @ self.key(h).transpose(1, 2) / math.sqrt(h.shape[-1])  # (B, n, T), no mask
    w = torch.softmax(scores, dim=-1).sum(1)
    w = w / w.sum(-1, keepdim=True)  # (B, T)
    x = torch.cat([(w.unsqueeze(-1) * h).sum(1), ctx.r_bar], dim=-1)
    return torch.softmax(self.router(F.silu(self.wa(x)) * self.wb(x)) / self.log_tau.exp(), dim=-1)

def changes(net):
    ids = make_roleplay_data(8, seed=DATA_SEED).input_ids.clone()
    r, u = context_masks(ids)
    t = SLOT_POS["r2"]
    with torch.no_grad():
        before = net(ids, r, u, force_system2=True).logits  # (B, T, V)
        ids[:, t] = (ids[:, t] + 1) % VOCAB_SIZE
        after = net(ids, r, u, force_system2=True).logits
    return (before[:, :t] - after[:, :t]).abs().max().item(), (before[:, t] - after[:, t]).abs().max().item()

net = build_kskt(tiny_qwen3_config(VOCAB_SIZE, intermediate_size=32), seed=MODEL_SEED).eval()
book_route = model.SelfAwarenessMoE.route
leak_book = changes(net)[0]
model.SelfAwarenessMoE.route = route_over_all_tokens
try:
    leak_leaky, change_at_t = changes(net)
finally:
    model.SelfAwarenessMoE.route = book_route
# END SOLUTION
""",
         public=["assert all(isinstance(v, float) for v in (leak_book, leak_leaky, change_at_t))",
                 "assert isinstance(leak_book, float) and leak_book == 0.0, 'the book router must not leak at all'",
                 "assert isinstance(leak_leaky, float) and 0.0 < leak_leaky < change_at_t, "
                 "'the leak is real but far smaller than the change at the position itself'",
                 "assert isinstance(leak_leaky, float) and model.SelfAwarenessMoE.route.__name__ == 'route', "
                 "'put the book router back'"],
         hidden=["assert isinstance(leak_leaky, float) and 1e-8 < leak_leaky < 1e-5",
                 "assert isinstance(change_at_t, float) and abs(change_at_t - 0.78905) < 1e-3 and leak_book == 0.0"],
         wrong="leak_book = 0.0\nleak_leaky = 0.0\nchange_at_t = 0.5"),
    dict(name="tied_embeddings", exercise=5, points=2,
         prompt="""
**Exercise 5 (hard, experimental).** Train the KSKT model of seed 5 at `smoke` twice, with untied and with tied
embeddings: `kskt = build_models(c, SEED, torch.device("cpu"))[0]` and
`train_model(kskt, train_items, test_items, c, seed=SEED)` with `c = cfg` and `c = get_config("smoke",
tie_embeddings=True)`. Then read `alignment_diagnostic(kskt, test_items)`.

*Deliverable:* `shared_untied` and `shared_tied` (floats: the self stream's `shared`, the mean cosine
between each $\\bar R_i$ and the corpus mean), and `own_minus_other_tied` (float: for the self stream of the
tied model, `other_item - own`), at seed 5, `smoke`.
""",
         solution="""
# BEGIN SOLUTION
def trained_diagnostic(c):
    kskt = build_models(c, SEED, torch.device("cpu"))[0]
    train_model(kskt, train_items, test_items, c, seed=SEED)
    return alignment_diagnostic(kskt, test_items)["self"]

untied = trained_diagnostic(cfg)
tied = trained_diagnostic(get_config("smoke", tie_embeddings=True))
shared_untied, shared_tied = float(untied["shared"]), float(tied["shared"])
own_minus_other_tied = float(tied["other_item"] - tied["own"])
# END SOLUTION
""",
         public=["assert all(isinstance(v, float) for v in (shared_untied, shared_tied, own_minus_other_tied))",
                 "assert isinstance(shared_tied, float) and -1.0 <= shared_untied <= 1.0 and -1.0 <= shared_tied <= 1.0",
                 "assert isinstance(shared_tied, float) and shared_tied > shared_untied, "
                 "'tying pulls the role embeddings together'"],
         hidden=["assert abs(shared_untied - 0.400) < 0.01 and abs(shared_tied - 0.741) < 0.01",
                 "assert isinstance(own_minus_other_tied, float) and abs(own_minus_other_tied - 0.026) < 0.01"],
         wrong="shared_untied, shared_tied = 0.4, 0.5\nown_minus_other_tied = 0.3"),
]
