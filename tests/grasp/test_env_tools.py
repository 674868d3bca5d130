import networkx as nx
import numpy as np
import pytest
import torch

from icml26.grasp import (Question, ToolCallRejected, Vocab, get_config, ground_truth, group_advantages, grpo_loss,
                          neighbor_retrieval, oracle_trace, parse_text, run_code_batch, sample_question)
from icml26.grasp.agent import build_policy, sft
from icml26.grasp.env import encode_traces

V = Vocab(32)


def test_ground_truth_hand_computed():
    g = nx.Graph([(0, 1), (0, 2), (1, 2), (2, 3)])
    assert ground_truth(g, "degree", 2, 0) == 3
    assert ground_truth(g, "adjacent", 0, 3) == 0 and ground_truth(g, "adjacent", 3, 2) == 1
    assert ground_truth(g, "common", 0, 1) == 1 and ground_truth(g, "common", 0, 3) == 1
    with pytest.raises(ValueError, match="unknown task"):
        ground_truth(g, "diameter", 0, 1)


def test_oracle_code_in_sandbox_matches_ground_truth():
    rng = np.random.default_rng(0)
    qs = [sample_question(rng, 10, 0.3, 32, ("degree", "adjacent", "common")) for _ in range(30)]
    codes, nbs, uv = [], [], []
    for q in qs:
        text = [s for s, _ in oracle_trace(q, "blind") if s.startswith("code:")][0]
        act = parse_text(text, V, probe_cap=4)
        codes.append(act.code)
        nbs.append({x: q.adj[x] for x in (q.u, q.v)})
        uv.append((q.u, q.v))
    outs = run_code_batch(codes, nbs, uv)
    assert [int(o.strip()) for o, err in outs] == [q.answer for q in qs]


def test_neighbor_retrieval_caps_and_logs():
    q = Question({0: [1], 1: [0], 2: []}, "degree", 0, 1, 1)
    assert neighbor_retrieval(q, [0, 2], cap=2) == {0: [1], 2: []}
    assert q.probes == [0, 2]
    with pytest.raises(ValueError):
        neighbor_retrieval(q, [0, 1, 2], cap=2)
    with pytest.raises(ValueError, match="not in the graph"):
        neighbor_retrieval(q, [7], cap=2)


def test_loss_mask_covers_only_model_tokens():
    q = Question({3: [5], 5: [3]}, "adjacent", 3, 5, 1)
    ids, mask = encode_traces(V, [oracle_trace(q, "blind")], "cpu")
    words = V.decode(ids[0]).split()
    model_words = [w for w, m in zip(words, mask[0].tolist()) if m]
    assert model_words == ["probe", "u", "v", ";", "code:", "print(", "int(", "v", "in", "N[u]", ")", ")", ";",
                           "answer", "out", "<eos>"]
    assert "obs" not in model_words and "out:" not in model_words  # tool outputs are masked


@pytest.mark.parametrize("text", [
    "code: import os ;", "code: print( open ;", "probe 1 2 3 4 5 ;", "probe 99 ;", "answer 3", "answer 3 4 <eos>",
    "rm -rf / ;", "", "code: print( len( ;", "probe u v", "code: __import__ ;",
])
def test_malformed_tool_calls_rejected(text):
    with pytest.raises(ToolCallRejected):
        parse_text(text, V, probe_cap=4, graph_nodes={1: [], 2: []}, bindings={"u": 1, "v": 2})


def test_non_string_turn_rejected():
    with pytest.raises(ToolCallRejected):
        parse_text(None, V, probe_cap=4)


def test_hostile_code_is_contained_and_batch_survives():
    hostile = ["import os\nprint(os.listdir('/'))", "print(open('/etc/passwd').read())",
               "print(().__class__.__subclasses__())", "import socket", "print(len(N[u]))"]
    outs = run_code_batch(hostile, [{1: [2, 3]}] * 5, [(1, 2)] * 5)
    assert all(err is not None for _, err in outs[:4])
    assert outs[4] == ("2\n", None)


def test_grpo_advantages_per_group_and_dropping(device):
    r = torch.tensor([[1.0, 0.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0]], device=device)
    adv, keep = group_advantages(r)
    assert keep.tolist() == [True, False]
    assert torch.allclose(adv[0], torch.tensor([1.0, -1.0, -1.0, 1.0], device=device), atol=1e-3)
    with pytest.raises(ValueError):
        group_advantages(torch.zeros(4))


def test_grpo_loss_ignores_masked_tokens_and_clips(device):
    lp = torch.zeros(2, 3, device=device, requires_grad=True)
    old = torch.zeros(2, 3, device=device)
    mask = torch.tensor([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]], device=device)
    loss = grpo_loss(lp, old, old, torch.tensor([1.0, -1.0], device=device), mask, 0.2, 0.0)
    loss.backward()
    assert lp.grad[0, 2] == 0 and lp.grad[1, 0] == 0  # tool tokens get no gradient
    assert torch.isclose(loss, torch.tensor(0.0, device=device))
    # ratio far above 1+eps with positive advantage: clipped, no gradient
    z = torch.zeros(1, 1, device=device)
    lp2 = torch.full((1, 1), 1.0, device=device, requires_grad=True)
    grpo_loss(lp2, z, z, torch.tensor([1.0], device=device), torch.ones(1, 1, device=device), 0.2, 0.0).backward()
    assert lp2.grad.item() == 0.0


def test_bad_configs():
    with pytest.raises(ValueError, match="group"):
        get_config("smoke", group=1)
    with pytest.raises(ValueError, match="train_seeds"):
        get_config("smoke", train_seeds=0)
    with pytest.raises(ValueError, match="eval_graphs must be >= 30"):
        get_config("smoke", eval_graphs=8)
    with pytest.raises(ValueError, match="test_sizes"):
        get_config("smoke", test_sizes=(24, 12))
    with pytest.raises(ValueError, match="grpo_lr"):
        get_config("smoke", grpo_lr=0.0)
    with pytest.raises(ValueError):
        get_config("smoke", tasks=("diameter",))
    with pytest.raises(ValueError):
        get_config("smoke", test_sizes=(12, 99))
    with pytest.raises(ValueError):
        get_config("smoke", bogus=1)
    with pytest.raises(ValueError):
        Vocab(2)
    with pytest.raises(ValueError, match="not in the protocol vocabulary"):
        V.encode("hello world")


def test_sft_blind_tasks_subset_and_per_mode_pools():
    with pytest.raises(ValueError, match="sft_blind_tasks"):
        get_config("smoke", sft_blind_tasks=("diameter",))
    with pytest.raises(ValueError, match="sft_blind_tasks"):
        get_config("smoke", sft_blind_tasks=())
    cfg = get_config("smoke", sft_steps=2)
    rng = np.random.default_rng(0)
    pool = [sample_question(rng, 8, 0.3, cfg.max_id, ("common",)) for _ in range(4)]
    model = build_policy(cfg, V, 0, torch.device("cpu"))
    with pytest.raises(ValueError, match="no questions for mode"):
        sft(model, V, {"visible": pool, "blind": []}, ["visible", "blind"], [0.5, 0.5], 1, 4, 1e-3, 0, "cpu")
    losses = sft(model, V, {"visible": pool, "blind": pool[:1]}, ["visible", "blind"], [0.5, 0.5], 2, 4, 1e-3, 0, "cpu")
    assert len(losses) == 2 and all(np.isfinite(losses))
