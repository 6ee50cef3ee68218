"""Row softmax with reductions: each block owns `block_M` rows of an (M, N) fp16 matrix."""

import argparse

import tilelang
import tilelang.language as T


def softmax(M, N, block_M=64, dtype="float16", accum_dtype="float32"):
    scale = 1.44269504  # log2(e): exp(x) == exp2(x * log2(e))

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            X_shared = T.alloc_shared((block_M, N), dtype)
            X_local = T.alloc_fragment((block_M, N), accum_dtype)
            row_max = T.alloc_fragment((block_M,), accum_dtype)
            row_sum = T.alloc_fragment((block_M,), accum_dtype)
            T.copy(X[bx * block_M, 0], X_shared)
            T.copy(X_shared, X_local)
            T.reduce_max(X_local, row_max, dim=1)
            for i, j in T.Parallel(block_M, N):
                X_local[i, j] = T.exp2((X_local[i, j] - row_max[i]) * scale)
            T.reduce_sum(X_local, row_sum, dim=1)
            for i, j in T.Parallel(block_M, N):
                X_local[i, j] = X_local[i, j] / row_sum[i]
            T.copy(X_local, Y[bx * block_M, 0])

    return main


if __name__ == "__main__":
    import torch

    parser = argparse.ArgumentParser()
    parser.add_argument("--M", type=int, default=4096)
    parser.add_argument("--N", type=int, default=256)
    args = parser.parse_args()
    kernel = tilelang.compile(softmax(args.M, args.N), out_idx=[1])
    x = torch.randn(args.M, args.N, device="cuda", dtype=torch.float16)
    torch.testing.assert_close(kernel(x), torch.softmax(x.float(), dim=1).half(), rtol=1e-2, atol=1e-2)
    print("ok")
