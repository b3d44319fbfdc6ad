"""How a real-data collection reports itself: the planner that acted, stamped into every logged episode's meta
(``planner``: its ``planner.json`` settings; :func:`stamp_planner`), and progress lines with the ETA of the rest
(:class:`CollectionProgress`). The adaptation loop's collection part
(:class:`~simdist.workflows.loop_parts.ScheduleCollector`) does both; its held-out part
(:class:`~simdist.workflows.loop_parts.TaskHeldout`) stamps its episodes."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from simdist.data.schema import Episode


def acting_planner(agent: Any) -> dict[str, Any] | None:
    """The planner settings a planning agent acts with (its ``planner.json`` keys), else None."""
    to_dict = getattr(getattr(agent, "config", None), "to_planner_dict", None)
    return dict(to_dict()) if callable(to_dict) else None


def stamp_planner(episodes: Sequence[Episode], agent: Any) -> None:
    """Record in each logged episode's meta (``planner``) the settings of the planner that acted in it."""
    settings = acting_planner(agent)
    if settings is not None:
        for ep in episodes:
            ep.meta["planner"] = settings


def planner_summary(settings: dict[str, Any] | None) -> str:
    """One line naming a planner's budget: its class's ``summary(settings)`` where it has one (MPPI: ``mppi 450+22
    samples x 8 iterations, ...``), else its name."""
    if settings is None:
        return "the agent's own controller"
    name = settings.get("planner", "mppi")
    from simdist.registry import RegistryError, get

    try:
        summary = getattr(get("planner", name), "summary", None)
    except RegistryError:
        summary = None
    return summary(settings) if callable(summary) else str(name)


class CollectionProgress:
    """Log lines of a collection (``log``): the acting planner once, each finished episode of a chunk, and after
    each logged chunk the amount logged so far with the ETA of the rest at this call's rate (chunks may run at
    once: each is timed from its own start)."""

    def __init__(self, log: Callable[[str], None], what: str, target: int, unit: str, have: int,
                 planner: dict[str, Any] | None) -> None:
        self.log, self.what, self.target, self.unit = log, what, target, unit
        self.start_have, self.started = have, time.perf_counter()
        self.chunk_starts: dict[int, float] = {}  # each running chunk's start, by its first id
        log(f"[collect] {what}: {have:,} of {target:,} {unit} logged; acting planner: {planner_summary(planner)}")

    def chunk_episode(self, first: int) -> Callable[[int, int], None]:
        """The ``on_episode`` callback of the chunk whose first episode id is ``first`` (called as it starts)."""
        started = self.chunk_starts[first] = time.perf_counter()

        def report(done: int, total: int) -> None:
            self.log(f"[collect] {self.what}: chunk from episode {first}: {done}/{total} episodes finished in "
                     f"{time.perf_counter() - started:.0f}s")

        return report

    def logged(self, have: int, episodes: int, first: int) -> None:
        """After the ``episodes`` of the chunk from id ``first`` were written: ``have`` of the target is logged."""
        now = time.perf_counter()
        started = self.chunk_starts.pop(first, self.started)
        rate = (have - self.start_have) / max(now - self.started, 1e-9)
        eta = f"{max(self.target - have, 0) / rate:.0f}s" if rate > 0 else "unknown"
        share = 100.0 * min(have, self.target) / max(self.target, 1)
        count = f"{episodes} episode{'' if episodes == 1 else 's'}"
        self.log(f"[collect] {self.what}: {have:,} of {self.target:,} {self.unit} logged ({share:.0f} %; {count} in "
                 f"{now - started:.0f}s); ETA {eta}")
