"""``tilescope run``'s report in words: what the interpreted kernel computed, every bad access,
race and wrong element; the command line and the editor's "Run on CPU" lens print it as it is."""

from __future__ import annotations

from tilescope.core.display import dims_text
from tilescope.core.model import RunReport


def run_failed(report: RunReport) -> bool:
    """Whether the run found anything wrong: an error, a bad access or race, bad or wrong values."""
    bad_values = any(o.nan or o.inf or o.unwritten for o in report.outputs)
    wrong = any(c.wrong for c in report.comparisons)
    return bool(report.error or report.findings or report.hazards or bad_values or wrong)


def _number(x: float | None) -> str:
    return "-" if x is None else f"{x:.6g}"


def run_text(path: str, report: RunReport) -> str:
    args = ", ".join(f"{k}={v}" for k, v in report.args.items())
    lines = [f"kernel {report.kernel}({args})"]
    if report.config:
        lines.append(f"  autotuned: {report.config}")
    if report.error:
        where = f"{path}:{report.line}: " if report.line else ""
        lines.append(f"  {where}error: {report.error}")
        return "\n".join(lines)
    grid = dims_text(report.grid) or "1"
    threads = dims_text(report.threads) or "?"
    lines.append(f"  interpreted grid {grid} (blocks of {threads} threads) in {report.seconds:.2f} s")
    for o in report.outputs:
        shape = dims_text(o.shape)
        lines.append(
            f"  {o.name} {shape} {o.dtype}: min {_number(o.minimum)} max {_number(o.maximum)} "
            f"mean {_number(o.mean)}; {o.nan} NaN, {o.inf} Inf, {o.unwritten} never written"
        )
    for f in report.findings:
        lines.append(f"  {path}:{f.describe()}" if f.line else f"  {f.describe()}")
    for h in report.hazards:
        lines.append(f"  {path}:{h.second.line}: {h.describe()}")
    if report.reference and report.reference != "ref_program":
        lines.append(f"  reference: {report.reference}")
    elif report.reference:
        lines.append("  reference: the file's ref_program")
    for c in report.comparisons:
        verdict = "matches" if not c.wrong else f"{c.wrong} of {c.total} elements differ"
        first = f", first at [{', '.join(str(i) for i in c.first_wrong)}]" if c.first_wrong else ""
        lines.append(
            f"  {c.name} vs reference: {verdict}{first} (max abs error {c.max_abs_error:.3g}, "
            f"atol {c.atol:g} rtol {c.rtol:g})"
        )
    lines.extend(f"  first wrong: {culprit}" for culprit in report.culprits)
    return "\n".join(lines)
