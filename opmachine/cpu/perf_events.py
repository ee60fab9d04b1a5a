"""Hardware and software event counts of this process around a block of code, through the Linux
`perf_event_open` system call (ctypes; no package does this for one thread at this grain).

`PerfCounters(events)` opens one counter per event for the calling thread, user space only;
`counting()` is a block whose counts `read()` then gives, so a BFS can be counted round by round.
Events are named as `perf stat` names them (`EVENTS`). Where the kernel, the VM or the CPU hides an
event, opening it fails and `CountersUnavailable` says which and why in one line: virtual machines
often expose the software events (page faults, task clock) but no cache events.
"""
from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import platform
import struct

from simdmodel.errors import InputError

_SYSCALL = {"x86_64": 298, "aarch64": 241}  # __NR_perf_event_open
_IOC_ENABLE, _IOC_DISABLE, _IOC_RESET = 0x2400, 0x2401, 0x2403
_TYPE_SOFTWARE, _TYPE_HW_CACHE = 1, 3
_L1D, _LL = 0, 2
_READ, _ACCESS, _MISS = 0, 0, 1
_DISABLED, _EXCLUDE_KERNEL, _EXCLUDE_HV = 1 << 0, 1 << 5, 1 << 6
_ATTR_SIZE = 64  # PERF_ATTR_SIZE_VER0: type, size, config, period, sample_type, read_format, flags, ...

# perf stat's names -> (type, config)
EVENTS = {
    "L1-dcache-loads": (_TYPE_HW_CACHE, _L1D | _READ << 8 | _ACCESS << 16),
    "L1-dcache-load-misses": (_TYPE_HW_CACHE, _L1D | _READ << 8 | _MISS << 16),
    "LLC-loads": (_TYPE_HW_CACHE, _LL | _READ << 8 | _ACCESS << 16),
    "LLC-load-misses": (_TYPE_HW_CACHE, _LL | _READ << 8 | _MISS << 16),
    "task-clock": (_TYPE_SOFTWARE, 1),
    "page-faults": (_TYPE_SOFTWARE, 2),
}


class CountersUnavailable(InputError):
    """An event this machine does not count (one line: which, and why)."""


def _attr(kind: int, config: int) -> bytes:
    """A perf_event_attr (version 0) for a counter that starts disabled and counts user space only."""
    return struct.pack("=IIQQQQQIIQ", kind, _ATTR_SIZE, config, 0, 0, 0,
                       _DISABLED | _EXCLUDE_KERNEL | _EXCLUDE_HV, 0, 0, 0)


def _open(name: str) -> int:
    number = _SYSCALL.get(platform.machine())
    if number is None:
        raise CountersUnavailable(f"perf_event_open: unknown system call number on {platform.machine()}")
    kind, config = EVENTS[name]
    attr = ctypes.create_string_buffer(_attr(kind, config), _ATTR_SIZE)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    fd = libc.syscall(ctypes.c_long(number), attr, ctypes.c_int(0), ctypes.c_int(-1), ctypes.c_int(-1),
                      ctypes.c_ulong(0))
    if fd < 0:
        code = ctypes.get_errno()
        why = {errno.ENOENT: "the CPU or the VM does not expose it", errno.EOPNOTSUPP: "not supported here",
               errno.EACCES: "not permitted (see /proc/sys/kernel/perf_event_paranoid)",
               errno.EPERM: "not permitted (see /proc/sys/kernel/perf_event_paranoid)",
               errno.ENOSYS: "the kernel has no perf events"}.get(code, os.strerror(code))
        raise CountersUnavailable(f"hardware counter {name} unavailable: {why}")
    return int(fd)


class PerfCounters:
    """One counter per event of `events` (names of `EVENTS`) for the calling thread; close when done."""

    def __init__(self, events):
        unknown = [name for name in events if name not in EVENTS]
        if unknown:
            raise InputError(f"unknown event {unknown[0]!r} (known: {', '.join(EVENTS)})")
        self.events = tuple(events)
        self._fds: list[int] = []
        try:
            for name in self.events:
                self._fds.append(_open(name))
        except BaseException:
            self.close()
            raise
        self._libc = ctypes.CDLL(None, use_errno=True)

    def _ioctl(self, request: int) -> None:
        for fd in self._fds:
            self._libc.ioctl(fd, request, 0)

    @contextlib.contextmanager
    def counting(self):
        """Count from zero while the block runs."""
        self._ioctl(_IOC_RESET)
        self._ioctl(_IOC_ENABLE)
        try:
            yield self
        finally:
            self._ioctl(_IOC_DISABLE)

    def read(self) -> dict[str, int]:
        """The counts of the last `counting()` block, by event."""
        return {name: struct.unpack("=Q", os.read(fd, 8))[0] for name, fd in zip(self.events, self._fds, strict=True)}

    def close(self) -> None:
        for fd in self._fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
