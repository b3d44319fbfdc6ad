"""Every experiment of results/, collected from the specs beside each area (``results/<area>/experiments.py``)."""

from __future__ import annotations

from results.baselines.experiments import EXPERIMENTS as BASELINES
from results.go2.experiments import EXPERIMENTS as GO2
from results.gym.experiments import EXPERIMENTS as GYM
from results.lab.spec import Experiment
from results.official.experiments import EXPERIMENTS as OFFICIAL
from results.planners.experiments import EXPERIMENTS as PLANNERS
from results.ranking.experiments import EXPERIMENTS as RANKING
from results.scaling.experiments import EXPERIMENTS as SCALING
from results.table1.experiments import EXPERIMENTS as TABLE1
from results.toy.experiments import EXPERIMENTS as TOY
from results.ur5e.experiments import EXPERIMENTS as UR5E

#: every experiment, by area, in the order results/README.md lists them
EXPERIMENTS: tuple[Experiment, ...] = (*GO2, *UR5E, *TOY, *RANKING, *GYM, *OFFICIAL, *TABLE1, *BASELINES, *SCALING,
                                      *PLANNERS)


def find(name: str) -> Experiment:
    """The experiment called ``name``; ``KeyError`` with the known names otherwise."""
    for e in EXPERIMENTS:
        if e.name == name:
            return e
    raise KeyError(f"no experiment {name!r}; `python -m results run --list` shows them")
