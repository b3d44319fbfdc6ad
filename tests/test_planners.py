"""Planners (MPPI, naive MPPI, base policy) and the rolling ObservationHistory, on tiny models (CPU)."""

from __future__ import annotations

import contextlib
import copy
import threading

import numpy as np
import pytest
import torch

import simdist
from simdist import WorldModel, WorldModelConfig
from simdist.components.planners.mppi import MPPIPlanner, NaiveMPPIPlanner
from simdist.components.planners.policy import PolicyPlanner
from simdist.model.types import Imagination
from simdist.planning import ObservationHistory, discounted_return, execution

SMALL = dict(num_samples=32, iterations=2, num_elites=8)


def tiny_config(mlp: bool = False, policy: bool = True, command_dim: int = 1, **overrides
                ) -> WorldModelConfig:
    tf = {"name": "transformer", "kwargs": {"num_layers": 1, "num_heads": 2}}
    small_mlp = {"name": "mlp", "kwargs": {"hidden": [32]}}
    cfg = WorldModelConfig(
        obs_spec={"state": [6]}, action_dim=2, command_dim=command_dim, history=4, horizon=5, latent_dim=16,
        encoder=small_mlp, dynamics=small_mlp if mlp else tf,
        reward_head=small_mlp if mlp else tf, value_head=small_mlp if mlp else tf,
        policy_head=tf if policy else None,
    )
    return cfg.replace(**overrides) if overrides else cfg


def tiny_model(seed: int = 0, **kw) -> WorldModel:
    torch.manual_seed(seed)
    return WorldModel(tiny_config(**kw))


def history_for(wm: WorldModel, batch: int, seed: int = 1) -> ObservationHistory:
    g = torch.Generator().manual_seed(seed)
    hist = ObservationHistory.for_model(wm, batch)
    obs = {k: torch.randn(batch, *s, generator=g) for k, s in wm.config.obs_spec.items()}
    cmd = torch.randn(batch, wm.config.command_dim, generator=g)
    hist.reset(obs, command=cmd)
    for _ in range(3):
        obs = {k: torch.randn(batch, *s, generator=g) for k, s in wm.config.obs_spec.items()}
        hist.push(obs, torch.randn(batch, wm.config.action_dim, generator=g))
    return hist


pytestmark = pytest.mark.usefixtures("single_thread")


@pytest.fixture(scope="module")
def wm() -> WorldModel:
    return tiny_model()


# ---------------------------------------------------------------------- ObservationHistory
def test_history_reset_push_order_and_numpy():
    hist = ObservationHistory({"state": [2]}, action_dim=1, command_dim=2, history=3, num_envs=2)
    first = {"state": np.array([[1.0, 1.0], [2.0, 2.0]]), "ignored": np.zeros(3)}
    hist.reset(first, command=[[1, 2], [3, 4]])
    obs, act, cmd = hist.as_inputs()
    assert obs["state"].shape == (2, 4, 2) and act.shape == (2, 3, 1) and cmd.shape == (2, 2)
    assert obs["state"].dtype == torch.float32 and torch.all(obs["state"][1] == 2.0) and torch.all(act == 0)
    hist.push({"state": torch.full((2, 2), 5.0)}, np.array([[7.0], [8.0]]))
    obs, act, _ = hist.as_inputs()
    assert torch.all(obs["state"][:, -1] == 5.0) and torch.all(obs["state"][0, :-1] == 1.0)
    assert act[:, -1, 0].tolist() == [7.0, 8.0] and torch.all(act[:, :-1] == 0)
    hist.reset({"state": torch.zeros(1, 2)}, ids=[1])  # partial reset leaves env 0 alone
    obs, act, cmd = hist.as_inputs()
    assert torch.all(obs["state"][1] == 0) and torch.all(act[1] == 0) and torch.all(cmd[1] == 0)
    assert obs["state"][0, -1, 0] == 5.0 and cmd[0].tolist() == [1.0, 2.0]
    obs["state"].zero_()  # outputs are copies
    assert hist.obs["state"][0, -1, 0] == 5.0


def test_history_validation():
    hist = ObservationHistory({"state": [2]}, action_dim=1, history=2, num_envs=2)
    with pytest.raises(RuntimeError, match="never reset"):
        hist.as_inputs()
    with pytest.raises(KeyError, match="state"):
        hist.reset({"other": np.zeros((2, 2))})
    with pytest.raises(ValueError, match="shape"):
        hist.reset({"state": np.zeros((2, 3))})
    hist.reset({"state": np.zeros((2, 2))})
    with pytest.raises(ValueError, match="prev_action"):
        hist.push({"state": np.zeros((2, 2))}, np.zeros((2, 2)))
    with pytest.raises(IndexError):
        hist.reset({"state": np.zeros((1, 2))}, ids=[5])


# ---------------------------------------------------------------------- shapes and API
@pytest.mark.parametrize("mlp", [False, True])
@pytest.mark.parametrize("batch", [1, 3])
def test_shapes(mlp, batch):
    model = tiny_model(mlp=mlp)
    hist = history_for(model, batch)
    res = MPPIPlanner(model, **SMALL).plan(hist)
    assert res.action.shape == (batch, 2) and res.plan.shape == (batch, 5, 2)
    assert res.returns.shape == (batch,)
    assert res.diagnostics["std"].shape == (batch, 5, 2)
    assert torch.equal(res.action, res.plan[:, 0]) and torch.isfinite(res.plan).all()
    pol = PolicyPlanner(model, score=True).plan(hist)
    assert pol.action.shape == (batch, 2) and pol.plan.shape == (batch, 5, 2)
    assert pol.returns.shape == (batch,)


def test_create_dict_input_and_modes(wm):
    planner = simdist.create("planner", "mppi", world_model=wm, **SMALL)
    assert isinstance(planner, MPPIPlanner) and planner.num_policy_samples == int(32 * 0.05)
    d = MPPIPlanner(wm)
    assert (d.num_samples, d.num_policy_samples, d.iterations, d.num_elites) == (450, 22, 8, 64)
    assert (d.temperature, d.init_std, d.min_std, d.max_std, d.discount) == (0.25, 2.0, 0.05, 2.0, 0.99)
    assert (d.base_act_std, d.momentum, d.seed, d.warm_start) == (0.05, 0.0, 42, "shift")
    obs, act, cmd = history_for(wm, 2).as_inputs()
    wm.train()
    out = planner.act({"obs_hist": {k: v.numpy() for k, v in obs.items()}, "act_hist": act, "command": cmd})
    assert out.shape == (2, 2) and not out.requires_grad
    assert wm.training and wm.encoder.training  # the caller's mode is restored
    wm.eval()
    with pytest.raises(ValueError, match="command"):
        planner.act({"obs_hist": obs, "act_hist": act})
    with pytest.raises(ValueError, match="act_hist"):
        planner.act({"obs_hist": obs, "act_hist": act[:, 1:], "command": cmd})


def test_policyless_commandless_model():
    model = tiny_model(policy=False, command_dim=0)
    planner = MPPIPlanner(model, **SMALL)
    assert planner.num_policy_samples == 0
    obs, act, _ = history_for(model, 2).as_inputs()
    res = planner.plan({"obs_hist": obs, "act_hist": act})
    assert res.plan.shape == (2, 5, 2) and float(res.diagnostics["policy_elite_fraction"].max()) == 0.0
    with pytest.raises(ValueError, match="policy head"):
        PolicyPlanner(model)


# ---------------------------------------------------------------------- determinism, bounds, warm start
def test_seed_determinism(wm):
    hist = history_for(wm, 3)
    a, b = MPPIPlanner(wm, seed=3, **SMALL), MPPIPlanner(wm, seed=3, **SMALL)
    first = a.plan(hist).plan
    assert torch.equal(first, b.plan(hist).plan)
    assert not torch.allclose(first, MPPIPlanner(wm, seed=4, **SMALL).plan(hist).plan)
    a.plan(hist)  # advances the generator and sets a warm start
    a.reset(seed=3)
    assert torch.equal(a.plan(hist).plan, first)


def test_action_bounds(wm):
    hist = history_for(wm, 2)
    res = MPPIPlanner(wm, action_low=-0.1, action_high=[0.2, 0.3], **SMALL).plan(hist)
    assert float(res.plan.min()) >= -0.1 and bool((res.plan <= torch.tensor([0.2, 0.3])).all())
    bounded = tiny_model(action_low=[-0.05, -0.05], action_high=[0.05, 0.05])
    for planner in (MPPIPlanner(bounded, **SMALL), PolicyPlanner(bounded)):
        assert float(planner.plan(history_for(bounded, 2)).plan.abs().max()) <= 0.05 + 1e-7


def test_warm_start_means(wm):
    prev = torch.arange(2 * 5 * 2, dtype=torch.float32).reshape(2, 5, 2) + 1
    expected = {
        "shift": torch.cat([prev[:, 1:], prev[:, -1:]], dim=1),
        "official": torch.cat([prev[:, -1:], torch.zeros(2, 4, 2)], dim=1),
        "none": torch.zeros(2, 5, 2),
    }
    for mode, want in expected.items():
        planner = MPPIPlanner(wm, warm_start=mode, **SMALL)
        assert torch.equal(planner.warm_start_mean(2), torch.zeros(2, 5, 2))  # nothing to warm-start from
        planner.prev_mean = prev.clone()
        assert torch.equal(planner.warm_start_mean(2), want), mode
        assert torch.equal(planner.warm_start_mean(3), torch.zeros(3, 5, 2))  # batch changed
        planner.reset(ids=[0])
        assert torch.equal(planner.warm_start_mean(2)[0], torch.zeros(5, 2))
    planner = MPPIPlanner(wm, **SMALL)
    res = planner.plan(history_for(wm, 2))
    assert torch.equal(planner.prev_mean, res.plan)
    with pytest.raises(ValueError, match="warm_start"):
        MPPIPlanner(wm, warm_start="roll")


# ---------------------------------------------------------------------- optimisation quality
def test_converges_to_known_optimum(wm, monkeypatch):
    target = torch.tensor([[0.8, -0.5], [0.3, 0.9], [-0.7, 0.2], [0.0, -0.9], [0.6, 0.6]])

    def imagine(encoding, actions, commands=None, *, prepared=None, last_value_only=False):
        rewards = -((actions - target) ** 2).sum(-1)
        return Imagination(latents=actions.new_zeros(*actions.shape[:-1], 1), rewards=rewards,
                           values=torch.zeros_like(rewards))

    monkeypatch.setattr(wm, "imagine", imagine)
    hist = history_for(wm, 2)
    res = MPPIPlanner(wm, warm_start="none").plan(hist)
    assert float((res.plan - target).abs().max()) < 0.1

    def score(plan):
        return discounted_return(-((plan - target) ** 2).sum(-1), torch.zeros(plan.shape[:-1]), 0.99)

    g = torch.Generator().manual_seed(0)
    random_best = score(2.0 * torch.randn(2, 472 * 8, 5, 2, generator=g)).max(dim=1).values
    assert bool((score(res.plan) > random_best).all())


def test_one_iteration_matches_hand_computed_update(wm, monkeypatch):
    """Elites re-fit with w ∝ exp(temperature · (R − R_max)): temperature is an inverse temperature."""
    target = torch.tensor([0.5, -0.5])

    def imagine(encoding, actions, commands=None, *, prepared=None, last_value_only=False):
        rewards = -((actions - target) ** 2).sum(-1)
        return Imagination(latents=actions.new_zeros(*actions.shape[:-1], 1), rewards=rewards,
                           values=torch.ones_like(rewards))

    monkeypatch.setattr(wm, "imagine", imagine)
    planner = MPPIPlanner(wm, num_samples=20, num_policy_samples=0, iterations=1, num_elites=5,
                          temperature=0.7, seed=9)
    res = planner.plan(history_for(wm, 2))
    samples = 2.0 * torch.randn(2, 20, 5, 2, generator=torch.Generator().manual_seed(9))
    rewards = -((samples - target) ** 2).sum(-1)
    returns = (rewards * 0.99 ** torch.arange(5.0)).sum(-1) + 0.99**5  # value_offset 0: γ^T · V̂_last
    top, idx = returns.topk(5, dim=1)
    w = torch.exp(0.7 * (top - top[:, :1]))
    w = w / w.sum(1, keepdim=True)
    elites = samples[torch.arange(2)[:, None], idx]
    mean = (w[..., None, None] * elites).sum(1)
    std = (w[..., None, None] * (elites - mean[:, None]) ** 2).sum(1).sqrt().clamp(0.05, 2.0)
    torch.testing.assert_close(res.plan, mean)
    torch.testing.assert_close(res.diagnostics["std"], std)
    torch.testing.assert_close(res.diagnostics["max_return"], top[:, 0])


# ---------------------------------------------------------------------- computation reuse
def test_encoder_context_policy_once_per_tick(wm, monkeypatch):
    calls = {"encoder": 0, "policy": 0, "prepare": 0}
    hooks = [wm.encoder.register_forward_hook(lambda *_: calls.__setitem__("encoder", calls["encoder"] + 1)),
             wm.policy.register_forward_hook(lambda *_: calls.__setitem__("policy", calls["policy"] + 1))]
    prepare = wm.dynamics.prepare

    def counting_prepare(encoding):
        calls["prepare"] += 1
        return prepare(encoding)

    monkeypatch.setattr(wm.dynamics, "prepare", counting_prepare)
    try:
        hist = history_for(wm, 3)
        for iterations in (1, 4):
            calls.update(encoder=0, policy=0, prepare=0)
            MPPIPlanner(wm, num_samples=40, iterations=iterations).plan(hist)
            assert calls == {"encoder": 1, "policy": 1, "prepare": 1}
        calls.update(encoder=0, policy=0, prepare=0)
        NaiveMPPIPlanner(wm, num_samples=40, iterations=3).plan(hist)
        assert calls["encoder"] == 4 and calls["policy"] == 4  # once for the chunk, then per iteration
    finally:
        for h in hooks:
            h.remove()


@pytest.mark.parametrize("mlp", [False, True])
def test_naive_matches_fast(mlp):
    model = tiny_model(mlp=mlp)
    hist = history_for(model, 3)
    fast, naive = MPPIPlanner(model, num_samples=64, iterations=3), simdist.create(
        "planner", "mppi_naive", world_model=model, num_samples=64, iterations=3)
    for _ in range(2):  # second tick exercises the warm start too
        a, b = fast.plan(hist), naive.plan(hist)
        torch.testing.assert_close(a.plan, b.plan, atol=1e-4, rtol=0)
        torch.testing.assert_close(a.returns, b.returns, atol=1e-4, rtol=1e-4)


def test_policy_planner_returns_chunk(wm):
    hist = history_for(wm, 3)
    res = simdist.create("planner", "policy", world_model=wm).plan(hist)
    obs, act, cmd = hist.as_inputs()
    with torch.no_grad():
        chunk = wm.policy_actions(wm.encode(obs, act), cmd)
    torch.testing.assert_close(res.plan, chunk)
    torch.testing.assert_close(res.action, chunk[:, 0])


def test_go2_preset_one_tick():
    torch.manual_seed(0)
    model = WorldModel.from_preset("go2")
    hist = history_for(model, 1)
    res = MPPIPlanner(model, num_samples=16, iterations=2).plan(hist)
    assert res.action.shape == (1, 12) and res.plan.shape == (1, 25, 12) and torch.isfinite(res.plan).all()


@pytest.mark.parametrize("num_layers", [1, 2])
def test_value_head_last_position_only_matches_full(num_layers):
    """The planner's last-value shortcut equals the full head's last output (both head types)."""
    for mlp in (False, True):
        cfg = tiny_config(mlp=mlp)
        if not mlp:
            cfg = cfg.replace(value_head={"name": "transformer", "kwargs": {"num_layers": num_layers, "num_heads": 2}})
        torch.manual_seed(3)
        model = WorldModel(cfg).eval()
        lat = torch.randn(3, 4, 6, 16)
        act, cmd = torch.randn(3, 4, 5, 2), torch.randn(3, 4, 6, 1)
        with torch.no_grad():
            full, last = model.value(lat, act, cmd), model.value.forward_last(lat, act, cmd)
        assert last.shape == (3, 4, 1)
        torch.testing.assert_close(last, full[..., -1:], atol=1e-5, rtol=1e-5)


@contextlib.contextmanager
def torch_threads(n: int):
    """The test's own thread count (a user's setting), restored afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def fresh_thread_torch_threads() -> int:
    """What ``torch.get_num_threads()`` says on a thread started now (the process-wide default)."""
    seen: list[int] = []
    thread = threading.Thread(target=lambda: seen.append(torch.get_num_threads()))
    thread.start()
    thread.join()
    return seen[0]


def test_parallel_chunk_scoring_matches_serial(wm):
    """Scoring chunks on the planner's threads gives the serial plan and leaves torch's thread count alone."""
    with torch_threads(2):
        hist = history_for(wm, 3)
        kw = dict(num_samples=40, iterations=3, num_elites=8, score_chunk=16, seed=5)
        serial = MPPIPlanner(wm, parallel_chunks=False, **kw).plan(hist)
        parallel = MPPIPlanner(wm, parallel_chunks=True, **kw).plan(hist)
        assert torch.get_num_threads() == 2
    torch.testing.assert_close(parallel.plan, serial.plan, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(parallel.returns, serial.returns, atol=1e-5, rtol=1e-5)


def test_plans_do_not_depend_on_the_callers_thread_count(wm):
    """On private single-threaded threads (T > 1) a tick computes what a single-threaded caller computes."""
    hist = history_for(wm, 3)
    kw = dict(num_samples=40, iterations=3, num_elites=8, score_chunk=16, seed=5)
    plans = {}
    for threads in (1, 2):
        with torch_threads(threads):
            planner = MPPIPlanner(wm, **kw)
            plans[threads] = torch.stack([planner.plan(hist).plan for _ in range(2)])
    assert torch.equal(plans[1], plans[2])


@pytest.mark.parametrize("parallel", [True, False])
@pytest.mark.parametrize("threads", [1, 2])
def test_act_leaves_global_torch_settings_alone(wm, parallel, threads):
    """From the user's view torch's settings stay as they are during and after ``act``: on the calling
    thread (read in a forward hook), for threads started meanwhile (the process-wide default) and after."""
    seen: list[tuple[str, int, int, bool]] = []

    def hook(module, args, output):
        seen.append((threading.current_thread().name, torch.get_num_threads(), fresh_thread_torch_threads(),
                     torch.is_grad_enabled()))

    handles = [wm.encoder.register_forward_hook(hook), wm.dynamics.register_forward_hook(hook)]
    interop = torch.get_num_interop_threads()
    try:
        with torch_threads(threads):
            planner = MPPIPlanner(wm, num_samples=40, iterations=2, num_elites=8, score_chunk=16,
                                  parallel_chunks=parallel)
            hist = history_for(wm, 3)
            for _ in range(2):
                planner.act(hist)
            assert torch.get_num_threads() == threads and fresh_thread_torch_threads() == threads
            assert torch.get_num_interop_threads() == interop and torch.is_grad_enabled()
    finally:
        for h in handles:
            h.remove()
    caller = threading.current_thread().name
    assert all(fresh == threads for _, _, fresh, _ in seen)  # the default for new threads never changed
    assert {name for name, *_ in seen} <= {caller, "simdist-tick_0", "simdist-score_0", "simdist-score_1"}
    assert all(mine == threads for name, mine, _, _ in seen if name == caller)
    assert all(mine == 1 for name, mine, _, _ in seen if name != caller)  # the planner's own threads
    assert not any(grad for *_, grad in seen)  # planning runs without gradients wherever it runs
    private = threads > 1 and parallel and execution.thread_limits_available()
    assert any(name.startswith("simdist-score") for name, *_ in seen) == private
    assert all(name != caller for name, *_ in seen) == private


def test_executor_chunks_and_validation():
    calls: list[int] = []

    def score(actions, offset):
        calls.append(actions.shape[1])
        return actions.sum((-1, -2)) + offset

    actions = torch.randn(2, 10, 3, 2)
    ex = execution.TickExecutor(score, chunk=6)
    torch.testing.assert_close(ex.score(actions, 1.0), actions.sum((-1, -2)) + 1.0)
    assert calls == [3, 3, 2, 2]  # ceil(20 / 6) = 4 chunks along the samples
    calls.clear()
    with torch_threads(2):
        out = ex.run(torch.device("cpu"), ex.score, actions, 0.0)
    torch.testing.assert_close(out, actions.sum((-1, -2)))
    assert sorted(calls) == [2, 2, 3, 3]
    ex.close()
    assert "chunk=6" in repr(ex)
    planner = MPPIPlanner(tiny_model(), **SMALL)
    with torch_threads(2):
        planner.plan(history_for(planner.world_model, 2))  # starts the planner's threads
    twin = copy.deepcopy(planner)  # settings and state copy; threads do not
    assert twin.executor._tick_pool is None and torch.equal(twin.prev_mean, planner.prev_mean)
    assert twin.executor.score_fn.__self__ is twin
    with pytest.raises(ValueError, match="score_chunk"):
        MPPIPlanner(tiny_model(), score_chunk=0)


@pytest.mark.slow
def test_compiled_scoring_matches_eager(wm):
    """``compile=True`` (chunked, on worker threads) plans what the eager planner plans."""
    hist = history_for(wm, 2)
    kw = dict(num_samples=40, iterations=2, num_elites=8, score_chunk=20, seed=3)
    eager = MPPIPlanner(wm, **kw).plan(hist)
    compiled = MPPIPlanner(wm, compile=True, **kw).plan(hist)
    torch.testing.assert_close(compiled.plan, eager.plan, atol=1e-4, rtol=1e-4)


def test_policy_warm_start_centres_samples_on_the_policy_chunk(wm):
    """``warm_start="policy"``: with a tiny std every sample (hence the plan) stays at the policy's chunk."""
    hist = history_for(wm, 2)
    planner = MPPIPlanner(wm, num_samples=8, num_policy_samples=0, iterations=1, num_elites=2, init_std=1e-6,
                          min_std=1e-6, warm_start="policy")
    res = planner.plan(hist)
    obs, act, cmd = hist.as_inputs()
    chunk = planner.clip(wm.policy_actions(wm.encode(obs, act), cmd))
    torch.testing.assert_close(res.plan, chunk, atol=1e-4, rtol=1e-4)
    with pytest.raises(ValueError, match="policy head"):
        MPPIPlanner(tiny_model(policy=False), warm_start="policy")


def test_planner_policy_keeps_the_history_a_rollout_would(wm):
    """``PlannerPolicy`` behind the expert interface acts as the planner on a hand-kept history."""
    from simdist.planning import ObservationHistory, PlannerPolicy

    planner = simdist.create("planner", "policy", world_model=wm)
    actor = PlannerPolicy(planner, num_envs=3)
    manual = ObservationHistory.for_model(wm, num_envs=3)
    rng = np.random.default_rng(0)

    def observe() -> dict:
        return {"state": rng.normal(size=(3, 6)).astype(np.float32),
                "command": rng.normal(size=(3, 1)).astype(np.float32), "extra": np.zeros((3, 7))}

    obs = observe()
    manual.reset(obs, command=obs["command"])
    for t in range(12):
        actions = actor(obs)
        np.testing.assert_allclose(actions, planner.act(manual).numpy(), rtol=1e-5, atol=1e-6)
        applied = actions + rng.normal(size=actions.shape).astype(np.float32)  # e.g. noise on top
        actor.record(applied)
        obs = observe()
        manual.push(obs, applied, command=obs["command"])
        if t in (4, 8):  # an episode ends for env 1 (and for every env once)
            ids = [1] if t == 4 else [0, 1, 2]
            actor.reset(ids)
            manual.reset({"state": obs["state"][ids]}, ids=ids, command=obs["command"][ids])
    actor(obs)
    with pytest.raises(RuntimeError, match="record"):
        actor(obs)
    with pytest.raises(KeyError, match="command"):
        PlannerPolicy(planner, num_envs=3)({"state": obs["state"]})


def test_planner_policy_plans_for_rows_only_with_a_stateless_planner(wm):
    from simdist.planning import PlannerPolicy

    rng = np.random.default_rng(0)
    whole = PlannerPolicy(simdist.create("planner", "policy", world_model=wm), num_envs=4)
    some = PlannerPolicy(simdist.create("planner", "policy", world_model=wm), num_envs=4)
    assert some.plans_rows
    for t in range(5):
        obs = {"state": rng.normal(size=(4, 6)).astype(np.float32),
               "command": rng.normal(size=(4, 1)).astype(np.float32)}
        mask = np.array([True, False, t % 2 == 0, True])
        full = whole(obs)
        np.testing.assert_allclose(some(obs, rows=mask), full[mask], rtol=1e-5, atol=1e-6)
        whole.record(full)
        some.record(full)  # the same applied actions: the same histories
    assert some(obs, rows=np.zeros(4, bool)).shape == (0, wm.config.action_dim)  # the history still steps
    full = whole(obs)
    whole.record(full)
    some.record(full)
    np.testing.assert_allclose(some(obs, rows=[3, 0]), whole(obs)[[3, 0]], rtol=1e-5, atol=1e-6)
    mppi = PlannerPolicy(simdist.create("planner", "mppi", world_model=wm, **SMALL), num_envs=4)
    assert not mppi.plans_rows
    with pytest.raises(ValueError, match="per-env state"):
        mppi(obs, rows=mask)


def test_temporal_ensemble_blends_what_recent_plans_say_for_now(wm):
    from simdist.planning.ensemble import TemporalEnsemble

    policy = simdist.create("planner", "policy", world_model=wm)
    ens = TemporalEnsemble(simdist.create("planner", "policy", world_model=wm), decay=0.5)
    hists = [history_for(wm, 2, seed=s) for s in (1, 2, 3)]
    plans = [policy.plan(h).plan for h in hists]
    torch.testing.assert_close(ens.act(hists[0]), plans[0][:, 0])  # one plan: its first action
    ens.act(hists[1])
    expected = (plans[2][:, 0] + 0.5 * plans[1][:, 1] + 0.25 * plans[0][:, 2]) / 1.75
    torch.testing.assert_close(ens.act(hists[2]), expected)
    ens.reset(ids=[1])  # env 1 starts over: only its newest plan counts; env 0 keeps its three
    out = ens.act(hists[0])
    again = policy.plan(hists[0]).plan
    torch.testing.assert_close(out[1], again[1, 0])
    torch.testing.assert_close(out[0], (again[0, 0] + 0.5 * plans[2][0, 1] + 0.25 * plans[1][0, 2]
                                        + 0.125 * plans[0][0, 3]) / 1.875)
    with pytest.raises(ValueError, match="decay"):
        TemporalEnsemble(policy, decay=1.0)


def test_build_planner_from_a_planner_json_mapping(wm):
    from simdist.components.planners.mppi import MPPIPlanner
    from simdist.components.planners.policy import PolicyPlanner
    from simdist.components.planners.presets import REALTIME
    from simdist.planning import TemporalEnsemble, build_planner
    from simdist.planning.settings import stated_settings

    settings = {"planner": "mppi", **stated_settings(REALTIME), "temporal_ensemble": 0.8}
    planner = build_planner(wm, settings)
    assert isinstance(planner, TemporalEnsemble) and isinstance(planner.planner, MPPIPlanner)
    assert planner.decay == 0.8 and planner.num_samples == REALTIME.num_samples  # settings reach the planner
    assert settings["temporal_ensemble"] == 0.8  # the caller's mapping is left as it was
    assert isinstance(build_planner(wm, {"planner": "policy"}), PolicyPlanner)
    assert build_planner(wm, {"planner": "policy"}).act(history_for(wm, 2)).shape == (2, wm.config.action_dim)
    with pytest.raises(TypeError, match="num_sample"):
        build_planner(wm, {"num_sample": 16})


def test_shadow_planners_measure_how_far_a_change_moves_the_executed_action(wm):
    from simdist.planning import ShadowPlanners

    def mppi(model: WorldModel, seed: int = 0) -> MPPIPlanner:
        return simdist.create("planner", "mppi", world_model=model, seed=seed, **SMALL)

    other = tiny_model(seed=5)  # same spec, other weights: a stand-in for adapted dynamics
    driver = mppi(wm)
    shadow = ShadowPlanners(driver, {"twin": mppi(wm), "other_model": mppi(other), "reseeded": mppi(wm, seed=9)})
    shadow.reset()
    hists = [history_for(wm, 3, seed=s) for s in (1, 2, 3)]
    lone = mppi(wm)
    for hist in hists:  # the driver acts as it would alone; the shadows never change that
        torch.testing.assert_close(shadow.act(hist), lone.act(hist))
    gaps = shadow.gaps()
    assert gaps["twin"] == 0.0  # same model, same seed: the same action
    assert gaps["other_model"] > 0.0 and gaps["reseeded"] > 0.0 and gaps["executed_rms"] > 0.0
    first_tick = shadow.gaps(active_ticks=[1, 1, 1])
    assert first_tick["other_model"] != gaps["other_model"]
    shadow.reset()  # a new run
    with pytest.raises(ValueError, match="no tick"):
        shadow.gaps()
    assert len(shadow.runs) == 2 and shadow.gaps(0) == gaps
    with pytest.raises(ValueError, match="active_ticks has shape"):
        shadow.gaps(0, active_ticks=[1, 1])
    with pytest.raises(ValueError, match="input spec"):
        ShadowPlanners(driver, {"x": mppi(tiny_model(history=3))})


# ---------------------------------------------------------------------- non-finite inputs and models
@pytest.mark.parametrize("planner_name", ["mppi", "policy"])
def test_planners_refuse_non_finite_inputs_naming_env_and_key(wm: WorldModel, planner_name: str) -> None:
    from simdist.planning import NonFiniteError

    planner = simdist.create("planner", planner_name, world_model=wm, **(SMALL if planner_name == "mppi" else {}))
    for key in ("obs", "act", "command"):
        hist = history_for(wm, 3)
        if key == "obs":
            hist.obs["state"][1, -1, 0] = float("nan")
            match = r"observation 'state' is non-finite .* env\(s\) \[1\]"
        elif key == "act":
            hist.actions[2, -1, 0] = float("inf")
            match = r"act_hist .* env\(s\) \[2\]"
        else:
            hist.command[0, 0] = float("nan")
            match = r"command is non-finite .* env\(s\) \[0\]"
        with pytest.raises(NonFiniteError, match=match):
            planner.act(hist)


def test_a_nan_weight_never_reaches_an_actuator(wm: WorldModel) -> None:
    """Every candidate scores NaN: MPPI raises instead of averaging random samples; the policy planner too."""
    from simdist.planning import NonFiniteError

    broken = copy.deepcopy(wm)
    with torch.no_grad():
        for p in (*broken.value.parameters(), *broken.policy.parameters()):
            p.fill_(float("nan"))
    with pytest.raises(NonFiniteError, match="every MPPI candidate scored a non-finite return"):
        simdist.create("planner", "mppi", world_model=broken, **SMALL).act(history_for(broken, 2))
    with pytest.raises(NonFiniteError, match="non-finite actions"):
        simdist.create("planner", "policy", world_model=broken).act(history_for(broken, 2))


def test_fallback_wrapper_substitutes_and_counts(wm: WorldModel) -> None:
    from simdist.planning import FallbackOnNonFinite

    planner = FallbackOnNonFinite(simdist.create("planner", "policy", world_model=wm), fallback=0.0)
    hist = history_for(wm, 3)
    clean = planner.act(hist).clone()
    hist.obs["state"][1, -1, 0] = float("nan")
    out = planner.act(hist)
    assert torch.isfinite(out).all() and torch.equal(out[1], torch.zeros(2)) and planner.fallbacks == 1
    torch.testing.assert_close(out[[0, 2]], clean[[0, 2]])


def test_batched_tick_scores_each_env_as_a_tick_of_its_own(wm):
    """One paper-style tick over three envs (official warm start, policy samples, chunks that cut across envs):
    every candidate it scored has the return the model gives it from that env's history alone."""
    from simdist.benchmarking.measure import random_history
    from simdist.planning.base import eval_mode, plan_score

    hist = random_history(wm, 3, seed=2)
    planner = MPPIPlanner(wm, num_samples=40, iterations=3, num_elites=8, score_chunk=16, seed=5,
                          warm_start="official", keep_candidates=True)
    planner.plan(hist)  # a second tick starts from the official warm start
    result = planner.plan(hist)
    candidates, returns = result.diagnostics["candidates"], result.diagnostics["candidate_returns"]
    assert candidates.shape[:2] == (3, 40 * 3 + planner.num_policy_samples)
    with torch.no_grad(), eval_mode(wm):
        for i in range(3):
            encoding = wm.encode({k: v[i:i + 1] for k, v in hist["obs_hist"].items()}, hist["act_hist"][i:i + 1])
            alone = wm.imagine(encoding, candidates[i:i + 1], hist["command"][i:i + 1], last_value_only=True)
            torch.testing.assert_close(plan_score(alone, planner.discount, wm.config.value_offset), returns[i:i + 1],
                                       atol=1e-5, rtol=1e-5)
