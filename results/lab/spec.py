"""An experiment as data: its question, the doc section that reports it, and its steps (each one command with
the outputs it writes)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    """One command of an experiment, run from the repository root.

    ``command`` is an argv whose first ``python`` is this interpreter and first ``simdist`` the installed command;
    ``outputs`` are the files or folders it writes (``*`` and ``{...}`` for families); ``dry`` is the flag with
    which the command prints what it would run and runs nothing (its own dry run), when it has one; ``needs`` the
    files another experiment's steps write that this one reads; ``minutes`` what one run costs on one core, in CPU
    minutes, where the docs say it (``python -m results verify`` runs a step of unknown cost only when named)."""

    name: str
    command: tuple[str, ...]
    outputs: tuple[str, ...]
    what: str = ""
    dry: str | None = None
    needs: tuple[str, ...] = ()
    minutes: float | None = None

    @property
    def line(self) -> str:
        """The command as one shell line."""
        return shlex.join(self.command)


@dataclass(frozen=True)
class Experiment:
    """A question, the doc section that answers it (``doc`` a path from the repository root, ``section`` the
    heading's text), and the steps that produce its numbers, in the order they run."""

    name: str
    question: str
    doc: str
    section: str
    steps: tuple[Step, ...]

    def step(self, name: str) -> Step:
        """The step called ``name``; ``KeyError`` naming the experiment's steps otherwise."""
        for s in self.steps:
            if s.name == name:
                return s
        raise KeyError(f"{self.name} has no step {name!r}; its steps: {', '.join(s.name for s in self.steps)}")


def step(name: str, command: str, *outputs: str, what: str = "", dry: str | None = None,
         needs: tuple[str, ...] = (), minutes: float | None = None) -> Step:
    """A :class:`Step` from its command written as a shell line (split with ``shlex``)."""
    return Step(name, tuple(shlex.split(command)), outputs, what, dry, needs, minutes)
