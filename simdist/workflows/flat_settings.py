"""The flat ``AdaptConfig`` fields and ``simdist adapt`` flags that held the finetuner's and the evaluator's settings
before the loop's parts had their own configs (``finetune``: a :class:`~simdist.model.freeze.FinetuneConfig`,
``evaluation``: an :class:`~simdist.workflows.loop_parts.EvaluationConfig`), in one table. They stay accepted for one
release (deprecated, with a warning naming the nested option), except ``freeze``, which stays the short form of
``finetune.freeze``. Also the flat form adaptation runs record their config in (:func:`recorded_form`), so runs
recorded before the parts had their own configs keep resuming.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

#: flat field (and ``simdist adapt`` flag) -> (the part's config, its field)
FLAT: dict[str, tuple[str, str]] = {
    "freeze": ("finetune", "freeze"), "epochs": ("finetune", "epochs"),
    "windows_per_epoch": ("finetune", "windows_per_epoch"), "batch_size": ("finetune", "batch_size"),
    "lr": ("finetune", "lr"), "warmup_steps": ("finetune", "warmup_steps"), "decay_steps": ("finetune", "decay_steps"),
    "episodes_per_eval": ("evaluation", "trials"), "eval_workers": ("evaluation", "workers")}
#: the flat names that stay without a warning: ``--freeze`` is the run's headline option (recorded in its state)
SHORT = ("freeze",)
#: each flat flag's type as it had it (the command line checks its values as before)
TYPES: dict[str, Any] = {"freeze": str, "epochs": int, "windows_per_epoch": int | None, "batch_size": int,
                         "lr": float, "warmup_steps": int, "decay_steps": int | None, "episodes_per_eval": int,
                         "eval_workers": int}
#: the order of the recorded config (``asdict`` of the flat ``AdaptConfig``): a run records what it did then
ORDER = ("schedule", "schedule_unit", "freeze", "init", "episodes_per_eval", "num_envs", "eval_workers",
         "heldout_episodes", "planner", "planner_preset", "planner_overrides", "epochs", "windows_per_epoch",
         "batch_size", "lr", "warmup_steps", "decay_steps", "seed", "update_every", "prior", "collect_perturbation")


def nested(name: str) -> str:
    """The nested option a flat name stands for (``epochs`` -> ``finetune.epochs``)."""
    part, key = FLAT[name]
    return f"{part}.{key}"


def nest(given: Mapping[str, Any], parts: Mapping[str, Mapping[str, Any]], prog: str = "AdaptConfig",
         flag: str = "") -> dict[str, dict[str, Any]]:
    """``parts`` (part -> its settings) with the flat names in ``given`` moved into them (over the nested values),
    warning for each deprecated one (``flag``: the prefix the warning spells them with, ``--``)."""
    out = {part: dict(values) for part, values in parts.items()}
    for name, value in given.items():
        part, key = FLAT[name]
        if name not in SHORT:
            warnings.warn(f"{prog}: {flag}{name} is deprecated; use {flag}{nested(name)}", FutureWarning,
                          stacklevel=4)
        out.setdefault(part, {})[key] = value
    return out


def recorded_form(loop: Mapping[str, Any], parts: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The config in the flat form runs recorded (before the parts had their own configs): the loop's settings
    ``loop`` and each part's (``parts``) under the flat names, in :data:`ORDER`; a loop setting added later follows."""
    values = dict(loop)
    for name, (part, key) in FLAT.items():
        values[name] = parts[part][key]
    return {**{key: values.pop(key) for key in ORDER if key in values}, **values}
