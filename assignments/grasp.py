"""Graded exercises for grasp (chapter exercises 1-4). Format: assignments/README.md."""

TITLE = "GRASP: graded exercises"

SETUP = """
import icml26.numerics; icml26.numerics.pin_cpu_numerics()
import math
import numpy as np
import torch
from icml26.grasp import agent, env, experiment, get_config

# The graded variant: groups of G = 8, a six-token episode, 20 questions on 16-node graphs drawn
# with seed 5, and a training run with seed 5 (the chapter prints G = 4 and seed 0; the answers
# below are printed nowhere).
SEED = 5
vocab = env.Vocab(32)

# Exercise 2: one episode's tokens, their ratios pi_theta / pi_old, and the loss mask (the last
# token is a tool output).
ratio = torch.tensor([0.75, 0.9, 1.0, 1.15, 1.25, 1.4])
mask = torch.tensor([1.0, 1.0, 1.0, 1.0, 1.0, 0.0])

# Exercise 3: 20 structure-blind oracle traces on 16-node graphs.
rng = np.random.default_rng(SEED)
questions = [env.sample_question(rng, 16, 0.25, 32, ("degree", "adjacent", "common")) for _ in range(20)]
traces = [env.oracle_trace(q, "blind") for q in questions]

# Exercise 4: a short Phase A (60 SFT steps of the reduced preset, seed 5) and 32 held-out
# structure-blind questions on 12-node graphs.
cfg = get_config("reduced", sft_steps=60)
held_out = experiment.eval_set(cfg, 12, SEED)[:32]
"""

QUESTIONS = [
    dict(name="advantages", exercise=1, points=1,
         prompt="""
**Exercise 1 (easy).** In a group of $G$ rollouts, $k$ are right (reward 1) and $G-k$ wrong. Derive
the advantages of a right and of a wrong rollout as functions of $k$ and $G$ (take $\\delta\\to0$),
then check them with `agent.group_advantages` for $G=8$.

*Deliverable:* `adv_k1` and `adv_k3` (lists of 8 floats: `agent.group_advantages` on a group of 8
with 1, and with 3, right answers, the right answers first); `right_k1` (a float: your formula's
advantage of the right answer for $k=1$, $G=8$).
""",
         solution="""
# BEGIN SOLUTION
adv_k1 = agent.group_advantages(torch.tensor([[1.0] + [0.0] * 7]))[0][0].tolist()
adv_k3 = agent.group_advantages(torch.tensor([[1.0] * 3 + [0.0] * 5]))[0][0].tolist()
right_k1 = math.sqrt((8 - 1) / 1)  # sqrt((G - k) / k)
# END SOLUTION
""",
         public=["assert isinstance(adv_k1, list) and isinstance(adv_k3, list) and len(adv_k1) == len(adv_k3) == 8",
                 "assert isinstance(adv_k1, list) and abs(sum(adv_k1)) < 1e-4 and abs(sum(adv_k3)) < 1e-4, "
                 "'the advantages of a group sum to zero'",
                 "assert isinstance(right_k1, float) and right_k1 > 0"],
         hidden=["assert isinstance(adv_k1, list) and abs(adv_k1[0] - 2.6450) < 2e-3 and abs(adv_k1[1] + 0.3779) < 2e-3",
                 "assert isinstance(adv_k3, list) and abs(adv_k3[0] - 1.2907) < 2e-3 and abs(adv_k3[7] + 0.7744) < 2e-3",
                 "assert isinstance(right_k1, float) and abs(right_k1 - math.sqrt(7)) < 1e-3"],
         wrong="adv_k1 = [1.0] + [-1.0 / 7] * 7\nadv_k3 = [1.0] * 3 + [-0.6] * 5\nright_k1 = 1.0"),
    dict(name="clip_gradient", exercise=2, points=2,
         prompt="""
**Exercise 2 (medium).** Take one episode whose six tokens have the ratios
$\\rho_t=\\pi_\\theta/\\pi_{\\text{old}}$ in `ratio` and the loss mask `mask` (the last token is a tool
output). With $\\epsilon=0.2$ and no KL term ($\\beta=0$), compute the gradient of `agent.grpo_loss`
with respect to the token log-probabilities, once for advantage $+1$ and once for $-1$ (use
`lp = ratio.log()` with `requires_grad`, `lp_old = 0`, `lp_ref = lp.detach()`).

*Deliverable:* `grad_pos`, `grad_neg` (lists of 6 floats: $\\partial\\,$loss$/\\partial\\log\\pi_\\theta$ per
token for $\\hat A=+1$ and $\\hat A=-1$).
""",
         solution="""
# BEGIN SOLUTION
def loss_grad(adv):
    lp = ratio.log().clone().requires_grad_(True)
    loss = agent.grpo_loss(lp[None], torch.zeros(1, 6), lp.detach()[None], torch.tensor([adv]), mask[None], 0.2, 0.0)
    loss.backward()
    return lp.grad.tolist()


grad_pos, grad_neg = loss_grad(1.0), loss_grad(-1.0)
# END SOLUTION
""",
         public=["assert isinstance(grad_pos, list) and isinstance(grad_neg, list) and len(grad_pos) == len(grad_neg) == 6",
                 "assert isinstance(grad_pos, list) and grad_pos[5] == 0 and grad_neg[5] == 0, "
                 "'a masked token gets no gradient'"],
         hidden=["assert isinstance(grad_pos, list)\n"
                 "assert all(abs(a - b) < 1e-5 for a, b in zip(grad_pos, [-0.15, -0.18, -0.2, -0.23, 0.0, 0.0]))",
                 "assert isinstance(grad_neg, list)\n"
                 "assert all(abs(a - b) < 1e-5 for a, b in zip(grad_neg, [0.0, 0.18, 0.2, 0.23, 0.25, 0.0]))"],
         wrong="grad_pos = [-0.15, -0.18, -0.2, -0.23, -0.25, 0.0]\ngrad_neg = [0.15, 0.18, 0.2, 0.23, 0.25, 0.0]"),
    dict(name="tool_mask", exercise=3, points=2,
         prompt="""
**Exercise 3 (medium).** Write `encode_unmasked(vocab, traces, device)`: like `env.encode_traces`,
but with mask 1 on every token after the prompt, tool outputs included. Count the tokens the loss
sees over the 20 blind oracle `traces` of the setup cell, with the chapter's mask and with yours.

*Deliverable:* `encode_unmasked` (returns `(ids, mask)` like `env.encode_traces`); `n_model` and
`n_unmasked` (ints: the number of mask-1 tokens over the 20 traces with `env.encode_traces` and with
`encode_unmasked`).
""",
         solution="""
# BEGIN SOLUTION
def encode_unmasked(vocab, traces, device):
    return env.encode_traces(vocab, [[(text, i > 0) for i, (text, _) in enumerate(segs)] for segs in traces], device)


n_model = int(env.encode_traces(vocab, traces, "cpu")[1].sum())
n_unmasked = int(encode_unmasked(vocab, traces, "cpu")[1].sum())
# END SOLUTION
""",
         public=["assert callable(encode_unmasked) and isinstance(n_model, int) and isinstance(n_unmasked, int)",
                 "assert isinstance(n_model, int) and 0 < n_model < n_unmasked, 'unmasking adds the tool outputs'",
                 "ids, m = encode_unmasked(vocab, traces[:2], 'cpu')\n"
                 "assert ids.shape == m.shape and ids.shape[0] == 2"],
         hidden=["assert callable(encode_unmasked)\n"
                 "q = env.Question({1: [2], 2: [1]}, 'degree', 1, 2, 1)\n"
                 "ids, m = encode_unmasked(vocab, [env.oracle_trace(q, 'blind')], 'cpu')\n"
                 "n_prompt = len(env.prompt(q, 'blind').split())\n"
                 "assert m[0, :n_prompt].sum() == 0 and bool((m[0, n_prompt:] == 1).all())",
                 "assert isinstance(n_model, int) and (n_model, n_unmasked) == (348, 685)"],
         wrong="def encode_unmasked(vocab, traces, device):\n    return env.encode_traces(vocab, traces, device)\n"
               "n_model = n_unmasked = 100"),
    dict(name="probe_prior", exercise=4, points=2,
         prompt="""
**Exercise 4 (experimental, medium).** Structure-blind GRPO can only reinforce a probe that the
policy samples. Train Phase A twice from seed 5 with the config `cfg` (60 SFT steps): once on visible
traces only (`blind_frac=0`), once with 2 % blind degree traces (`blind_frac=0.02`), as
`experiment.run_seed` does (pool: 512 questions from `experiment.make_sampler(cfg)` with
`np.random.default_rng(SEED)`; model: `agent.build_policy(cfg, vocab, SEED, "cpu")`). For each
model, average over the 32 `held_out` questions the probability that the first word it writes
after the blind prompt `env.prompt(q, "blind")` is `probe`. Then compute the probability that a
GRPO group of $G=8$ independent rollouts contains at least one rollout that opens with a probe.

*Deliverable:* `p_probe` and `p_group` (dicts keyed by `blind_frac` $\in\{0.0, 0.02\}$, floats).
""",
         solution="""
# BEGIN SOLUTION
def phase_a(blind_frac):
    rng = np.random.default_rng(SEED)
    sampler = experiment.make_sampler(cfg)
    pool = [sampler(rng) for _ in range(512)]
    model = agent.build_policy(cfg, vocab, SEED, "cpu")
    pools = {"visible": pool, "blind": [q for q in pool if q.task == "degree"]}
    modes, probs = (["visible", "blind"], [1 - blind_frac, blind_frac]) if blind_frac > 0 else (["visible"], [1.0])
    agent.sft(model, vocab, pools, modes, probs, cfg.sft_steps, cfg.sft_batch, cfg.sft_lr, SEED, "cpu")
    return model


@torch.no_grad()
def first_word_prob(model, word="probe"):
    probs = []
    for q in held_out:
        ids = torch.tensor([vocab.encode(env.prompt(q, "blind"))])
        probs.append(float(torch.softmax(model(input_ids=ids).logits[0, -1].float(), -1)[vocab.index[word]]))
    return float(np.mean(probs))


p_probe = {bf: first_word_prob(phase_a(bf)) for bf in (0.0, 0.02)}
p_group = {bf: 1 - (1 - p) ** 8 for bf, p in p_probe.items()}
# END SOLUTION
""",
         public=["assert isinstance(p_probe, dict) and isinstance(p_group, dict) and set(p_probe) == set(p_group) == {0.0, 0.02}",
                 "assert isinstance(p_probe, dict) and all(0 <= p <= 1 for p in p_probe.values())",
                 "assert isinstance(p_group, dict) and all(abs(p_group[b] - (1 - (1 - p_probe[b]) ** 8)) < 1e-6 for b in p_group)"],
         hidden=["assert isinstance(p_probe, dict) and abs(p_probe[0.0] - 0.00197) < 5e-4 and abs(p_probe[0.02] - 0.0310) < 3e-3",
                 "assert isinstance(p_group, dict) and abs(p_group[0.0] - 0.0157) < 4e-3 and abs(p_group[0.02] - 0.2227) < 2e-2"],
         wrong="p_probe = {0.0: 0.0, 0.02: 0.02}\np_group = {0.0: 0.0, 0.02: 1 - 0.98 ** 8}"),
]
