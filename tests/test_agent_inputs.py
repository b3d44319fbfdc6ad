"""Every registered agent's ``act`` refuses non-finite or mis-shaped observation histories (naming the key), as
the SimDist planners do, and never returns a non-finite action (NaN weights raise instead)."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

from simdist.agents import agent_types
from simdist.planning.inputs import NonFiniteError
from tests.helpers import toy_world_model, untrained_agents

pytestmark = pytest.mark.usefixtures("single_thread")

AGENTS = sorted(agent_types())


@pytest.fixture(scope="module")
def agents(sim_data: Path) -> dict[str, Any]:
    return untrained_agents(toy_world_model(sim_data))


def good_inputs(agent: Any, n: int = 3) -> dict[str, Any]:
    """A filled history of ``agent``'s own shape, as the dict form every agent accepts."""
    g = torch.Generator().manual_seed(0)
    history = agent.new_history(n)
    history.reset({"state": torch.randn(n, 4, generator=g)})
    for _ in range(3):
        history.push({"state": torch.randn(n, 4, generator=g)}, torch.rand(n, 2, generator=g) * 2 - 1)
    return history.as_dict()


def _set(inputs: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(inputs)
    if path == "state":
        out["obs_hist"]["state"] = value(out["obs_hist"]["state"])
    else:
        out[path] = value(out[path])
    return out


def _poke(x: torch.Tensor, value: float) -> torch.Tensor:
    x = x.clone()
    x.view(-1)[x.numel() - 1] = value
    return x


#: bad input → (how to make it from good inputs, the error type, what the message names)
BAD = {
    "nan-observation": (lambda i: _set(i, "state", lambda x: _poke(x, float("nan"))), NonFiniteError,
                        "observation 'state'"),
    "inf-observation": (lambda i: _set(i, "state", lambda x: _poke(x, float("inf"))), NonFiniteError,
                        "observation 'state'"),
    "nan-previous-action": (lambda i: _set(i, "act_hist", lambda x: _poke(x, float("nan"))), NonFiniteError,
                            "act_hist"),
    "observation-too-wide": (lambda i: _set(i, "state", lambda x: torch.cat([x, x[..., :1]], -1)), ValueError,
                             "obs_hist['state'] has shape"),
    "history-too-short": (lambda i: _set(i, "state", lambda x: x[:, 1:]), ValueError, "obs_hist['state'] has shape"),
    "actions-too-wide": (lambda i: _set(i, "act_hist", lambda x: torch.cat([x, x[..., :1]], -1)), ValueError,
                         "act_hist has shape"),
    "group-missing": (lambda i: {**i, "obs_hist": {"other": i["obs_hist"]["state"]}}, KeyError, "lacks group 'state'"),
    "not-a-history": (lambda i: [i["act_hist"]], TypeError, "must be an ObservationHistory or a dict"),
}


def test_every_registered_agent_is_covered(agents: dict[str, Any]) -> None:
    assert sorted(agents) == AGENTS


@pytest.mark.parametrize("name", AGENTS)
def test_bad_observations_are_refused_and_actions_are_finite(name: str, agents: dict[str, Any]) -> None:
    agent = agents[name]
    inputs = good_inputs(agent)
    for make, error, names in BAD.values():
        with pytest.raises(error, match=re.escape(names)):
            agent.act(make(inputs))
        agent.reset()
    actions = agent.act(inputs)
    assert actions.shape == (3, 2) and bool(torch.isfinite(actions).all())

    broken = copy.deepcopy(agent)  # NaN weights: the agent raises rather than emit a non-finite action
    with torch.no_grad():
        for module in (m for m in vars(broken).values() if isinstance(m, nn.Module)):
            for p in module.parameters():
                p.fill_(float("nan"))
    broken.reset()
    with pytest.raises(NonFiniteError, match="non-finite"):
        broken.act(inputs)


@pytest.mark.parametrize("name", AGENTS)
def test_freeze_policies_are_checked_before_any_work(name: str, agents: dict[str, Any]) -> None:
    """What the adaptation loop asks every agent before collecting: its own freeze policy passes, a policy it
    cannot finetune with, or none at all, raises a ValueError naming it."""
    agent = agents[name]
    agent.check_freeze("dynamics_only" if agent.plans else "heads_only")
    with pytest.raises(ValueError, match="freeze='no-such-policy'"):
        agent.check_freeze("no-such-policy")
    if not agent.plans:  # the baselines refuse SimDist's default (they have no dynamics to train)
        with pytest.raises(ValueError, match="freeze='dynamics_only'"):
            agent.check_freeze("dynamics_only")
