"""Static speed figures: bank conflicts of the lowered IR's shared accesses, occupancy, the roofline bound.

Occupancy is checked against CUDA's occupancy rules case by case (each row worked by hand from the
rules in ``tilescope.core.perf.occupancy``'s docstring); conflicts against kernels whose conflicts follow
from their indexing, lowered by the real compiler; the roofline against FLOPs and bytes counted by
hand at the kernel's sizes. The same figures against the H200 are in ``benchmarks/gpu/slow.sh``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from tilescope.core.compiler.ncu import (
    measured_conflicts_per_request,
    ncu_figures,
    one_run,
    parse_ncu_launches,
    shared_requests,
)
from tilescope.core.compiler.service import Analyzer
from tilescope.core.ide import quick_fixes, source_lines, speed_lenses, speed_markdown
from tilescope.core.ide.layout_view import bank_rows
from tilescope.core.model import KernelModel, ProfileReport, Timing, to_json
from tilescope.core.perf.occupancy import occupancy
from tilescope.core.perf.peaks import PEAKS, bounds, gpu_key
from tilescope.core.perf.perf_render import LSU_LOADS, conflicts_per_request, roofline_summary, static_lines
from tilescope.core.perf.profile_store import last_profile, save
from tilescope.core.static import analyze_source
from tilescope.core.worker.shared_access import request_cost
from tilescope.core.worker.shared_sites import lsu_phases, matrix_phases

from tests.conftest import EXAMPLES

FIXTURES = Path(__file__).parent / "fixtures"

# arch, threads, registers, shared bytes -> blocks per SM, limited by
OCCUPANCY_RULES = [
    # 4 warps; 32 regs = 1024 per warp, 16 warps a sub-partition; 1 KiB reserved: 228 blocks by shared memory
    ("sm_90", 128, 32, 0, 16, ["threads", "registers"]),
    # 128 regs: 4 warps a sub-partition, 16 an SM, 2 blocks of 8 warps; 49 KiB + 1 KiB: 4 blocks
    ("sm_90", 256, 128, 49152, 2, ["registers"]),
    # 226 regs round up to 7424 per warp: 2 warps a sub-partition
    ("sm_80", 128, 226, 49152, 2, ["registers"]),
    # 100 KiB + 1 KiB of the A100's 164 KiB: one block
    ("sm_80", 256, 64, 102400, 1, ["shared"]),
    # 1024 threads: 32 warps, two blocks by threads; 64 regs allow 32 warps an SM, one block
    ("sm_100", 1024, 64, 0, 1, ["registers"]),
    # one warp per block: the 32-block limit
    ("sm_90", 32, 16, 0, 32, ["blocks"]),
    # sm_86: 48 warps an SM
    ("sm_86", 128, 32, 0, 12, ["threads"]),
    # 96 regs: 3072 per warp, 5 warps a sub-partition (20 an SM, not 21), 7-warp blocks: 2
    ("sm_90", 224, 96, 0, 2, ["registers"]),
    # 40 regs = 1280 per warp exactly: 12 warps a sub-partition
    ("sm_90", 128, 40, 0, 12, ["registers"]),
    # rounding to the 128-byte unit: 48 KiB - 1 KiB + 1 byte takes 48 KiB + 128 of 228 KiB
    ("sm_90", 128, 32, 48 * 1024 - 1024 + 1, 4, ["shared"]),
    # over the opt-in maximum per block: none fits
    ("sm_90", 128, 32, 232449, 0, ["shared"]),
    # over 255 registers a thread: cannot launch
    ("sm_80", 128, 256, 0, 0, ["registers"]),
]


@pytest.mark.parametrize(("arch", "threads", "registers", "shared", "blocks", "limited_by"), OCCUPANCY_RULES)
def test_occupancy_follows_cudas_rules(
    arch: str, threads: int, registers: int, shared: int, blocks: int, limited_by: list[str]
) -> None:
    found = occupancy(arch, threads, registers, shared)
    assert found is not None
    assert found.blocks_per_sm == blocks, found.limits
    assert found.limited_by == limited_by
    assert found.warps_per_sm == blocks * -(-threads // 32)


def test_occupancy_says_what_one_more_block_would_need() -> None:
    found = occupancy("sm_90", 256, 128, 49152)
    assert found is not None
    assert found.what_if == ["registers: 3 blocks per SM at 80 registers per thread or fewer (128 now)"]
    assert occupancy("sm_90", 256, 80, 49152).blocks_per_sm == 3  # type: ignore[union-attr]
    shared = occupancy("sm_80", 256, 64, 102400)
    assert shared is not None and shared.what_if == [
        "shared: 2 blocks per SM at 82944 bytes of shared memory per block or less (102400 now)"
    ]
    assert occupancy("sm_80", 256, 64, 82944).blocks_per_sm == 2  # type: ignore[union-attr]
    assert occupancy("sm_80", 256, 64, 82945).blocks_per_sm == 1  # type: ignore[union-attr]


def test_occupancy_without_registers_is_a_bound_that_names_no_limit() -> None:
    """Without ptxas the registers are unknown: threads and shared memory give the most blocks, never the
    limit. TileLang's warp-specialised GEMM (256 threads, 49 KiB shared, 240 registers) is 4 blocks by shared
    memory and 1 by its registers: saying "4 blocks, limited by shared" without ptxas would be false."""
    found = occupancy("sm_90", 128, None, 0)
    assert found is not None and "registers" not in found.limits and found.blocks_per_sm == 16
    assert found.upper_bound and found.limited_by == [] and found.what_if == []
    gemm = occupancy("sm_90", 256, None, 49152)
    assert gemm is not None and gemm.blocks_per_sm == 4 and gemm.upper_bound and gemm.limited_by == []
    measured = occupancy("sm_90", 256, 240, 49152)
    assert measured is not None and measured.blocks_per_sm == 1 and not measured.upper_bound
    assert measured.limited_by == ["registers"]
    assert occupancy("gfx942", 128, None, 0) is None


def test_the_occupancy_line_says_at_most_without_registers(analyzer: Analyzer) -> None:
    path = EXAMPLES / "gemm.py"
    (kernel,) = analyzer.analyze(str(path), path.read_text(), target="sm_90").kernels
    assert kernel.occupancy is not None and kernel.occupancy.upper_bound
    line = next(line for line in static_lines(kernel) if "occupancy" in line)
    assert "occupancy at most " in line and "registers unknown (--ptxas)" in line and "limited by" not in line


def _lanes(byte_offsets: list[int]) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(byte_offsets, dtype=np.int64), np.ones(len(byte_offsets), dtype=bool)


@pytest.mark.parametrize(
    ("offsets", "unit", "cost"),
    [
        ([4 * lane for lane in range(32)], 4, (1, 1, 1)),  # consecutive words: conflict-free
        ([128 * lane for lane in range(32)], 4, (32, 1, 32)),  # one column of a 32-word row: 32-way
        ([0] * 32, 4, (1, 1, 1)),  # one word for all: a broadcast
        ([2 * lane for lane in range(32)], 2, (1, 1, 1)),  # fp16 pairs share words
        ([16 * lane for lane in range(32)], 16, (4, 4, 1)),  # 16-byte vectors: a quarter-warp a phase
        ([8 * lane for lane in range(32)], 8, (2, 2, 1)),  # 8-byte: half-warps
        ([256 * lane for lane in range(32)], 8, (32, 2, 16)),  # 8-byte down a column: 16 lanes a phase, 16-way
        ([8 * (lane % 2) + 256 * (lane // 2) for lane in range(32)], 4, (16, 1, 16)),
    ],
)
def test_a_warp_request_costs_its_busiest_bank(offsets: list[int], unit: int, cost: tuple[int, int, int]) -> None:
    start, active = _lanes(offsets)
    assert request_cost(start, active, unit, lsu_phases(unit)) == cost


def test_ldmatrix_is_one_phase_per_matrix_of_eight_rows() -> None:
    rows = [(lane % 8) * 128 + (lane // 8) * 16 for lane in range(32)]  # 8 rows of 128 B: one bank group
    start, active = _lanes(rows)
    assert request_cost(start, active, 16, matrix_phases(4)(16)) == (32, 4, 8)
    swizzled = [(lane % 8) * 128 + ((lane // 8) ^ (lane % 8)) * 16 for lane in range(32)]
    start, active = _lanes(swizzled)
    assert request_cost(start, active, 16, matrix_phases(4)(16)) == (4, 4, 1)


def test_inactive_lanes_take_no_part() -> None:
    start, active = _lanes([128 * lane for lane in range(32)])
    active[1:] = False
    assert request_cost(start, active, 4, lsu_phases(4)) == (1, 1, 1)


def _kernel(analyzer: Analyzer, path: Path, target: str = "sm_90", **args: object) -> KernelModel:
    result = analyzer.analyze(str(path), target=target, args=args or None)
    assert result.kernels, result.diagnostics
    return result.kernels[0]


def test_a_transpose_through_an_unpadded_tile_conflicts_32_ways(analyzer: Analyzer) -> None:
    kernel = _kernel(analyzer, FIXTURES / "bank_kernels.py", pad=0)
    by_op = {(a.op, a.instruction): a for a in kernel.shared_accesses}
    assert set(by_op) == {("store", "sts"), ("load", "lds")}
    store, load = by_op["store", "sts"], by_op["load", "lds"]
    assert (store.line, store.ways, store.wavefronts, store.ideal_wavefronts) == (12, 1, 4.0, 4.0)
    assert (load.line, load.ways, load.wavefronts, load.ideal_wavefronts) == (14, 32, 32.0, 1.0)
    assert load.lane_banks == [0] * 32
    # 32×32 floats, 256 threads: 4 scalar loads each, so 4 requests a warp, 8 warps
    assert load.requests_per_block == 32 and store.requests_per_block == 8
    warning = next(d for d in kernel.diagnostics if d.code == "bank-conflict")
    assert warning.span.line == 14 and warning.severity == "warning"
    assert "32-way" in warning.message and "allocate it as (32, 32 + 1)" in warning.message
    source = (FIXTURES / "bank_kernels.py").read_text()
    static = analyze_source(source, str(FIXTURES / "bank_kernels.py"))
    [fix] = quick_fixes(static, [warning], 14, 14, source_lines(source))
    [edit] = fix.edits
    assert fix.title == "Pad 'tile' by 1 on its last dimension" and edit.new_text == "block + pad + 1"
    line = source_lines(source)[edit.span.line - 1]
    assert line[edit.span.column : edit.span.end_column] == "block + pad"


def test_the_padded_tile_that_warning_suggests_is_conflict_free(analyzer: Analyzer) -> None:
    kernel = _kernel(analyzer, FIXTURES / "bank_kernels.py", pad=1)
    assert [a.ways for a in kernel.shared_accesses] == [1, 1]
    assert not [d for d in kernel.diagnostics if d.code == "bank-conflict"]
    load = next(a for a in kernel.shared_accesses if a.op == "load")
    assert load.lane_banks == list(range(32))


@pytest.mark.parametrize(("pad", "load_ways"), [(0, 32), (1, 1)])
def test_a_transpose_written_with_thread_indices_has_its_conflicts_counted(
    analyzer: Analyzer, pad: int, load_ways: int
) -> None:
    """A (32, 8) block and per-thread scalar accesses: threadIdx.y counts as well as threadIdx.x."""
    path = FIXTURES / "bank_kernels.py"
    (kernel,) = analyzer.analyze(str(path), target="sm_90", kernel="transpose_by_thread", args={"pad": pad}).kernels
    found = {a.op: a for a in kernel.shared_accesses}
    assert set(found) == {"load", "store"}
    assert found["store"].ways == 1 and found["store"].instruction == "sts"
    assert found["load"].ways == load_ways and found["load"].line == 35
    assert found["load"].requests_per_block == 32
    warned = [d for d in kernel.diagnostics if d.code == "bank-conflict"]
    assert bool(warned) == (load_ways > 1)


def test_the_gemm_on_sm80_reads_its_swizzled_tiles_with_conflict_free_ldmatrix(analyzer: Analyzer) -> None:
    kernel = _kernel(analyzer, EXAMPLES / "gemm.py", target="sm_80")
    found = {(a.buffer, a.instruction): a for a in kernel.shared_accesses}
    assert set(found) == {
        ("A_shared", "cp.async"),
        ("B_shared", "cp.async"),
        ("A_shared", "ldmatrix"),
        ("B_shared", "ldmatrix"),
    }
    for access in found.values():
        assert (access.ways, access.wavefronts, access.ideal_wavefronts) == (1, 4.0, 4.0)
    # 32 k-steps × 2 k-slices × 4 ldmatrix.x4 per warp × 4 warps
    assert found["A_shared", "ldmatrix"].requests_per_block == 32 * 2 * 4 * 4
    assert found["A_shared", "ldmatrix"].line == 23 and found["A_shared", "cp.async"].line == 21
    assert conflicts_per_request(kernel.shared_accesses, LSU_LOADS) == 0.0
    rows = bank_rows(kernel, "A_shared")
    assert [(r.line, r.instruction) for r in rows] == [(21, "cp.async"), (23, "ldmatrix")]
    for row in rows:  # 16-byte accesses: four lanes start in every fourth bank, one per quarter-warp phase
        assert sorted(lane for lanes in row.lanes for lane in lanes) == list(range(32))
        assert [len(lanes) for lanes in row.lanes] == [4, 0, 0, 0] * 8


def test_on_sm90_the_gemm_moves_its_tiles_by_tma_and_wgmma_alone(analyzer: Analyzer) -> None:
    kernel = _kernel(analyzer, EXAMPLES / "gemm.py")
    assert kernel.shared_accesses == []


def test_roofline_of_the_gemm_counts_its_flops_and_bytes(analyzer: Analyzer) -> None:
    roofline = _kernel(analyzer, EXAMPLES / "gemm.py").roofline
    assert roofline is not None
    assert roofline.flops == roofline.tensor_flops == 2 * 1024**3
    assert roofline.compulsory_bytes == 3 * 1024 * 1024 * 2
    # each of the 64 blocks reads a 128×1024 strip of A and of B and writes a 128×128 tile of C
    assert roofline.global_bytes == 64 * (2 * 128 * 1024 * 2 + 128 * 128 * 2)
    h200 = next(b for b in roofline.bounds if b.gpu == "H200")
    assert h200.bound == "compute" and h200.best_us == pytest.approx(2 * 1024**3 / 989e12 * 1e6, rel=1e-3)
    assert roofline_summary(roofline) == "at best 2.17 µs on H200, compute-bound"


def test_roofline_of_an_elementwise_add_is_memory_bound(analyzer: Analyzer) -> None:
    roofline = _kernel(analyzer, EXAMPLES / "elementwise_add.py").roofline
    assert roofline is not None
    n = 1 << 20
    assert (roofline.flops, roofline.tensor_flops) == (n, 0)
    assert roofline.compulsory_bytes == roofline.global_bytes == 3 * 4 * n
    assert all(b.bound == "memory" for b in roofline.bounds)
    assert [b.gpu for b in roofline.bounds] == list(PEAKS)


def test_bounds_pick_the_tensor_peak_of_the_operand_type() -> None:
    fp8 = {b.gpu: b for b in bounds(0, 10**12, 1, "float8_e4m3")}
    fp16 = {b.gpu: b for b in bounds(0, 10**12, 1, "float16")}
    assert fp8["H100"].compute_us * 2 == pytest.approx(fp16["H100"].compute_us, rel=0.01)
    assert gpu_key("NVIDIA H200") == "H200" and gpu_key("NVIDIA H100 80GB HBM3") == "H100"
    assert gpu_key("AMD Instinct MI300X") == "MI300X" and gpu_key("Tesla T4") is None


NCU_HEADER = (
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
    '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"'
)


def _ncu_row(launch: int, metric: str, value: str) -> str:
    fields = [str(launch), "1", "python3", "h", "main_kernel", "1", "7", "(256, 1, 1)", "(32, 32, 1)", "0", "9.0"]
    return ",".join(f'"{f}"' for f in [*fields, "Command line profiler metrics", metric, "", value])


NCU_CSV = "\n".join(
    [
        "==PROF== Connected to process 1",
        NCU_HEADER,
        _ncu_row(0, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "0"),
        _ncu_row(1, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "1,015,808"),
        _ncu_row(1, "smsp__sass_inst_executed_op_shared_ld.sum", "32,768"),
        _ncu_row(1, "sm__warps_active.avg.pct_of_peak_sustained_active", "87.5"),
        _ncu_row(1, "launch__occupancy_limit_registers", "8"),
        _ncu_row(1, "launch__occupancy_limit_warps", "8"),
        _ncu_row(1, "launch__occupancy_limit_shared_mem", "32"),
    ]
)


def test_ncu_csv_becomes_conflicts_per_request_and_occupancy() -> None:
    launches = parse_ncu_launches(NCU_CSV)
    assert [name for name, _ in launches] == ["main_kernel", "main_kernel"]
    figures = ncu_figures(launches[-1][1])
    assert figures.load_conflicts_per_request == 31.0 and figures.store_conflicts_per_request is None
    assert figures.achieved_occupancy == 0.875 and figures.blocks_per_sm == 8 and figures.error is None


def test_a_run_of_two_device_kernels_adds_their_counters_and_keeps_the_first_launch() -> None:
    """A kernel of two ``T.Kernel`` (flash decoding's split, then its combine) launches two device kernels a
    run: its conflicts cover both, as the static figures do, and its occupancy is the first's, as the model's
    is. (On the H200 the figures were the combine kernel's alone.)"""

    def launch(stores: float, wavefronts: float, achieved: float, by_registers: float) -> dict[str, float]:
        return {
            "smsp__sass_inst_executed_op_shared_st.sum": stores,
            "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum": wavefronts,
            "smsp__sass_data_bytes_mem_shared_op_st.sum": stores * 128,
            "smsp__sass_inst_executed_op_shared_stsm.sum": 0.0,
            "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_stsm.sum": 0.0,
            "sm__warps_active.avg.pct_of_peak_sustained_active": achieved,
            "launch__occupancy_limit_registers": by_registers,
            "launch__occupancy_limit_warps": 8.0,
        }

    split, combine = launch(100, 300, 12.5, 1), launch(100, 100, 6.25, 2)
    figures = ncu_figures(one_run([split, combine]))
    assert figures.store_conflicts_per_request == 1.0  # (200 + 0) extra wavefronts over 200 stores
    assert figures.achieved_occupancy == 0.125 and figures.blocks_per_sm == 1
    assert ncu_figures(one_run([split])) == ncu_figures(split)


def test_conflicts_per_request_come_from_the_per_instruction_wavefronts() -> None:
    """32-way LDS (one float a thread: 128 bytes, one wavefront at best) and conflict-free LDSM.x4 (512 bytes,
    four): (32 + 4 - 1 - 4) extra wavefronts over 2 instructions; the L1TEX counter's contention is ignored."""
    values = {
        "smsp__sass_inst_executed_op_shared_ld.sum": 1.0,
        "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 32.0,
        "smsp__sass_data_bytes_mem_shared_op_ld.sum": 128.0,
        "smsp__sass_inst_executed_op_ldsm.sum": 1.0,
        "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum": 4.0,
        "smsp__sass_data_bytes_mem_shared_op_ldsm.sum": 512.0,
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": 40.0,
    }
    assert measured_conflicts_per_request(values, "load") == 15.5
    assert shared_requests(values, "load") == 2.0
    assert measured_conflicts_per_request(values, "store") is None


def test_profile_without_a_gpu_says_so_and_prints_the_static_figures(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tilescope", "profile", str(FIXTURES / "bank_kernels.py"), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["gpu"] is None and report["timing"] is None
    assert report["message"] == "no GPU on this machine: static figures only"
    assert report["static"]["occupancy"]["registers"] is not None  # compiled with ptxas for the static figures
    assert [a["ways"] for a in report["static"]["shared_accesses"]] == [1, 32]
    assert not (FIXTURES / ".tilescope" / "profile.json").exists()


CORPUS = Path(
    os.environ.get(
        "TILESCOPE_CORPUS", Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "tilelang-examples"
    )
)


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the TileLang examples corpus is not beside the repository")
def test_each_device_kernel_of_a_split_kv_decode_counts_its_own_grid(analyzer: Analyzer) -> None:
    """Two ``T.Kernel``s (split, then combine): FLOPs are 4·batch·heads·q·kv·dim, not the product of both grids."""
    kernel = _kernel(analyzer, CORPUS / "examples" / "flash_decoding" / "example_mha_inference.py")
    assert len(kernel.launches) == 2
    assert kernel.roofline is not None and kernel.roofline.tensor_flops == 4 * 1 * 32 * 128 * 8192 * 128
    o_shared = [a for a in kernel.shared_accesses if a.buffer == "o_shared"]
    assert {(a.op, a.ways) for a in o_shared} == {("store", 8), ("load", 1)}


def test_a_kept_profile_becomes_the_kernels_lens(tmp_path: Path, analyzer: Analyzer) -> None:
    path = tmp_path / "gemm.py"
    path.write_text((EXAMPLES / "gemm.py").read_text())
    kernel = _kernel(analyzer, path)
    assert speed_lenses(kernel, str(path)) == ["at best 2.17 µs on H200, compute-bound"]
    timing = Timing(gpu="NVIDIA H200", arch="sm_90", time_us=17.5, times_us=[17.5] * 3, warmup=3)
    report = ProfileReport(str(path), "matmul", kernel.args, "sm_90", "NVIDIA H200", "timed", timing, 0.124, kernel)
    kept = save(report)
    assert kept == tmp_path / ".tilescope" / "profile.json"
    assert last_profile(str(path), "matmul")["static"]["roofline"] == to_json(kernel.roofline)  # type: ignore[index]
    assert speed_lenses(kernel, str(path))[1] == "measured 17.5 µs on NVIDIA H200, 12% of the roofline"
    assert "Last profile: measured 17.5 µs" in speed_markdown(kernel, str(path))
    assert last_profile(str(path), "other") is None
