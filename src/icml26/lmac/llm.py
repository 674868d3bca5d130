"""The protocol designer behind the refinement loop: an `LLMClient` answers a text prompt.

Three back-ends share one method, `complete(prompt) -> str`:
- `OpenAIClient`: any OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp, a hosted API);
  `openai` is imported only when it is used (full preset / explicit option).
- `TransformersClient`: a local causal LM from `transformers` (a hub model the reader
  downloads, or a tiny randomly initialised one built from a config to test the plumbing).
- `RuleBasedDesigner`: the offline default. A deterministic stand-in that reads the same
  prompt (current code + feedback table) and edits the protocol by a fixed rule. It shows
  the loop, not an LLM's reasoning.
"""

from __future__ import annotations

import os
import re
from typing import Protocol

from .protocol import ProtocolRejected, protocol_code


class LLMClient(Protocol):
    """Anything that turns a prompt into text."""

    name: str

    def complete(self, prompt: str) -> str: ...


def extract_code(text: str) -> str:
    """The protocol code in an LLM answer: the last fenced block, or the text from `def messages`."""
    if not isinstance(text, str):
        raise ProtocolRejected(f"the answer is not text but {type(text).__name__}")
    blocks = re.findall(r"```(?:python|py)?[ \t]*\n(.*?)```", text, flags=re.S)
    blocks = [b for b in blocks if "def messages" in b]
    if blocks:
        return blocks[-1]
    if "def messages" in text:
        start = text.index("def messages")
        head = text[:start].rfind("import numpy")
        return text[head if head >= 0 else start:]
    raise ProtocolRejected("no code defining messages(agent_id, obs) in the answer")


_STATE_ROW = re.compile(r"^\|\s*([A-Za-z_]\w*)\s*\|\s*([^|]*?)\s*\|\s*$", re.M)
_FEEDBACK_ROW = re.compile(r"^\|\s*([A-Za-z_]\w*)\s*\|\s*([0-9. ]+)\|\s*([0-9. ]+)\|\s*([0-9.]+)\s*\|([^|]*)\|", re.M)
_OBS = re.compile(r"(\d+):\s*([A-Za-z_]\w*)")
_NAMES = re.compile(r"^- agent (\d+) \([^)]*\): (.*)$", re.M)
_LOW = re.compile(r"SR below ([0-9.]+)")
_SOURCE = re.compile(r"SR at least ([0-9.]+)")


class RuleBasedDesigner:
    """Offline, deterministic stand-in for the LLM (NOT an LLM).

    Initial prompt: the overseer sends the dims the goal names ("target") to every other agent.
    Step 1: for each feedback row, every agent whose SR is below the instruction's bar gets the
    feature of the first agent that observes the dim. Step 2: an agent below the "source" bar gets
    it where another agent is at or above it. Answers only the new, appended message.
    """

    name = "rule-based stand-in (not an LLM)"

    def complete(self, prompt: str) -> str:
        agents = {int(a): [f.strip() for f in names.split(",")] for a, names in _NAMES.findall(prompt)}
        if not agents:
            return "I could not find the observation lists in the prompt."
        needs = []  # (receiver, observers) pairs
        if "Feedback:" not in prompt:  # initial protocol: only what the goal names
            for dim, observers in _STATE_ROW.findall(prompt):
                if "target" in dim:
                    needs += [(r, observers) for r in agents]
        else:
            # region: analysis
            feedback = prompt.split("Feedback:", 1)[1]
            low, source = _LOW.search(feedback), _SOURCE.search(feedback)
            for dim, with_comm, _, _, observers in _FEEDBACK_ROW.findall(feedback):
                sr = [float(v) for v in with_comm.split()]
                if low:  # Step 1: every agent below the bar
                    lagging = [i for i, v in enumerate(sr) if v < float(low.group(1))]
                # Step 2: someone knows it, others lag
                elif source and max(sr) >= float(source.group(1)):
                    lagging = [i for i, v in enumerate(sr) if v < float(source.group(1))]
                else:
                    lagging = []
                needs += [(r, observers) for r in lagging]
            # endregion
        sends: dict[int, dict[int, list[str]]] = {}
        for receiver, observers in needs:
            found = [(int(j), f) for j, f in _OBS.findall(observers)]
            if any(j == receiver for j, _ in found):
                continue  # the receiver already observes this dim
            for sender, feature in found[:1]:
                per = sends.setdefault(sender, {}).setdefault(receiver, [])
                if feature not in per and not feature.startswith("noise_"):
                    per.append(feature)
        names = [agents[a] for a in sorted(agents)]
        return "New message:\n```python\n" + protocol_code(sends, names) + "```\n"


class OpenAIClient:
    """An OpenAI-compatible chat endpoint (`base_url`, `api_key` default to the usual env vars)."""

    def __init__(self, model: str | None = None, base_url: str | None = None, api_key: str | None = None,
                 temperature: float = 0.2, max_tokens: int = 1200):
        self.model = model or os.environ.get("LMAC_LLM_MODEL", "gpt-4o-mini")
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        self.api_key = api_key or os.environ.get("OPENAI_API_KEY", "not-needed")
        self.temperature, self.max_tokens = temperature, max_tokens
        self.name = f"OpenAI-compatible endpoint ({self.model})"

    def complete(self, prompt: str) -> str:
        try:
            from openai import OpenAI  # lazy: only the full preset / explicit option needs it
        except ImportError as err:
            raise ImportError("the 'openai' back-end needs the openai client: pip install 'icml26[llm]' "
                              "(or pip install openai)") from err

        client = OpenAI(base_url=self.base_url, api_key=self.api_key)
        answer = client.chat.completions.create(
            model=self.model, temperature=self.temperature, max_tokens=self.max_tokens,
            messages=[{"role": "user", "content": prompt}])
        return answer.choices[0].message.content or ""


class CharTokenizer:
    """A byte-level toy tokenizer (ids = ASCII codes) for the tiny offline model."""

    vocab_size = 128
    chat_template = None

    def encode(self, text: str) -> list[int]:
        return [min(ord(c), 127) for c in text]

    def decode(self, ids) -> str:
        return "".join(chr(int(i)) for i in ids)


class TransformersClient:
    """A local causal LM (`transformers`); greedy decoding, so answers are reproducible."""

    def __init__(self, model, tokenizer, max_new_tokens: int = 768, max_prompt_tokens: int | None = None,
                 name: str = "local transformers model"):
        self.model, self.tokenizer = model, tokenizer
        self.max_new_tokens, self.max_prompt_tokens, self.name = max_new_tokens, max_prompt_tokens, name

    @classmethod
    def from_pretrained(cls, model_id: str, device: str = "auto", **kwargs) -> "TransformersClient":
        from transformers import AutoModelForCausalLM, AutoTokenizer  # lazy: downloads the model

        tokenizer = AutoTokenizer.from_pretrained(model_id)
        model = AutoModelForCausalLM.from_pretrained(model_id, dtype="auto",
                                                     device_map=None if device == "cpu" else "auto")
        return cls(model, tokenizer, name=f"local model {model_id}", **kwargs)

    def complete(self, prompt: str) -> str:
        import torch

        tok = self.tokenizer
        if getattr(tok, "chat_template", None):
            prompt = tok.apply_chat_template([{"role": "user", "content": prompt}], tokenize=False,
                                             add_generation_prompt=True)
        ids = tok.encode(prompt)
        if self.max_prompt_tokens:
            ids = ids[-self.max_prompt_tokens:]
        device = next(self.model.parameters()).device
        inputs = torch.tensor([ids], device=device)
        with torch.no_grad():
            out = self.model.generate(inputs, attention_mask=torch.ones_like(inputs), do_sample=False,
                                      max_new_tokens=self.max_new_tokens,
                                      pad_token_id=getattr(tok, "pad_token_id", None) or 0)
        return tok.decode(out[0, len(ids):].tolist())


def tiny_random_client(seed: int = 0, max_new_tokens: int = 48) -> TransformersClient:
    """A 1-layer GPT-2 with random weights built from a config (nothing downloaded)."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=CharTokenizer.vocab_size, n_positions=512, n_embd=32, n_layer=1, n_head=2,
                        bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(config).eval()
    return TransformersClient(model, CharTokenizer(), max_new_tokens=max_new_tokens, max_prompt_tokens=256,
                              name="tiny randomly initialised GPT-2 (plumbing test)")


def make_llm(spec: str, device: str = "auto") -> LLMClient:
    """'rule' | 'openai[:model]' | 'hf:<model id>' -> a client."""
    kind, _, arg = spec.partition(":")
    if kind == "rule":
        return RuleBasedDesigner()
    if kind == "openai":
        return OpenAIClient(model=arg or None)
    if kind == "hf" and arg:
        return TransformersClient.from_pretrained(arg, device=device)
    raise ValueError(f"unknown LLM back-end {spec!r}; use 'rule', 'openai[:model]' or 'hf:<model id>'")
