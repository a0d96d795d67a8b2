"""Playing a suite's items with any policy: one conversation per item, user turn by user turn, the policy's
calls executed live in the item's own environment, batched across items.

An :class:`Episode` is one item being played: it gives the opening messages and tools, each later user turn
(and the tools offered from that turn on, which may grow: BFCL's missing-function turns), executes a turn's
calls and returns the tool messages' contents, and releases its environment when closed. :func:`play` asks the
policy for every live episode at once, appends its reply, executes its calls or moves to the next user turn, up
to ``max_steps_per_turn`` assistant messages a user turn (BFCL's and the paper's limit is per turn; training's
rollouts count the whole conversation). Nothing here raises on the policy's output: a malformed call is executed
by the episode as a failed call the policy can read.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from training.policies import Policy, Reply


@dataclass
class Episode(ABC):
    """One item being played; each suite's episode implements ``execute`` and ``close`` (and ``tools_at`` where
    the tools change from turn to turn)."""

    item_id: str
    messages: list[dict[str, Any]]  # the conversation so far (system and first user message to start)
    user_turns: list[str]  # every user turn's text, the first included
    tools: list[dict[str, Any]]
    calls_per_turn: list[list[dict[str, Any]]] = field(default_factory=lambda: [[]])
    replies: list[list[Reply]] = field(default_factory=lambda: [[]])
    done: bool = False
    error: str | None = None
    end_turn_now: bool = False  # set by ``execute``: the turn ends after this step (BFCL: a step that did not decode)
    _steps_in_turn: int = 0
    _n_calls: int = 0

    @property
    def turn(self) -> int:
        return len(self.calls_per_turn) - 1

    def tools_at(self, turn: int) -> list[dict[str, Any]]:
        """The tools offered from user turn ``turn`` on (the same for every turn unless a suite says otherwise)."""
        return self.tools

    @abstractmethod
    def execute(self, calls: list[dict[str, Any]]) -> list[str]:
        """Run ``calls`` in order, record each with its outcome in ``calls_per_turn[-1]`` and return the content of
        each call's tool message (each suite's episode does it in its own environment)."""

    @abstractmethod
    def close(self) -> None:
        """Release the item's environment."""


def play(
    policy: Policy,
    episodes: Sequence[Episode],
    max_steps_per_turn: int = 10,
    max_user_turns: int | None = None,
    on_step: Callable[[int, int], None] | None = None,
) -> list[Episode]:
    """Play every episode to its end (each closed after); ``on_step(done, total)`` after each round."""
    for ep in episodes:
        limit = len(ep.user_turns) if max_user_turns is None else min(max_user_turns, len(ep.user_turns))
        ep.user_turns = ep.user_turns[:limit]
    try:
        while live := [ep for ep in episodes if not ep.done]:
            replies = policy.respond([(ep.messages, ep.tools_at(ep.turn)) for ep in live])
            for ep, reply in zip(live, replies):
                _take(ep, reply, max_steps_per_turn)
            if on_step is not None:
                on_step(sum(ep.done for ep in episodes), len(episodes))
    finally:
        for ep in episodes:
            try:
                ep.close()
            except Exception:
                pass
    return list(episodes)


def _take(ep: Episode, reply: Reply, max_steps: int) -> None:
    ep.replies[-1].append(reply)
    ep.messages.append(reply.message(ep._n_calls))
    ep._steps_in_turn += 1
    if reply.calls:
        try:
            contents = ep.execute(reply.calls)
        except Exception as exc:  # an environment that broke: the calls fail, the item ends
            ep.error = f"{type(exc).__name__}: {exc}"
            contents = [json.dumps({"error": "server_error", "message": ep.error}) for _ in reply.calls]
            ep.done = True
        for i, content in enumerate(contents):
            ep.messages.append({"role": "tool", "tool_call_id": f"call_{ep._n_calls + i}", "content": content})
        ep._n_calls += len(reply.calls)
        if (ep._steps_in_turn < max_steps and not ep.end_turn_now) or ep.done:
            return
        # the turn's step budget is spent: the turn ends as if the policy had answered
    if ep.turn + 1 >= len(ep.user_turns) or ep.done:
        ep.done = True
        return
    ep.calls_per_turn.append([])
    ep.replies.append([])
    ep._steps_in_turn = 0
    ep.end_turn_now = False
    ep.messages.append({"role": "user", "content": ep.user_turns[ep.turn]})
