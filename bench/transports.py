"""Tool-call cost through ``pipeline.env`` in-process vs over stdio vs over streamable HTTP. Prints JSON.

The same ``get_account`` call on the banking server in one open session per transport; the
baseline is the in-process transport measured in the same run (``*_vs_inprocess`` ratios).
Reuses ``bench/server_calls.py``.

    PYTHONPATH=. .venv/bin/python bench/transports.py [--calls 100] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import server_calls  # noqa: E402


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser()
    p.add_argument("--calls", type=int, default=100, help="calls per timing round")
    p.add_argument("--rounds", type=int, default=5)
    a = p.parse_args(argv)
    result = {
        "figure": "transports",
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "loadavg_1m": round(os.getloadavg()[0], 2),
        },
        "baseline": "in-process transport (same run)",
        "transports": server_calls.transports(a.calls, a.rounds),
    }
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
