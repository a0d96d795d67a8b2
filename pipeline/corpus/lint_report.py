"""The corpus linter's report: the defects it counts (:data:`DEFECTS`, in the order a report lists them), up to
five example ids a defect, the corpus-wide metrics; and the report as ``prove corpus lint`` prints it."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

DEFECTS = (
    "description_paste",
    "raw_json",
    "parameter_name",
    "placeholder",
    "repeated_sentence",
    "repeated_phrase",
    "non_integer_count",
    "plural_mismatch",
    "unnamed_write",
    "invented_write_value",
    "clarification_mismatch",
    "duplicate_no_call_request",
    "filler_value",
    "undo_then_redo",
    "do_then_undo",
    "acts_on_closed",
    "distinct_frames",
    "unique_openings",
    "repeated_filler",
)


@dataclass
class LintReport:
    examples: int = 0
    counts: dict[str, int] = field(default_factory=lambda: {d: 0 for d in DEFECTS})
    samples: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    metrics: dict[str, float] = field(default_factory=dict)

    def add(self, defect: str, example_id: str, detail: str = "") -> None:
        self.counts[defect] += 1
        if len(self.samples[defect]) < 5:
            self.samples[defect].append(f"{example_id}: {detail}"[:240] if detail else example_id)

    @property
    def passed(self) -> bool:
        return not any(self.counts.values())

    def as_dict(self) -> dict[str, Any]:
        return {
            "examples": self.examples,
            "passed": self.passed,
            "counts": dict(self.counts),
            "samples": dict(self.samples),
            "metrics": self.metrics,
        }


def format_report(rep: LintReport) -> str:
    lines = [f"{rep.examples} examples: " + ("no defects" if rep.passed else f"{sum(rep.counts.values())} defects")]
    lines.append(
        f"  distinct request frames {rep.metrics.get('distinct_frames')}, unique openings "
        f"{rep.metrics.get('unique_openings')}"
    )
    for d in DEFECTS:
        lines.append(f"  {d:<28} {rep.counts[d]}")
        for s in rep.samples.get(d, []):
            lines.append(f"      {s}")
    return "\n".join(lines)
