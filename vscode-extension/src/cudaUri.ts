/**
 * Addresses of the read-only generated-CUDA documents: `tilescope-cuda:/<kernel>.cu?<source uri>`.
 * The path ends in `.cu` so VS Code picks CUDA/C++ highlighting; the query carries the Python
 * file so the provider can ask the server again when the document is reopened.
 */

export const CUDA_SCHEME = "tilescope-cuda";

export interface CudaTarget {
  source: string;
  kernel: string;
}

export function cudaPath(kernel: string): string {
  return `/${kernel.replace(/[^A-Za-z0-9_.-]/g, "_") || "kernel"}.cu`;
}

export function cudaQuery(target: CudaTarget): string {
  return new URLSearchParams({ source: target.source, kernel: target.kernel }).toString();
}

export function parseCudaQuery(query: string): CudaTarget {
  const params = new URLSearchParams(query);
  const source = params.get("source");
  const kernel = params.get("kernel");
  if (!source || kernel === null) {
    throw new Error(`not a Tilescope CUDA address: ?${query}`);
  }
  return { source, kernel };
}
