"""What a task can do, one named capability each: a task class derives from those it has (each a
:class:`~simdist.tasks.Task`).

* :class:`EnvFactory`: batched envs on the task's profile (proxy-real) or the training simulator, the dataset spec
  and the training-time observation noise;
* :class:`EvaluationProtocol`: the evaluation protocol (trials, metric, success), which runs on those envs;
* :class:`StateCloning`: cloned simulation states, their true returns and open-loop replays (the plan-ranking and
  response diagnostics, :mod:`simdist.diagnostics`);
* :class:`DataGeneration`: a pretraining data generator and its defaults (``simdist generate``);
* :class:`ExpertTrainer`: a privileged-expert trainer (``simdist train-expert``).

Each is optional. Code that needs one calls :func:`require`, which names the task and the capability it lacks in
one line (:class:`~simdist.tasks.TaskError`)::

    @register("task", "my-task")
    class MyTask(EvaluationProtocol):  # an evaluation protocol brings the envs it runs on
        ...
"""

from __future__ import annotations

from simdist.capabilities.cloning import StateCloning
from simdist.capabilities.data import DataGeneration
from simdist.capabilities.envs import EnvFactory
from simdist.capabilities.evaluation import EvaluationProtocol
from simdist.capabilities.experts import ExpertTrainer
from simdist.capabilities.require import CAPABILITIES, capabilities_of, require, require_class

__all__ = ["CAPABILITIES", "DataGeneration", "EnvFactory", "EvaluationProtocol", "ExpertTrainer", "StateCloning",
           "capabilities_of", "require", "require_class"]
