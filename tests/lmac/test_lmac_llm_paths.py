"""The real-designer paths (`llm="hf:<model>"`, `llm="openai"`) on tiny local stand-ins for the model:
prompt -> generate -> parse -> sandboxed compile, with nothing downloaded and no network."""

import sys
import types

import torch

from icml26.lmac import get_config
from icml26.lmac.experiment import obs_dims
from icml26.lmac.llm import CharTokenizer, OpenAIClient, TransformersClient
from icml26.lmac.refine import propose, task_prompt

CFG = get_config("smoke")
ANSWER = ("Here is the protocol.\n```python\nimport numpy as np\n\ndef messages(agent_id, obs):\n"
          "    if agent_id == 0:\n        return {1: np.asarray(obs)[6:8], 2: np.asarray(obs)[6:8]}\n"
          "    return {}\n```\n")


class ScriptedModel(torch.nn.Module):
    """A 'causal LM' whose greedy generation is a fixed answer (the tokenizer is byte-level)."""

    def __init__(self, answer: str):
        super().__init__()
        self.ids = torch.tensor([CharTokenizer().encode(answer)])
        self.dummy = torch.nn.Parameter(torch.zeros(1))

    def generate(self, inputs, attention_mask=None, do_sample=False, max_new_tokens=10, pad_token_id=0):
        assert not do_sample and attention_mask.shape == inputs.shape
        return torch.cat([inputs, self.ids[:, :max_new_tokens].to(inputs.device)], dim=1)


def test_a_local_transformers_model_that_writes_valid_code_gives_a_protocol():
    client = TransformersClient(ScriptedModel(ANSWER), CharTokenizer(), max_new_tokens=len(ANSWER))
    proto, code, reason = propose(client, task_prompt(CFG), obs_dims(CFG))
    assert reason == "ok" and proto is not None and proto.message_size == 4
    cut = TransformersClient(ScriptedModel(ANSWER), CharTokenizer(), max_new_tokens=40)  # truncated answer
    assert propose(cut, task_prompt(CFG), obs_dims(CFG))[0] is None


def test_the_openai_backend_sends_the_prompt_and_parses_the_answer(monkeypatch):
    seen = {}

    class Completions:
        def create(self, model, temperature, max_tokens, messages):
            seen.update(model=model, prompt=messages[0]["content"])
            msg = types.SimpleNamespace(content=ANSWER)
            return types.SimpleNamespace(choices=[types.SimpleNamespace(message=msg)])

    class OpenAI:
        def __init__(self, base_url=None, api_key=None):
            self.chat = types.SimpleNamespace(completions=Completions())

    monkeypatch.setitem(sys.modules, "openai", types.SimpleNamespace(OpenAI=OpenAI))
    proto, _, reason = propose(OpenAIClient(model="tiny-local"), task_prompt(CFG), obs_dims(CFG))
    assert reason == "ok" and proto.message_size == 4
    assert seen["model"] == "tiny-local" and "messages(agent_id, obs)" in seen["prompt"]
