"""Shared memory per block as TileLang lays it out, from the text alone, or no figure at all.

The figures below follow TileLang 0.1.15's own rules (pipeline copies, lifetimes over the launch's
statements, its packer); ``tests/core/test_static_vs_compiler.py`` and
``benchmarks/bench_static_vs_compiler.py`` hold them to the compiler's numbers.
"""

from __future__ import annotations

from tilescope.core.ide.hints import inlay_hints
from tilescope.core.ide.merge import Facts
from tilescope.core.static import analyze_source
from tilescope.core.static.shared_plan import _Interval, _pack

HEADER = "import tilelang\nimport tilelang.language as T\n\n\n"


def planned(body: str, threads: int = 128, target: str = "sm_90") -> int | None:
    source = HEADER + (
        "@T.prim_func\n"
        'def main(A: T.Tensor((1024, 1024), "float16"), B: T.Tensor((1024, 1024), "float16")):\n'
        f"    with T.Kernel(8, 8, threads={threads}) as (bx, by):\n"
        + "".join(f"        {line}\n" for line in body.strip().splitlines())
    )
    (kernel,) = analyze_source(source, target=target).kernels
    return kernel.shared_planned


def test_a_pipelined_copy_from_global_is_kept_once_per_stage_and_the_epilogue_reuses_it() -> None:
    figure = planned(
        """
A_s = T.alloc_shared((128, 32), "float16")
B_s = T.alloc_shared((32, 128), "float16")
C_l = T.alloc_fragment((128, 128), "float32")
C_s = T.alloc_shared((128, 128), "float16")
T.clear(C_l)
for k in T.Pipelined(32, num_stages=3):
    T.copy(A[by * 128, k * 32], A_s)
    T.copy(B[k * 32, bx * 128], B_s)
    T.gemm(A_s, B_s, C_l)
T.copy(C_l, C_s)
T.copy(C_s, B[by * 128, bx * 128])
"""
    )
    # A_s 8 KB and B_s 8 KB, three copies each (48 KB); C_s (32 KB) starts after both end.
    assert figure == 3 * (8192 + 8192)


def test_buffers_touched_in_one_branch_live_together() -> None:
    figure = planned(
        """
X_s = T.alloc_shared((256,), "float32")
Y_s = T.alloc_shared((1024,), "float32")
T.copy(A[0, 0:256], X_s)
if bx == 0:
    for i in T.Parallel(256):
        Y_s[i] = X_s[i]
    T.copy(Y_s, B[0, 0:1024])
"""
    )
    assert figure == 1024 + 4096


def test_buffers_with_disjoint_lifetimes_share_bytes() -> None:
    figure = planned(
        """
X_s = T.alloc_shared((1024,), "float32")
Y_s = T.alloc_shared((2048,), "float32")
T.copy(A[0, 0:1024], X_s)
T.copy(X_s, B[0, 0:1024])
T.copy(A[1, 0:2048], Y_s)
T.copy(Y_s, B[1, 0:2048])
"""
    )
    assert figure == 8192


def test_a_copy_that_does_not_read_global_memory_is_not_a_pipeline_stage() -> None:
    figure = planned(
        """
F_l = T.alloc_fragment((64, 64), "float32")
F_s = T.alloc_shared((64, 64), "float32")
for k in T.Pipelined(8, num_stages=2):
    T.copy(F_l, F_s)
    T.copy(F_s, B[0, k * 64])
"""
    )
    assert figure == 64 * 64 * 4


def test_no_figure_where_tilelang_may_add_a_reduction_workspace() -> None:
    body = """
S_s = T.alloc_shared((64, 64), "float32")
F_l = T.alloc_fragment((64, 64), "float32")
R_l = T.alloc_fragment((64,), "float32")
T.copy(A[0, 0], S_s)
T.copy(S_s, F_l)
T.reduce_max(F_l, R_l, dim=1)
"""
    assert planned(body, threads=256) is None
    assert planned(body, threads=32) == 64 * 64 * 4


def test_no_figure_for_a_symbolic_stage_count_or_hand_assigned_stages() -> None:
    body = """
A_s = T.alloc_shared((128, 32), "float16")
C_l = T.alloc_fragment((128, 128), "float32")
for k in T.Pipelined(32, num_stages=STAGES):
    T.copy(A[by * 128, k * 32], A_s)
    T.gemm(A_s, A_s, C_l)
"""
    assert planned(body) is None
    hand = body.replace("num_stages=STAGES", "num_stages=2, order=[0, 1], stage=[0, 1]")
    assert planned(hand) is None


def test_the_launch_hint_shows_the_exact_figure_and_marks_a_bound_otherwise() -> None:
    exact = HEADER + (
        "@T.prim_func\n"
        'def main(A: T.Tensor((1024, 1024), "float16")):\n'
        "    with T.Kernel(8, threads=128) as bx:\n"
        '        X_s = T.alloc_shared((1024,), "float16")\n'
        '        Y_s = T.alloc_shared((4096,), "float16")\n'
        "        T.copy(A[0, 0:1024], X_s)\n"
        "        T.copy(X_s, A[1, 0:1024])\n"
        "        T.copy(A[2, 0:4096], Y_s)\n"
        "        T.copy(Y_s, A[3, 0:4096])\n"
    )
    labels = [h.label for h in inlay_hints(Facts(analyze_source(exact))) if h.kind == "launch"]
    assert labels == ["grid 8 · 128 threads · 8 KB shared"]
    bounded = exact.replace("threads=128", "threads=256").replace(
        "        T.copy(Y_s, A[3, 0:4096])\n",
        '        T.copy(Y_s, A[3, 0:4096])\n        R = T.alloc_fragment((1,), "float32")\n'
        '        F = T.alloc_fragment((1024,), "float32")\n        T.reduce_max(F, R, dim=0)\n',
    )
    labels = [h.label for h in inlay_hints(Facts(analyze_source(bounded))) if h.kind == "launch"]
    assert labels == ["grid 8 · 256 threads · ≥ 8 KB shared"]


def test_the_packer_reuses_freed_blocks_best_fit_and_aligns_offsets() -> None:
    # a (0..1024) and b (1024..1040) live together; c replaces a once a ends; d needs 1024 alignment.
    intervals = [
        _Interval("a", 0, 1, 1024, 16),
        _Interval("b", 0, 3, 16, 16),
        _Interval("c", 1, 3, 512, 16),
        _Interval("d", 2, 3, 1024, 1024),
    ]
    # c takes a's freed block at 0; d cannot fit in the 512 left before b, so it goes to 2048.
    assert _pack(intervals) == 3072


ATTENTION = """
Q_s = T.alloc_shared((M_, 64), "float16")
K_s = T.alloc_shared((N_, 64), "float16")
S_l = T.alloc_fragment((M_, N_), "float32")
R_l = T.alloc_fragment((M_,), "float32")
T.copy(A[0, 0], Q_s)
for k in T.Pipelined(8, num_stages=2):
    T.copy(B[k * N_, 0], K_s)
    T.gemm(Q_s, K_s, S_l, transpose_B=True, clear_accum=True)
    T.reduce_max(S_l, R_l, dim=1)
"""


def attention(m: int, n: int, threads: int, dim: str = "dim=1") -> int | None:
    body = ATTENTION.replace("M_", str(m)).replace("N_", str(n)).replace("dim=1", dim)
    return planned(body, threads=threads)


def test_a_row_reduction_of_a_gemm_accumulator_whose_warps_own_whole_rows_needs_no_workspace() -> None:
    # 128 threads on Hopper: one warpgroup, WGMMA gives every warp its own 16 rows (n_warp = 1).
    assert attention(64, 64, 128) == 64 * 64 * 2 + 2 * 64 * 64 * 2


def test_a_reduction_whose_rows_span_warps_leaves_no_figure() -> None:
    # 256 threads over a 64-row tile: two warpgroups must split the columns, so a row spans warps
    # and TileLang adds a workspace (the corpus's sparse_attn_fwd_sm90 gets 2 KB this way).
    assert attention(64, 64, 256) is None
    assert attention(64, 64, 128, dim="dim=0") is None


def test_the_warp_partition_follows_tilelang() -> None:
    from tilescope.core.static.reduce_workspace import _partition

    assert _partition(128, 128, 8, "Square", group=4, n_per_warp=8) == 2
    assert _partition(128, 128, 8, "FullRow", group=4, n_per_warp=8) == 1
    assert _partition(64, 64, 4, "Square", group=1, n_per_warp=8) == 2
    assert _partition(64, 64, 4, "Square", group=4, n_per_warp=8) == 1


def test_overlapping_lifetimes_over_the_budget_are_warned_with_the_exact_figure() -> None:
    source = HEADER + (
        "@T.prim_func\n"
        'def main(A: T.Tensor((1048576,), "float16")):\n'
        "    with T.Kernel(8, threads=128) as bx:\n"
        '        X_s = T.alloc_shared((65536,), "float16")\n'
        '        Y_s = T.alloc_shared((65536,), "float16")\n'
        "        T.copy(A[0:65536], X_s)\n"
        "        T.copy(A[65536:131072], Y_s)\n"
        "        T.copy(X_s, A[131072:196608])\n"
        "        T.copy(Y_s, A[196608:262144])\n"
    )
    static = analyze_source(source)
    (kernel,) = static.kernels
    assert kernel.shared_floor is not None and kernel.shared_floor.bytes == 128 * 1024
    assert [(d.severity, d.code, d.message) for d in static.diagnostics] == [
        (
            "warning",
            "shared-memory",
            "shared memory of 256 KB per block (as TileLang lays out its buffers, pipeline copies included) "
            "exceeds the sm_90 limit of 227 KB",
        )
    ]


def test_a_branch_a_known_condition_rules_out_is_not_compiled_so_not_counted() -> None:
    source = HEADER + (
        "def kernel(use_big=False):\n"
        "    @T.prim_func\n"
        '    def main(A: T.Tensor((1048576,), "float32")):\n'
        "        with T.Kernel(8, threads=128) as bx:\n"
        '            X_s = T.alloc_shared((1024,), "float32")\n'
        "            T.copy(A[0:1024], X_s)\n"
        "            if use_big:\n"
        '                Y_s = T.alloc_shared((65536,), "float32")\n'
        "                T.copy(X_s, Y_s[0:1024])\n"
        "            T.copy(X_s, A[1024:2048])\n"
        "    return main\n"
    )
    (kernel,) = analyze_source(source).kernels
    assert [d.buffer.name for d in kernel.buffers] == ["A", "X_s"]
    assert kernel.shared_planned == 4096
    (taken,) = analyze_source(source.replace("use_big=False", "use_big=True")).kernels
    assert taken.shared_planned == 4096 + 65536 * 4


def test_an_allocation_inside_a_branch_does_not_start_the_buffers_lifetime() -> None:
    source = HEADER + (
        "def kernel(store=True):\n"
        "    @T.prim_func\n"
        '    def main(A: T.Tensor((1048576,), "float32")):\n'
        "        with T.Kernel(8, threads=128) as bx:\n"
        '            X_s = T.alloc_shared((4096,), "float32")\n'
        "            if store:\n"
        '                Y_s = T.alloc_shared((4096,), "float32")\n'
        "            T.copy(A[0:4096], X_s)\n"
        "            T.copy(X_s, A[4096:8192])\n"
        "            if store:\n"
        "                T.copy(A[8192:12288], Y_s)\n"
        "                T.copy(Y_s, A[12288:16384])\n"
        "    return main\n"
    )
    (kernel,) = analyze_source(source).kernels
    assert kernel.shared_planned == 16384
