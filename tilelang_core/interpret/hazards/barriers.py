"""A barrier check of the final IR: shared-memory races between threads that nothing orders. Runs in the worker.

The interpreter runs a per-thread kernel in lockstep, so two statements with no barrier between them
never overlap there and a race between them stays invisible. This check reads the module after the
last ``tl.ThreadSync`` (TileLang's own barriers in place, shared buffers merged) and splits each
kernel's statements into barrier-free regions: a ``tvm_storage_sync`` or ``tl.sync_threads`` starts
a new one; a loop without a barrier is wholly in one region (iteration ``i`` and ``i + 1`` are not
ordered); a loop with barriers joins its tail to its head. Every shared load and store (the sites of
``shared_sites.Walker``) is evaluated for every thread of the block over its loop instances; two
accesses of one region, or of joined ones, by different threads to one byte, at least one a store,
are a race: ``data-race`` for two stores, ``missing-barrier`` for a store and a load.

What is treated how: atomics (``T.atomic_add`` lowers to a call on an address) are not accesses, so
they never race with each other; ``__syncwarp`` and shuffles are not barriers (a race across one is
reported: conservative); an address that depends on data is not evaluated (nothing reported); a
condition that depends on data counts every lane, and what it finds is information, not an error,
because it may not happen. A store whose every writer loads the same global elements (a same-value
write, as TileLang's own examples make) is no race, and a thread reading back its own such write needs
no barrier. ``cp.async`` counts as a store where it is issued. Addresses are evaluated in block 0; the
witness says so. Only accesses the final IR still places at a line of the user's file are compared:
tile operations (``T.copy``, ``T.gemm``) lose their spans on the way, and a race could not be shown there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tilescope.core.codes import diagnostic
from tilescope.core.model import Diagnostic, Related, Severity, Span
from tilescope.core.worker.shared_sites import Env, Site, Unknown, Walker, per_thread, var_key
from tvm import tirx

THREAD_SYNC = "tl.ThreadSync"
INSTANCE_BUDGET = 256
"""Loop instances evaluated per access: inner loops walked whole while their product stays within this."""
_BARRIERS = ("tirx.tvm_storage_sync", "tl.sync_threads", "tirx.tvm_thread_sync")


def final_module(modules: list[Any], names: list[str]) -> Any | None:
    """The module after TileLang's last barrier placement, or ``None`` where the pipeline has none."""
    index = max((i for i, n in enumerate(names) if n == THREAD_SYNC), default=None)
    return None if index is None else modules[index]


def is_barrier(stmt: Any) -> bool:
    if not isinstance(stmt, tirx.Evaluate) or not isinstance(stmt.value, tirx.Call):
        return False
    name = str(getattr(stmt.value.op, "name", ""))
    if name not in _BARRIERS:
        return False
    scope = stmt.value.args[0] if stmt.value.args else None
    if isinstance(scope, tirx.StringImm):
        return str(getattr(scope, "value", "")).startswith("shared")
    return True


def _has_barrier(stmt: Any) -> bool:
    found: list[bool] = []
    tirx.stmt_functor.post_order_visit(stmt, lambda node: found.append(True) if is_barrier(node) else None)
    return bool(found)


@dataclass
class _RegionWalker(Walker):
    """The sites of ``Walker``, each with its barrier-free region and where its shared buffer sits in memory."""

    region: int = 0
    regions: list[int] = field(default_factory=list)
    joins: dict[tuple[int, int], tuple[int, ...] | None] = field(default_factory=dict)
    """Regions one flows into with no barrier between: how far apart the loop passes on either side may be
    (``None``: any, as a loop's last pass and what follows the loop)."""
    blocks: list[Any] = field(default_factory=list)
    handles: dict[int, tuple[int, Any]] = field(default_factory=dict)
    """A handle variable bound to ``handle_add_byte_offset(root, offset)``: ``(root's key, offset)``."""
    placed: dict[str, tuple[int, Any]] = field(default_factory=dict)
    """Each shared buffer's name: the allocation it lives in and its byte offset there."""
    phased: list[Any] = field(default_factory=list)
    """The counters of the enclosing loops with barriers, outermost first."""
    phases: list[tuple[Any, ...]] = field(default_factory=list)
    values: list[Any] = field(default_factory=list)
    """Each store's value expression (``None`` for a load or a matrix instruction)."""

    def walk(
        self, stmt: Any, loops: tuple = (), conds: tuple = (), binds: tuple = (), line: int | None = None
    ) -> tuple:
        if is_barrier(stmt):
            self.region += 1
            return binds
        if isinstance(stmt, tirx.AttrStmt) and str(stmt.attr_key) == "thread_extent":
            self._block_index(stmt)
        if isinstance(stmt, tirx.Bind) and _is_call(stmt.value, "tirx.handle_add_byte_offset"):
            self.handles[var_key(stmt.var)] = (var_key(stmt.value.args[0]), stmt.value.args[1])
            self.shared[var_key(stmt.var)] = (str(stmt.var.name), "uint8")  # reached by tvm_access_ptr alone
            self.placed[str(stmt.var.name)] = self.handles[var_key(stmt.var)]
        if isinstance(stmt, tirx.AllocBuffer | tirx.DeclBuffer):
            data = var_key(stmt.buffer.data)
            self.placed.setdefault(str(stmt.buffer.name), self.handles.get(data, (data, tirx.IntImm("int32", 0))))
        if isinstance(stmt, tirx.For) and _has_barrier(stmt.body):
            before = self.region
            head = self._fresh(before, (0,))
            self.phased.append(stmt.loop_var)
            out = super().walk(stmt, loops, conds, binds, line)
            self.phased.pop()
            tail = self.region
            self._join(tail, head, (1, -1))
            self._fresh(tail, None)
            return out
        out = super().walk(stmt, loops, conds, binds, line)
        new = len(self.sites) - len(self.regions)
        self.regions.extend([self.region] * new)
        self.phases.extend([tuple(self.phased)] * new)
        stored = stmt.value if isinstance(stmt, tirx.BufferStore) else None
        self.values.extend([stored if site.op == "store" else None for site in self.sites[len(self.values) :]])
        return out

    def _fresh(self, before: int, shifts: tuple[int, ...] | None) -> int:
        """Start a new region that ``before`` flows into."""
        self.region += 1
        self._join(before, self.region, shifts)
        return self.region

    def _join(self, a: int, b: int, shifts: tuple[int, ...] | None) -> None:
        low, high = sorted((a, b))
        if low != high:
            self.joins[(low, high)] = shifts

    def _block_index(self, stmt: Any) -> None:
        """Keep a ``blockIdx`` variable: addresses and guards are evaluated in block 0."""
        if str(stmt.node.thread_tag).startswith("blockIdx"):
            self.blocks.append(stmt.node.var)


def _is_call(expr: Any, name: str) -> bool:
    return isinstance(expr, tirx.Call) and str(getattr(expr.op, "name", "")) == name


def _instances(loops: tuple, env: Env) -> list[dict[int, int]]:
    """Loop-counter assignments: inner loops walked whole within the budget, outer ones at their first iteration."""
    budget = INSTANCE_BUDGET
    assignments: list[dict[int, int]] = [{}]
    for var, start, extent in reversed(loops):
        try:
            first = int(np.asarray(env.value(start)).reshape(-1)[0])
        except Unknown:
            first = 0
        count = int(extent) if isinstance(extent, tirx.IntImm) else 1
        count = count if count <= budget else 1
        budget //= max(count, 1)
        assignments = [{**a, var_key(var): first + i} for a in assignments for i in range(count)]
    return assignments


@dataclass(frozen=True)
class _Touches:
    """Every byte a site touches in block 0, with the thread that touches it (one row each)."""

    site: Site
    region: int
    root: int
    """The allocation it lives in: after the merge, several buffers share one."""
    bytes: np.ndarray
    threads: np.ndarray
    phase: np.ndarray
    """Which pass of the enclosing loops with barriers each row is (iterations there are ordered)."""
    guessed: bool
    """A condition depended on data: every lane was counted."""
    uniform: frozenset[int]
    """Bytes a store writes with one value from every thread (each loads the same elements): a same-value
    write, which TileLang's examples make and which the hardware leaves benign."""
    unknown: frozenset[int] = frozenset()
    """Bytes a store writes with a value the check cannot compare between threads (it reads registers, not
    shared memory): two threads storing there may store one value. A value read from shared memory is not
    among them: a read-modify-write of one element (a histogram without atomics) races whatever it stores."""


def _touches(site: Site, region: int, phased: tuple[Any, ...], value: Any, walker: _RegionWalker) -> _Touches | None:
    threads = walker.axes.threads
    env = Env(threads)
    walker.axes.fill(env)
    for var in walker.blocks:
        env.values[var_key(var)] = 0
    for var, bound in site.binds:
        env.binds[var_key(var)] = bound
    stored = _unbound(value, env) if value is not None else None  # the binds hold in every pass alike
    root, offset = walker.placed.get(site.buffer, (0, 0))
    try:
        base = int(np.asarray(env.value(offset)).reshape(-1)[0]) if not isinstance(offset, int) else offset
        assignments = _instances(site.loops, env)
    except Unknown:
        return None
    lanes = np.arange(threads)
    all_bytes: list[np.ndarray] = []
    all_threads: list[np.ndarray] = []
    all_phases: list[np.ndarray] = []
    all_values: list[np.ndarray] = []
    guessed = False
    for assignment in assignments:
        env.values.update(assignment)
        phase = 0
        for var in phased:
            phase = phase * 4096 + assignment.get(var_key(var), 0)
        try:
            starts = site.addresses(env)
        except Unknown:
            return None  # an address on data: nothing to evaluate
        active = np.ones(threads, dtype=bool)
        for cond in site.conditions:
            try:
                active &= per_thread(np.asarray(env.value(cond), dtype=np.int64), threads)[:, 0] != 0
            except Unknown:
                guessed = True
        span = starts[active][:, :, None] + base + np.arange(site.unit)[None, None, :]
        all_bytes.append(span.reshape(-1))
        all_threads.append(np.repeat(lanes[active], span.shape[1] * site.unit))
        all_phases.append(np.full(all_threads[-1].size, phase, dtype=np.int64))
        same = _value_keys(stored, env, threads)
        all_values.append(np.repeat(same[active], span.shape[1] * site.unit))
    if not all_bytes:
        return None
    rows = [np.concatenate(all_bytes), np.concatenate(all_threads), np.concatenate(all_phases)]
    rows_unique = np.unique(np.stack(rows, axis=1), axis=0)
    values = np.unique(np.stack([rows[0], np.concatenate(all_values)], axis=1), axis=0)
    keys, counts = np.unique(values[:, 0], return_counts=True)
    varying = set(np.unique(values[values[:, 1] < 0, 0]).tolist())
    uniform = frozenset(int(k) for k, c in zip(keys, counts, strict=True) if c == 1 and int(k) not in varying)
    unknown = frozenset(int(k) for k in varying) if _reads_registers_only(stored) else frozenset()
    return _Touches(
        site, region, root, rows_unique[:, 0], rows_unique[:, 1], rows_unique[:, 2], guessed, uniform, unknown
    )


def _value_keys(value: Any, env: Env, threads: int) -> np.ndarray:
    """Per thread, a number that is equal for two threads only if they store the same value: the elements of
    global memory the value loads and its constants (-1 where it reads registers, shared memory or thread
    indices directly, or is no store). ``value`` has its bound names replaced already (``_unbound``)."""
    varying = np.full(threads, -1, dtype=np.int64)
    if value is None:
        return varying
    loads: list[Any] = []
    tirx.stmt_functor.post_order_visit(value, lambda n: loads.append(n) if isinstance(n, tirx.BufferLoad) else None)
    if _names_a_thread(value, env):
        return varying
    key = np.zeros(threads, dtype=np.int64)
    for load in loads:
        if not str(load.buffer.scope()).startswith("global"):
            return varying
        try:
            for index in load.indices:
                key = key * 1_000_003 + per_thread(np.asarray(env.value(index), dtype=np.int64), threads)[:, 0]
        except Unknown:
            return varying
    return np.abs(key)


def _reads_registers_only(value: Any) -> bool:
    """Whether a stored value (its bound names replaced) reads registers and no shared memory."""
    if value is None:
        return False
    scopes: list[str] = []
    tirx.stmt_functor.post_order_visit(
        value, lambda n: scopes.append(str(n.buffer.scope())) if isinstance(n, tirx.BufferLoad) else None
    )
    return any(s.startswith("local") for s in scopes) and not any(s.startswith("shared") for s in scopes)


def _unbound(value: Any, env: Env, depth: int = 8) -> Any:
    """``value`` with the names the code bound (``index = regs[r]``) replaced by what they are bound to, so
    what it loads is seen: a name bound to a register read is that read, not a value every thread shares."""
    for _ in range(depth):
        names: dict[Any, Any] = {}

        def visit(node: Any, names: dict[Any, Any] = names) -> None:
            if isinstance(node, tirx.Var) and var_key(node) in env.binds:
                names[node] = env.binds[var_key(node)]

        tirx.stmt_functor.post_order_visit(value, visit)
        if not names:
            return value
        value = tirx.stmt_functor.substitute(value, names)
    return value


def _names_a_thread(expr: Any, env: Env) -> bool:
    """Whether the value uses a thread index other than to pick the elements it loads."""
    if isinstance(expr, tirx.BufferLoad):
        return False
    if isinstance(expr, tirx.Var):
        return not isinstance(env.values.get(var_key(expr), 0), int)
    parts = [getattr(expr, name, None) for name in ("a", "b", "value", "condition", "true_value", "false_value")]
    parts.extend(getattr(expr, "args", None) or [])
    return any(_names_a_thread(part, env) for part in parts if isinstance(part, tirx.PrimExpr))


def _witness_pair(a: _Touches, b: _Touches, shifts: tuple[int | None, ...]) -> tuple[int, int, int] | None:
    """A byte both touch from different threads in passes ``shifts`` apart, and the two threads; ``None`` if
    there is none."""
    for shift in shifts:
        found = _witness_at(a, b, shift)
        if found is not None:
            return found
    return None


def _witness_at(a: _Touches, b: _Touches, shift: int | None) -> tuple[int, int, int] | None:
    # One key per (byte, pass): the passes of three nested loops with barriers reach 4096² and more, so the
    # byte is scaled past the largest pass (shifted by at most one either way), never packed into fixed bits.
    low = int(min(a.phase.min(initial=0), b.phase.min(initial=0))) - 1
    span = int(max(a.phase.max(initial=0), b.phase.max(initial=0))) - low + 2
    key_a = a.bytes * span + (0 if shift is None else a.phase - low)
    key_b = b.bytes * span + (0 if shift is None else b.phase + shift - low)
    common = np.intersect1d(key_a, key_b)
    for key in common[:4096]:
        byte = int(key) // span
        ta = np.unique(a.threads[key_a == key])
        tb = np.unique(b.threads[key_b == key])
        if byte in a.uniform or byte in b.uniform:
            tb = np.setdiff1d(tb, ta)  # a thread reads back its own write, which every writer made the same
            if tb.size == 0 or a.site is b.site:
                continue
        if a.site is b.site:
            if ta.size > 1:
                return int(byte), int(ta[0]), int(ta[1])
            continue
        other = tb[tb != ta[0]]
        if other.size:
            return int(byte), int(ta[0]), int(other[0])
        if ta.size > 1:
            return int(byte), int(ta[1]), int(tb[0])
    return None


def _thread_words(thread: int, walker: _RegionWalker) -> str:
    coords, stride = [], 1
    for axis in "xyz":
        if axis in walker.axes.axes:
            _var, extent = walker.axes.axes[axis]
            coords.append(thread // stride % extent)
            stride *= extent
    shown = [
        c
        for c, axis in zip(coords, [a for a in "xyz" if a in walker.axes.axes], strict=True)
        if walker.axes.axes[axis][1] > 1
    ]
    return f"thread {tuple(shown) if len(shown) > 1 else (shown[0] if shown else 0)}"


def _diagnostic(
    a: _Touches, b: _Touches, witness: tuple[int, int, int], walker: _RegionWalker, kernel: str
) -> Diagnostic:
    """One race as a diagnostic at the later access's line, naming the other (the one construction site here)."""
    byte, ta, tb = witness
    store_a, store_b = a.site.op == "store", b.site.op == "store"
    code = "data-race" if store_a and store_b else "missing-barrier"
    first, second, t1, t2 = (a, b, ta, tb) if (a.site.line or 0) <= (b.site.line or 0) else (b, a, tb, ta)
    if code == "missing-barrier" and first.site.op == "store" and first.site.line == second.site.line:
        first, second, t1, t2 = second, first, t2, t1  # in one statement the load happens first
    who1, who2 = _thread_words(t1, walker), _thread_words(t2, walker)
    verb1 = "writes" if first.site.op == "store" else "reads"
    verb2 = "writes" if second.site.op == "store" else "reads"
    element = f"shared {first.site.buffer} byte {byte}"
    guessed = first.guessed or second.guessed
    text = (
        f"Evaluated from the final IR in block (0,): {who1} {verb1} byte {byte} of {first.site.buffer} at line "
        f"{first.site.line}; {who2} {verb2} it at line {second.site.line}; no barrier, atomic or warp guarantee "
        "between them."
    )
    related = [Related(Span(first.site.line or 0), f"{who1} {verb1} {first.site.buffer} here")]
    # Two stores of values the check cannot compare may store one value (eight threads storing a flag each
    # computed from the same loaded index): possible, not certain, so information, as with a guessed lane.
    unsure = code == "data-race" and byte in first.unknown and byte in second.unknown
    guess = " (a condition depends on data: every lane was counted)" if guessed else ""
    if unsure and not guessed:
        guess = " (the values stored come from registers: they may be one value)"
    severity: Severity | None = "information" if guessed or unsure else None
    if code == "data-race":
        fields: dict[str, object] = {"other_line": second.site.line}
    else:
        fields = {"first_verb": verb1, "second_verb": verb2}
    return diagnostic(
        code,
        Span(second.site.line or 0),
        form="threads",
        severity=severity,
        kernel=kernel,
        related=related,
        witness=text,
        fields=fields,
        first=who1.capitalize() if code == "data-race" else who1,
        second=who2 if code == "data-race" else who2.capitalize(),
        element=element,
        line=first.site.line,
        guess=guess,
    )


def check(modules: list[Any], names: list[str], path: str, kernel: str) -> list[Diagnostic]:
    """Races between threads of a block that no barrier orders, in the module after the last ``tl.ThreadSync``."""
    module = final_module(modules, names)
    if module is None:
        return []
    out: list[Diagnostic] = []
    seen: set[tuple[str, int, int]] = set()
    for func in module.functions.values():
        if not (isinstance(func, tirx.PrimFunc) and func.attrs is not None and "tirx.is_global_func" in func.attrs):
            continue
        walker = _RegionWalker(path)
        walker.walk(func.body)
        if walker.axes.threads <= 1:
            continue
        touched = [
            t
            for site, region, phased, value in zip(
                walker.sites, walker.regions, walker.phases, walker.values, strict=True
            )
            if site.line is not None and (t := _touches(site, region, phased, value, walker)) is not None
        ]
        for i, a in enumerate(touched):
            for b in touched[i:]:
                if a.site.op == "load" and b.site.op == "load":
                    continue
                shifts = _shifts(a, b, walker)
                if not shifts:
                    continue
                witness = _witness_pair(a, b, shifts)
                if witness is None:
                    continue
                found = _diagnostic(a, b, witness, walker, kernel)
                low, high = sorted((a.site.line or 0, b.site.line or 0))
                if (found.code, low, high) not in seen:
                    seen.add((found.code, low, high))
                    out.append(found)
    return [d for d in out if d.code == "data-race" or ("data-race", *_lines(d)) not in seen]


def _lines(d: Diagnostic) -> tuple[int, int]:
    """The two lines a race names, in order: a write-write race on them says all a read-write one would."""
    low, high = sorted((d.span.line, d.related[0].span.line))
    return low, high


def _shifts(a: _Touches, b: _Touches, walker: _RegionWalker) -> tuple[int | None, ...]:
    """How far apart the passes of loops with barriers may be for the two to meet with no barrier between them:
    the same pass in one region (of one allocation), neighbouring passes across a loop's tail and head, any
    pass between a loop's tail and what follows it (``None``); nothing if a barrier always separates them."""
    if a.root != b.root:
        return ()
    low, high = sorted((a.region, b.region))
    if low == high:
        return (0,)
    if (low, high) not in walker.joins:
        return ()
    shifts = walker.joins[(low, high)]
    return (None,) if shifts is None else shifts
