"""Graded exercises for deep_image_search (chapter exercises 1-4). Format: assignments/README.md."""

TITLE = "DeepImageSearch: graded exercises"

SETUP = """
import icml26.numerics; icml26.numerics.pin_cpu_numerics()
import numpy as np
import torch
from icml26.deep_image_search import get_config, album, retriever, tools, agent, experiment

# The graded variant: the `reduced` preset cut to 2 users and 60 queries, one benchmark seed, 7
# (the chapter prints seeds 0-4; the answers below are printed nowhere).
cfg = get_config("reduced", n_users=2, queries_per_seed=60)
SEED = 7
model, _ = retriever.train_perception(cfg, SEED, "cpu")  # mini-CLIP + attribute heads, 600 steps
albums, queries = album.make_benchmark(cfg, SEED)
with torch.no_grad():
    emb = {a.user: model.embed_album(a.images) for a in albums}  # cached image embeddings per user
    pred = {a.user: model.predict_attributes(a.images) for a in albums}  # cached predicted attributes


def run_planner(q, window=2, disabled=(), perception=None):
    \"\"\"The scripted planner on query `q` (with filter_metadata), its toolbox over the query's album.\"\"\"
    al = albums[q.user]
    m = model if perception is None else perception
    e, p = (emb[q.user], pred[q.user]) if perception is None else (None, None)
    box = tools.Toolbox(al, m, e, p, cfg.view_limit, disabled)
    pol = agent.ScriptedPlanner(cfg.radius_km, cfg.window_days, True, cfg.view_limit)
    return agent.run_agent(pol, box, q, cfg.max_steps, window)

print(f"{len(queries)} queries over {sum(len(a) for a in albums)} photos")
"""

QUESTIONS = [
    dict(name="memory_window", exercise=1, points=1,
         prompt="""
**Exercise 1 (easy).** The scripted planner reads photo ids off the *latest* observation; older ones
are replaced by a stub when they fall out of the working-memory window $w$. Predict, then measure, the
agent's macro F1 over `queries` for $w = 2$ (the chapter's setting), $w = 1$ and $w = 0$. Use
`run_planner(q, window=w)` and `experiment.f1_score(traj.answer, q.targets)`.

*Deliverable:* `f1_by_window`, a dict `{2: float, 1: float, 0: float}` of macro F1 (mean over the 60
queries), at the graded variant of the setup cell (benchmark seed 7).
""",
         solution="""
# BEGIN SOLUTION
f1_by_window = {w: float(np.mean([experiment.f1_score(run_planner(q, window=w).answer, q.targets)
                                  for q in queries])) for w in (2, 1, 0)}
# END SOLUTION
""",
         public=["assert isinstance(f1_by_window, dict) and set(f1_by_window) == {0, 1, 2}, 'a dict with keys 2, 1, 0'",
                 "assert isinstance(f1_by_window, dict) and all(0.0 <= float(v) <= 1.0 for v in f1_by_window.values()), 'F1 lies in [0, 1]'"],
         hidden=["assert isinstance(f1_by_window, dict) and abs(f1_by_window[2] - 0.5039) < 0.005 and abs(f1_by_window[1] - 0.5039) < 0.005",
                 "assert isinstance(f1_by_window, dict) and abs(f1_by_window[0] - 0.0) < 0.005"],
         wrong="f1_by_window = {2: 0.6, 1: 0.5, 0: 0.4}"),
    dict(name="fixed_k", exercise=2, points=2,
         prompt="""
**Exercise 2 (medium).** The chapter gives direct retrieval the oracle $k=|G|$. Is that really the best
$k$ for its F1? Write `direct_f1(k)`, the macro F1 of direct retrieval over `queries`, where `k` is an
int or the string `"oracle"` (then $k=|G|$ per query). Call `agent.direct_retrieval(model, albums[u],
qs, k, emb[u])` once per user `u` with that user's queries `qs`.

*Deliverable:* `direct_f1` (the function), `f1_oracle = direct_f1("oracle")`, `f1_fixed`, a dict
`{1: ..., 3: ..., 5: ..., 10: ...}` of `direct_f1(k)`, and `beats_oracle`, the list of the ks in
`f1_fixed` whose macro F1 is higher than `f1_oracle` (ascending). Graded variant: benchmark seed 7.
""",
         solution="""
# BEGIN SOLUTION
def direct_f1(k):
    scores = []
    for u in sorted({q.user for q in queries}):
        qs = [q for q in queries if q.user == u]
        ks = [len(q.targets) for q in qs] if k == "oracle" else k
        answers = agent.direct_retrieval(model, albums[u], qs, ks, emb[u])
        scores += [experiment.f1_score(s, q.targets) for s, q in zip(answers, qs)]
    return float(np.mean(scores))

f1_oracle = direct_f1("oracle")
f1_fixed = {k: direct_f1(k) for k in (1, 3, 5, 10)}
beats_oracle = [k for k in sorted(f1_fixed) if f1_fixed[k] > f1_oracle]
# END SOLUTION
""",
         public=["assert callable(direct_f1) and isinstance(f1_oracle, float) and 0.0 <= f1_oracle <= 1.0",
                 "assert isinstance(f1_fixed, dict) and set(f1_fixed) == {1, 3, 5, 10}, 'keys 1, 3, 5, 10'",
                 "assert isinstance(beats_oracle, list) and all(f1_fixed[k] > f1_oracle for k in beats_oracle)"],
         hidden=["assert callable(direct_f1) and abs(direct_f1(4) - 0.1371) < 0.005",
                 "assert isinstance(f1_oracle, float) and abs(f1_oracle - 0.1232) < 0.005",
                 "assert isinstance(f1_fixed, dict) and all(abs(f1_fixed[k] - v) < 0.005 for k, v in {1: 0.0716, 3: 0.1288, 5: 0.1330, 10: 0.1176}.items())",
                 "assert isinstance(beats_oracle, list) and beats_oracle == [3, 5]"],
         wrong="""
def direct_f1(k):
    return 0.1

f1_oracle = 0.2
f1_fixed = {1: 0.05, 3: 0.1, 5: 0.1, 10: 0.1}
beats_oracle = []
"""),
    dict(name="weak_perception", exercise=3, points=2,
         prompt="""
**Exercise 3 (medium, experimental).** How much does perception limit each arm? Train a second
perception model with half the budget, `weak, _ = retriever.train_perception(replace(cfg,
train_steps=300), SEED, "cpu")` (with `from dataclasses import replace`), and score it on the same
albums and queries: its digit accuracy (`experiment.perception_accuracy(weak, albums)`), the agent's
macro F1 (`run_planner(q, perception=weak)`) and direct retrieval's macro F1 with the oracle $k$
(`agent.direct_retrieval(weak, albums[u], qs, [len(q.targets) for q in qs])` per user).

*Deliverable:* `acc_weak`, `f1_agent_weak`, `f1_direct_weak` (floats) for the 300-step model, and
`agent_drop`, `direct_drop` (floats): how much macro F1 each arm loses against the setup's 600-step
`model` (positive = a loss). Graded variant: benchmark and training seed 7.
""",
         solution="""
from dataclasses import replace
weak, _ = retriever.train_perception(replace(cfg, train_steps=300), SEED, "cpu")
# BEGIN SOLUTION
def direct_oracle(m, embeddings=None):
    scores = []
    for u in sorted({q.user for q in queries}):
        qs = [q for q in queries if q.user == u]
        e = None if embeddings is None else embeddings[u]
        answers = agent.direct_retrieval(m, albums[u], qs, [len(q.targets) for q in qs], e)
        scores += [experiment.f1_score(s, q.targets) for s, q in zip(answers, qs)]
    return float(np.mean(scores))

acc_weak = float(experiment.perception_accuracy(weak, albums))
f1_agent_weak = float(np.mean([experiment.f1_score(run_planner(q, perception=weak).answer, q.targets)
                               for q in queries]))
f1_direct_weak = direct_oracle(weak)
f1_agent = float(np.mean([experiment.f1_score(run_planner(q).answer, q.targets) for q in queries]))
agent_drop = f1_agent - f1_agent_weak
direct_drop = direct_oracle(model, emb) - f1_direct_weak
# END SOLUTION
""",
         public=["assert all(isinstance(v, float) for v in (acc_weak, f1_agent_weak, f1_direct_weak, agent_drop, direct_drop))",
                 "assert 0.0 <= acc_weak <= 1.0 and 0.0 <= f1_agent_weak <= 1.0 and 0.0 <= f1_direct_weak <= 1.0"],
         hidden=["assert isinstance(acc_weak, float) and abs(acc_weak - 0.2886) < 0.005",
                 "assert isinstance(f1_agent_weak, float) and abs(f1_agent_weak - 0.1834) < 0.005 and abs(f1_direct_weak - 0.0808) < 0.005",
                 "assert isinstance(agent_drop, float) and abs(agent_drop - 0.3205) < 0.005 and abs(direct_drop - 0.0424) < 0.005"],
         wrong="""
acc_weak, f1_agent_weak, f1_direct_weak = 0.5, 0.4, 0.1
agent_drop, direct_drop = 0.1, 0.05
"""),
    dict(name="memory_ablation", exercise=4, points=2,
         prompt="""
**Exercise 4 (hard, experimental; offline part).** Before spending language-model calls on the
explicit-memory ablation, check what the ablation does to the harness: run the scripted planner with
`memory_save` removed from its toolbox, `run_planner(q, disabled=("memory_save",))`, on every query.

*Deliverable:* `rejected_mean` (float: the mean number of rejected tool calls per query),
`steps_no_memory` (float: the mean number of tool calls per query, `len(traj.steps)`) and
`f1_no_memory` (float: the macro F1), at the graded variant (benchmark seed 7). In a sentence (not
graded): why is this ablation a test of our script rather than of a planner?
""",
         solution="""
# BEGIN SOLUTION
trajs = [run_planner(q, disabled=("memory_save",)) for q in queries]
rejected_mean = float(np.mean([t.rejected for t in trajs]))
steps_no_memory = float(np.mean([len(t.steps) for t in trajs]))
f1_no_memory = float(np.mean([experiment.f1_score(t.answer, q.targets) for t, q in zip(trajs, queries)]))
# END SOLUTION
""",
         public=["assert isinstance(rejected_mean, float) and rejected_mean >= 0.0",
                 "assert isinstance(steps_no_memory, float) and steps_no_memory >= rejected_mean, 'rejected calls are tool calls too'",
                 "assert isinstance(f1_no_memory, float) and 0.0 <= f1_no_memory <= 1.0"],
         hidden=["assert isinstance(rejected_mean, float) and abs(rejected_mean - 3.0) < 1e-9",
                 "assert isinstance(steps_no_memory, float) and abs(steps_no_memory - 7.2373) < 0.01",
                 "assert isinstance(f1_no_memory, float) and abs(f1_no_memory - 0.0) < 0.005"],
         wrong="rejected_mean = 1.0\nsteps_no_memory = 8.0\nf1_no_memory = 0.3"),
]
