"""Element-wise add, C = A + B, as a `@tilelang.jit` factory: one tile of 256 elements per block."""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def elementwise_add(N, block_N=256, dtype="float32"):
    @T.prim_func
    def main(
        A: T.Tensor((N,), dtype),
        B: T.Tensor((N,), dtype),
        C: T.Tensor((N,), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), threads=128) as bx:
            for i in T.Parallel(block_N):
                C[bx * block_N + i] = A[bx * block_N + i] + B[bx * block_N + i]

    return main


def main(N: int = 1 << 20) -> None:
    import torch

    kernel = elementwise_add(N)
    a = torch.randn(N, device="cuda")
    b = torch.randn(N, device="cuda")
    torch.testing.assert_close(kernel(a, b), a + b)
    print("ok")


if __name__ == "__main__":
    main()
