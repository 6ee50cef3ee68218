"""GEMV, y = A @ x with fp16 inputs and an fp32 result. Write the body of the kernel."""

import tilelang.language as T


# tilescope: M=1000 K=3000
def kernel(M, K, block_M=4, block_K=1024, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), x: T.Tensor((K,), dtype), y: T.Tensor((M,), accum_dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=256) as bx:
            # Your code: for each K tile, multiply a (block_M, block_K) tile of A by the
            # matching slice of x in fp32 (mask k >= K), reduce each row, and accumulate.
            pass

    return main
