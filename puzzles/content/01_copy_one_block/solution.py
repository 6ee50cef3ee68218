"""Copy a short vector with a single block: one thread per element, masked past the end."""

import tilelang.language as T


# tilescope: N=200
def kernel(N, block_N=256, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=block_N):
            for i in T.Parallel(block_N):
                if i < N:
                    B[i] = A[i]

    return main
