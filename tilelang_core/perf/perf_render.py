"""Plain-text lines for a kernel's speed figures: bank conflicts, occupancy, roofline; shared by the CLI commands."""

from __future__ import annotations

from tilescope.core.model import KernelModel, NcuFigures, Roofline, SharedAccess

LSU_LOADS = ("lds", "ldmatrix")
LSU_STORES = ("sts", "stmatrix")


def conflicts_per_request(accesses: list[SharedAccess], instructions: tuple[str, ...]) -> float | None:
    """Extra wavefronts per request over the kernel, weighted by how often each access runs (ncu's measure)."""
    chosen = [a for a in accesses if a.instruction in instructions and a.requests_per_block]
    requests = sum(a.requests_per_block for a in chosen)
    if not requests:
        return None
    extra = sum(a.requests_per_block * (a.wavefronts - a.ideal_wavefronts) for a in chosen)
    return round(extra / requests, 3)


def _us(value: float) -> str:
    return f"{value:.3g} µs" if value < 1000 else f"{value / 1000:.3g} ms"


def roofline_summary(roofline: Roofline, gpu: str = "H200") -> str:
    """``at best 41 µs on H200, memory-bound``: the code lens's words."""
    bound = next((b for b in roofline.bounds if b.gpu == gpu), None)
    if bound is None:
        return ""
    return f"at best {_us(bound.best_us)} on {gpu}, {bound.bound}-bound"


def static_lines(kernel: KernelModel) -> list[str]:
    out = []
    if kernel.shared_accesses:
        out.append("  shared accesses (per warp request)")
        for a in kernel.shared_accesses:
            where = f"line {a.line}" if a.line else "line ?"
            by = f" ({a.tile_op})" if a.tile_op else ""
            out.append(
                f"    {where:<9} {a.buffer:<14} {a.op:<5} {a.instruction:<9} {a.ways:>2}-way  "
                f"{a.wavefronts:g}/{a.ideal_wavefronts:g} wavefronts  {a.requests_per_block} requests/block{by}"
            )
    occ = kernel.occupancy
    if occ is not None:
        registers = f"{occ.registers} registers" if occ.registers is not None else "registers unknown (--ptxas)"
        limits = ", ".join(f"{k} {v}" for k, v in occ.limits.items())
        at_most = "at most " if occ.upper_bound else ""
        why = "registers may allow fewer" if occ.upper_bound else f"limited by {', '.join(occ.limited_by)}"
        out.append(
            f"  occupancy {at_most}{occ.blocks_per_sm} blocks/SM ({occ.warps_per_sm} warps, {occ.occupancy:.0%}) on "
            f"{occ.arch}: {occ.threads} threads, {registers}, {occ.shared_bytes} B shared; {why} ({limits})"
        )
        out.extend(f"    {line}" for line in occ.what_if)
    if kernel.roofline is not None:
        r = kernel.roofline
        out.append(
            f"  roofline {r.flops:.3g} FLOP ({r.tensor_flops:.3g} tensor), {r.compulsory_bytes:.3g} B at least "
            f"({r.global_bytes:.3g} B requested), {r.arithmetic_intensity:g} FLOP/B; {roofline_summary(r)}"
        )
        out.append("    " + ", ".join(f"{b.gpu} {_us(b.best_us)} ({b.bound})" for b in r.bounds))
    return out


def ncu_lines(kernel: KernelModel | None, ncu: NcuFigures) -> list[str]:
    if ncu.error:
        return [f"  ncu      {ncu.error}"]
    accesses = kernel.shared_accesses if kernel is not None else []
    loads, stores = conflicts_per_request(accesses, LSU_LOADS), conflicts_per_request(accesses, LSU_STORES)
    out = [
        f"  ncu      bank conflicts per request: loads {_fmt(ncu.load_conflicts_per_request)} "
        f"(static {_fmt(loads)}), stores {_fmt(ncu.store_conflicts_per_request)} (static {_fmt(stores)})"
    ]
    static_blocks = kernel.occupancy.blocks_per_sm if kernel is not None and kernel.occupancy else None
    static_occ = kernel.occupancy.occupancy if kernel is not None and kernel.occupancy else None
    out.append(
        f"  ncu      achieved occupancy {_fmt(ncu.achieved_occupancy, pct=True)} (static bound "
        f"{_fmt(static_occ, pct=True)}); blocks/SM {_fmt(ncu.blocks_per_sm)} (static {_fmt(static_blocks)})"
    )
    return out


def _fmt(value: float | int | None, pct: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:.0%}" if pct else f"{value:g}"
