"""``simdist convert official``: an official checkpoint → a simdist model folder (config, weights, card, planner)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from simdist.official.mapping import OfficialCheckpoint, config_from_official, state_dict_from_official
from simdist.planning.base import planner_preset

__all__ = ["build_model", "convert", "LICENSE_NOTICE", "SOURCE_REPO"]

SOURCE_REPO = "CLeARoboticsLab/simdist"
#: The licence notice of the released weights (MIT), which must travel with every copy.
LICENSE_NOTICE = """MIT License

Copyright (c) 2026 Jacob Levy

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
"""


def build_model(checkpoint: OfficialCheckpoint, preset: str | None = None) -> Any:
    """The :class:`~simdist.WorldModel` holding the checkpoint's weights (loaded with ``strict=True``)."""
    from simdist.model.world_model import WorldModel

    config = config_from_official(checkpoint.config, preset)
    model = WorldModel(config)
    state = state_dict_from_official(checkpoint.arrays, config, model.state_dict(), checkpoint.model_type)
    model.load_state_dict(state, strict=True)
    return model.eval()


def official_planner() -> dict[str, Any]:
    """The official MPPI (SIMDIST 6.1): 450 + 22 policy samples × 8 iterations, 64 elites, temperature 0.25,
    initial std 2.0, minimum 0.05, γ 0.99; simdist's shift warm start."""
    return planner_preset("paper")


def _description(checkpoint: OfficialCheckpoint, source: str, notes: str) -> str:
    run = checkpoint.config.get("run_name", "?")
    lines = [
        f"The SimDist authors' pretrained world model (run `{run}`, step {checkpoint.step}), converted from "
        f"the official release ({source}) with `simdist convert official`. Weights by the authors of "
        "*Simulation Distillation* (Levy et al., 2026); released under the MIT licence, whose notice follows.",
        "",
        "The tensors map one to one (no retraining, no approximation); the value head is read with "
        "`value_offset: 1`, the official labels' alignment. `planner.json` is the official MPPI.",
    ]
    if notes:
        lines += ["", notes.strip()]
    lines += ["", "### Licence (MIT) of the weights", "", "```", LICENSE_NOTICE.strip(), "```"]
    return "\n".join(lines)


def convert(checkpoint: OfficialCheckpoint, out: str | Path, *, repo_id: str | None = None,
            source: str = SOURCE_REPO, notes: str = "", preset: str | None = None,
            metrics: dict[str, Any] | None = None) -> Path:
    """Write the converted model folder ``out`` (config.json, model.safetensors, README.md, planner.json)."""
    model = build_model(checkpoint, preset)
    card = {"description": _description(checkpoint, source, notes), "license": "mit"}  # the paper: the template
    if repo_id:
        card["repo_id"] = repo_id
    from simdist.hub.files import PLANNER_NAME

    return model.save_pretrained(out, model_card_kwargs=card, extra_files={PLANNER_NAME: official_planner()},
                                 metrics=metrics, tags=["simdist-official"])
