"""A filesystem sandbox for a child that runs untrusted code, with Linux's Landlock (no root needed).

Landlock (Linux 5.13+) lets any process give up file access for itself and everything it later
starts: once ``apply`` has run, only the paths a ``Sandbox`` names can be read or written, however
the code tries (``open``, ``os.rename``, a subprocess). It also keeps the process from tracing or
reading the memory of processes outside the sandbox (``/proc/PID/mem``, ``environ``, ``fd``), and,
from ABI 6, from signalling them. It needs neither root nor user namespaces, which many systems turn
off for unprivileged users; where the kernel has no Landlock, ``abi()`` is 0 and callers say so.

``sealing`` builds the usual sandbox: read everywhere except beneath some paths, write only beneath
others. Landlock only grants, so the paths above a denied one get a rule for listing alone, and each
of their other entries a rule of its own. Standard library only: the supervisor (``supervise``, run
as a script) applies it in the child between ``fork`` and ``exec``.
"""

from __future__ import annotations

import ctypes
import json
import os
import stat
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

    def to_json(self) -> str:
        return json.dumps({k: list(getattr(self, k)) for k in ("read", "write", "list_only", "devices")})

    @staticmethod
    def from_json(text: str) -> Sandbox:
        data = json.loads(text)
        return Sandbox(*(tuple(str(p) for p in data.get(k, [])) for k in ("read", "write", "list_only", "devices")))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def sealing(deny: Iterable[str], write: Iterable[str] = ()) -> Sandbox:
    """Read anywhere but beneath ``deny``; write only beneath ``write``. An entry that is a link to a
    folder holding a denied path is left out rather than followed."""
    denied = sorted({os.path.realpath(p) for p in deny})
    read: list[str] = []
    list_only: list[str] = []
    devices: list[str] = []

    def holds_denied(path: str) -> bool:
        return any(_inside(d, path) for d in denied)

    def cover(folder: str) -> None:
        list_only.append(folder)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            real = os.path.realpath(entry.path)
            if any(_inside(real, d) for d in denied):
                continue
            if holds_denied(real):
                if not entry.is_symlink():
                    cover(entry.path)
                continue
            try:
                mode = os.stat(entry.path).st_mode
            except OSError:
                continue
            (devices if stat.S_ISCHR(mode) else read).append(entry.path)

    if denied:
        cover("/")
    else:
        read.append("/")
    return Sandbox(tuple(read), tuple(os.path.realpath(p) for p in write), tuple(list_only), tuple(devices))


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
    scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL if version >= 6 else 0
    attr = _RulesetAttr(handled, 0, scoped)
    size = ctypes.sizeof(_RulesetAttr) if version >= 6 else 16 if version >= 4 else 8
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"landlock_create_ruleset: {os.strerror(err)}")
    try:
        reading = (EXECUTE | READ_FILE | READ_DIR) & handled
        device = (READ_FILE | WRITE_FILE | IOCTL_DEV) & handled
        for paths, rights in (
            (sandbox.read, reading),
            (sandbox.list_only, READ_DIR),
            (sandbox.devices, device),
            (sandbox.write, handled),
        ):
            for path in paths:
                _add(libc, ruleset, path, rights)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0):
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        if libc.syscall(_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)):
            err = ctypes.get_errno()
            raise OSError(err, f"landlock_restrict_self: {os.strerror(err)}")
    finally:
        os.close(ruleset)
    return version


def apart() -> None:
    """Put this process (and all it starts) in a Landlock domain of its own, nested in any it is in, with
    its file access as it was: from there it can no longer trace or read the memory of processes outside,
    its parent included, even as root (the compiler worker's child, apart from the warm zygote that forked
    it). OSError where the kernel has no Landlock."""
    if abi() < 1:
        raise OSError("this kernel offers no Landlock")
    libc = _libc()
    make_block = 1 << 11  # handled and never granted: making block devices, which no build does
    attr = _RulesetAttr(make_block, 0, 0)
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(8), ctypes.c_uint32(0))
    if ruleset < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"landlock_create_ruleset: {os.strerror(err)}")
    try:
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0):
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        if libc.syscall(_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)):
            err = ctypes.get_errno()
            raise OSError(err, f"landlock_restrict_self: {os.strerror(err)}")
    finally:
        os.close(ruleset)
