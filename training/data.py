"""From corpus rows to training tasks: the prompt (conversation up to the first user turn, plus the tools),
the reference of the first user turn (abstention when empty) and the SFT target for that turn."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REQUIRED_COLUMNS = ("example_id", "kind", "servers", "env_seed", "messages", "tools", "reference")
DEFAULT_REFUSAL = "Sorry, none of the available tools can help with that."


@dataclass
class Task:
    example_id: str
    kind: str
    server: str
    env_seed: int
    prompt: list[dict[str, Any]]  # system? + first user message
    tools: list[dict[str, Any]]
    tools_json: str
    reference: list[dict[str, Any]]  # the first user turn's calls ([] = abstain)
    reference_json: str
    target: dict[str, Any]  # the assistant message SFT teaches for the first turn

    @property
    def abstain(self) -> bool:
        return not self.reference


def _task(row: dict[str, Any], where: str) -> Task:
    for c in REQUIRED_COLUMNS:
        if c not in row or row[c] is None:
            raise ValueError(f"{where}: column {c!r} is missing")
    try:
        messages = json.loads(row["messages"])
        tools = json.loads(row["tools"])
        reference = json.loads(row["reference"])
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: messages/tools/reference must be JSON strings ({exc})") from None
    if not row["servers"]:
        raise ValueError(f"{where}: column 'servers' is empty")
    first_user = next((i for i, m in enumerate(messages) if m.get("role") == "user"), None)
    if first_user is None:
        raise ValueError(f"{where}: messages hold no user turn")
    prompt = [m for m in messages[: first_user + 1] if m.get("role") in ("system", "user")]
    ref0 = reference[0] if reference and isinstance(reference[0], list) else (reference if reference and isinstance(reference[0], dict) else [])
    ref0 = [{"name": g["name"], "arguments": g.get("arguments") or {}, "depends_on": list(g.get("depends_on") or [])} for g in ref0]
    if ref0:
        target = {"role": "assistant", "content": "", "tool_calls": [
            {"id": f"call_{k}", "type": "function", "function": {"name": g["name"], "arguments": json.dumps(g["arguments"])}}
            for k, g in enumerate(ref0)]}
    else:
        nxt = next((m for m in messages[first_user + 1:] if m.get("role") == "assistant"), None)
        text = (nxt or {}).get("content") or DEFAULT_REFUSAL
        target = {"role": "assistant", "content": text}
    return Task(
        example_id=str(row["example_id"]), kind=str(row["kind"]), server=str(row["servers"][0]), env_seed=int(row["env_seed"]),
        prompt=prompt, tools=tools, tools_json=row["tools"], reference=ref0, reference_json=json.dumps(ref0), target=target,
    )


def load_tasks(corpus_dir: str | Path, split: str, limit: int | None = None) -> list[Task]:
    """Tasks of ``<corpus_dir>/<split>.parquet`` (read with polars)."""
    import polars as pl

    path = Path(corpus_dir) / f"{split}.parquet"
    if not path.exists():
        raise FileNotFoundError(f"no {split} split at {path}")
    df = pl.read_parquet(path)
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: missing columns {missing}")
    # a limit takes a stable sample across kinds and servers: example ids are content hashes
    rows = df.sort("example_id").head(limit) if limit else df
    return [_task(r, f"{path.name} row {i}") for i, r in enumerate(rows.iter_rows(named=True))]


def conversation_texts(tasks: list[Task]) -> list[dict[str, Any]]:
    """Prompt + target conversations (for training the tiny tokenizer on rendered text)."""
    return [{"messages": t.prompt + [t.target], "tools": t.tools} for t in tasks]


def render_prompt(tokenizer: Any, task: Task) -> str:
    return tokenizer.apply_chat_template(task.prompt, tools=task.tools or None, add_generation_prompt=True, tokenize=False)


def render_target(tokenizer: Any, task: Task, prompt_text: str | None = None) -> str:
    """The completion SFT teaches: the chat template's rendering of the target after the generation prompt."""
    prompt_text = prompt_text if prompt_text is not None else render_prompt(tokenizer, task)
    full = tokenizer.apply_chat_template(task.prompt + [task.target], tools=task.tools or None, tokenize=False)
    if full.startswith(prompt_text):
        return full[len(prompt_text):]
    # a template that is not prefix-preserving: fall back to the documented tool-call format
    from training.tiny import render_call

    body = task.target.get("content") or ""
    body += "".join(render_call(tc["function"]["name"], tc["function"]["arguments"]) for tc in task.target.get("tool_calls", []))
    return body + (tokenizer.eos_token or "")
