"""A filesystem sandbox for a child that runs untrusted code, with Linux's Landlock (no root needed).

Landlock (Linux 5.13+) lets any process give up file access for itself and everything it later
starts: once ``apply`` has run, only the paths a ``Sandbox`` names can be read or written, however
the code tries (``open``, ``os.rename``, a subprocess). It also keeps the process from tracing or
reading the memory of processes outside the sandbox (``/proc/PID/mem``), and, from ABI 6, from
signalling them or reaching their abstract unix sockets. It needs neither root nor user namespaces,
which many systems turn off for unprivileged users; where the kernel has no Landlock, ``abi()`` is 0
and callers say so.

``sealing`` builds the usual sandbox: read everywhere except beneath some paths, write only beneath
others. Landlock only grants, so the paths above a denied one get a rule for listing alone, and each
of their other entries a rule of its own. ``/proc`` is always treated so: no entry of another
process is granted (``/proc/PID/environ`` and ``cmdline`` are readable to any process of the same
user, and hold a server's secrets), and ``apply`` grants the sandboxed process its own entry.

``cut_network`` takes the network away: a network namespace of its own where the kernel lets it make
one (nothing there, not even loopback, reaches the machine's), and Landlock's TCP rules (ABI 4) with
none granted. Standard library only: the supervisor (``supervise``, run as a script) applies both in
the child between ``fork`` and ``exec``.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import stat
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same on every architecture
_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_MAKE_AND_REMOVE = sum(1 << i for i in range(4, 13))  # remove dir/file, make char/dir/reg/sock/fifo/block/sym
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
"""The rights a rule on a file (not a directory) may carry."""
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1
_BIND_TCP, _CONNECT_TCP = 1 << 0, 1 << 1
_CLONE_NEWUSER, _CLONE_NEWNET, _CLONE_NEWNS = 0x10000000, 0x40000000, 0x00020000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REC, _MS_PRIVATE = 1, 2, 4, 8, 1 << 14, 1 << 18
_PER_PROCESS = "/proc"
"""Its numbered entries (and ``self``, ``thread-self``) are other processes': never granted by ``sealing``."""
_ALWAYS_COVERED = (_PER_PROCESS, "/dev")
"""Folders ``sealing`` always grants entry by entry: ``/proc`` for the above, ``/dev`` so that its devices get
device rights (``/dev/null`` written, a GPU's nodes ``ioctl``-ed) whatever else is writable."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def abi() -> int:
    """The Landlock ABI version this kernel offers; 0 when it has none (or it is turned off)."""
    try:
        version = _libc().syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def _handled(version: int) -> int:
    rights = EXECUTE | WRITE_FILE | READ_FILE | READ_DIR | _MAKE_AND_REMOVE
    if version >= 2:
        rights |= REFER
    if version >= 3:
        rights |= TRUNCATE
    if version >= 5:
        rights |= IOCTL_DEV
    return rights


@dataclass(frozen=True)
class Sandbox:
    """What a sandboxed process may touch: each path and everything beneath it."""

    read: tuple[str, ...] = ()
    """Read, list and execute."""
    write: tuple[str, ...] = ()
    """Everything: create, write, rename, remove."""
    list_only: tuple[str, ...] = ()
    """List the entries only (the folders above a denied path)."""
    devices: tuple[str, ...] = field(default=())
    """Device files to read, write and ``ioctl`` (``/dev/null``, a GPU's nodes)."""
    hidden: tuple[str, ...] = field(default=())
    """The denied paths: Landlock lets the folders among them be listed (listing is granted beneath the folders
    above them), so ``hide`` covers them with an empty file system where the process may have mounts of its own."""

    signals: bool = True
    """Also scope signals (ABI 6): the process cannot signal one outside its sandbox. Off for code the user
    trusts, whose signals to its supervisor are recorded and shown instead (``supervise``)."""

    def to_json(self) -> str:
        return json.dumps({**{k: list(getattr(self, k)) for k in _FIELDS}, "signals": self.signals})

    @staticmethod
    def from_json(text: str) -> Sandbox:
        data = json.loads(text)
        paths = (tuple(str(p) for p in data.get(k, [])) for k in _FIELDS)
        return Sandbox(*paths, signals=bool(data.get("signals", True)))


_FIELDS = ("read", "write", "list_only", "devices", "hidden")


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _ancestry(path: str) -> list[str]:
    """``path`` (absolute, normalised) and every folder above it, up to ``/``: the roots ``_inside`` holds it in."""
    found = [path]
    while path != "/" and (parent := os.path.dirname(path)) != path:
        found.append(parent)
        path = parent
    return found


def _someone_elses(folder: str, name: str) -> bool:
    """An entry of ``/proc`` that is a process's (or links to one): granted to no sandbox."""
    return folder == _PER_PROCESS and (name.isdigit() or name in ("self", "thread-self"))


def sealing(deny: Iterable[str], write: Iterable[str] = (), signals: bool = True) -> Sandbox:
    """Read anywhere but beneath ``deny`` and other processes' ``/proc`` entries; write only beneath ``write``
    (never in ``/proc``). An entry that is a link to a folder holding a denied path is left out rather than
    followed. A ``write`` folder that holds a denied path (``/``, a home with ``~/.ray``) is granted entry by
    entry like the folders above a denied path: what is made directly in it later is out of reach. Neither
    ``/`` nor the temporary folder can be listed (Landlock grants listing beneath a folder, so it would reach
    the private folders others make there later: another grading's submissions); their entries are reached
    by their paths."""
    denied = sorted({os.path.realpath(p) for p in deny})
    writable = sorted({os.path.realpath(p) for p in write})
    unlisted = {os.path.realpath(p) for p in ("/", "/tmp", tempfile.gettempdir())}
    read: list[str] = []
    granted_write: list[str] = []
    list_only: list[str] = []
    devices: list[str] = []

    # Sets of paths, so that each of the thousands of entries met is judged in a few lookups, not against every
    # denied path in turn (a third of a second before every worker's start).
    denied_set = set(denied)
    above_denied = {a for d in (*denied, *_ALWAYS_COVERED) for a in _ancestry(d)}

    def is_denied(path: str) -> bool:
        return any(a in denied_set for a in _ancestry(path))

    def holds_denied(path: str) -> bool:
        return path in above_denied

    def grant(path: str) -> None:
        inside_write = any(_inside(path, w) for w in writable) and not _inside(path, _PER_PROCESS)
        (granted_write if inside_write else read).append(path)

    def cover(folder: str) -> None:
        if folder not in unlisted:
            list_only.append(folder)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            if _someone_elses(folder, entry.name):
                continue
            real = os.path.realpath(entry.path)
            if is_denied(real):
                continue
            if holds_denied(real):
                if not entry.is_symlink():
                    cover(entry.path)
                continue
            try:
                mode = os.stat(entry.path).st_mode
            except OSError:
                continue
            if stat.S_ISCHR(mode):
                devices.append(entry.path)
            else:
                grant(entry.path)

    cover("/")
    whole = [w for w in writable if not holds_denied(w) and not is_denied(w)]
    granted = (tuple(read), tuple(granted_write + whole), tuple(list_only), tuple(devices), tuple(denied))
    return Sandbox(*granted, signals=signals)


def _add(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # gone since the sandbox was made: nothing to grant
    try:
        mode = os.fstat(fd).st_mode
        if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode)):
            return  # a pipe or socket (``/dev/stderr``): Landlock rules are for files and folders
        if not stat.S_ISDIR(mode):
            rights &= _FILE_RIGHTS
        if not rights:
            return
        rule = _PathBeneath(rights, fd)
        if libc.syscall(_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule), 0):
            err = ctypes.get_errno()
            raise OSError(err, f"landlock_add_rule({path}): {os.strerror(err)}")
    finally:
        os.close(fd)


def apply(sandbox: Sandbox) -> int:
    """Sandbox this process (and all it starts) for good; returns the ABI used. OSError where it cannot."""
    version = abi()
    if version < 1:
        raise OSError("this kernel offers no Landlock")
    libc = _libc()
    handled = _handled(version)
    ruleset = _ruleset(libc, version, handled, sandbox.signals)
    try:
        reading = (EXECUTE | READ_FILE | READ_DIR) & handled
        device = (READ_FILE | WRITE_FILE | IOCTL_DEV) & handled
        own = (f"{_PER_PROCESS}/{os.getpid()}",) if _PER_PROCESS in sandbox.list_only else ()
        for paths, rights in (
            (sandbox.read, reading),
            (own, reading),
            (sandbox.list_only, READ_DIR),
            (sandbox.devices, device),
            (sandbox.write, handled),
        ):
            for path in paths:
                _add(libc, ruleset, path, rights)
        _restrict(libc, ruleset)
    finally:
        os.close(ruleset)
    return version


def _ruleset(libc: ctypes.CDLL, version: int, handled_fs: int, signals: bool) -> int:
    """A new ruleset handling ``handled_fs``, TCP (ABI 4: none granted, so no bind or connect) and, from ABI 6,
    scoped to this domain for abstract unix sockets (and with ``signals``, for signals)."""
    network = _BIND_TCP | _CONNECT_TCP if version >= 4 else 0
    scoped = (_SCOPE_ABSTRACT_UNIX_SOCKET | (_SCOPE_SIGNAL if signals else 0)) if version >= 6 else 0
    attr = _RulesetAttr(handled_fs, network, scoped)
    size = ctypes.sizeof(_RulesetAttr) if version >= 6 else 16 if version >= 4 else 8
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"landlock_create_ruleset: {os.strerror(err)}")
    return int(ruleset)


def _restrict(libc: ctypes.CDLL, ruleset: int) -> None:
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0):
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if libc.syscall(_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)):
        err = ctypes.get_errno()
        raise OSError(err, f"landlock_restrict_self: {os.strerror(err)}")


def network_can_be_cut() -> bool:
    """Whether ``cut_network`` can work here: Landlock's TCP rules, or root (who may make a network namespace)."""
    return abi() >= 4 or os.geteuid() == 0


def cut_network() -> str:
    """Take the network away from this process and all it starts, for good; returns how (for a message).

    First a network namespace of its own, where the kernel allows one (root; else a user namespace with it,
    mapping this user to itself): only a loopback that is down, and abstract unix sockets apart from the
    machine's. Then Landlock's TCP rules (ABI 4), which hold even where no namespace could be made. OSError
    when neither is possible: the caller asked for no network and must not start the process with one."""
    libc = _libc()
    how = []
    if _own_network_namespace(libc):
        how.append("network namespace")
    version = abi()
    if version >= 4:
        ruleset = _ruleset(libc, version, 0, signals=False)  # files and signals stay as they are
        try:
            _restrict(libc, ruleset)
        finally:
            os.close(ruleset)
        how.append(f"Landlock ABI {version}")
    if not how:
        raise OSError("neither a network namespace nor Landlock's network rules (ABI 4) are available")
    return " and ".join(how)


def hide(sandbox: Sandbox) -> int:
    """Before ``apply``, in a mount namespace of its own where the kernel allows one (root, or a user namespace
    ``cut_network`` made): an empty, read-only file system on each denied folder, so that not even the names
    in it (other gradings' submissions, Ray's session and sockets) can be seen, nor a unix socket there
    reached. Returns how many folders were covered; 0 where no mount namespace could be made (the Landlock
    rules still deny reading them)."""
    folders = [p for p in sandbox.hidden if os.path.isdir(p) and not os.path.islink(p)]
    if not folders:
        return 0
    libc = _libc()
    if libc.unshare(_CLONE_NEWNS) != 0:
        return 0
    if libc.mount(None, b"/", None, ctypes.c_ulong(_MS_REC | _MS_PRIVATE), None) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"making the mounts private: {os.strerror(err)}")
    covered = 0
    for folder in folders:
        flags = ctypes.c_ulong(_MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
        if libc.mount(b"tilescope-hidden", folder.encode(), b"tmpfs", flags, b"size=4k,mode=0") != 0:
            err = ctypes.get_errno()
            if err == errno.ENOENT:
                continue  # removed since it was listed (another grading ended): nothing left to hide
            raise OSError(err, f"covering {folder}: {os.strerror(err)}")
        covered += 1
    return covered


def _own_network_namespace(libc: ctypes.CDLL) -> bool:
    if libc.unshare(_CLONE_NEWNET) == 0:
        return True
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET) != 0:
        return False
    try:
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as handle:
                handle.write(text)
    except OSError:
        pass  # unmapped ids read as the overflow id; file access still goes by the real ones
    return True


def confine(folder: str) -> None:
    """Put this process (and all it starts) in a Landlock domain of its own, nested in any it is in, that
    writes only beneath ``folder`` and to devices (``/dev/null``), and signals nothing outside itself (ABI 6):
    the child of a warm parent that makes one child per run (the puzzle loader), apart from its parent and
    from the children before and after it, however much the parent's own sandbox lets it write. Reading is as
    it was. OSError where the kernel has no Landlock, or the domain could not be made."""
    version = abi()
    if version < 1:
        raise OSError("this kernel offers no Landlock")
    libc = _libc()
    writing = _handled(version) & ~(EXECUTE | READ_FILE | READ_DIR)
    ruleset = _ruleset(libc, version, writing, signals=True)
    try:
        _add(libc, ruleset, folder, writing)
        _add(libc, ruleset, "/dev", (WRITE_FILE | TRUNCATE | IOCTL_DEV) & writing)
        _restrict(libc, ruleset)
    finally:
        os.close(ruleset)


def apart() -> None:
    """Put this process (and all it starts) in a Landlock domain of its own, nested in any it is in, with
    its file access as it was: from there it can no longer trace or read the memory of processes outside,
    its parent included, even as root (the compiler worker's child, apart from the warm zygote that forked
    it). OSError where the kernel has no Landlock."""
    if abi() < 1:
        raise OSError("this kernel offers no Landlock")
    libc = _libc()
    make_block = 1 << 11  # handled and never granted: making block devices, which no build does
    ruleset = _ruleset(libc, 1, make_block, signals=False)  # ABI 1's ruleset: files alone, sockets as they are
    try:
        _restrict(libc, ruleset)
    finally:
        os.close(ruleset)
