"""Transpose through shared memory. Write the body of the kernel."""

import tilelang.language as T


# tilescope: M=1000 N=1500
def kernel(M, N, block=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((N, M), dtype)):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=256) as (bx, by):
            # Your code: stage tile (by, bx) of A in shared memory, read it by columns
            # into a fragment, and copy the fragment to tile (bx, by) of B.
            pass

    return main
