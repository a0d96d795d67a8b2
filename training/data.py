"""From corpus rows to training tasks: the whole conversation (every user turn), its offered tools, the
reference per user turn (``[]`` = no call is right in that turn) and the environment (``servers[0]`` at
``env_seed``).

Corpus ``reference`` columns hold one list per *task* turn; a clarification exchange (the assistant asks,
the user answers) has no entry of its own. :func:`align_reference` puts each list on the user turn whose
assistant messages carry the calls, so every user turn of the conversation has its reference.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.corpus.columns import messages_of, reference_of, tools_of, tools_text

REQUIRED_COLUMNS = ("example_id", "kind", "servers", "env_seed", "messages", "tools", "reference")


@dataclass
class Task:
    example_id: str
    kind: str
    server: str
    env_seed: int
    messages: list[dict[str, Any]]  # the corpus conversation, sequential: one call per assistant message + its result
    tools: list[dict[str, Any]]
    tools_json: str
    reference: list[list[dict[str, Any]]]  # per user turn
    user_turns: list[str]  # the content of every user message, in order

    @property
    def prompt(self) -> list[dict[str, Any]]:
        """System message(s) and the first user message."""
        first = next(i for i, m in enumerate(self.messages) if m.get("role") == "user")
        return [m for m in self.messages[: first + 1] if m.get("role") in ("system", "user")]

    @property
    def abstain(self) -> bool:
        """No call is right in any turn."""
        return not any(self.reference)

    @property
    def n_turns(self) -> int:
        return len(self.user_turns)


def _norm_step(g: dict[str, Any]) -> dict[str, Any]:
    return {"name": g["name"], "arguments": g.get("arguments") or {}, "depends_on": list(g.get("depends_on") or [])}


def align_reference(messages: list[dict[str, Any]], reference: Any, where: str = "row") -> list[list[dict[str, Any]]]:
    """One reference list per user message (see the module docstring). Raises ``ValueError`` naming ``where``
    when the reference cannot be placed on the conversation's turns."""
    if reference and isinstance(reference[0], dict):  # a flat single-turn reference
        reference = [reference]
    groups = [[_norm_step(g) for g in (turn or [])] for turn in (reference or [])]
    calls_in_turn: list[bool] = []
    for m in messages:
        if m.get("role") == "user":
            calls_in_turn.append(False)
        elif m.get("role") == "assistant" and m.get("tool_calls") and calls_in_turn:
            calls_in_turn[-1] = True
    n_user = len(calls_in_turn)
    if len(groups) == n_user:
        return groups
    nonempty = [g for g in groups if g]
    with_calls = [i for i, c in enumerate(calls_in_turn) if c]
    if len(nonempty) != len(with_calls):
        raise ValueError(
            f"{where}: reference has {len(groups)} turns ({len(nonempty)} with calls) but the messages have "
            f"{n_user} user turns ({len(with_calls)} with calls); cannot align them"
        )
    out: list[list[dict[str, Any]]] = [[] for _ in range(n_user)]
    for i, g in zip(with_calls, nonempty):
        out[i] = g
    return out


def task_from_row(row: dict[str, Any], where: str = "row") -> Task:
    for c in REQUIRED_COLUMNS:
        if c not in row or row[c] is None:
            raise ValueError(f"{where}: column {c!r} is missing")
    try:
        messages = messages_of(row["messages"])
        tools = tools_of(row["tools"])
        reference = reference_of(row["reference"])
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise ValueError(
            f"{where}: messages/tools/reference must be the corpus's nested columns or JSON strings ({exc!r})"
        ) from None
    if not row["servers"]:
        raise ValueError(f"{where}: column 'servers' is empty")
    user_turns = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
    if not user_turns:
        raise ValueError(f"{where}: messages hold no user turn")
    return Task(
        example_id=str(row["example_id"]),
        kind=str(row["kind"]),
        server=str(row["servers"][0]),
        env_seed=int(row["env_seed"]),
        messages=messages,
        tools=tools,
        tools_json=tools_text(row["tools"]),
        reference=align_reference(messages, reference, where),
        user_turns=user_turns,
    )


def load_tasks(corpus_dir: str | Path, split: str, limit: int | None = None) -> list[Task]:
    """Tasks of ``<corpus_dir>/<split>.parquet`` (read with pyarrow: training needs no polars)."""
    import pyarrow.parquet as pq

    path = Path(corpus_dir) / f"{split}.parquet"
    if not path.exists():
        raise FileNotFoundError(f"no {split} split at {path}")
    table = pq.read_table(path)
    missing = [c for c in REQUIRED_COLUMNS if c not in table.column_names]
    if missing:
        raise ValueError(f"{path}: missing columns {missing}")
    rows = table.to_pylist()
    if limit:  # a stable sample across kinds and servers: example ids are content hashes
        rows = sorted(rows, key=lambda r: str(r["example_id"]))[:limit]
    return [task_from_row(r, f"{path.name} row {i}") for i, r in enumerate(rows)]


def conversation_texts(tasks: list[Task]) -> list[dict[str, Any]]:
    """Whole conversations (for training the tiny tokenizer on rendered text)."""
    return [{"messages": t.messages, "tools": t.tools} for t in tasks]
