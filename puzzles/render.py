"""Reports as text, shared by the command line and the app."""

from __future__ import annotations

from tilescope.core.display import dims_text
from tilescope.puzzles.catalog import PerfSpec
from tilescope.puzzles.report import CaseResult, Report

SHADES = " ░▒▓█"


def target_words(spec: PerfSpec) -> str:
    """What earns three stars, as the grader judges it."""
    goals = []
    if spec.torch and spec.torch_target:
        goals.append(f"≤ {spec.torch_target:g}× torch's time in the same run")
    if spec.baseline and spec.speedup:
        goals.append(speedup_words(spec.speedup, spec.baseline_name))
    if not goals:
        goals.append(
            f"≤ {spec.target:g} µs" if spec.bound == "latency" else f"{spec.target:g}% of the {spec.bound} roofline"
        )
    return " and ".join(goals)


def speedup_words(speedup: float, name: str) -> str:
    """A speed-up goal over a baseline: ``2× the naive version's speed``, ``≤ 1.25× the best ... kernel's time``."""
    if speedup >= 1.0:
        return f"{speedup:g}× {name}'s speed"
    return f"≤ {round(1.0 / speedup, 3):g}× {name}'s time in the same run"


def heatmap_lines(heatmap: list[list[float]]) -> list[str]:
    """One character per cell: blank where all is right, darker as more of the cell is wrong."""
    lines = []
    for row in heatmap:
        cells = [SHADES[0 if frac <= 0 else 1 + min(3, int(frac * 4))] for frac in row]
        lines.append("│" + "".join(cells) + "│")
    if lines:
        width = len(heatmap[0])
        lines.insert(0, "┌" + "─" * width + "┐")
        lines.append("└" + "─" * width + "┘")
    return lines


def _case_lines(case: CaseResult, said: str) -> list[str]:
    """The failed case: its arguments, then only what ``said`` (the summary) has not stated already."""
    args = " ".join(f"{k}={v}" for k, v in case.args.items())
    lines = [f"failed case: {case.name} ({args}; {case.values} values; seed {case.seed})"]
    if case.problem and case.problem not in said:
        lines.append(f"  {case.problem}")
    said = f"{said} {case.problem or ''}"
    for out in case.outputs:
        comp = out.comparison
        if comp.ok and out.guard.ok:
            lines.append(f"  {out.name}: all {comp.total} elements right")
            continue
        if comp.wrong:
            where = ", ".join(str(i) for i in comp.first_wrong or [])
            if f"{out.name}[{where}]" not in said:
                lines.append(
                    f"  {out.name}: {comp.wrong}/{comp.total} wrong; first at [{where}]: expected {comp.expected:.6g}, "
                    f"got {comp.got:.6g}; {comp.abs_error_words}, max rel error {comp.max_rel_error:.3g}"
                )
            shape = dims_text(comp.shape)
            lines.append(f"  where {out.name} ({shape}) is wrong:")
            lines.extend("    " + line for line in heatmap_lines(comp.heatmap))
    return lines


def report_lines(report: Report, name: str = "") -> list[str]:
    mark = "PASS" if report.passed else "FAIL" if report.failure else "COMPILES"
    lines = [f"{mark} {name or report.puzzle}: {report.summary}"]
    for d in report.diagnostics:
        lines.append(f"{report.path}:{d.span.line}: {d.severity}: {d.message}")
    bad = report.first_failure()
    if bad is not None:
        lines.extend(_case_lines(bad, report.summary))
    if report.perf:
        p = report.perf
        stars = "★" * p.stars + "☆" * (3 - p.stars)
        if p.torch_ratio is not None:
            graded = f"; three stars at ≤ {p.torch_target:g}×" if p.torch_target else ""
            lines.append(
                f"torch, same run and GPU: {p.torch_us:.1f} µs; yours {p.time_us:.1f} µs = {p.torch_ratio:.2f}× "
                f"torch's time{graded}"
            )
        if p.percent is None:
            lines.append(f"performance: {p.time_us:.1f} µs on {p.gpu} (target ≤ {p.target:g} µs) {stars}")
        else:
            unit = "TB/s" if p.bound == "memory" else "TFLOP/s"
            lines.append(
                f"performance: {p.time_us:.1f} µs, {p.achieved / 1e12:.2f} {unit} = {p.percent:.0f}% of the "
                f"{p.gpu} {p.bound} roofline ({p.roofline_source}"
                + ("" if p.torch_target else f"; target {p.target:g}%")
                + f") {stars}"
            )
    for item in report.warnings[:3]:
        lines.append(f"warning: {item.splitlines()[0]}")
    if report.checked:
        lines.append("checked: " + "; ".join(report.checked))
    if report.not_checked:
        lines.append("NOT checked: " + "; ".join(report.not_checked))
    return lines
