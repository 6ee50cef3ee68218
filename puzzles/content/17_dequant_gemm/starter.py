"""Dequantised GEMM, C = A @ (scale * (Bq - 8)). Write the body of the kernel."""

import tilelang.language as T


# tilescope: M=1000 N=1000 K=1000
def kernel(M, N, K, block_M=256, block_N=128, block_K=64, num_stages=3, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        Bq: T.Tensor((N, K // 2), "uint8"),
        scale: T.Tensor((N,), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            # Your code: per K tile, copy A and the packed bytes of Bq to shared memory,
            # unpack each byte's two nibbles into fp16 values (nibble - 8) in a shared B tile,
            # T.gemm(A_shared, B_shared, C_local, transpose_B=True); scale each column at the end.
            pass

    return main
