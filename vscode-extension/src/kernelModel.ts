/**
 * What the views need from the server's `tilescope.kernelModel` answer (the core's
 * `FileAnalysis` JSON): kernel names and the buffers that have an inferred layout.
 */

export interface KernelSummary {
  name: string;
  /** Buffers with a layout, fragments first (their thread map is the most telling picture). */
  layoutBuffers: string[];
}

export function kernelsOf(value: unknown): KernelSummary[] {
  const kernels = Array.isArray(value) ? value : isObject(value) && Array.isArray(value.kernels) ? value.kernels : [];
  return kernels.filter(isObject).map((k) => {
    const layouts = Array.isArray(k.layouts) ? k.layouts.filter(isObject) : [];
    const rank = (l: Record<string, unknown>): number => (l.kind === "fragment" ? 0 : 1);
    return {
      name: String(k.kernel ?? k.name ?? ""),
      layoutBuffers: [...layouts].sort((a, b) => rank(a) - rank(b)).map((l) => String(l.buffer)),
    };
  });
}

/** The named kernel, or the file's first when no name is given. */
export function pickKernel(kernels: KernelSummary[], name: string | null | undefined): KernelSummary | undefined {
  return name ? kernels.find((k) => k.name === name) : kernels[0];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
