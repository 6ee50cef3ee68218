"""Weight-only int4 GEMM: C = A @ dequant(B).T, with B packed two 4-bit values per byte.

Each 4-bit value `q` stands for `(q - 8) * scale`, one fp16 scale per `group_size` columns
of a row of B. The packed tile is unpacked in registers, staged through shared memory and fed
to the tensor cores.
"""

import tilelang
import tilelang.language as T


# tilescope: M=1024 N=1024 K=1024
def dequant_gemm(M, N, K, block_M=128, block_N=128, block_K=64, num_stages=2, group_size=128):
    dtype = "float16"
    accum_dtype = "float32"

    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((N, K // 2), "uint8"),
        Scale: T.Tensor((N, K // group_size), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_packed_shared = T.alloc_shared((block_N, block_K // 2), "uint8")
            B_packed_local = T.alloc_fragment((block_N, block_K // 2), "uint8")
            B_local = T.alloc_fragment((block_N, block_K), dtype)
            B_shared = T.alloc_shared((block_N, block_K), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[bx * block_N, k * block_K // 2], B_packed_shared)
                T.copy(B_packed_shared, B_packed_local)
                for i, j in T.Parallel(block_N, block_K):
                    nibble = (B_packed_local[i, j // 2] >> ((j % 2) * 4)) & 0xF
                    group = (k * block_K + j) // group_size
                    B_local[i, j] = (nibble.astype(dtype) - 8) * Scale[bx * block_N + i, group]
                T.copy(B_local, B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


if __name__ == "__main__":
    import torch

    M = N = K = 1024
    kernel = tilelang.compile(dequant_gemm(M, N, K), out_idx=[3])
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    q = torch.randint(0, 16, (N, K), device="cuda", dtype=torch.uint8)
    packed = (q[:, 0::2] | (q[:, 1::2] << 4)).contiguous()
    scale = torch.rand(N, K // 128, device="cuda", dtype=torch.float16)
    b = (q.half() - 8) * scale.repeat_interleave(128, dim=1)
    torch.testing.assert_close(kernel(a, packed, scale), a @ b.T, rtol=1e-2, atol=1e-1)
    print("ok")
