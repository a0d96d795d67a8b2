"""Policies an evaluation scores: a local model (a checkpoint folder, the tiny one included, or a Hugging Face
model id where a hub is reachable) or an OpenAI-compatible endpoint (vLLM, Ollama, a hosted API).

Every policy answers conversations in the OpenAI chat format: :meth:`Policy.respond` takes a batch of
``(messages, tools)`` and gives one :class:`Reply` each (its text and its parsed tool calls). Suites drive them
through :func:`training.episodes.play`, so the same suite scores every kind of policy the same way.

* :class:`LocalPolicy`: the model's own chat template renders the conversation (tool results cut to
  ``max_tool_chars``, as in training), greedy generation, calls parsed from ``<tool_call>`` blocks (the
  Qwen2.5 / Hermes syntax the tiny template shares).
* :class:`EndpointPolicy`: ``chat.completions`` with ``tools``, ``temperature`` 0, ``concurrency`` requests in
  flight, sent and counted as the teacher's client sends its own
  (:class:`pipeline.language.teacher_client.AccountedRequests`: retries, a 429/503 waiting as asked, backoff with
  jitter, usage). An endpoint that answers none of a request's tries fails with an error naming it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Protocol

from pipeline.language.teacher_client import AccountedRequests, RequestsFailed
from training.chat import ChatFormat
from training.rollout import parse_tool_calls
from training.tiny import load_policy

Conversation = tuple[list[dict[str, Any]], list[dict[str, Any]]]  # (messages, tools), OpenAI format


class PolicyError(RuntimeError):
    """A policy that cannot be opened or that stopped answering (the message names it and why)."""


@dataclass
class Reply:
    """One assistant message: its text and its calls (``{"name", "arguments"}``; a call that is not a JSON
    object with a name is ``{"name": "", "arguments": None, "malformed": True}``)."""

    content: str
    calls: list[dict[str, Any]] = field(default_factory=list)

    def message(self, first_id: int = 0) -> dict[str, Any]:
        """The reply as an OpenAI assistant message (call ids ``call_<n>`` from ``first_id``)."""
        msg: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.calls:
            msg["content"] = ""
            msg["tool_calls"] = [
                {
                    "id": f"call_{first_id + i}",
                    "type": "function",
                    "function": {
                        "name": c.get("name") or "",
                        "arguments": json.dumps(c.get("arguments") if c.get("arguments") is not None else {}),
                    },
                }
                for i, c in enumerate(self.calls)
            ]
        return msg


class Policy(Protocol):
    name: str

    def respond(self, conversations: Sequence[Conversation]) -> list[Reply]: ...

    def describe(self) -> dict[str, Any]: ...


# ------------------------------------------------------------------------------------------------ local models


class LocalPolicy:
    """A causal LM and its tokenizer, greedy, ``batch_size`` conversations at a time."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        name: str = "local",
        max_new_tokens: int = 48,
        max_prompt_tokens: int | None = None,
        max_tool_chars: int = 400,
        batch_size: int = 16,
        template_kwargs: dict[str, Any] | None = None,
        decide_calls: bool = True,
    ):
        self.model = model
        self.fmt = ChatFormat(tokenizer, {"enable_thinking": False, **(template_kwargs or {})}, max_tool_chars)
        self.tok = tokenizer
        self.name = name
        self.max_new_tokens = max_new_tokens
        if max_prompt_tokens is None:  # what the model's positions hold, less the message it writes
            positions = int(getattr(model.config, "max_position_embeddings", 0) or 0) or 1 << 15
            max_prompt_tokens = max(64, positions - max_new_tokens)
        self.max_prompt_tokens = max_prompt_tokens
        self.batch_size = batch_size
        self.generate_seconds = 0.0
        self.prompts_cut = 0
        self.unoffered_calls = 0  # replies written again in words: they called a tool not offered
        self.decide_calls = decide_calls
        self.call_token_id = call_token_id(tokenizer)

    def describe(self) -> dict[str, Any]:
        n = sum(p.numel() for p in self.model.parameters())
        return {"kind": "local", "name": self.name, "n_params": int(n), "max_new_tokens": self.max_new_tokens}

    def _decide(self, width: int, words: bool = False) -> Any:
        """Greedy over the decision, not over the first token (``decide_calls``): see :class:`CallOrAnswer`;
        ``words``: the message answers in words (the call token barred)."""
        if not self.decide_calls or self.call_token_id is None:
            return None
        from transformers import LogitsProcessorList

        return LogitsProcessorList([CallOrAnswer(self.call_token_id, width, words=words)])

    def _ids(self, conv: Conversation) -> list[int]:
        messages, tools = conv
        cut = self.fmt.max_tool_chars
        shown = [
            {**m, "content": str(m.get("content") or "")[:cut]} if m.get("role") == "tool" else m for m in messages
        ]
        ids = self.fmt.encode(self.fmt.render(shown, tools, gen=True))
        if len(ids) > self.max_prompt_tokens:  # the newest tokens are kept: the model answers the last turn
            self.prompts_cut += 1
            ids = ids[-self.max_prompt_tokens :]
        return ids

    def respond(self, conversations: Sequence[Conversation]) -> list[Reply]:
        """Greedy replies, ``batch_size`` conversations a batch. With ``decide_calls``, a reply that calls a tool its
        conversation does not offer is written again in words (:func:`offered_only`)."""
        out: list[Reply] = []
        for i in range(0, len(conversations), self.batch_size):
            batch = conversations[i : i + self.batch_size]
            replies = self._generate(batch)
            if self.decide_calls and self.call_token_id is not None:
                again = [j for j, (r, c) in enumerate(zip(replies, batch)) if not offered_only(r, c[1])]
                for j, r in zip(again, self._generate([batch[j] for j in again], words=True) if again else []):
                    replies[j] = r
                self.unoffered_calls += len(again)
            out += replies
        return out

    def _generate(self, batch: Sequence[Conversation], words: bool = False) -> list[Reply]:
        import torch

        pad = self.tok.pad_token_id if self.tok.pad_token_id is not None else self.tok.eos_token_id
        eos = self.tok.eos_token_id
        seqs = [self._ids(c) for c in batch]
        width = max(map(len, seqs))
        ids = torch.tensor([[pad] * (width - len(s)) + s for s in seqs], device=self.model.device)
        att = torch.tensor([[0] * (width - len(s)) + [1] * len(s) for s in seqs], device=self.model.device)
        t0 = time.perf_counter()
        processors = self._decide(width, words)
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.no_grad():
                gen = self.model.generate(
                    input_ids=ids,
                    attention_mask=att,
                    max_new_tokens=self.max_new_tokens,
                    do_sample=False,
                    pad_token_id=pad,
                    eos_token_id=eos,
                    remove_invalid_values=True,
                    **({"logits_processor": processors} if processors else {}),
                )
        finally:
            self.model.train(was_training)
        self.generate_seconds += time.perf_counter() - t0
        out = []
        for row in gen:
            new = row[width:].tolist()
            if eos in new:
                new = new[: new.index(eos)]
            text = self.tok.decode([t for t in new if t != pad], skip_special_tokens=True)
            out.append(Reply(content=text, calls=parse_tool_calls(text)))
        return out


def offered_only(reply: Reply, tools: Sequence[dict[str, Any]]) -> bool:
    """Whether every call of ``reply`` names a tool the conversation offers (a malformed call names none: it is
    left as it is, for the reward to score). A model that reaches for a tool it was not given (one it met in
    training, since taken away: BFCL's *miss_func*, the corpus's ``missing_function``) cannot do what it meant;
    the one thing it can do is say so, so the message is written again in words. Such a call would have scored
    nothing anyway: validity's first third is that the name is offered."""
    names = {(t.get("function") or t).get("name") for t in tools}
    return all(c.get("malformed") or c.get("name") in names for c in reply.calls)


def call_token_id(tokenizer: Any) -> int | None:
    """The id of ``<tool_call>`` when the tokenizer holds it as one token (the tiny one, Qwen2.5, Hermes), else None."""
    ids = tokenizer("<tool_call>", add_special_tokens=False)["input_ids"]
    return ids[0] if len(ids) == 1 else None


class CallOrAnswer:
    """A logits processor for greedy decoding: the first token of a message decides between calling a tool and
    answering in words, and that decision is made on the whole probability of each.

    Plain greedy decoding takes the most likely first *token*. A call always starts with the one token
    ``<tool_call>``, while an answer in words starts with any of many ("I", "Done", "That's", "Sorry", ...), so
    the call token wins whenever no single opening word outweighs it, even when answering is much more likely
    on the whole: a model that gives words 70% of the mass after a tool result still calls again, forever, and
    never declines a request it cannot serve. Here the message calls when ``P(<tool_call>) >= 0.5`` and
    answers in words otherwise (the call token is then barred and greedy picks the words); later tokens are
    plain greedy. With ``words`` the message answers in words whatever the probability (see :func:`offered_only`)."""

    def __init__(self, call_id: int, start: int, words: bool = False):
        self.call_id = call_id
        self.start = start
        self.words = words

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if input_ids.shape[1] != self.start:
            return scores
        p_call = scores.float().softmax(-1)[:, self.call_id]
        calls = (p_call >= 0.5) & (not self.words)
        out = scores.clone()
        out[~calls, self.call_id] = float("-inf")
        keep = scores[calls, self.call_id]
        out[calls] = float("-inf")
        out[calls, self.call_id] = keep
        return out


def load_local_policy(spec: str, **kw: Any) -> LocalPolicy:
    """A checkpoint folder (``from_pretrained``-loadable, with its tokenizer) or a Hugging Face model id.

    Raises :class:`PolicyError` naming the folder when it holds no model or no tokenizer."""
    p = Path(spec)
    if p.exists():
        if not p.is_dir():
            raise PolicyError(f"policy {spec}: not a folder (a checkpoint is a folder with config.json)")
        if not (p / "config.json").exists():
            raise PolicyError(f"policy {spec}: no config.json: not a model checkpoint folder")
        if not any((p / f).exists() for f in ("tokenizer.json", "tokenizer_config.json", "tokenizer.model")):
            raise PolicyError(
                f"policy {spec}: the checkpoint has no tokenizer (tokenizer.json / tokenizer_config.json); "
                "save the tokenizer beside the model (tokenizer.save_pretrained) and try again"
            )
    try:
        model, tok = load_policy(str(spec))
    except OSError as exc:  # an id no hub answers for, or a folder from_pretrained cannot read
        raise PolicyError(f"policy {spec}: cannot load it ({exc})") from None
    name = f"{p.parent.name}-{p.name}" if p.exists() and p.name == "checkpoint" else (p.name if p.exists() else spec)
    return LocalPolicy(model, tok, name=str(name), **kw)


# ------------------------------------------------------------------------------------------------ endpoints


class EndpointPolicy:
    """A model behind an OpenAI-compatible ``/v1/chat/completions`` with tool calling."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str = "not-needed",
        concurrency: int = 8,
        retries: int = 3,
        timeout_s: float = 60.0,
        max_tokens: int | None = 1024,
        client: Any | None = None,
    ):
        self.base_url = base_url
        self.model = model
        self.name = model
        self.concurrency = max(1, concurrency)
        self.retries = max(1, retries)
        self.max_tokens = max_tokens
        self._requests = AccountedRequests()
        self.usage = self._requests.usage
        if client is None:
            from openai import OpenAI

            client = OpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=0)
        self.client = client

    def describe(self) -> dict[str, Any]:
        return {"kind": "endpoint", "name": self.model, "base_url": self.base_url, "usage": self.usage.as_dict()}

    def _ask(self, conv: Conversation) -> Reply:
        messages, tools = conv
        kw: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": 0.0}
        if tools:
            kw["tools"] = tools
        if self.max_tokens:
            kw["max_tokens"] = self.max_tokens

        def request() -> Any:
            resp = self.client.chat.completions.create(**kw)
            return SimpleNamespace(message=resp.choices[0].message, usage=getattr(resp, "usage", None))

        try:
            return _reply_of(self._requests.send(request, self.retries).message)
        except RequestsFailed as exc:
            raise PolicyError(f"endpoint {self.base_url} (model {self.model}) {exc}") from None

    def respond(self, conversations: Sequence[Conversation]) -> list[Reply]:
        if not conversations:
            return []
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(conversations))) as pool:
            futures = [pool.submit(self._ask, c) for c in conversations]
            return [f.result() for f in futures]


def _reply_of(msg: Any) -> Reply:
    calls = []
    for tc in getattr(msg, "tool_calls", None) or []:
        fn = getattr(tc, "function", None)
        name = getattr(fn, "name", None)
        raw = getattr(fn, "arguments", None)
        try:
            args = json.loads(raw) if isinstance(raw, str) and raw.strip() else (raw or {})
        except ValueError:
            args = None
        if not isinstance(name, str) or not name or not isinstance(args, dict):
            calls.append({"name": name or "", "arguments": None, "malformed": True, "raw": str(raw)[:200]})
        else:
            calls.append({"name": name, "arguments": args})
    text = getattr(msg, "content", None) or ""
    if not calls and "<tool_call>" in text:  # a server that does not parse its model's calls itself
        calls = parse_tool_calls(text)
    return Reply(content=text, calls=calls)


def open_policy(
    policy: str | None = None,
    endpoint: str | None = None,
    model: str | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    **kw: Any,
) -> LocalPolicy | EndpointPolicy:
    """``policy``: a checkpoint folder or a Hugging Face id; or ``endpoint`` (a base URL) with ``model``."""
    import os

    if endpoint:
        if not model:
            raise PolicyError(f"endpoint {endpoint}: name the model it serves (--model)")
        keep = {k: v for k, v in kw.items() if k in ("concurrency", "retries", "timeout_s", "max_tokens")}
        return EndpointPolicy(endpoint, model, os.environ.get(api_key_env, "not-needed"), **keep)
    if not policy:
        raise PolicyError("no policy: give a checkpoint folder or model id, or an endpoint and a model")
    local = ("max_new_tokens", "max_tool_chars", "batch_size", "max_prompt_tokens")
    keep = {k: v for k, v in kw.items() if k in local and v is not None}
    return load_local_policy(policy, **keep)
