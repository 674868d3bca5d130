import pytest
import torch

from icml26.lmac.env import OverseerEnv, observation_names
from icml26.lmac.experiment import HOSTILE, obs_dims
from icml26.lmac import get_config
from icml26.lmac.llm import RuleBasedDesigner, extract_code
from icml26.lmac.protocol import (ProtocolRejected, compile_protocol, full_comm_code, no_comm_code, parse_sends,
                                  protocol_code)

CFG = get_config("smoke")
DIMS = obs_dims(CFG)
NAMES = [observation_names(a, CFG.n_distract) for a in range(CFG.n_agents)]


def test_selection_protocol_compiles_to_exact_matrices():
    sends = {0: {1: ["target_x", "target_y"], 3: ["self_y"]}, 2: {0: ["self_x", "noise_1"]}}
    proto = compile_protocol(protocol_code(sends, NAMES), DIMS)
    assert proto.message_dims() == [2, 2, 0, 1] and proto.message_size == 5
    assert proto.selection(NAMES)[(0, 1)] == ["target_x", "target_y"]
    env = OverseerEnv(7, CFG.grid, CFG.n_strikers, CFG.n_distract, CFG.horizon, seed=3)
    obs = env.observations()
    msgs = proto.receive(obs)
    assert torch.equal(msgs[1], obs[0][:, 6:8])
    assert torch.equal(msgs[0], obs[2][:, [0, 7]])
    assert torch.equal(msgs[3], obs[0][:, 1:2]) and msgs[2].shape == (7, 0)
    assert parse_sends(proto.code) == sends


def test_full_and_no_comm():
    full = compile_protocol(full_comm_code(CFG.n_agents), DIMS)
    assert full.message_size == (CFG.n_agents - 1) * sum(DIMS)
    assert compile_protocol(no_comm_code(), DIMS).message_size == 0


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_protocols_rejected(name):
    with pytest.raises(ProtocolRejected):
        compile_protocol(HOSTILE[name], DIMS)


@pytest.mark.parametrize("code, match", [
    ("def messages(agent_id, obs):\n    while True:\n        pass\n", "WallTimeLimit|CPUTimeLimit"),
    ("def messages(agent_id obs):\n    return {}\n", "syntax"),
    ("def send(agent_id, obs):\n    return {}\n", "no top-level function"),
    ("def messages(agent_id, obs):\n    return [obs]\n", "must return a dict"),
    ("def messages(agent_id, obs):\n    return {1: obs[:1]} if obs[0] > 0.5 else {1: obs[:2]}\n", "depend on"),
    ("def messages(agent_id, obs):\n    return {1: obs.__class__}\n", "private attribute"),
    ("def messages(agent_id, obs):\n    return {9: obs[:1]}\n", "invalid receiver"),
    ("def messages(agent_id, obs):\n    return {'a': obs[:1]}\n", "receiver ids must be ints"),
    ("def messages(agent_id, obs):\n    return {(agent_id + 1) % 4: obs[:1] * float('nan')}\n", "not finite"),
    ("def messages(agent_id, obs):\n    open('x', 'w')\n    return {}\n", "refers to 'open'"),
])
def test_malformed_protocols_rejected(code, match):
    with pytest.raises(ProtocolRejected, match=match):
        compile_protocol(code, DIMS, wall_seconds=2)


def test_message_limit_and_bad_dims():
    with pytest.raises(ProtocolRejected, match="limit"):
        compile_protocol(full_comm_code(CFG.n_agents), DIMS, max_len=10)
    with pytest.raises(ValueError):
        compile_protocol(no_comm_code(), [])


def test_extract_code_and_rule_designer_consumes_feedback():
    assert "def messages" in extract_code("bla\n```python\ndef messages(agent_id, obs):\n    return {}\n```\n")
    with pytest.raises(ProtocolRejected):
        extract_code("no code here")
    from icml26.lmac.refine import step_instruction, task_prompt
    first = extract_code(RuleBasedDesigner().complete(task_prompt(CFG)))
    assert parse_sends(first) == {0: {i: ["target_x", "target_y"] for i in range(1, CFG.n_agents)}}
    head = (task_prompt(CFG) + "\n\nCurrent protocol:\n```python\n" + first + "```\n\nFeedback:\n"
            "| state dim | SR with communication (agent 0, 1, ...) | SR without communication | spread | observed |\n"
            "|---|---|---|---|---|\n"
            "| striker2_x | 0.90 0.20 0.95 0.70 | 0.20 0.20 0.95 0.20 | 0.75 | 2: self_x |\n\n")
    step1 = parse_sends(extract_code(RuleBasedDesigner().complete(head + step_instruction(CFG, 1))))
    assert step1 == {2: {1: ["self_x"]}}  # only agent 1 is below 0.6; agent 2 observes the dim itself
    step2 = parse_sends(extract_code(RuleBasedDesigner().complete(head + step_instruction(CFG, 2))))
    assert step2 == {2: {1: ["self_x"], 3: ["self_x"]}}  # below the 0.8 source bar


def test_concat_appends_messages():
    a = compile_protocol(protocol_code({0: {1: ["target_x"]}}, NAMES), DIMS)
    b = compile_protocol(protocol_code({0: {1: ["self_x"]}, 2: {3: ["self_y"]}}, NAMES), DIMS)
    both = a.concat(b)
    assert both.message_size == 3 and both.selection(NAMES)[(0, 1)] == ["target_x", "self_x"]
    obs = [torch.randn(4, d) for d in DIMS]
    assert torch.equal(both.receive(obs)[1], torch.cat([a.receive(obs)[1], b.receive(obs)[1]], dim=1))
    with pytest.raises(ValueError):
        a.concat(compile_protocol(no_comm_code(), DIMS[:2]))


def test_tiny_random_llm_is_rejected_gracefully():
    from icml26.lmac.llm import tiny_random_client
    from icml26.lmac.refine import propose, task_prompt

    proto, text, reason = propose(tiny_random_client(0, max_new_tokens=16), task_prompt(CFG), DIMS)
    assert proto is None and reason.startswith("rejected")
