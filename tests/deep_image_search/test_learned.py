"""The learned policy: what it reads from the messages, its choices, and that imitation can learn
(and, untrained, does not already know) the teacher's calls."""

import json

import numpy as np
import pytest
import torch

from icml26.deep_image_search import album as A
from icml26.deep_image_search import get_config, learned
from icml26.deep_image_search.agent import ScriptedPlanner, run_agent, run_agents
from icml26.deep_image_search.retriever import MiniCLIP
from icml26.deep_image_search.tools import Toolbox, parse_tool_call


def messages():
    system = ("You search...\n- image_search(query, top_k?): x\n- view_photos(ids): y\n- answer(ids): z\n"
              "Rules: ...\nMemory: clue_hits (3 ids), clue (1 ids).")
    return [{"role": "system", "content": system},
            {"role": "user", "content": "photos of the red 7 from the trip where I saw the yellow disc"},
            {"role": "assistant", "content": json.dumps({"tool": "image_search", "args": {"query": "yellow disc"}})},
            {"role": "tool", "content": "[older observation elided; see memory]"},
            {"role": "assistant", "content": "not json"},
            {"role": "tool", "content": "Top 3: 4 (0.91), 9 (0.50), 2 (-0.10). Saved 3 ids as 'clue_hits'."},
            {"role": "assistant", "content": json.dumps({"tool": "view_photos", "args": {"ids": [4, 9]}})},
            {"role": "tool", "content": "id 4 | day 1.0 | at (0.0, 0.0) km | red 7, beach, yellow disc\n"
                                        "id 9 | day 2.0 | at (0.1, 0.0) km | blue 3, beach"}]


def test_read_context_takes_only_what_the_messages_say():
    ctx = learned.read_context(messages())
    assert ctx.query[:5] == ("photos", "of", "the", "red", "7") and ctx.tools == ("image_search", "view_photos", "answer")
    assert ctx.memory == ("clue_hits", "clue") and ctx.history == ("image_search", "invalid", "view_photos")
    assert ctx.searched == ("yellow", "disc")
    views = [(m.photo, m.age, m.words) for m in ctx.mentions if m.kind == 0]
    hits = [(m.photo, m.age, m.rank, round(m.score, 2)) for m in ctx.mentions if m.kind == 1]
    assert views == [(4, 0, ("red", "7", "beach", "yellow", "disc")), (9, 0, ("blue", "3", "beach"))]
    assert hits == [(4, 1, 0, 0.91), (9, 1, 1, 0.5), (2, 1, 2, -0.1)]  # the elided observation adds nothing
    match = learned._mentions("3 photos match: 1, 2, 30. Saved 3 ids as 's'.", 0)
    assert [(m.photo, m.kind) for m in match] == [(1, 2), (2, 2), (30, 2)]


def test_same_call_compares_lists_as_sets():
    a = json.dumps({"tool": "answer", "args": {"ids": [3, 1]}})
    assert learned.same_call(a, json.dumps({"tool": "answer", "args": {"ids": [1, 3, 3]}}))
    assert not learned.same_call(a, json.dumps({"tool": "answer", "args": {"ids": [1]}}))
    assert not learned.same_call(a, "not json")


class Truthful(MiniCLIP):
    """Perception that sees the truth: a photo embeds as its subject and marker, a search text as
    the subject or marker it names (so the traces show what a trained perception model gives)."""

    def __init__(self, album):
        super().__init__(8)
        self.album = album

    def embed_album(self, images, batch=512):
        a = self.album
        return torch.cat([torch.nn.functional.one_hot(torch.as_tensor(a.subject), 40),
                          torch.nn.functional.one_hot(torch.as_tensor(a.marker), 13)], 1).float()

    def encode_texts(self, texts):
        out = torch.zeros(len(texts), 53)
        for i, t in enumerate(texts):
            names = [A.subject_name(s) for s in range(40)]
            if t in names:
                out[i, names.index(t)] = 1
            elif t in A.MARKERS:
                out[i, 41 + A.MARKERS.index(t)] = 1
        return out

    def predict_attributes(self, images):
        a = self.album
        return {"digit": torch.as_tensor(a.subject // 4), "colour": torch.as_tensor(a.subject % 4),
                "scene": torch.as_tensor(a.scene), "marker": torch.as_tensor(a.marker)}


@pytest.fixture(scope="module")
def traces():
    """The scripted planner's traces on smoke albums (all three tool sets), truthful perception."""
    cfg = get_config("smoke")
    albums, queries = A.make_benchmark(cfg, 0)
    examples = []
    for use_meta, use_memory in ((True, True), (False, True), (True, False)):
        rec = learned.Recorder(ScriptedPlanner(cfg.radius_km, cfg.window_days, use_meta, cfg.view_limit,
                                               use_memory=use_memory))
        for q in queries:
            box = Toolbox(albums[q.user], Truthful(albums[q.user]), view_limit=cfg.view_limit,
                          disabled=() if use_meta else ("filter_metadata",), explicit_memory=use_memory)
            run_agent(rec, box, q, cfg.max_steps, cfg.memory_window)
        examples += rec.examples
    return examples


def agreement(policy_net, examples):
    policy = learned.TracePolicy(policy_net)
    same = 0
    for ctx, call in examples:
        out = policy.decide_batch([ctx])[0]
        parse_tool_call(out)  # every output is a well-formed call
        same += learned.same_call(out, json.dumps(call))
    return same / len(examples)


def test_vocab_choices_and_bad_input(traces):
    vocab = learned.Vocab.from_traces(traces)
    assert learned.LIST in vocab.choices[("view_photos", "ids")]
    assert learned.ABSENT in vocab.choices[("image_search", "save_as")]
    assert '"clue"' in vocab.choices[("memory_save", "name")]
    with pytest.raises(ValueError, match="no training traces"):
        learned.train_trace_policy([], 10, 0)
    with pytest.raises(ValueError, match="steps"):
        learned.train_trace_policy(traces, 0, 0)


def test_imitation_learns_the_teachers_calls(traces):
    untrained, _ = learned.train_trace_policy(traces, 1, seed=0)
    trained, losses = learned.train_trace_policy(traces, 400, seed=0)
    assert np.mean(losses[-20:]) < 0.2 * np.mean(losses[:20])
    before, after = agreement(untrained, traces), agreement(trained, traces)
    assert before < 0.3 and after > 0.8, (before, after)


def test_run_agents_in_lockstep_gives_the_same_trajectories(traces):
    net, _ = learned.train_trace_policy(traces, 100, seed=1)
    policy = learned.TracePolicy(net)
    cfg = get_config("smoke")
    albums, queries = A.make_benchmark(cfg, 0)
    queries = queries[:6]
    boxes = lambda: [Toolbox(albums[q.user], Truthful(albums[q.user]), view_limit=cfg.view_limit)  # noqa: E731
                     for q in queries]
    together = run_agents(policy, boxes(), queries, cfg.max_steps, cfg.memory_window)
    alone = [run_agent(policy, b, q, cfg.max_steps, cfg.memory_window) for b, q in zip(boxes(), queries)]
    assert [t.steps for t in together] == [t.steps for t in alone]
    assert [t.answer for t in together] == [t.answer for t in alone]
