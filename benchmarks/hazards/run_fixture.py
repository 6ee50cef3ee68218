"""Run one hazard fixture's ``main()`` on the GPU (the process compute-sanitizer watches).

Exit status: 0 the result matched the fixture's reference (or it has none), 3 it did not
(``assert_close`` failed), 4 anything else went wrong (printed).
"""

from __future__ import annotations

import runpy
import sys
import traceback


def main() -> int:
    path = sys.argv[1]
    namespace = runpy.run_path(path, run_name="fixture")
    try:
        namespace["main"]()
        import torch

        torch.cuda.synchronize()
    except AssertionError as err:
        print(f"wrong values: {str(err).splitlines()[0] if str(err) else 'assertion'}", flush=True)
        return 3
    except Exception as err:
        print(f"failed: {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}", flush=True)
        traceback.print_exc()
        return 4
    print("matched", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
