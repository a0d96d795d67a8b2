"""Reward throughput, and where a GRPO step's wall time goes. Prints JSON.

1. Static components (validity with recorded ``ok``, coverage, efficiency, name, args): trajectories/s of
   ``pipeline.reward.score.score`` against a naive implementation in the same process (re-reads the tool schemas
   for every trajectory, compares values by JSON round-trip), as a ratio. Both must agree on every total.
2. ``bench/grpo_share.py``: a short SFT + GRPO run of the tiny policy with multi-step live rollouts; the
   share of the GRPO steps' wall time spent in environment work and in the reward.

    PYTHONPATH=. .venv/bin/python bench/reward_throughput.py [--n 20000] [--no-grpo] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.env import Environment  # noqa: E402
from pipeline.reward.score import RewardConfig, score, tool_index  # noqa: E402


def naive_score(calls, reference, tools_json, cfg):
    """The same formulas written the obvious way: schemas parsed per trajectory, values compared as JSON text."""
    tools = json.loads(tools_json)
    schemas = {t["function"]["name"]: t["function"].get("parameters") or {} for t in tools}
    tmap = {
        "string": (str,),
        "number": (int, float),
        "integer": (int,),
        "boolean": (bool,),
        "array": (list,),
        "object": (dict,),
    }

    def type_ok(v, s):
        t = s.get("type")
        if t is None:
            alts = s.get("anyOf")
            return True if not alts else any(type_ok(v, a) for a in alts)
        if t == "null":
            return v is None
        if isinstance(v, bool) and t != "boolean":
            return False
        return isinstance(v, tmap.get(t, (object,)))

    n = len(calls)
    val = 0.0
    for c in calls:
        s = schemas.get(c["name"])
        if s is None:
            continue
        l2 = all(
            k in c["arguments"] and type_ok(c["arguments"][k], (s.get("properties") or {}).get(k, {}))
            for k in s.get("required") or []
        )
        val += (1 + (1 if l2 else 0) + (1 if l2 and c["ok"] else 0)) / 3
    val = val / n if n else 0.0
    if not reference:
        return 1.0 if n == 0 else 0.0
    used, mu = set(), []
    for g in reference:
        m = None
        for i, c in enumerate(calls):
            if i not in used and c["name"] == g["name"] and set(g["arguments"]) <= set(c["arguments"]):
                m = i
                used.add(i)
                break
        mu.append(m)
    cov, arg, pairs = 0.0, 0.0, 0
    for gi, g in enumerate(reference):
        if mu[gi] is None:
            continue
        if all(mu[j] is not None and mu[j] < mu[gi] for j in g["depends_on"]):
            cov += 1
        c = calls[mu[gi]]
        keys = list(g["arguments"])
        arg += (
            (
                sum(
                    json.dumps(c["arguments"][k], sort_keys=True) == json.dumps(g["arguments"][k], sort_keys=True)
                    for k in keys
                )
                / len(keys)
            )
            if keys
            else 1.0
        )
        pairs += 1
    cov /= len(reference)
    arg = arg / pairs if pairs else 0.0
    b = len(reference) + math.ceil(cfg.beta * len(reference))
    eff = -cfg.alpha * max(0, n - b) / b
    names = {g["name"] for g in reference}
    name = sum(c["name"] in names for c in calls) / n if n else 0.0
    return cfg.w_validity * val + cfg.w_coverage * cov + cfg.w_efficiency * eff + cfg.w_name * name + cfg.w_args * arg


def make_trajectories(n: int, tools: list[dict], seed: int = 0):
    rng = random.Random(seed)
    specs = [(t["function"]["name"], t["function"]["parameters"]) for t in tools]
    out = []
    for _ in range(n):
        k = rng.choice([0, 1, 2, 3, 4])
        ref = []
        for i in range(k):
            name, p = rng.choice(specs)
            args = {
                key: (
                    f"ID-{rng.randint(1, 30):04d}"
                    if (p["properties"][key].get("type") == "string")
                    else float(rng.randint(1, 99))
                )
                for key in (p.get("required") or [])
            }
            ref.append({"name": name, "arguments": args, "depends_on": [i - 1] if i and rng.random() < 0.5 else []})
        calls = []
        for g in ref:
            r = rng.random()
            if r < 0.6:
                calls.append({"name": g["name"], "arguments": dict(g["arguments"]), "ok": True})
            elif r < 0.8:
                calls.append(
                    {
                        "name": g["name"],
                        "arguments": {k: ("x" if isinstance(v, str) else v) for k, v in g["arguments"].items()},
                        "ok": False,
                    }
                )
            else:
                calls.append({"name": rng.choice(specs)[0], "arguments": {}, "ok": False})
        rng.shuffle(calls) if rng.random() < 0.2 else None
        for _ in range(rng.choice([0, 0, 1, 3])):
            calls.append({"name": rng.choice(["nope", specs[0][0]]), "arguments": {}, "ok": rng.random() < 0.5})
        out.append((calls, ref))
    return out


def bench_static(n: int) -> dict:
    with Environment("banking") as env:
        tools = [t.to_openai() for t in env.tools()]
    tools_json = json.dumps(tools)
    trajs = make_trajectories(n, tools)
    cfg = RewardConfig()
    # fast path, as training uses it: the schema string is compiled once and cached
    t0 = time.perf_counter()
    fast = [score(c, r, tools_json, cfg).total for c, r in trajs]
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    slow = [naive_score(c, r, tools_json, cfg) for c, r in trajs]
    t_slow = time.perf_counter() - t0
    bad = sum(abs(a - b) > 1e-9 for a, b in zip(fast, slow))
    assert bad == 0, f"{bad} totals differ between the implementations"
    idx = tool_index(tools_json)
    t0 = time.perf_counter()
    for c, r in trajs:
        score(c, r, idx, cfg)
    t_idx = time.perf_counter() - t0
    return {
        "trajectories": n,
        "reward_traj_per_s": round(n / t_fast),
        "reward_traj_per_s_precompiled_tools": round(n / t_idx),
        "naive_baseline_traj_per_s": round(n / t_slow),
        "speedup_vs_naive": round(t_slow / t_fast, 2),
        "totals_agree": True,
    }


def bench_grpo_share() -> dict:
    from bench.grpo_share import measure

    return measure()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--no-grpo", action="store_true")
    ap.add_argument("--out")
    a = ap.parse_args()
    result = {"static_reward": bench_static(a.n)}
    if not a.no_grpo:
        result["grpo_step"] = bench_grpo_share()
    text = json.dumps(result, indent=2)
    if a.out:
        Path(a.out).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
