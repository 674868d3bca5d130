import json

import numpy as np
import pytest
import torch

from icml26.deep_image_search import album as A
from icml26.deep_image_search import get_config
from icml26.deep_image_search.agent import ScriptedPlanner, run_agent, working_context
from icml26.deep_image_search.retriever import MiniCLIP
from icml26.deep_image_search.tools import ToolCallRejected, Toolbox, parse_tool_call



def tiny_album():
    """5 photos: two trips at place (0,0) (days 0-1 and day 20), one trip at (50,0) on day 1."""
    n = 5
    return A.Album(user=0, images=torch.zeros(n, 3, 32, 32), time=np.array([0.0, 1.0, 20.0, 20.5, 1.0]),
                   gps=np.array([[0, 0], [0.5, 0], [0.2, 0.1], [0, 0.3], [50, 0]], dtype=float),
                   subject=np.zeros(n, int), scene=np.zeros(n, int), marker=np.zeros(n, int),
                   event=np.array([0, 0, 1, 1, 2]), event_place=np.array([0, 0, 1]), places=np.zeros((2, 2)))


class FakeModel(MiniCLIP):
    """Hand-set embeddings/predictions so tool outputs can be checked by hand."""

    def embed_album(self, images, batch=512):
        return torch.eye(len(images), 8)[:, :8]

    def predict_attributes(self, images):
        n = len(images)
        return {"digit": torch.arange(n) % 10, "colour": torch.zeros(n, dtype=torch.long),
                "scene": torch.zeros(n, dtype=torch.long), "marker": torch.tensor([3] + [0] * (n - 1))}


def box(**kw):
    return Toolbox(tiny_album(), FakeModel(8), **kw)


def call(tool, **args):
    return json.dumps({"tool": tool, "args": args})


def test_filter_metadata_hand_computed():
    b = box()
    b.execute(parse_tool_call(call("memory_save", name="clue", ids=[0])))
    assert "2 photos match: 0, 1." in b.execute(parse_tool_call(call("filter_metadata", near="clue", radius_km=3.0, days=3)))
    out = b.execute(parse_tool_call(call("filter_metadata", near="clue", radius_km=3.0, days=3, outside_days=True,
                                         save_as="other")))
    assert out.startswith("2 photos match: 2, 3.") and b.memory["other"] == [2, 3]
    # without a time window: every photo within 3 km of photo 0 (not photo 4, 50 km away)
    assert b.execute(parse_tool_call(call("filter_metadata", near="clue", radius_km=3.0))).startswith("4 photos")


def test_view_reports_predictions_not_truth_and_answer_is_canonical():
    b = box()
    out = b.execute(parse_tool_call(call("view_photos", ids=[0, 1])))
    assert "red 0, beach, yellow disc" in out.splitlines()[0] and "red 1, beach" in out.splitlines()[1]
    b.execute(parse_tool_call(call("answer", ids=[3, 1, 3])))
    assert b.answer == [1, 3]


def test_image_search_scope_and_order():
    b = box()
    b.memory["s"] = [2, 4]
    out = b.execute(parse_tool_call(call("image_search", query="red 7", top_k=2, scope="s", save_as="hits")))
    assert sorted(b.memory["hits"]) == [2, 4] and out.startswith("Top 2:")


@pytest.mark.parametrize("text, msg", [
    ('Sure: {"tool": "answer", "args": {"ids": [1]}}', "not a single JSON"),
    ("__import__('os').system('ls')", "not a single JSON"),
    ('{"tool": "shell", "args": {}}', "unknown tool"),
    ('{"tool": "answer", "args": {"ids": [1]}, "extra": 1}', "expected exactly"),
    ('{"tool": "image_search", "args": {"query": "x", "event": 1}}', "unknown argument"),
    ('{"tool": "image_search", "args": {}}', "missing required"),
    ('{"tool": "image_search", "args": {"query": "x", "top_k": true}}', "boolean"),
    ('{"tool": "answer", "args": {"ids": [1.5]}}', "integer photo ids"),
    ('{"tool": "filter_metadata", "args": {"near": "c", "radius_km": Infinity}}', "not a single JSON"),
    (12, "must be text"),
])
def test_parser_rejects_malformed(text, msg):
    with pytest.raises(ToolCallRejected, match=msg):
        parse_tool_call(text)


def test_fenced_json_is_accepted():
    assert parse_tool_call('```json\n{"tool": "memory_list", "args": {}}\n```').tool == "memory_list"


@pytest.mark.parametrize("text, msg", [
    ('{"tool": "answer", "args": {"ids": [7]}}', "out of range"),
    ('{"tool": "view_photos", "args": {"ids": "nothing"}}', "no memory set"),
    ('{"tool": "memory_save", "args": {"name": "A/B", "ids": [1]}}', "lower_snake_case"),
    ('{"tool": "image_search", "args": {"query": "x", "top_k": 0}}', "top_k"),
    ('{"tool": "filter_metadata", "args": {"near": "c", "radius_km": 1, "outside_days": true}}', "no memory set|needs days"),
])
def test_toolbox_rejects_bad_values(text, msg):
    with pytest.raises(ToolCallRejected, match=msg):
        box().execute(parse_tool_call(text))


def test_view_limit_and_disabled_tools():
    with pytest.raises(ToolCallRejected, match="at most 2"):
        box(view_limit=2).execute(parse_tool_call(call("view_photos", ids=[0, 1, 2])))
    b = box(disabled=("filter_metadata",))
    with pytest.raises(ToolCallRejected, match="not available"):
        b.execute(parse_tool_call(call("filter_metadata", near="x", radius_km=1.0)))
    with pytest.raises(ValueError):
        box(disabled=("answer",))


def test_loop_turns_rejections_into_observations_and_working_memory_elides():
    b = box()
    q = A.Query(0, A.INTRA, "anything", 0, 1, frozenset({0}))
    outputs = iter(["not json", call("answer", ids=[0])])
    traj = run_agent(lambda msgs: next(outputs), b, q, max_steps=5)
    assert traj.rejected == 1 and traj.answer == [0] and traj.steps[0][1].startswith("ERROR")
    msgs = working_context("sys", "q", [("a", "obs1"), ("b", "obs2"), ("c", "obs3")], "Memory: empty.", window=1)
    tool_turns = [m["content"] for m in msgs if m["role"] == "tool"]
    assert tool_turns[-1] == "obs3" and all("elided" in t for t in tool_turns[:-1])


def test_scripted_planner_unknown_template_answers_empty():
    planner = ScriptedPlanner()
    out = planner([{"role": "system", "content": ""}, {"role": "user", "content": "find my cat"}])
    assert parse_tool_call(out).args == {"ids": []}


def test_observed_ids_for_each_observation_kind():
    from icml26.deep_image_search.plots import observed_ids

    assert observed_ids("id 78 | day 701.4 | at (29.8, 22.0) km | red 8\nid 5 | day 1.0 | at (1.0, 2.0) km | x") == [78, 5]
    assert observed_ids("Top 3: 1 (0.50), 22 (0.10), 3 (-0.20). Saved 3 ids as 'h'.") == [1, 22, 3]
    assert observed_ids("3 photos match: 1, 2, 30. Saved 3 ids as 's'.") == [1, 2, 30]
    assert observed_ids("Saved 2 ids as 'clue'.") == []


def test_without_explicit_memory_ids_travel_as_lists():
    b = box(explicit_memory=False)
    assert set(b.disabled) == {"memory_save", "memory_list"} and b.memory_list() == ""
    out = b.execute(parse_tool_call(call("filter_metadata", near=[0], radius_km=3.0, days=3)))
    assert out == "2 photos match: 0, 1."
    assert b.execute(parse_tool_call(call("image_search", query="red 7", top_k=2, scope=[2, 4]))).startswith("Top 2:")
    for text, msg in ((call("filter_metadata", near=[0], radius_km=3.0, save_as="s"), "explicit memory is off"),
                      (call("view_photos", ids="clue"), "explicit memory is off"),
                      (call("memory_save", name="clue", ids=[0]), "not available")):
        with pytest.raises(ToolCallRejected, match=msg):
            b.execute(parse_tool_call(text))
    # the loop shows no memory block when explicit memory is off
    seen = []
    q = A.Query(0, A.INTRA, "anything", 0, 1, frozenset({0}))
    run_agent(lambda msgs: seen.append(msgs[0]["content"]) or call("answer", ids=[0]), b, q, max_steps=2)
    assert "Memory:" not in seen[0] and "memory_save(" not in seen[0]


def test_scripted_planner_without_memory_passes_the_ids_it_read():
    cfg = get_config("smoke")
    albums, queries = A.make_benchmark(cfg, 0)
    q = next(x for x in queries if x.kind == A.INTRA)
    al = albums[q.user]

    class Truth(FakeModel):
        """Predictions = the album's true attributes; embeddings from them (enough for a search)."""

        def embed_album(self, images, batch=512):
            return torch.nn.functional.one_hot(torch.as_tensor(al.subject), 40).float()

        def encode_texts(self, texts):
            return torch.stack([torch.nn.functional.one_hot(torch.tensor(q.subject), 40).float()] * len(texts))

        def predict_attributes(self, images):
            return {"digit": torch.as_tensor(al.subject // 4), "colour": torch.as_tensor(al.subject % 4),
                    "scene": torch.as_tensor(al.scene), "marker": torch.as_tensor(al.marker)}

    b = Toolbox(al, Truth(8), explicit_memory=False)
    traj = run_agent(ScriptedPlanner(use_memory=False), b, q, max_steps=30)
    calls = [json.loads(c) for c, _ in traj.steps]
    assert traj.rejected == 0 and all("save_as" not in c["args"] for c in calls)
    anchor = next(c for c in calls if c["tool"] == "filter_metadata")
    assert isinstance(anchor["args"]["near"], list) and anchor["args"]["near"]
    search = [c for c in calls if c["tool"] == "image_search"][-1]
    assert isinstance(search["args"]["scope"], list)
