"""The model-free baselines on SimDist's frozen encoder (``iql``, ``rlpd``, ``sgft``): transitions, replay, training,
acting, finetuning and Hub I/O on toy data."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file

from simdist.agents import load_agent
from simdist.components.agents.bc import BCPolicy
from simdist.components.agents.iql import IQLAgent
from simdist.components.agents.latent import Transitions, encode_transitions, mixed_batch
from simdist.components.agents.rlpd import RLPDAgent
from simdist.components.agents.sgft import SGFTAgent
from simdist.data import EpisodeWriter, load_spec
from simdist.data.schema import DataError
from simdist.hub.load import CheckpointError
from simdist.model.config import ConfigError
from tests.helpers import episodes_of as episodes
from tests.helpers import toy_world_model

pytestmark = pytest.mark.usefixtures("single_thread")

TINY = {"batch_size": 32, "hidden": [32, 32]}
AGENTS = {"iql": (IQLAgent, {}), "rlpd": (RLPDAgent, {"utd": 3, "num_critics": 4}),
          "sgft": (SGFTAgent, {"utd": 3, "num_critics": 4})}


@pytest.fixture(scope="module")
def real_data(sim_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four of the episodes as logged real ones: success labels (alternating), no expert flags."""
    out = tmp_path_factory.mktemp("latent") / "real"
    with EpisodeWriter(out, load_spec(str(sim_data)), max_episodes_per_shard=2) as writer:
        for i, ep in enumerate(episodes(sim_data)[:4]):
            writer.write(dataclasses.replace(ep, expert=np.zeros_like(ep.expert),
                                             meta={**ep.meta, "success": i % 2 == 0, "terminated": False}))
    return out


@pytest.fixture(scope="module")
def policy(sim_data: Path) -> BCPolicy:
    wm = toy_world_model(sim_data)
    return BCPolicy.from_world_model(wm, hidden=[32, 32])


def history_of(agent, n: int = 3, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    history = agent.new_history(n)
    history.reset({"state": torch.randn(n, 4, generator=g)})
    history.push({"state": torch.randn(n, 4, generator=g)}, torch.rand(n, 2, generator=g) * 2 - 1)
    return history


def same_weights(a, b) -> bool:
    sa, sb = a.model.state_dict(), b.model.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


# ------------------------------------------------------------------------------------------ transitions
def test_sparse_transitions_count_and_label(policy: BCPolicy, real_data: Path) -> None:
    eps = episodes(real_data)
    t = encode_transitions(policy, eps, rewards="sparse")
    # a success is terminal (all steps kept); a time-out loses its last step (no next observation)
    expected = sum(len(ep) if ep.meta["success"] else len(ep) - 1 for ep in eps)
    assert len(t) == expected
    assert float(t.rewards.sum()) == sum(ep.meta["success"] for ep in eps)
    assert torch.equal(t.terminal, t.rewards > 0)
    assert t.features.shape == (expected, policy.feature_dim) and not t.expert.any()
    first = eps[0]
    own = t.episode_ids == first.episode_id
    assert torch.allclose(t.next_features[own][:-2], t.features[own][1:-1])  # f_{t+1} is the next step's f


def test_agent_transitions_and_iql_advantage_weights(policy: BCPolicy, sim_data: Path, real_data: Path) -> None:
    """An agent's ``transitions`` are its policy's encoding under its own reward labels (or those asked for); IQL's
    ``advantage_weights`` are exp(β(min Q − V)), clipped at 100, so doubling β squares the unclipped ones."""
    agent = IQLAgent.build(policy, rewards="sparse", **TINY)
    eps = episodes(real_data)
    mine, ref = agent.transitions(eps), encode_transitions(policy, eps, rewards="sparse")
    assert all(torch.equal(getattr(mine, f.name), getattr(ref, f.name)) for f in dataclasses.fields(Transitions))
    assert torch.equal(agent.transitions(eps, rewards="logged").rewards,
                       encode_transitions(policy, eps, rewards="logged").rewards)
    batch = agent.encoded_replay().load([sim_data]).take(torch.arange(64))
    w = agent.advantage_weights(batch)
    assert w.shape == (64,) and bool((w > 0).all()) and bool((w <= 100.0).all())
    agent.settings["temperature"] *= 2
    doubled = agent.advantage_weights(batch)
    free = doubled < 100.0
    assert torch.allclose(doubled[free].log(), 2 * w[free].log(), atol=1e-4)


def test_sparse_needs_success_label(policy: BCPolicy, sim_data: Path) -> None:
    ep = episodes(sim_data)[0]
    ep.meta.pop("success", None)
    with pytest.raises(DataError, match=f"episode {ep.episode_id}.*success"):
        encode_transitions(policy, [ep], rewards="sparse")
    with pytest.raises(ValueError, match="rewards must be one of"):
        encode_transitions(policy, [ep], rewards="dense")


def test_mixed_batch_is_exactly_symmetric(policy: BCPolicy, sim_data: Path, real_data: Path) -> None:
    off = encode_transitions(policy, episodes(sim_data), rewards="logged")
    on = encode_transitions(policy, episodes(real_data), rewards="logged")
    on = dataclasses.replace(on, episode_ids=torch.full_like(on.episode_ids, -1))  # mark the online rows
    batch = mixed_batch(off, on, 256, 0.5, torch.Generator().manual_seed(0))
    assert int((batch["episode_ids"] == -1).sum()) == 128
    only = mixed_batch(off, None, 64, 0.5, torch.Generator().manual_seed(0))
    assert int((only["episode_ids"] == -1).sum()) == 0 and len(only["episode_ids"]) == 64
    with pytest.raises(ValueError, match="both"):
        mixed_batch(None, None, 8, 0.5, torch.Generator())
    assert len(Transitions.concat([off, on])) == len(off) + len(on)


# ------------------------------------------------------------------------------------------ agents
@pytest.mark.parametrize("name", sorted(AGENTS))
def test_trains_acts_finetunes_round_trips(name: str, policy: BCPolicy, sim_data: Path, real_data: Path,
                                           tmp_path: Path) -> None:
    cls, extra = AGENTS[name]
    agent = cls.from_bc(policy, rewards="logged", **TINY, **extra)
    # the actor starts as the BC policy: same deterministic actions
    h = history_of(agent)
    obs, acts, cmd = h.as_inputs()
    assert torch.allclose(agent.act(h), policy.act(obs, acts, cmd))
    pre = agent.pretrain(sim_data, updates=12, seed=0)
    assert pre.counters["updates"] == 12 and all(np.isfinite(v) for v in pre.last_metrics.values())
    tuned = pre.finetune(real_data, prior=sim_data, seed=1)
    n_real = len(encode_transitions(policy, episodes(real_data), rewards="logged"))
    assert tuned.counters["online_seen"] == n_real
    assert tuned.counters["updates"] == 12 + tuned.settings["utd"] * n_real  # utd updates per new transition
    again = tuned.finetune(real_data, prior=sim_data, seed=2)
    assert again.counters["updates"] == tuned.counters["updates"]  # nothing new: no update
    # the encoder stays SimDist's; the actor moved
    enc = policy.encoder.state_dict()
    assert all(torch.equal(v, tuned.policy.encoder.state_dict()[k]) for k, v in enc.items())
    assert not torch.equal(tuned.policy.policy[0].weight, policy.policy[0].weight)
    a = tuned.act(h)
    assert a.shape == (3, 2) and (a.abs() <= 1.0 + 1e-6).all()
    # Hub round trip, strict, and an exact continuation from the saved folder
    folder = tuned.save_pretrained(tmp_path / name)
    loaded = load_agent(folder)
    assert type(loaded) is cls and same_weights(loaded, tuned) and loaded.counters == tuned.counters
    assert torch.equal(loaded.act(h), a)
    assert same_weights(tuned.finetune(real_data, updates=5, seed=3), loaded.finetune(real_data, updates=5, seed=3))
    state = load_file(str(folder / "model.safetensors"))
    state["extra"] = torch.zeros(1)
    save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt"})
    with pytest.raises(CheckpointError):
        load_agent(folder)


def test_explore_samples_and_is_seeded(policy: BCPolicy) -> None:
    agent = IQLAgent.from_bc(policy, **TINY)
    h = history_of(agent)
    mean = agent.act(h)
    explorer = agent.with_settings(explore=True, seed=5)
    first = explorer.act(h)
    explorer.reset(seed=5)
    assert torch.equal(explorer.act(h), first) and not torch.allclose(first, mean)
    assert torch.equal(agent.act(h), mean)  # the agent itself still acts with the mean


def test_settings_reach_torchrl(policy: BCPolicy) -> None:
    iql = IQLAgent.from_bc(policy, **TINY).loss_module
    assert (iql.expectile, iql.temperature, iql.loss_function) == (0.9, 10.0, "l2")
    redq = RLPDAgent.from_bc(policy, **TINY).loss_module
    assert (redq.num_qvalue_nets, redq.sub_sample_len, redq.loss_function) == (10, 2, "l2")
    assert float(redq.target_entropy) == -1.0  # −|A| / 2
    norm = redq.qvalue_network_params["module", "net", "1"]  # Linear → LayerNorm → ReLU, one set per critic
    assert norm["weight"].shape == (10, 32) and "bias" in norm.keys()
    plain = iql.qvalue_network_params["module", "net"]
    assert set(plain.keys()) == {"0", "2", "4"} and plain["2", "weight"].shape == (2, 32, 32)  # no LayerNorm


def test_expectile_loss_is_asymmetric(policy: BCPolicy, sim_data: Path) -> None:
    """IQL's value loss weights V below the target critics by τ and above by 1 − τ."""
    agent = IQLAgent.from_bc(policy, rewards="logged", **TINY)
    batch = mixed_batch(encode_transitions(policy, episodes(sim_data), rewards="logged"), None, 64, 0.0,
                        torch.Generator().manual_seed(0))
    from simdist.components.agents.latent.networks import transition_tensordict

    loss = agent.loss_module
    agent.target_updater()
    value = loss.value_network_params["module", "net", "4", "bias"]  # the output layer
    with torch.no_grad():
        value.fill_(100.0)
        over = float(loss(transition_tensordict(batch))["loss_value"])
        value.fill_(-100.0)
        under = float(loss(transition_tensordict(batch))["loss_value"])
    assert under / over == pytest.approx(0.9 / 0.1, rel=0.05)


def test_sgft_shaping_telescopes(policy: BCPolicy, real_data: Path) -> None:
    """Σ γ^t r̃_t over an episode = Σ γ^t r_t + γ^L V_sim(s_L) − V_sim(s_0) (potential-based shaping)."""
    agent = SGFTAgent.from_bc(policy, rewards="logged", **TINY, gamma=0.9)
    ep = episodes(real_data)[1]
    t = encode_transitions(policy, [ep], rewards="logged")
    shaped = agent.rewards(t.take(torch.arange(len(t))))
    disc = 0.9 ** torch.arange(len(t), dtype=torch.float32)
    v = agent.v_sim
    with torch.no_grad():
        v0, vl = v(t.features[:1]).item(), v(t.next_features[-1:]).item()
    expected = float((disc * t.rewards).sum()) + 0.9 ** len(t) * vl - v0
    assert float((disc * shaped).sum()) == pytest.approx(expected, rel=1e-4, abs=1e-4)


def test_sgft_pretrains_only_v_sim(policy: BCPolicy, sim_data: Path) -> None:
    agent = SGFTAgent.from_bc(policy, rewards="logged", **TINY, utd=2, num_critics=3)
    pre = agent.pretrain(sim_data, updates=30, seed=0)
    before, after = agent.model.state_dict(), pre.model.state_dict()
    changed = {k.split(".")[1] for k in before if not torch.equal(before[k], after[k])}
    assert changed == {"v_sim"}
    first, last = pre.last_metrics["loss_v_sim"], None
    more = pre.pretrain(sim_data, updates=60, seed=1)
    last = more.last_metrics["loss_v_sim"]
    assert last < first


def test_bad_settings_name_the_key(policy: BCPolicy, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown settings.*'expectiles'"):
        IQLAgent.from_bc(policy, expectiles=0.8)
    with pytest.raises(ConfigError, match="'utd'"):
        RLPDAgent.from_bc(policy, utd=0)
    with pytest.raises(ConfigError, match="'rewards'"):
        IQLAgent.from_bc(policy, rewards="dense")
    with pytest.raises(ValueError, match="freeze='dynamics_only'"):
        IQLAgent.from_bc(policy, **TINY).finetune(tmp_path, freeze="dynamics_only")
    folder = IQLAgent.from_bc(policy, **TINY).save_pretrained(tmp_path / "iql")
    with pytest.raises(ConfigError, match="not a 'rlpd' one"):
        RLPDAgent.from_pretrained(folder)


# ------------------------------------------------------------------------------------------ protocol pieces
def test_bc_start_on_the_frozen_encoder(sim_data: Path, tmp_path: Path) -> None:
    """Single-step BC on SimDist's encoder: the encoder and normaliser are the world model's, only the head trains."""
    from simdist.components.agents.bc import BCAgent

    wm = toy_world_model(sim_data)
    agent = BCAgent.train_on_encoder(sim_data, wm, hidden=[16], steps=8, batch_size=16, out=tmp_path)
    assert all(torch.equal(v, agent.policy.encoder.state_dict()[k]) for k, v in wm.encoder.state_dict().items())
    assert torch.equal(agent.policy.normalizer.mean("actions"), wm.normalizer.mean("actions"))
    assert len(agent.train_losses) == 8


def test_simulation_episodes_carry_success_and_real_logs_termination(sim_data: Path) -> None:
    """The data engine records the env's success at the episode's end (the sparse label of the simulation data)
    and rollouts record whether an episode terminated (a true end, mask 0)."""
    from simdist.components.tasks.toy_reach import ToyReachTask
    from simdist.components.tasks.toy_reach.constants import SUCCESS_RADIUS

    eps = episodes(sim_data)
    assert all(isinstance(ep.meta["success"], bool) for ep in eps)
    task = ToyReachTask()
    from simdist.workflows.rollout import collect_episodes

    logged, ok = collect_episodes(task, task.builtin_agent("expert"), 3, 3, seed=0)
    assert all("terminated" in ep.meta for ep in logged) and len(ok) == 3
    assert SUCCESS_RADIUS == 0.15


def test_seeds_bootstrap_interval() -> None:
    from simdist.evaluation import seeds_bootstrap_ci

    est = seeds_bootstrap_ci([[1, 1, 0, 1], [0, 0, 0, 1], [1, 1, 1, 1]])
    assert est.mean == pytest.approx((0.75 + 0.25 + 1.0) / 3) and est.n == 12
    assert est.low < est.mean < est.high and 0.0 <= est.low and est.high <= 1.0
    tight = seeds_bootstrap_ci([[1, 0] * 50, [0, 1] * 50, [1, 0] * 50])
    assert tight.high - tight.low < est.high - est.low
    with pytest.raises(ValueError, match="non-finite"):
        seeds_bootstrap_ci([[float("nan")]])


def test_loads_through_the_zoo(policy: BCPolicy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A baseline bundled in a zoo loads by its repo id offline, and the zoo lists its type."""
    import json as _json

    from simdist import zoo
    from simdist.tools.zoo import describe

    root = tmp_path / "zoo"
    agent = RLPDAgent.from_bc(policy, **TINY, num_critics=3)
    agent.save_pretrained(root / "models" / "toy-rlpd")
    entry = {"name": "toy-rlpd", "repo_id": "simdist/toy-rlpd", "task": "toy", "architecture": "toy",
             "recipe": "results/baselines/compare.py", "status": "available", "folder": "models/toy-rlpd"}
    (root / zoo.INDEX_NAME).write_text(_json.dumps({"schema_version": 1, "models": [entry]}))
    monkeypatch.setenv(zoo.ENV_VAR, str(root))
    loaded = load_agent("simdist/toy-rlpd")
    assert type(loaded) is RLPDAgent and same_weights(loaded, agent)
    row = describe(zoo.find("toy-rlpd"))
    assert row["type"] == "rlpd" and row["bundled"] and row["parameters"] > 0


def test_model_rewards_label_with_the_reward_head(policy: BCPolicy, sim_data: Path, tmp_path: Path) -> None:
    """rewards='model': R_θ of each step, as the world model predicts it for that step's window."""
    from simdist.components.agents.latent.rewards import model_rewards
    from simdist.data import gather_windows
    from simdist.data.schema import front_pad

    torch.manual_seed(0)
    wm = toy_world_model(sim_data)
    wm.eval()
    ep = episodes(sim_data)[0]
    r = model_rewards(wm, ep)
    assert r.shape == (len(ep),) and np.isfinite(r).all()
    h, t, step = wm.config.history, wm.config.horizon, 10
    w = gather_windows(front_pad(ep, h), np.array([step]), h, t, value_offset=wm.config.value_offset)
    batch = {k: ({g: torch.from_numpy(x) for g, x in v.items()} if isinstance(v, dict) else torch.from_numpy(
        np.asarray(v, np.float32))) for k, v in w.items()}
    with torch.no_grad():
        pred = wm.predict(batch, heads=True).rewards[:, :1].unsqueeze(-1)
    assert r[step] == pytest.approx(float(wm.normalizer.denormalize("rewards", pred).reshape(-1)[0]), abs=1e-5)
    folder = wm.save_pretrained(tmp_path / "wm")
    agent = IQLAgent.from_bc(BCPolicy.from_world_model(wm, hidden=[16]), rewards="model", reward_model=str(folder),
                             **TINY)
    assert torch.allclose(agent.encoded_replay().load(sim_data).rewards[: len(ep) - 1], torch.from_numpy(r[:-1]))
    with pytest.raises(ConfigError, match="reward_model"):
        IQLAgent.from_bc(policy, rewards="model")
