"""Broadcast: C[i, j] = a[i] + b[j]. Write the body of the kernel."""

import tilelang.language as T


# tilescope: M=1000 N=1500
def kernel(M, N, block_M=32, block_N=256, dtype="float32"):
    @T.prim_func
    def main(a: T.Tensor((M,), dtype), b: T.Tensor((N,), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            # Your code: block (bx, by) owns rows by * block_M... and columns bx * block_N...
            pass

    return main
