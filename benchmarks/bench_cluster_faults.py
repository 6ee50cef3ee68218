"""``check --ray`` losing a node mid-check: every file answered once, equal to one local worker, the loss said.

A Ray cluster of two nodes on this machine (``ray.cluster_utils.Cluster``: a head and a second raylet,
separate processes, loopback only), two worker slots; the second node is killed while both slots are
building (each fixture sleeps 8 s while it builds). Prints what the run said and whether every record
equals the local ``Analyzer``'s.

    .venv/bin/python benchmarks/bench_cluster_faults.py
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # a loopback cluster reached on loopback

import ray
from ray.cluster_utils import Cluster
from tilescope.core.compiler import cluster
from tilescope.core.compiler.service import Analyzer
from tilescope.core.model import to_json, untimed

FIXTURES = Path(__file__).parent / "fixtures_cluster"


def main() -> None:
    files = sorted(FIXTURES.glob("sleeps_*.py"))
    with Analyzer() as analyzer:
        expected = [untimed(to_json(analyzer.analyze(str(f)))) for f in files]
    node = {"num_cpus": 1, "object_store_memory": 128 << 20, "node_ip_address": "127.0.0.1"}
    nodes = Cluster(initialize_head=True, head_node_args=node)
    second = nodes.add_node(**node)
    cluster.join("127.0.0.1:" + nodes.address.rsplit(":", 1)[1])  # the head listens on loopback only
    said: list[str] = []
    kill = threading.Timer(6.0, nodes.remove_node, args=(second,), kwargs={"allow_graceful": False})
    started = time.perf_counter()
    try:
        kill.start()
        got = cluster.analyze_files(files, 2, {}, {}, log=said.append)
    finally:
        kill.cancel()
        ray.shutdown()
        nodes.shutdown()
    equal = [untimed(to_json(r)) for r in got] == expected
    print(f"{len(files)} files, 2 slots on 2 nodes, the second killed at 6 s: {time.perf_counter() - started:.1f} s")
    for line in said:
        print(f"  said: {line}")
    print(f"every file answered once: {len(got) == len(files)}; equal to one local worker: {equal}")


if __name__ == "__main__":
    main()
