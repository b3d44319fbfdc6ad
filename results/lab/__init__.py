"""The lab: every experiment of results/ declared as data (:class:`Experiment`, one per question, beside its
area in ``results/<area>/experiments.py``), collected in :data:`EXPERIMENTS` and run by one command,
``python -m results run EXPERIMENT [STEP]``."""

from results.lab.registry import EXPERIMENTS, find
from results.lab.spec import Experiment, Step, step

__all__ = ["EXPERIMENTS", "Experiment", "Step", "find", "step"]
