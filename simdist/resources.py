"""What a command may allocate: upper limits of its counts and the memory check of a request, before any work.

The limits are stated in each option's ``--help`` (``int_range`` types of :mod:`simdist.arguments`); the memory
check compares an estimate (count × bytes per unit) with the memory this process may still use, and refuses with
one line naming the option, the estimate and what the machine has.
"""

from __future__ import annotations

import resource
from pathlib import Path
from typing import Any

#: parallel simulated envs of one batch (the largest data preset generates with 4096)
MAX_ENVS = 4096
#: trials per condition of an evaluation protocol (larger counts run in batches of ``--envs``)
MAX_TRIALS = 100_000
#: worker processes of one command
MAX_WORKERS = 256
#: torch threads of one process
MAX_THREADS = 1024
#: episodes of one recording or collection
MAX_EPISODES = 1_000_000
#: stages of an adaptation schedule
MAX_STAGES = 100
#: real data of an adaptation schedule: minutes (a week of robot time) and episodes
MAX_SCHEDULE_MINUTES = 7 * 24 * 60
MAX_SCHEDULE_EPISODES = 100_000

_MIB = 1 << 20


def _meminfo_available() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cgroup_room() -> int | None:
    """What the cgroup (v2) of this process may still allocate (None: no limit)."""
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit == "max":
            return None
        used = int(Path("/sys/fs/cgroup/memory.current").read_text().strip())
        return max(0, int(limit) - used)
    except (OSError, ValueError):
        return None


def available_memory() -> int | None:
    """Bytes this process may still allocate: the least of the machine's available memory, its cgroup's room and
    its address-space limit (None where none of them can be read)."""
    room = [m for m in (_meminfo_available(), _cgroup_room(), _address_space_room()) if m is not None]
    return min(room) if room else None


def _address_space_room() -> int | None:
    """What ``ulimit -v`` (RLIMIT_AS) leaves this process (None: no limit)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return max(0, soft - int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    return soft


def check_memory(option: str, count: int, bytes_each: int, what: str) -> None:
    """ValueError (one line naming ``option``) when ``count`` × ``bytes_each`` exceeds :func:`available_memory`."""
    need = count * bytes_each
    have = available_memory()
    if have is not None and need > have:
        raise ValueError(f"{option} {count}: {count} {what} need about {need / _MIB:,.0f} MiB "
                         f"({bytes_each / _MIB:.2f} MiB each), more than the {have / _MIB:,.0f} MiB this machine has "
                         f"free; use at most {max(1, have // max(1, bytes_each)):,}")


def step_bytes(spec: Any) -> int:
    """Bytes one logged step of a dataset of ``spec`` (a :class:`~simdist.data.schema.DatasetSpec`) holds in memory:
    float32 observations, action and command, plus reward, value, done and flags."""
    import math

    floats = sum(math.prod(shape) for shape in spec.obs.values()) + spec.action_dim + spec.command_dim
    return 4 * (floats + 8)
