"""The :class:`ExpertTrainer` capability: ``simdist train-expert --task NAME`` trains a task's privileged expert."""

from __future__ import annotations

import abc
import argparse
from typing import ClassVar

from simdist.tasks import Task


class ExpertTrainer(Task):
    """A task that trains its own privileged expert. ``simdist train-expert`` builds the parser, the task adds its
    options (:meth:`add_expert_arguments`) and runs with the parsed options (:meth:`train_expert`)."""

    #: one line for ``simdist train-expert --task NAME --help``
    expert_description: ClassVar[str] = "train (or resume) the task's privileged expert and export the expert set"

    @classmethod
    @abc.abstractmethod
    def add_expert_arguments(cls, parser: argparse.ArgumentParser) -> None:
        """Add the trainer's options to ``simdist train-expert``'s parser."""

    @classmethod
    @abc.abstractmethod
    def train_expert(cls, args: argparse.Namespace) -> int:
        """Train (or resume) the expert with the parsed options; the exit status."""
