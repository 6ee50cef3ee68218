"""Mistake: the copy runs to 2N - 1 with TileLang's store masking off: N - 1 elements land past
B's end (on the ragged case, 2048 of them: more than a 4 KB guard could count)."""

import tilelang.language as T


# tilescope: N=2049
def kernel(N, block_N=2048, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(2 * N, block_N), threads=256) as bx:
            for i in T.Parallel(block_N):
                if bx * block_N + i < 2 * N - 1:
                    B[bx * block_N + i] = A[(bx * block_N + i) % N]

    return main.with_attr("tilelang_pass_configs", {"tl.disable_safe_memory_legalize": True})
