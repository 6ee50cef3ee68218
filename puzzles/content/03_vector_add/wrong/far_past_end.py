"""Mistake: with TileLang's store masking off, the first block also stores 256 zeros 2560 elements
(10 KB) past C's end: far beyond a 4 KB guard, inside one sized to the output."""

import tilelang.language as T


# tilescope: N=1000003
def kernel(N, block_N=1024, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), threads=256) as bx:
            for i in T.Parallel(block_N):
                if bx * block_N + i < N:
                    C[bx * block_N + i] = A[bx * block_N + i] + B[bx * block_N + i]
                if bx == 0 and i < 256:
                    C[N + 2560 + i] = 0.0

    return main.with_attr("tilelang_pass_configs", {"tl.disable_safe_memory_legalize": True})
