"""Evaluation: multi-turn live play (greedy) of the eval split, summarized with 95% bootstrap intervals,
per kind and per server; the Markdown report and the reward curve."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pipeline.reward.score import RewardConfig
from training.data import Task
from training.episodes import play
from training.rollout import EnvPool
from training.suites.heldout import HeldoutEpisode
from training.tiny import render_call

COMPONENTS = ("validity", "coverage", "efficiency", "name", "args")
PHASES = ("before", "after_sft", "after_grpo")


def _mean(xs: Sequence[float]) -> float | None:
    return (sum(xs) / len(xs)) if xs else None


def bootstrap_ci(xs: Sequence[float], samples: int = 1000, seed: int = 0) -> list[float] | None:
    """A 95% percentile bootstrap interval of the mean (None without data)."""
    if not xs:
        return None
    rng = random.Random(seed)
    n = len(xs)
    means = sorted(sum(xs[rng.randrange(n)] for _ in range(n)) / n for _ in range(samples))
    return [means[int(0.025 * (samples - 1))], means[int(math.ceil(0.975 * (samples - 1)))]]


def paired_delta(a: Sequence[float], b: Sequence[float], samples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Mean of ``b - a`` over the same examples with its 95% bootstrap interval."""
    d = [y - x for x, y in zip(a, b)]
    return {"mean": _mean(d), "ci95": bootstrap_ci(d, samples, seed)}


def _stat(xs: list[float], samples: int, seed: int) -> dict[str, Any]:
    return {"mean": _mean(xs), "ci95": bootstrap_ci(xs, samples, seed), "n": len(xs)}


def summarize(episodes: list[Any], samples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Mean reward and components, exact success (tool tasks), abstention accuracy, per kind and per server, of
    played :class:`training.suites.heldout.HeldoutEpisode` items (each with its ``reward`` set)."""
    tool = [ep for ep in episodes if not ep.task.abstain]
    abst = [ep for ep in episodes if ep.task.abstain]
    totals = [ep.reward.total for ep in episodes]
    by: dict[str, dict[str, list[float]]] = {"kind": {}, "server": {}}
    for ep in episodes:
        by["kind"].setdefault(ep.task.kind, []).append(ep.reward.total)
        by["server"].setdefault(ep.task.server, []).append(ep.reward.total)
    return {
        "n": len(episodes),
        "n_tool_tasks": len(tool),
        "n_abstention_tasks": len(abst),
        "mean_reward": _mean(totals),
        "reward": _stat(totals, samples, seed),
        "components": {k: _mean([getattr(ep.reward, k) for ep in tool]) for k in COMPONENTS},
        "exact_success": _stat([1.0 if ep.reward.exact else 0.0 for ep in tool], samples, seed),
        "abstention_accuracy": _stat([1.0 if ep.reward.n_calls == 0 else 0.0 for ep in abst], samples, seed),
        "mean_calls": _mean([ep.reward.n_calls for ep in episodes]),
        "turns_reached": _mean([len(ep.calls_per_turn) / ep.n_turns for ep in episodes]),
        "by_kind": {k: {"n": len(v), "mean_reward": _mean(v)} for k, v in sorted(by["kind"].items())},
        "by_server": {k: {"n": len(v), "mean_reward": _mean(v)} for k, v in sorted(by["server"].items())},
        "per_example": [round(t, 6) for t in totals],
        "samples": [
            {"example_id": ep.task.example_id, "messages": _assistant_texts(ep)[:4], "total": ep.reward.total}
            for ep in episodes[:3]
        ],
    }


def _assistant_texts(ep: Any) -> list[str]:
    out = []
    for turn in ep.replies:
        for r in turn:
            calls = [c for c in r.calls if not c.get("malformed")]
            out.append(
                "".join(render_call(c["name"], c["arguments"]) for c in calls)[:200] if calls else r.content[:200]
            )
    return out


def evaluate(
    policy: Any,
    tasks: list[Task],
    pool: EnvPool,
    reward: RewardConfig,
    max_user_turns: int = 5,
    max_steps_per_turn: int = 10,
    samples: int = 1000,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Greedy multi-turn live play of ``tasks`` by ``policy`` (:mod:`training.policies`), the way the held-out suite
    plays its items (:mod:`training.suites.heldout`: every user turn reached, up to ``max_steps_per_turn``
    assistant messages a turn), summarized."""
    eps = [HeldoutEpisode(t, pool, max_user_turns) for t in tasks]
    play(policy, eps, max_steps_per_turn=max_steps_per_turn, max_user_turns=max_user_turns, on_step=progress)
    for ep in eps:
        ep.reward = ep.score(reward)
    return summarize(eps, samples, seed)


# ------------------------------------------------------------------------------------------------ reports


def _fmt(v: Any) -> str:
    return "–" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))


def _ci(s: dict[str, Any] | None) -> str:
    if not s or s.get("mean") is None:
        return "–"
    lo, hi = s["ci95"]
    return f"{s['mean']:.3f} [{lo:.3f}, {hi:.3f}]"


def write_markdown(report: dict[str, Any], path: Path) -> None:
    ph = {k: report["phases"].get(k) for k in PHASES}
    cols = [k for k in PHASES if ph[k] is not None]
    first = ph[cols[0]]
    cfg = report["config"]
    head = "| metric | " + " | ".join(cols) + " |"
    sep = "|---|" + "---|" * len(cols)
    lines = [
        "# Evaluation report",
        "",
        f"model: `{cfg['model']}`; eval examples: {first['n']} ({first['n_tool_tasks']} tool tasks, "
        f"{first['n_abstention_tasks']} abstention), multi-turn live rollouts "
        f"(greedy, up to {cfg['max_user_turns']} user / "
        f"{cfg['max_assistant_turns']} assistant turns); SFT {cfg['sft_steps']} steps, GRPO {cfg['grpo_steps']} steps. "
        "Intervals: 95% bootstrap.",
        "",
        head,
        sep,
        "| mean reward (max 1.3) | " + " | ".join(_ci(ph[k]["reward"]) for k in cols) + " |",
        "| exact success (tool tasks) | " + " | ".join(_ci(ph[k]["exact_success"]) for k in cols) + " |",
        "| abstention accuracy | " + " | ".join(_ci(ph[k]["abstention_accuracy"]) for k in cols) + " |",
    ]
    for c in COMPONENTS:
        lines.append(f"| {c} (tool tasks) | " + " | ".join(_fmt(ph[k]["components"][c]) for k in cols) + " |")
    lines.append("| calls per example | " + " | ".join(_fmt(ph[k]["mean_calls"]) for k in cols) + " |")
    if report.get("grpo_vs_sft"):
        d = report["grpo_vs_sft"]
        lo, hi = d["ci95"] or (None, None)
        lines += [
            "",
            f"GRPO minus SFT-only, paired over the same eval examples: {_fmt(d['mean'])} [{_fmt(lo)}, {_fmt(hi)}].",
        ]
    for group in ("by_kind", "by_server"):
        lines += [
            "",
            f"## {'By kind' if group == 'by_kind' else 'By server'}",
            "",
            f"| {group[3:]} | n | " + " | ".join(cols) + " |",
            "|---|---|" + "---|" * len(cols),
        ]
        last = ph[cols[-1]][group]
        for k, v in last.items():
            lines.append(
                f"| {k} | {v['n']} | "
                + " | ".join(_fmt(ph[c][group].get(k, {}).get("mean_reward")) for c in cols)
                + " |"
            )
    lines += ["", "## Sample rollouts after training (assistant messages)", ""]
    for s in ph[cols[-1]]["samples"]:
        lines.append(
            f"- `{s['example_id']}` (reward {s['total']:.3f}): "
            + " / ".join(f"`{m.strip()[:120]}`" for m in s["messages"])
        )
    path.write_text("\n".join(lines) + "\n")


def plot_reward_curve(metrics_path: Path, png_path: Path) -> Path | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    recs = [json.loads(x) for x in metrics_path.read_text().splitlines() if x.strip()] if metrics_path.exists() else []
    recs = [r for r in recs if r.get("phase") == "grpo" and r.get("reward") is not None]
    fig, ax = plt.subplots(figsize=(7, 4))
    if recs:
        steps = [r["step"] for r in recs]
        ax.plot(steps, [r["reward"] for r in recs], marker="o", lw=2, label="total reward")
        for k in COMPONENTS:
            ys = [r.get(f"reward/{k}") for r in recs]
            if all(y is not None for y in ys):
                ax.plot(steps, ys, lw=1, alpha=0.7, label=k)
        zs = [r.get("frac_reward_zero_std") for r in recs]
        if all(z is not None for z in zs):
            ax.plot(steps, zs, lw=1, ls="--", color="grey", label="frac_reward_zero_std")
    ax.set_xlabel("GRPO step")
    ax.set_ylabel("reward (max 1.3)")
    ax.set_title("GRPO reward on live multi-step rollouts")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)
    plt.close(fig)
    return png_path
