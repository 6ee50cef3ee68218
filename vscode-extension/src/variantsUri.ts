/**
 * Addresses of the read-only variants tables: `tilescope-variants:/<kernel>.variants?<source uri>`,
 * and the `tilescope variants` command line that fills one. The query carries the Python file and
 * kernel so the provider can run the command again when the document is reopened or saved.
 */

export const VARIANTS_SCHEME = "tilescope-variants";

export interface VariantsTarget {
  source: string;
  kernel: string | null;
}

export function variantsPath(kernel: string | null): string {
  return `/${(kernel ?? "all").replace(/[^A-Za-z0-9_.-]/g, "_") || "kernel"}.variants`;
}

export function variantsQuery(target: VariantsTarget): string {
  return new URLSearchParams({ source: target.source, kernel: target.kernel ?? "" }).toString();
}

export function parseVariantsQuery(query: string): VariantsTarget {
  const params = new URLSearchParams(query);
  const source = params.get("source");
  if (!source) {
    throw new Error(`not a Tilescope variants address: ?${query}`);
  }
  return { source, kernel: params.get("kernel") || null };
}

/** Arguments after `tilescope`: every default target and every config of the kernel. */
export function variantsArgs(file: string, kernel: string | null): string[] {
  return ["variants", file, ...(kernel ? ["--kernel", kernel] : [])];
}
