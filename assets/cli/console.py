"""What ``prove build`` shows a person, and where everything else goes.

The terminal gets one progress bar per phase (synthesis per server, dedup, corpus, evaluation, SFT,
GRPO with its step and reward) and a short summary. Everything else written while the build runs
(other libraries' warnings, trainer dictionaries, dataset bars, Dagster's logs, the worker
processes' output) goes to a log file under the data directory. ``--verbose`` leaves it all on the
terminal as before.

The capture works on the file descriptors when stdout/stderr are real ones (so worker processes and
C libraries are captured too), and on ``sys.stdout``/``sys.stderr`` otherwise (under pytest's capsys).
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Any, TextIO

LABELS = {
    "synthesis": "synthesis",
    "dedup": "dedup",
    "corpus": "corpus",
    "eval_before": "eval before",
    "sft": "SFT",
    "eval_after_sft": "eval SFT",
    "grpo": "GRPO",
    "eval_after_grpo": "eval GRPO",
    "suite_heldout": "held-out",
    "suite_bfcl-multi-turn": "BFCL",
}
UNITS = {"synthesis": "server", "sft": "step", "grpo": "step", "suite_heldout": "item", "suite_bfcl-multi-turn": "item"}


def _fd_backed() -> bool:
    try:
        return sys.stdout.fileno() == 1 and sys.stderr.fileno() == 2
    except (AttributeError, OSError, ValueError):
        return False


class Console:
    def __init__(self, log_path: Path, verbose: bool = False) -> None:
        self.log_path = Path(log_path)
        self.verbose = verbose
        self.out: TextIO = sys.stdout
        self.err: TextIO = sys.stderr
        self._bars: dict[str, Any] = {}
        self._stack = contextlib.ExitStack()
        self._saved_fds: tuple[int, int] | None = None

    def __enter__(self) -> Console:
        if self.verbose:
            return self
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self._stack.enter_context(open(self.log_path, "a", buffering=1))
        if _fd_backed():
            sys.stdout.flush()
            sys.stderr.flush()
            self._saved_fds = (os.dup(1), os.dup(2))
            self.out = os.fdopen(os.dup(1), "w", buffering=1)
            self.err = os.fdopen(os.dup(2), "w", buffering=1)
            os.dup2(log.fileno(), 1)
            os.dup2(log.fileno(), 2)
        else:
            self._stack.enter_context(contextlib.redirect_stdout(log))
            self._stack.enter_context(contextlib.redirect_stderr(log))
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close_bars()
        if self._saved_fds is not None:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(self._saved_fds[0], 1)
            os.dup2(self._saved_fds[1], 2)
            for fd in self._saved_fds:
                os.close(fd)
            self.out.close()
            self.err.close()
            self.out, self.err = sys.stdout, sys.stderr
            self._saved_fds = None
        self._stack.close()

    # ----------------------------------------------------------------------------- output
    def print(self, *args: Any) -> None:
        print(*args, file=self.out, flush=True)

    def note(self, text: str) -> None:
        """A message for the person (a server left out, an interrupt), above any bar."""
        from tqdm import tqdm

        tqdm.write(text, file=self.err)
        self.err.flush()

    def progress(self, phase: str, step: int, total: int, **metrics: Any) -> None:
        """One bar per phase: created at the phase's first report, closed when the next phase starts (or at the end)."""
        from tqdm import tqdm

        bar = self._bars.get(phase)
        if bar is None:
            self.close_bars()
            bar = tqdm(
                total=max(total, 1),
                desc=f"{LABELS.get(phase, phase):<11}",
                unit=UNITS.get(phase, "step"),
                file=self.err,
                leave=True,
                ncols=self._width(),
                mininterval=0.5,
            )
            self._bars[phase] = bar
        if metrics:
            bar.set_postfix({k: (f"{v:.3f}" if isinstance(v, float) else v) for k, v in metrics.items()}, refresh=False)
        bar.update(max(0, min(step, bar.total) - bar.n))
        if metrics:
            bar.refresh()

    def _width(self) -> int:
        """The terminal's width, or 100 where it has none (a pipe, a pseudo-terminal of size 0)."""
        try:
            cols = os.get_terminal_size(self.err.fileno()).columns
        except (OSError, AttributeError, ValueError):
            cols = 0
        return min(cols, 140) if cols > 0 else 100

    def close_bars(self) -> None:
        for bar in self._bars.values():
            bar.close()
        self._bars.clear()
