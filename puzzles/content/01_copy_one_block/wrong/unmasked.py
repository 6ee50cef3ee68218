"""Mistake: no `if i < N` mask, with TileLang's own store masking switched off for speed."""

import tilelang.language as T


# tilescope: N=200
def kernel(N, block_N=256, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=block_N):
            for i in T.Parallel(block_N):
                B[i] = A[i]

    return main.with_attr("tilelang_pass_configs", {"tl.disable_safe_memory_legalize": True})
