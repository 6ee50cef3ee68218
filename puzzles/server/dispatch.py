"""Hands queued submissions to the grading slots on the Ray cluster and writes what they answer.

One thread per slot: it waits until Ray has placed its actor (so a slot with no room holds no
submission), claims the oldest queued one (of a learner with none in grading), and either copies a
byte-identical file's verdict (a CPU one, or a timeout) or sends the file to its actor. A node lost
mid-grading kills that call: the submission goes back to the queue (after ``MAX_ATTEMPTS`` losses it is
answered as not graded) and the slot starts a new actor, which Ray places on a live node. The server
process itself never grades.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tilescope.core.sandbox.clean_env import named_protected
from tilescope.puzzles import catalog
from tilescope.puzzles.server.grading_queue import Graded, Job
from tilescope.puzzles.server.lease import holder_name
from tilescope.puzzles.server.store import Store
from tilescope.puzzles.workspace import is_solution_text

MAX_ATTEMPTS = 3
IDLE_POLL_S = 0.25
WATCH_S = 5.0
CONNECT_S = 120.0


@dataclass(frozen=True)
class Plan:
    """How this cluster grades: ``gpu`` slots (one per GPU) or ``cpu`` ones (the tile interpreter)."""

    kind: str
    slots: int


def plan(resources: Mapping[str, float], cpu_slots: int | None = None) -> Plan:
    gpus = int(resources.get("GPU", 0))
    if gpus:
        return Plan("gpu", gpus)
    return Plan("cpu", cpu_slots or max(1, int(resources.get("CPU", 1))))


def not_graded(job: Job, why: str) -> dict[str, Any]:
    """The verdict of a submission the cluster could not grade: failed, saying why (never silently dropped)."""
    return {
        "puzzle": job.puzzle,
        "path": job.filename,
        "device": "?",
        "passed": False,
        "summary": f"not graded: {why}",
        "failure": "child-exit",
    }


class Dispatcher:
    def __init__(
        self,
        store: Store,
        address: str | None,
        *,
        cpu_slots: int | None = None,
        log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
    ) -> None:
        self.store = store
        self.address = address
        self.cpu_slots = cpu_slots
        self.log = log
        self.plan = Plan("cpu", 0)
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.threads: list[threading.Thread] = []
        self.name = holder_name()

    def start(self) -> Plan:
        from tilescope.core.compiler.cluster import join

        deadline = time.monotonic() + CONNECT_S
        while True:
            try:
                join(self.address)
                break
            except ConnectionError as err:  # a cluster started with the server may not have its nodes yet
                if time.monotonic() > deadline:
                    raise
                self.log(f"tilescope puzzles serve: no Ray cluster at {self.address} yet ({err}); again in 5 s")
                time.sleep(5.0)
        import ray

        self.plan = plan(ray.cluster_resources(), self.cpu_slots)
        back = self.store.requeue_abandoned()
        if back:
            self.log(f"tilescope puzzles serve: {back} submissions a previous server was grading are queued again")
        self._grow(self.plan.slots)
        threading.Thread(target=self._watch, name="cluster-watch", daemon=True).start()
        threading.Thread(target=self._copier, name="copier", daemon=True).start()
        return self.plan

    def slots(self) -> dict[str, Any]:
        """How the cluster grades now, for the page: the kind and the number of slots."""
        return {"kind": self.plan.kind, "slots": len(self.threads)}

    def _grow(self, wanted: int) -> None:
        while len(self.threads) < wanted:
            index = len(self.threads)
            thread = threading.Thread(target=self._slot, args=(index,), name=f"slot-{index}", daemon=True)
            thread.start()
            self.threads.append(thread)

    def _watch(self) -> None:
        """A slot more for each GPU (or CPU) that joins the cluster later; a node that leaves keeps its slot, which
        waits for room on the nodes left."""
        import ray

        while not self.stopping.wait(WATCH_S):
            try:
                now = plan(ray.cluster_resources(), self.cpu_slots)
            except Exception:  # the cluster's answer is not worth the server: ask again later
                continue
            if now.kind == self.plan.kind and now.slots > len(self.threads):
                self.log(f"tilescope puzzles serve: the cluster grew; {now.slots - len(self.threads)} slots more")
                self._grow(now.slots)

    def stop(self) -> None:
        import ray

        self.stopping.set()
        self.wake.set()
        if ray.is_initialized():
            ray.shutdown()

    def _actor(self) -> Any:
        import ray
        from tilescope.puzzles.server.slot import GradingSlot

        gpu = self.plan.kind == "gpu"
        remote = ray.remote(num_cpus=1, num_gpus=1 if gpu else 0, max_restarts=0, max_task_retries=0)(GradingSlot)
        # What the server protects (its database, data folder) goes with the actor: on a cluster the server did
        # not start, the actor's process has none of the server's environment.
        protected = named_protected()
        return remote.options(scheduling_strategy="SPREAD").remote(cpu_only=not gpu, protected=protected)

    def _slot(self, index: int) -> None:
        import ray
        from ray.exceptions import RayError

        worker = f"{self.name}/slot-{index}"
        while not self.stopping.is_set():
            actor = self._actor()
            try:
                where: dict[str, Any] = ray.get(actor.where.remote())
            except RayError as err:
                self.log(f"tilescope puzzles serve: slot {index} could not start ({type(err).__name__}); again in 2 s")
                ray.kill(actor, no_restart=True)
                self.stopping.wait(2.0)
                continue
            self.log(f"tilescope puzzles serve: slot {index} ready on {where['host']} (node {where['node'][:12]})")
            lost = self._serve(index, worker, actor)
            if not lost:
                return
            ray.kill(actor, no_restart=True)

    def _copier(self) -> None:
        """Answers queued files whose verdict a byte-identical file already has, without waiting for a slot."""
        while not self.stopping.is_set():
            job = self.store.claim(f"{self.name}/copier", copies_only=True)
            if job is None:
                self.stopping.wait(IDLE_POLL_S)
            elif not self.store.copy_verdict(job):  # its verdict went away meanwhile: a slot grades it
                self.store.requeue(job.id)

    def _serve(self, index: int, worker: str, actor: Any) -> bool:
        """Grade until stopped (False) or until the actor is lost (True)."""
        import ray
        from ray.exceptions import RayError, RayTaskError

        while not self.stopping.is_set():
            job = self.store.claim(worker)
            if job is None:
                self.wake.wait(IDLE_POLL_S)
                self.wake.clear()
                continue
            if self.store.copy_verdict(job):
                continue
            try:
                answer: dict[str, Any] = ray.get(actor.grade.remote(job.id, job.puzzle, job.filename, job.source))
            except RayTaskError as err:  # the grader itself failed on this file: answer it, never loop on it
                self.log(f"tilescope puzzles serve: grading #{job.id} failed: {err}")
                self.store.finish(job.id, Graded(not_graded(job, "the grader failed on this file")))
                continue
            except RayError as err:
                if job.attempts >= MAX_ATTEMPTS:
                    self.store.finish(job.id, Graded(not_graded(job, f"{job.attempts} grading nodes lost in a row")))
                else:
                    self.store.requeue(job.id)
                why = (
                    "the server is stopping"
                    if self.stopping.is_set()
                    else f"the node grading it was lost ({type(err).__name__})"
                )
                self.log(f"tilescope puzzles serve: #{job.id}: {why}; queued again")
                return True
            graded = Graded(
                answer["report"],
                node=answer.get("host"),
                grading_s=answer.get("seconds"),
                reference_copy=is_solution_text(catalog.get(job.puzzle), job.source),
            )
            if not self.store.finish(job.id, graded):
                self.log(f"tilescope puzzles serve: #{job.id} had its verdict already; this grading is dropped")
        return False
