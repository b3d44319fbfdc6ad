"""Expert export/loading: round trip against rsl-rl's own inference, critic values, set selection."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

pytest.importorskip("rsl_rl")
pytest.importorskip("mujoco.batch")

from tensordict import TensorDict  # noqa: E402

from simdist.experts import (  # noqa: E402
    Critic,
    ExpertPolicy,
    export_expert,
    export_expert_set,
    load_expert_set,
    load_policy,
    read_metadata,
    select_iterations,
)


@pytest.fixture(scope="module")
def ppo_run(tmp_path_factory: pytest.TempPathFactory, single_thread: None) -> tuple[Path, Any]:
    """One PPO iteration with 8 envs (a real rsl-rl checkpoint, ~3 s)."""
    from simdist.components.tasks.go2.ppo import ppo_config, train

    log_dir = tmp_path_factory.mktemp("ppo")
    runner = train(log_dir, 1, num_envs=8, cfg=ppo_config(save_interval=1, num_steps_per_env=8))
    return log_dir, runner


def _obs(n: int = 16) -> np.ndarray:
    from simdist.components.tasks.go2 import Go2Env

    env = Go2Env(n, seed=3)
    env.reset()
    rng = np.random.default_rng(0)
    for _ in range(5):
        res = env.step(rng.normal(size=(n, 12)).astype(np.float32))
    return res.obs["privileged"]


def test_round_trip_matches_rsl_rl(ppo_run: tuple[Path, Any], tmp_path: Path) -> None:
    log_dir, runner = ppo_run
    ckpt = log_dir / "model_0.pt"
    meta = export_expert(ckpt, tmp_path / "e.safetensors", with_critic=True)
    assert meta["obs_dim"] == 433 and meta["action_dim"] == 12 and meta["hidden_dims"] == [128, 128, 128]
    assert json.loads((tmp_path / "e.json").read_text()) == read_metadata(tmp_path / "e.safetensors")
    obs = _obs()
    td = TensorDict({"policy": torch.from_numpy(obs)}, batch_size=[len(obs)])
    policy = ExpertPolicy.load(tmp_path / "e.safetensors")
    with torch.inference_mode():
        ref_a = runner.get_inference_policy()(td).numpy()
        ref_v = runner.alg.critic(td).numpy().reshape(-1)
    a = policy({"privileged": obs, "proprio": np.zeros((len(obs), 35))})
    assert a.shape == (16, 12) and a.dtype == np.float32
    np.testing.assert_allclose(a, ref_a, rtol=1e-5, atol=1e-5)
    assert np.abs(ref_a).max() > 1e-3  # not a trivial comparison
    v = Critic.load(tmp_path / "e.safetensors")({"privileged": obs}, np.zeros((16, 3)))
    assert v.shape == (16,)
    np.testing.assert_allclose(v, ref_v, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(policy({"privileged": obs}), a)  # deterministic
    with pytest.raises(ValueError, match="no critic"):
        export_expert(ckpt, tmp_path / "a.safetensors")
        Critic.load(tmp_path / "a.safetensors")


def test_select_iterations() -> None:
    avail = [0, 50, 100, 150, 250, 300, 350, 900]
    expert, chosen, skipped = select_iterations(avail, (0, 50, 200, 400, 500, 1000, 2000))
    assert expert == 900
    assert chosen == {0: 0, 50: 50, 200: 150, 400: 350, 500: 350}  # 200: tie 150/250 -> lower
    assert skipped == [1000, 2000]
    expert, chosen, skipped = select_iterations(avail, (0, 300, 400), expert=310)
    assert expert == 300 and chosen == {0: 0} and skipped == [300, 400]
    with pytest.raises(FileNotFoundError):
        select_iterations([], (0,))


def test_export_set(ppo_run: tuple[Path, Any], tmp_path: Path) -> None:
    log_dir, _ = ppo_run
    run = tmp_path / "run"
    run.mkdir()
    for it in (0, 50, 100, 250, 400):
        shutil.copy(log_dir / "model_0.pt", run / f"model_{it}.pt")
    out = tmp_path / "experts"
    manifest = export_expert_set(run, out, iterations=(0, 50, 150, 200, 300, 1000))
    assert manifest["expert"]["iteration"] == 400
    assert [(s["iteration"], s["requested"]) for s in manifest["suboptimal"]] == [
        (0, [0]), (50, [50]), (100, [150]), (250, [200, 300])]
    assert manifest["skipped"] == [1000]
    assert json.loads((out / "manifest.json").read_text()) == manifest
    total = sum(p.stat().st_size for p in out.iterdir())
    assert total < 6 * 400_000  # ~0.36 MB per actor or critic (4 + expert actor + critic)
    es = load_expert_set(out)
    assert es.expert.name == "expert_400" and [p.name for p in es.suboptimal] == [
        "policy_0", "policy_50", "policy_100", "policy_250"]
    obs = {"privileged": np.zeros((2, 433), np.float32)}
    assert es.critic(obs, None).shape == (2,)
    np.testing.assert_array_equal(load_policy(out)(obs), es.expert(obs))
    export_expert_set(run, out, iterations=(0,))  # re-export replaces the folder atomically
    assert sorted(p.name for p in out.glob("*.safetensors")) == ["expert.safetensors", "policy_0.safetensors"]
    assert not list(tmp_path.glob(".experts*"))


def test_every_expert_trainer_takes_the_same_export_options() -> None:
    """Gymnasium and Go2 declare ``--save-interval``, ``--seed``, ``--export``, ``--suboptimal`` and ``--expert``
    through one helper, each with its own defaults; ``export_request`` reads them back."""
    import argparse

    from simdist.experts import add_export_arguments, export_request

    parsers = {}
    for name, interval in (("gym", 25), ("go2", 50)):
        parser = argparse.ArgumentParser()
        add_export_arguments(parser, save_interval=interval, suboptimal_default="the task's ladder")
        parsers[name] = parser
        args = parser.parse_args([])
        assert (args.save_interval, args.seed, args.export, args.suboptimal, args.expert) == (
            interval, 42, None, None, "latest")
        assert export_request(args) == (None, "latest")
    args = parsers["go2"].parse_args(["--suboptimal", "0,50,100", "--expert", "200", "--export", "out"])
    assert export_request(args) == ((0, 50, 100), 200)
    with pytest.raises(SystemExit):
        parsers["gym"].parse_args(["--save-interval", "0"])
