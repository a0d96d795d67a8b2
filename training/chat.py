"""Token-level rendering of conversations with the policy's own chat template.

A multi-step rollout grows one token sequence: the prompt, then the policy's assistant message, then the tool
results (or the next user message) and the template's generation prompt, then the next assistant message, ...
:class:`ChatFormat` renders the pieces that are not the policy's own output as token ids, each as the
template's suffix over a short fixed history, so a piece's tokens do not depend on what the policy wrote.
SFT sequences are built from the same pieces (:meth:`ChatFormat.sft_example`), with the loss on assistant
tokens only (never on an assistant message of ``weight`` 0), so SFT and GRPO see the same token layout.
"""

from __future__ import annotations

import json
from typing import Any

from training.data import Task

_SYS = {"role": "system", "content": "s"}
_USER = {"role": "user", "content": "u"}
_CALL = {
    "role": "assistant",
    "content": "",
    "tool_calls": [{"id": "call_0", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
}
_TEXT = {"role": "assistant", "content": "ok"}


def tool_message(call_id: str, content: str, max_chars: int) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content[:max_chars]}


class ChatFormat:
    """Renders prompts, tool results and later user turns as token ids.

    ``template_kwargs`` go to every ``apply_chat_template`` call (``enable_thinking=False`` by default: a
    thinking model's prompt is rendered without the thinking block). Tool results are cut to ``max_tool_chars``
    characters, in SFT targets and in rollouts alike.
    """

    def __init__(self, tokenizer: Any, template_kwargs: dict[str, Any] | None = None, max_tool_chars: int = 400):
        self.tok = tokenizer
        self.kw = dict(template_kwargs or {})
        self.max_tool_chars = max_tool_chars
        self._gen_prompt = self._suffix([_SYS, _USER, _TEXT, _USER], [], gen=True)

    def render(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, gen: bool = False
    ) -> str:
        return self.tok.apply_chat_template(
            messages, tools=tools or None, add_generation_prompt=gen, tokenize=False, **self.kw
        )

    def encode(self, text: str) -> list[int]:
        return self.tok(text, add_special_tokens=False)["input_ids"]

    def _suffix(self, history: list[dict[str, Any]], new: list[dict[str, Any]], gen: bool) -> str:
        base = self.render(history)
        full = self.render(history + new, gen=gen)
        if not full.startswith(base):
            raise ValueError(
                "the chat template is not prefix-preserving: appending messages changed the rendered history"
            )
        return full[len(base) :]

    def prompt_text(self, task: Task) -> str:
        return self.render(task.prompt, task.tools, gen=True)

    def prompt_ids(self, task: Task) -> list[int]:
        return self.encode(self.prompt_text(task))

    def tool_results_ids(self, tool_messages: list[dict[str, Any]]) -> list[int]:
        """The tool messages after an assistant message, then the generation prompt."""
        return self.encode(self._suffix([_SYS, _USER, _CALL], tool_messages, gen=True))

    def user_turn_ids(self, content: str) -> list[int]:
        """A later user message after the assistant's answer, then the generation prompt."""
        return self.encode(self._suffix([_SYS, _USER, _TEXT], [{"role": "user", "content": content}], gen=True))

    def assistant_text(self, message: dict[str, Any]) -> str:
        """An assistant message as the template writes it after the generation prompt (EOS included)."""
        text = self._suffix([_SYS, _USER], [message], gen=False)
        k = 0  # drop the role header (the generation prompt, or the part of it a history message shares)
        while k < min(len(text), len(self._gen_prompt)) and text[k] == self._gen_prompt[k]:
            k += 1
        text = text[k:]
        eos = self.tok.eos_token or ""
        return text[: text.rfind(eos) + len(eos)] if eos and eos in text else text

    def sft_example(self, task: Task, max_user_turns: int | None = None) -> dict[str, list[int]]:
        """``input_ids`` and ``completion_mask`` (1 on assistant tokens) of the whole conversation, sequential
        as the corpus has it; tool results and user turns are laid out exactly as a rollout lays them out. An
        assistant message with ``weight`` 0 (a recovery demonstration's wrong attempt) is in the sequence with mask
        0: the model reads the failed call and its error, and learns only the correction."""
        ids = self.prompt_ids(task)
        mask = [0] * len(ids)
        msgs = task.messages[len(task.prompt) :] if task.messages[: len(task.prompt)] == task.prompt else task.messages
        pending_tools: list[dict[str, Any]] = []
        users = 1
        last = "user"

        def flush() -> None:
            nonlocal pending_tools
            if pending_tools:
                seg = self.tool_results_ids(pending_tools)
                ids.extend(seg)
                mask.extend([0] * len(seg))
                pending_tools = []

        for m in msgs:
            role = m.get("role")
            if role == "tool":
                pending_tools.append(
                    tool_message(str(m.get("tool_call_id") or ""), str(m.get("content") or ""), self.max_tool_chars)
                )
                continue
            flush()
            if role == "assistant":
                if last == "assistant_text":
                    break  # two answers in a row do not occur in a rollout
                seg = self.encode(self.assistant_text(m))
                ids.extend(seg)
                mask.extend([0 if m.get("weight") == 0 else 1] * len(seg))  # a wrong attempt is read, never learned
                last = "assistant_call" if m.get("tool_calls") else "assistant_text"
            elif role == "user":
                if max_user_turns is not None and users >= max_user_turns:
                    break
                seg = self.user_turn_ids(str(m.get("content") or ""))
                ids.extend(seg)
                mask.extend([0] * len(seg))
                users += 1
                last = "user"
        return {"input_ids": ids, "completion_mask": mask}


def call_message(calls: list[dict[str, Any]]) -> dict[str, Any]:
    """An assistant message carrying ``calls`` (``{"name", "arguments"}``) as OpenAI tool calls."""
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments") or {})},
            }
            for i, c in enumerate(calls)
        ],
    }
