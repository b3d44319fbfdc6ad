"""Generic data engine: roll a batched env with a policy mixture and action perturbation into shards.

Follows SIMDIST.md 4.4 and 3.5:

- **Mixture.** At every (re)set of an env, the expert with probability ``expert_prob``, else one
  sub-optimal policy chosen uniformly. Policies are deterministic callables
  ``policy(obs_dict) -> actions (B, A)``; each policy in use is evaluated on the whole batch and
  its rows are selected, so stateful policies see every step. A policy with ``reset(ids)`` is reset
  at every episode start; ``policy.name`` names it in the episode meta.
- **Perturbation** (:class:`ActionPerturber`). Per env and action dim a σ drawn once from
  ``U[min_noise, max_noise]``; noised windows of ``randint(*noise_window)`` steps alternate with
  clean windows of ``randint(*clean_window)`` steps (upper bound exclusive, as numpy); a fraction
  ``start_noised_prob`` of envs starts noised; ``never_noise_prob`` of envs is never noised; the
  schedule runs on its own, independent of episode resets. Noise is ``a ← a + N(0, σ²)``.
- **Held steps.** An env with an ``action_hold`` attribute ((B,) bool) may ask for zero actions on some
  steps (walk starts: an evaluation's standing reset phase). Those rows apply and record a zero
  action, are neither noised nor expert, and are counted in ``held_fraction``.
- **Student takeover** (optional, a project extension): a ``student`` policy drives expert-assigned envs
  in windows (:class:`TakeoverConfig`); its rows are neither noised nor expert, so the expert's labelled
  steps after each window show it recovering from the states the student reached.
- **Labels.** The *applied* action is recorded (noise included, clipped to the action spec's bounds
  when it has them, since that is what the env applies); ``expert = expert policy AND not noised``;
  rewards as the env returns them (dt-scaled); ``values[i] = V(s_{i+1})``: ``value_fn(post-step obs,
  c_i)`` when given (a critic), else the Monte-Carlo discounted return-to-go from ``s_{i+1}``
  (:func:`mc_values`), truncated at the episode end (no bootstrap, so values shrink towards the
  time limit). Commands ``c_i`` come from the observation group ``command_key``, else
  ``env.commands``, else are empty.
- **Bookkeeping.** Episodes whose observations or rewards become NaN/Inf or whose
  ``info["diverged"]`` is set are dropped and counted (and recorded as dropped in ``dataset.json``).
  Episodes still running when the budget ends are discarded, which keeps episode ids independent
  of the budget. Generation is deterministic for a given seed, so re-running it on the same
  ``out_dir`` resumes: episodes the writer already committed are simulated again but not rewritten.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from simdist.data.recorder import EpisodeRecorder
from simdist.data.schema import DatasetSpec, Episode
from simdist.data.shards import EpisodeWriter

Policy = Callable[[dict[str, np.ndarray]], np.ndarray]
ValueFn = Callable[[dict[str, np.ndarray], np.ndarray], np.ndarray]


def action_hold(env: Any, num_envs: int) -> np.ndarray:
    """A copy of the env's optional ``action_hold`` mask ((num_envs,) bool: the next action must be zero);
    all False when the env has none."""
    held = getattr(env, "action_hold", None)
    if held is None:
        return np.zeros(num_envs, bool)
    return np.array(held, bool).reshape(num_envs)


@dataclass
class PerturbationConfig:
    """Action-perturbation schedule; defaults are the official SimDist values (SIMDIST.md 4.4)."""

    enabled: bool = True
    min_noise: float = 0.05
    max_noise: float = 2.5
    noise_window: tuple[int, int] = (1, 50)
    clean_window: tuple[int, int] = (25, 500)
    start_noised_prob: float = 0.5
    never_noise_prob: float = 0.025
    #: hold one noise draw over each noised window (a persistent push) instead of a fresh draw every step
    hold: bool = False

    @classmethod
    def manipulation(cls, min_noise: float = 0.05, max_noise: float = 1.0) -> PerturbationConfig:
        """The paper's manipulation windows: noised U[1, 5] steps, clean U[5, 10] (σ range: not given in the
        paper; actions in [-1, 1] take U[0.05, 1.0])."""
        return cls(min_noise=min_noise, max_noise=max_noise, noise_window=(1, 6), clean_window=(5, 11))

    @classmethod
    def push(cls, min_noise: float = 0.05, max_noise: float = 0.3) -> PerturbationConfig:
        """Persistent pushes (beyond the paper): one offset drawn per noised window of U[3, 10] steps and held over
        it, clean U[5, 10] steps between; a held offset adds up where actions are relative deltas, so it probes
        what a longer or larger push does (e.g. against joint stiction), which per-step noise averages away."""
        return cls(min_noise=min_noise, max_noise=max_noise, noise_window=(3, 11), clean_window=(5, 11), hold=True)

    def expected_noised_fraction(self) -> float:
        """Long-run fraction of noised steps over all envs."""
        if not self.enabled:
            return 0.0
        mean_noise = (self.noise_window[0] + self.noise_window[1] - 1) / 2
        mean_clean = (self.clean_window[0] + self.clean_window[1] - 1) / 2
        return (1 - self.never_noise_prob) * mean_noise / (mean_noise + mean_clean)


class WindowSchedule:
    """Per env, "on" windows of ``randint(*on_window)`` steps alternating with "off" windows of
    ``randint(*off_window)`` steps (upper bounds exclusive); a fraction ``start_on_prob`` of envs starts on,
    envs in ``never`` stay off. It runs on its own, independent of episode resets."""

    def __init__(self, num_envs: int, on_window: tuple[int, int], off_window: tuple[int, int],
                 start_on_prob: float, never: np.ndarray, rng: np.random.Generator) -> None:
        self.on_window, self.off_window, self.never, self.rng = on_window, off_window, never, rng
        self.on = (rng.random(num_envs) < start_on_prob) & ~never
        self.remaining = np.where(self.on, self._draw(on_window, num_envs), self._draw(off_window, num_envs))

    def _draw(self, window: tuple[int, int], n: int) -> np.ndarray:
        return self.rng.integers(window[0], window[1], n)

    def advance(self) -> None:
        self.remaining -= 1
        flip = self.remaining <= 0
        if flip.any():
            self.on[flip] = ~self.on[flip] & ~self.never[flip]
            n = int(flip.sum())
            self.remaining[flip] = np.where(self.on[flip], self._draw(self.on_window, n),
                                            self._draw(self.off_window, n))


class ActionPerturber:
    """Per-env noise schedule: call :meth:`__call__` once per control step with the clean actions."""

    def __init__(self, config: PerturbationConfig, num_envs: int, action_dim: int,
                 rng: np.random.Generator) -> None:
        self.config, self.rng = config, rng
        self.sigma = rng.uniform(config.min_noise, config.max_noise, (num_envs, action_dim))
        self.never = rng.random(num_envs) < config.never_noise_prob
        if not config.enabled:
            self.never[:] = True
        self.schedule = WindowSchedule(num_envs, config.noise_window, config.clean_window,
                                       config.start_noised_prob, self.never, rng)
        self._held = np.zeros((num_envs, action_dim))
        self._was_noised = np.zeros(num_envs, bool)

    @property
    def noised(self) -> np.ndarray:
        """(B,) bool: which envs the next call noises."""
        return self.schedule.on

    def __call__(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(perturbed actions, noised mask)`` for this step; then advances the schedule."""
        noised = self.noised.copy()
        noise = self.rng.normal(size=actions.shape) * self.sigma
        if self.config.hold:  # a window's first step draws its offset; its later steps repeat it
            fresh = noised & ~self._was_noised
            self._held[fresh] = noise[fresh]
            noise = self._held
        self._was_noised = noised
        out = np.where(noised[:, None], actions + noise, actions).astype(np.float32)
        self.schedule.advance()
        return out, noised


@dataclass
class TakeoverConfig:
    """Student takeover windows (a project extension, not in the official data; off unless a student is
    given): on envs the expert drives, a student policy (e.g. a world model's policy head) acts for
    ``randint(*student_window)`` steps, then the expert takes over for ``randint(*expert_window)`` steps.
    Student steps are recorded as non-expert; the expert's steps after a takeover are labelled, so the
    behaviour-cloning loss sees the expert recover from the states the student drives into (the
    covariate shift DAgger corrects, within the official schema)."""

    student_window: tuple[int, int] = (25, 100)
    expert_window: tuple[int, int] = (50, 200)
    start_student_prob: float = 0.5

    def expected_student_fraction(self) -> float:
        """Long-run fraction of student steps on expert-driven envs."""
        mean_s = (self.student_window[0] + self.student_window[1] - 1) / 2
        mean_e = (self.expert_window[0] + self.expert_window[1] - 1) / 2
        return mean_s / (mean_s + mean_e)


def mc_values(rewards: np.ndarray, gamma: float = 0.99) -> np.ndarray:
    """``values[i] = Σ_{k>i} γ^{k-i-1} r_k``: return-to-go from ``s_{i+1}`` (0 at the last step)."""
    out = np.zeros(len(rewards), np.float64)
    acc = 0.0
    for i in range(len(rewards) - 1, 0, -1):
        acc = float(rewards[i]) + gamma * acc
        out[i - 1] = acc
    return out.astype(np.float32)


def _windows(mask: np.ndarray) -> list[list[int]]:
    """Half-open ``[start, end)`` runs of True in ``mask``."""
    d = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return [[int(s), int(e)] for s, e in zip(np.flatnonzero(d == 1), np.flatnonzero(d == -1))]


def _commands(env: Any, obs: dict[str, np.ndarray], key: str, num_envs: int, dim: int) -> np.ndarray:
    if key in obs:
        c = obs[key]
    elif getattr(env, "commands", None) is not None:
        c = env.commands
    else:
        return np.zeros((num_envs, dim), np.float32)
    return np.asarray(c, np.float32).reshape(num_envs, dim)


def _policy_name(policy: Any, default: str) -> str:
    return str(getattr(policy, "name", default))


def generate(
    env: Any,
    expert: Policy,
    suboptimal: Sequence[Policy],
    *,
    out_dir: str,
    spec: DatasetSpec | None = None,
    steps_per_env: int | None = None,
    total_transitions: int | None = None,
    expert_prob: float = 0.5,
    perturbation: PerturbationConfig | None = None,
    value_fn: ValueFn | None = None,
    gamma: float = 0.99,
    seed: int = 0,
    progress: bool = True,
    command_key: str = "command",
    clip_actions: bool = True,
    writer_kwargs: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
    student: Any = None,
    takeover: TakeoverConfig | None = None,
    first_episode_id: int = 0,
    expert_only: bool = False,
    absorbing_terminations: bool = False,
) -> dict[str, Any]:
    """Generate a dataset in ``out_dir``; returns a summary dict.

    ``student`` (optional) takes over expert-driven envs in the windows of ``takeover`` (see
    :class:`TakeoverConfig`). It is called on the whole batch every step, told every episode start by
    ``reset(ids)`` and, when it has ``record``, the actions applied after each step (a stateful policy
    such as :class:`simdist.planning.PlannerPolicy` keeps its history with them).

    Budget: ``steps_per_env`` control steps of the whole batch, or ``total_transitions`` transitions
    in finished episodes (written, or already present on resume). Exactly one must be given.
    A rerun after an interruption replays the same episodes (ids and seeds depend only on ``seed``) and
    writes only those the folder lacks, so the summary describes the whole dataset either way.
    Summary keys: ``episodes`` and ``transitions`` (in the dataset: written now or by the interrupted
    run), ``written_episodes`` and ``written_transitions`` (by this call), ``skipped_existing`` (episodes
    already present), ``dropped``, ``discarded_unfinished`` (transitions), ``expert_fraction`` (of the
    dataset's transitions with the expert flag), ``expert_episode_fraction``, ``noised_fraction``,
    ``held_fraction`` and ``student_fraction`` (of simulated steps), ``steps`` (env steps), ``seconds``,
    ``transitions_per_s`` (simulated transitions per second), ``simulated_transitions``.
    Episode ids count from ``first_episode_id`` (a part of a larger run takes its own range).
    ``expert_only`` is the paper's expert-only ablation data: every episode the expert's, never perturbed
    (``expert_prob`` 1, perturbation off), so every step is a clean expert step.
    ``absorbing_terminations``: with a ``value_fn``, the value label of a step that ends in a termination is 0 (a
    terminal state has no future), so values bootstrap from the critic on truncations only; off (the default),
    every step takes the critic's value of its post-step observation.
    """
    if (steps_per_env is None) == (total_transitions is None):
        raise ValueError("give exactly one of steps_per_env and total_transitions")
    if expert_only:
        expert_prob, perturbation = 1.0, PerturbationConfig(enabled=False)
    if not 0.0 <= expert_prob <= 1.0:
        raise ValueError(f"expert_prob must be in [0, 1], got {expert_prob}")
    if expert_prob < 1.0 and not suboptimal:
        raise ValueError("expert_prob < 1 needs at least one sub-optimal policy")
    perturbation = perturbation or PerturbationConfig()
    B = int(env.num_envs)
    spec = spec or DatasetSpec.from_env(env)
    A = spec.action_dim
    policies: list[Any] = [expert, *suboptimal]
    names = [_policy_name(expert, "expert")]
    names += [_policy_name(p, f"suboptimal_{k}") for k, p in enumerate(suboptimal)]
    low, high = getattr(env.action_spec, "low", None), getattr(env.action_spec, "high", None)

    ss = np.random.SeedSequence(seed)
    mix_rng, noise_rng = (np.random.default_rng(s) for s in ss.spawn(2))
    perturber = ActionPerturber(perturbation, B, A, noise_rng)
    takeover = takeover or TakeoverConfig()
    takeover_windows = None
    if student is not None:
        takeover_rng = np.random.default_rng(ss.spawn(1)[0])
        takeover_windows = WindowSchedule(B, takeover.student_window, takeover.expert_window,
                                          takeover.start_student_prob, np.zeros(B, bool), takeover_rng)

    def draw_policies(n: int) -> np.ndarray:
        use_expert = mix_rng.random(n) < expert_prob
        sub = 1 + mix_rng.integers(0, max(len(suboptimal), 1), n)
        return np.where(use_expert, 0, sub)

    def reset_policies(ids: np.ndarray) -> None:
        for p in (*policies, student):
            if hasattr(p, "reset"):
                p.reset(ids)

    run_meta = {
        "seed": seed, "expert_prob": expert_prob, "policies": names, "gamma": gamma,
        "perturbation": asdict(perturbation), "value_label": "value_fn" if value_fn else "mc_return",
        "env": type(env).__name__, "num_envs": B, "expert_only": expert_only,
    }
    if absorbing_terminations:
        run_meta["absorbing_terminations"] = True
    if student is not None:
        run_meta["student"] = {"name": _policy_name(student, "student"), **asdict(takeover)}
    writer = EpisodeWriter(out_dir, spec, drop_invalid=True,
                           metadata={"generator": {**run_meta, **(metadata or {})}}, **(writer_kwargs or {}))
    done_ids = writer.completed_episode_ids
    dropped_ids = writer.dropped_episode_ids
    recorder = EpisodeRecorder(B, spec, first_episode_id)
    counts = {"episodes": 0, "transitions": 0, "written_episodes": 0, "written_transitions": 0,
              "skipped_existing": 0, "dropped": 0, "expert_steps": 0,
              "expert_episodes": 0, "noised_steps": 0, "collected": 0,
              "held_steps": 0, "student_steps": 0}
    noised_hist: list[np.ndarray] = []  # per-step noised masks since each env's episode start
    ep_start = np.zeros(B, np.int64)
    bad = np.zeros(B, bool)

    budget = steps_per_env * B if steps_per_env is not None else int(total_transitions)  # type: ignore[arg-type]
    bar = progress_bar(budget, progress)
    obs = env.reset(seed=seed)
    assign = draw_policies(B)
    reset_policies(np.arange(B))
    t, t0 = 0, time.perf_counter()
    try:
        with writer:
            while (t < steps_per_env) if steps_per_env is not None else (counts["collected"] < budget):
                clean = np.zeros((B, A), np.float32)
                for k in np.unique(assign):
                    rows = assign == k
                    clean[rows] = np.asarray(policies[k](obs), np.float32).reshape(B, A)[rows]
                took = np.zeros(B, bool)
                if takeover_windows is not None:
                    took = takeover_windows.on & (assign == 0)
                    if getattr(student, "plans_rows", False):  # plan only for the envs it drives now
                        clean[took] = np.asarray(student(obs, rows=took), np.float32).reshape(-1, A)
                    else:
                        clean[took] = np.asarray(student(obs), np.float32).reshape(B, A)[took]
                    takeover_windows.advance()
                applied, noised = perturber(clean)
                applied[took] = clean[took]  # the student's own actions: neither noised nor expert
                noised = noised & ~took
                if clip_actions and low is not None and high is not None:
                    applied = np.clip(applied, low, high)
                held = action_hold(env, B)
                if held.any():
                    applied[held] = 0.0
                    noised = noised & ~held
                    took = took & ~held
                    counts["held_steps"] += int(held.sum())
                counts["student_steps"] += int(took.sum())
                commands = _commands(env, obs, command_key, B, spec.command_dim)
                res = env.step(applied)
                if hasattr(student, "record"):
                    student.record(applied)
                values = (np.asarray(value_fn(res.obs, commands), np.float32).reshape(B)
                          if value_fn is not None else None)
                if values is not None and absorbing_terminations:
                    values = np.where(np.asarray(res.terminated, bool).reshape(B), np.float32(0.0), values)
                recorder.record(obs, applied, commands, res.reward, values, (assign == 0) & ~noised & ~held & ~took)
                noised_hist.append(noised)
                t += 1
                finite = np.isfinite(np.asarray(res.reward, np.float64))
                for v in res.obs.values():
                    finite &= np.isfinite(np.asarray(v, np.float64)).reshape(B, -1).all(axis=1)
                diverged = ~finite | np.asarray(res.info.get("diverged", np.zeros(B, bool)), bool).reshape(B)
                bad |= diverged
                done = np.asarray(res.terminated, bool) | np.asarray(res.truncated, bool) | diverged
                obs = res.obs
                if done.any():
                    ids = np.flatnonzero(done)
                    metas = _episode_meta(env, ids, assign, names, perturber, res, bad, seed, t)
                    for ep in recorder.finish(ids, metas):
                        e = int(ep.meta["env_id"])
                        mask = np.array([m[e] for m in noised_hist[ep_start[e]:]], bool)
                        _finish_episode(ep, mask, bool(bad[e]), value_fn, gamma, writer, done_ids, dropped_ids,
                                        counts)
                    ep_start[ids] = len(noised_hist)
                    bad[ids] = False
                    obs = env.reset(ids=ids)
                    assign[ids] = draw_policies(len(ids))
                    reset_policies(ids)
                    if ep_start.min() > 0:  # drop history no env needs any more
                        cut = int(ep_start.min())
                        del noised_hist[:cut]
                        ep_start -= cut
                shown = t * B if steps_per_env is not None else min(counts["collected"], budget)
                bar.update(max(0, shown - bar.n))
    finally:
        bar.close()
    seconds = time.perf_counter() - t0
    written = max(counts["transitions"], 1)
    return {
        "episodes": counts["episodes"],
        "transitions": counts["transitions"],
        "written_episodes": counts["written_episodes"],
        "written_transitions": counts["written_transitions"],
        "skipped_existing": counts["skipped_existing"],
        "dropped": counts["dropped"],
        "discarded_unfinished": int(recorder.lengths.sum()),
        "expert_fraction": counts["expert_steps"] / written,
        "expert_episode_fraction": counts["expert_episodes"] / max(counts["episodes"], 1),
        "noised_fraction": counts["noised_steps"] / written,
        "held_fraction": counts["held_steps"] / max(t * B, 1),
        "student_fraction": counts["student_steps"] / max(t * B, 1),
        "steps": t,
        "seconds": seconds,
        "transitions_per_s": t * B / max(seconds, 1e-9),
        "simulated_transitions": t * B,
        "out_dir": str(out_dir),
    }


def _episode_meta(env: Any, ids: np.ndarray, assign: np.ndarray, names: list[str], perturber: ActionPerturber,
                  res: Any, bad: np.ndarray, seed: int, t: int) -> list[dict[str, Any]]:
    env_meta = env.episode_meta(ids) if hasattr(env, "episode_meta") else [{} for _ in ids]
    success = res.info.get("success")  # envs that report it: the sparse reward label of the RL baselines
    if success is not None:
        env_meta = [{**em, "success": bool(np.asarray(success).reshape(-1)[e]) and not bool(bad[e])}
                    for em, e in zip(env_meta, ids)]
    return [
        {
            **em,
            "policy": names[assign[e]],
            "policy_index": int(assign[e]),
            "expert_policy": bool(assign[e] == 0),
            "noise_sigma": perturber.sigma[e].tolist(),
            "never_noised": bool(perturber.never[e]),
            "terminated": bool(res.terminated[e]),
            "truncated": bool(res.truncated[e]),
            "diverged": bool(bad[e]),
            "seed": seed,
            "end_step": t,
        }
        for e, em in zip(ids, env_meta)
    ]


def _finish_episode(ep: Episode, noised: np.ndarray, diverged: bool, value_fn: ValueFn | None, gamma: float,
                    writer: EpisodeWriter, done_ids: set[int], dropped_ids: set[int], counts: dict[str, int]) -> None:
    """Write (or, on resume, recognise) one finished episode and count it.

    An episode an interrupted run already committed is replayed identically, so it counts exactly as it
    did then: towards the budget and the fractions if it was written, as dropped if it was dropped."""
    eid = ep.episode_id
    existing = eid in done_ids
    if existing:
        counts["skipped_existing"] += 1
    if diverged or eid in dropped_ids:
        if not existing:
            writer.record_dropped(eid)
        counts["dropped"] += 1
        return
    if value_fn is None:
        ep.values = mc_values(ep.rewards, gamma)
    ep.meta.update(noised_windows=_windows(noised), noised_fraction=float(noised.mean()),
                   episode_return=float(ep.rewards.sum()))
    if not existing:
        if not writer.write(ep):
            counts["dropped"] += 1
            return
        counts["written_episodes"] += 1
        counts["written_transitions"] += len(ep)
    counts["episodes"] += 1
    counts["transitions"] += len(ep)
    counts["collected"] += len(ep)
    counts["expert_steps"] += int(ep.expert.sum())
    counts["expert_episodes"] += int(ep.meta["expert_policy"])
    counts["noised_steps"] += int(noised.sum())


class _NoBar:
    n = 0

    def update(self, k: int) -> None:
        self.n += k

    def close(self) -> None:
        pass


def progress_bar(total: int, enabled: bool, desc: str = "generate", unit: str = "tr") -> Any:
    """A tqdm bar with rate and ETA (in a log file, a line every 30 s), or a no-op when disabled."""
    if not enabled:
        return _NoBar()
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover
        return _NoBar()
    # In a log file (no terminal) a bar line every 30 s, not several per second.
    interval = 0.5 if sys.stderr.isatty() else 30.0
    return tqdm(total=total, unit=unit, unit_scale=True, desc=desc, smoothing=0.1, mininterval=interval)
