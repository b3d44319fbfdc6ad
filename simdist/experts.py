"""Shipping and loading PPO experts: rsl-rl checkpoints → small safetensors files → numpy callables.

An exported policy is one ``.safetensors`` file (the actor MLP, its observation normaliser and, with
``with_critic=True``, the critic) whose header carries JSON metadata (iteration, obs key and dims,
hidden dims, activation, normaliser eps); the same JSON is written next to it as ``<name>.json``.

* :class:`ExpertPolicy` is the deterministic actor ``policy(obs) -> (B, A)`` (the Gaussian mean, no
  sampling) on ``obs["privileged"]``: numpy in, numpy out, torch inside.
* :class:`Critic` is the engine's ``value_fn(obs, command) -> (B,)`` on the post-step privileged
  observation (the command is already part of it and is ignored).
* :func:`export_expert_set` turns a PPO log folder into the SimDist policy mixture (SIMDIST 4.4):
  the sub-optimal checkpoints (nearest available iteration per requested one) plus the final expert
  with its critic, listed in ``manifest.json``; :func:`load_expert_set` reads it back.

rsl-rl saves ``model_0.pt`` after the first update, so "iteration 0" is one update in, not the
untrained network of the paper.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import time
import uuid
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors import safe_open
from safetensors.torch import save_file

from simdist.fsutil import inside, replace_dir

FORMAT = "simdist-expert"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
EXPERT_FILE = "expert.safetensors"
PAPER_ITERATIONS: tuple[int, ...] = (0, 50, 100, 150, 200, 250, 300, 400, 500, 1000, 2000)
_ACTIVATIONS: dict[str, type[torch.nn.Module]] = {
    "elu": torch.nn.ELU, "selu": torch.nn.SELU, "relu": torch.nn.ReLU, "lrelu": torch.nn.LeakyReLU,
    "tanh": torch.nn.Tanh, "sigmoid": torch.nn.Sigmoid, "identity": torch.nn.Identity,
}
_CKPT_RE = re.compile(r"model_(\d+)\.pt")
PathLike = str | os.PathLike


# ------------------------------------------------------------------------------------------ export
def _mlp_tensors(sd: Mapping[str, torch.Tensor], prefix: str
                 ) -> tuple[dict[str, torch.Tensor], list[int], int]:
    """Rename an rsl-rl ``MLPModel`` state dict; returns tensors, hidden dims and input dim."""
    idx = sorted({int(m.group(1)) for k in sd if (m := re.fullmatch(r"mlp\.(\d+)\.weight", k))})
    if not idx:
        raise ValueError(f"{prefix}: no 'mlp.<i>.weight' tensors in the state dict ({sorted(sd)[:6]}...)")
    out: dict[str, torch.Tensor] = {}
    for j, i in enumerate(idx):
        out[f"{prefix}.layers.{j}.weight"] = sd[f"mlp.{i}.weight"].float()
        out[f"{prefix}.layers.{j}.bias"] = sd[f"mlp.{i}.bias"].float()
    in_dim = int(sd[f"mlp.{idx[0]}.weight"].shape[1])
    if "obs_normalizer._mean" in sd:
        out[f"{prefix}.obs_mean"] = sd["obs_normalizer._mean"].reshape(-1).float()
        out[f"{prefix}.obs_std"] = sd["obs_normalizer._std"].reshape(-1).float()
    else:  # obs_normalization=False: identity
        out[f"{prefix}.obs_mean"] = torch.zeros(in_dim)
        out[f"{prefix}.obs_std"] = torch.ones(in_dim)
    hidden = [int(sd[f"mlp.{i}.weight"].shape[0]) for i in idx[:-1]]
    return out, hidden, in_dim


def checkpoint_iteration(path: PathLike, ckpt: Mapping[str, Any] | None = None) -> int:
    """Iteration of ``model_<it>.pt`` (from the name, else the checkpoint's ``iter``)."""
    m = _CKPT_RE.fullmatch(Path(path).name)
    if m:
        return int(m.group(1))
    if ckpt is not None and "iter" in ckpt:
        return int(ckpt["iter"])
    raise ValueError(f"{path}: cannot tell the iteration (name is not model_<it>.pt, no 'iter' key)")


def _atomic_save(tensors: dict[str, torch.Tensor], meta: dict[str, Any], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    tag = uuid.uuid4().hex[:8]
    tmp, tmp_json = out.with_name(f".{out.name}.{tag}.tmp"), out.with_name(f".{out.stem}.json.{tag}.tmp")
    try:
        save_file({k: v.contiguous() for k, v in tensors.items()}, str(tmp),
                  metadata={"format": "pt", FORMAT: json.dumps(meta, sort_keys=True)})
        tmp_json.write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
        os.chmod(tmp, 0o644)  # safetensors creates 0600 files
        os.replace(tmp, out)
        os.replace(tmp_json, out.with_suffix(".json"))
    finally:
        for p in (tmp, tmp_json):
            p.unlink(missing_ok=True)


def export_expert(ckpt_path: PathLike, out_path: PathLike, *, with_critic: bool = False,
                  activation: str = "elu", normalizer_eps: float = 1e-2, obs_key: str = "privileged"
                  ) -> dict[str, Any]:
    """Convert an rsl-rl ``model_<it>.pt`` into ``out_path`` (.safetensors) + ``<stem>.json``.

    ``activation`` and ``normalizer_eps`` are those of the run (rsl-rl does not store them; the
    defaults match rsl-rl's PPO actor-critic and ``EmpiricalNormalization``).
    Returns the metadata.
    """
    if activation not in _ACTIVATIONS:
        raise ValueError(f"unknown activation {activation!r}; known: {', '.join(_ACTIVATIONS)}")
    ckpt = torch.load(ckpt_path, map_location="cpu", weights_only=False)
    tensors, hidden, obs_dim = _mlp_tensors(ckpt["actor_state_dict"], "actor")
    action_dim = int(tensors[f"actor.layers.{len(hidden)}.weight"].shape[0])
    std = ckpt["actor_state_dict"].get("distribution.std_param")
    if std is not None:
        tensors["actor.action_std"] = std.float().reshape(-1)
    has_norm = "obs_normalizer._mean" in ckpt["actor_state_dict"]
    meta: dict[str, Any] = {
        "format": FORMAT, "version": FORMAT_VERSION, "iteration": checkpoint_iteration(ckpt_path, ckpt),
        "obs_key": obs_key, "obs_dim": obs_dim, "action_dim": action_dim, "hidden_dims": hidden,
        "activation": activation, "normalizer_eps": normalizer_eps if has_norm else 0.0,
        "critic": bool(with_critic), "source": os.path.abspath(ckpt_path),
    }
    if with_critic:
        ctensors, chidden, cdim = _mlp_tensors(ckpt["critic_state_dict"], "critic")
        has_cnorm = "obs_normalizer._mean" in ckpt["critic_state_dict"]
        tensors.update(ctensors)
        meta.update(critic_hidden_dims=chidden, critic_obs_dim=cdim,
                    critic_normalizer_eps=normalizer_eps if has_cnorm else 0.0)
    _atomic_save(tensors, meta, Path(out_path))
    return meta


def resume_and_learn(runner: Any, log_dir: PathLike, iterations: int, **learn_kwargs: Any) -> Any:
    """Run an rsl-rl ``OnPolicyRunner`` until ``iterations`` iterations exist in ``log_dir``: first load the newest
    ``model_<it>.pt`` there (if any) and continue after it. ``learn_kwargs`` go to ``runner.learn`` (a fresh run
    only sees them with ``init_at_random_ep_len`` as given; a resumed one never staggers episodes again)."""
    ckpts = available_checkpoints(log_dir)
    start = 0
    if ckpts:
        runner.load(str(ckpts[max(ckpts)]))
        start = runner.current_learning_iteration + 1
        runner.current_learning_iteration = start
        learn_kwargs.pop("init_at_random_ep_len", None)
    if iterations > start:
        runner.learn(iterations - start, **learn_kwargs)
    return runner


# ------------------------------------------------------------------------------------------ loading
def read_metadata(path: PathLike) -> dict[str, Any]:
    """The JSON metadata stored in an exported expert file's header."""
    with safe_open(str(path), framework="pt") as f:
        raw = (f.metadata() or {}).get(FORMAT)
    if raw is None:
        raise ValueError(f"{path}: not a simdist expert file (no {FORMAT!r} metadata)")
    return json.loads(raw)


class _MLPHead:
    """Normaliser + MLP, evaluated with torch on numpy (or torch) input; numpy output."""

    def __init__(self, tensors: Mapping[str, torch.Tensor], prefix: str, activation: str, eps: float,
                 name: str) -> None:
        n = len([k for k in tensors if k.startswith(f"{prefix}.layers.") and k.endswith(".weight")])
        layers: list[torch.nn.Module] = []
        for j in range(n):
            w, b = tensors[f"{prefix}.layers.{j}.weight"], tensors[f"{prefix}.layers.{j}.bias"]
            lin = torch.nn.Linear(w.shape[1], w.shape[0])
            lin.weight.data.copy_(w)
            lin.bias.data.copy_(b)
            layers.append(lin)
            if j < n - 1:
                layers.append(_ACTIVATIONS[activation]())
        self.net = torch.nn.Sequential(*layers).eval()
        self.mean = tensors[f"{prefix}.obs_mean"].reshape(1, -1)
        self.scale = tensors[f"{prefix}.obs_std"].reshape(1, -1) + eps
        self.name = name

    def _forward(self, x: Any) -> np.ndarray:
        t = torch.as_tensor(np.asarray(x, np.float32) if not isinstance(x, torch.Tensor) else x,
                            dtype=torch.float32).cpu()
        with torch.inference_mode():
            return self.net((t - self.mean) / self.scale).numpy()


def _load(path: PathLike) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    meta = read_metadata(path)
    if meta.get("version", 0) > FORMAT_VERSION:
        raise ValueError(f"{path}: expert format version {meta['version']} is newer than {FORMAT_VERSION}")
    with safe_open(str(path), framework="pt") as f:
        tensors = {k: f.get_tensor(k) for k in f.keys()}
    return tensors, meta


class ExpertPolicy(_MLPHead):
    """Deterministic actor: ``policy(obs) -> (B, action_dim)`` float32 from ``obs[obs_key]``."""

    def __init__(self, tensors: Mapping[str, torch.Tensor], meta: dict[str, Any], name: str | None = None):
        super().__init__(tensors, "actor", meta["activation"], meta["normalizer_eps"],
                         name or f"policy_{meta['iteration']}")
        self.meta = meta
        self.obs_key = str(meta.get("obs_key", "privileged"))
        self.iteration = int(meta["iteration"])

    @classmethod
    def load(cls, path: PathLike, name: str | None = None) -> ExpertPolicy:
        tensors, meta = _load(path)
        return cls(tensors, meta, name)

    def __call__(self, obs: Mapping[str, Any]) -> np.ndarray:
        return self._forward(obs[self.obs_key])


class Critic(_MLPHead):
    """Expert value function: ``value_fn(obs, command=None) -> (B,)`` from ``obs[obs_key]``."""

    def __init__(self, tensors: Mapping[str, torch.Tensor], meta: dict[str, Any]) -> None:
        if not meta.get("critic"):
            raise ValueError(f"expert file of iteration {meta.get('iteration')} has no critic "
                             "(export it with with_critic=True)")
        super().__init__(tensors, "critic", meta["activation"], meta["critic_normalizer_eps"],
                         f"critic_{meta['iteration']}")
        self.meta = meta
        self.obs_key = str(meta.get("obs_key", "privileged"))

    @classmethod
    def load(cls, path: PathLike) -> Critic:
        tensors, meta = _load(path)
        return cls(tensors, meta)

    def __call__(self, obs: Mapping[str, Any], command: Any = None) -> np.ndarray:
        return self._forward(obs[self.obs_key]).reshape(-1)


# ------------------------------------------------------------------------------------------ sets
def available_checkpoints(log_dir: PathLike) -> dict[int, Path]:
    """``{iteration: path}`` of the ``model_<it>.pt`` files in ``log_dir``."""
    return {int(m.group(1)): p for p in Path(log_dir).glob("model_*.pt") if (m := _CKPT_RE.fullmatch(p.name))}


def select_iterations(available: Sequence[int], requested: Sequence[int], expert: int | str = "latest"
                      ) -> tuple[int, dict[int, int], list[int]]:
    """Pick the expert and the sub-optimal checkpoints.

    Returns ``(expert_it, {requested: chosen}, skipped)``: ``expert="latest"`` is the newest
    checkpoint, an int the nearest available one. A requested iteration at or beyond the expert's is
    skipped (it does not exist yet); the others map to the nearest available iteration below the
    expert's (ties: the lower one).
    """
    avail = sorted(set(int(a) for a in available))
    if not avail:
        raise FileNotFoundError("no model_<it>.pt checkpoints found")
    expert_it = avail[-1] if expert == "latest" else min(avail, key=lambda a: (abs(a - int(expert)), a))
    below = [a for a in avail if a < expert_it]
    chosen: dict[int, int] = {}
    skipped: list[int] = []
    for r in requested:
        if r >= expert_it or not below:
            skipped.append(int(r))
        else:
            chosen[int(r)] = min(below, key=lambda a: (abs(a - r), a))
    return expert_it, chosen, skipped


def add_export_arguments(parser: argparse.ArgumentParser, *, save_interval: int, suboptimal_default: str,
                         seed: int = 42) -> None:
    """The options every PPO expert trainer (``simdist train-expert``) takes to checkpoint and export its expert set:
    ``--save-interval``, ``--seed``, ``--export``, ``--suboptimal``, ``--expert``; each task passes its defaults
    (``suboptimal_default``: what the ladder is without ``--suboptimal``, for the help). :func:`export_request` reads
    them back."""
    from simdist.arguments import positive_int, seed_int

    parser.add_argument("--save-interval", type=positive_int, default=save_interval,
                        help="checkpoint every this many iterations (the sub-optimal ladder picks from them)")
    parser.add_argument("--seed", type=seed_int, default=seed, help="base seed (0 to 2**31 - 1)")
    parser.add_argument("--export", default=None, metavar="DIR", help="export the expert set here afterwards")
    parser.add_argument("--suboptimal", default=None,
                        help=f"comma-separated iterations of the sub-optimal ladder (default: {suboptimal_default})")
    parser.add_argument("--expert", default="latest", help="expert iteration (default: the newest)")


def export_request(args: argparse.Namespace) -> tuple[tuple[int, ...] | None, int | str]:
    """The sub-optimal iterations (None: the task's default ladder) and the expert iteration (``"latest"``) the
    options of :func:`add_export_arguments` ask for."""
    iterations = tuple(int(s) for s in args.suboptimal.split(",")) if args.suboptimal else None
    return iterations, args.expert if args.expert == "latest" else int(args.expert)


def export_expert_set(log_dir: PathLike, out_dir: PathLike, iterations: Sequence[int] = PAPER_ITERATIONS,
                      expert: int | str = "latest", activation: str = "elu", obs_key: str = "privileged"
                      ) -> dict[str, Any]:
    """Export the sub-optimal checkpoints and the expert (with critic) of a PPO run into ``out_dir``.

    Files: ``expert.safetensors`` (actor + critic), ``policy_<it>.safetensors`` per distinct chosen
    sub-optimal iteration, their ``.json`` sidecars and ``manifest.json``. The folder is built aside
    and swapped in, so ``out_dir`` is always complete. ``obs_key``: the observation group the policies read.
    Returns the manifest.
    """
    ckpts = available_checkpoints(log_dir)
    expert_it, chosen, skipped = select_iterations(list(ckpts), iterations, expert)

    def build(tmp: Path) -> dict[str, Any]:
        meta = export_expert(ckpts[expert_it], tmp / EXPERT_FILE, with_critic=True, activation=activation,
                             obs_key=obs_key)
        subs = []
        for it in sorted(set(chosen.values())):
            fname = f"policy_{it}.safetensors"
            export_expert(ckpts[it], tmp / fname, activation=activation, obs_key=obs_key)
            req = [r for r, c in chosen.items() if c == it]
            subs.append({"iteration": it, "file": fname, "requested": req})
        return _set_manifest(os.path.abspath(log_dir), expert_it, subs, [int(r) for r in iterations], skipped,
                             sorted(ckpts), meta)

    return _build_set(out_dir, build)


def _set_manifest(source: str, expert_it: int, subs: list[dict[str, Any]], requested: list[int], skipped: list[int],
                  available: list[int], meta: dict[str, Any]) -> dict[str, Any]:
    """The ``manifest.json`` of an expert set (``meta``: the expert file's metadata)."""
    return {
        "format": FORMAT + "-set", "version": FORMAT_VERSION, "source": source,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "expert": {"iteration": expert_it, "file": EXPERT_FILE, "critic": True},
        "suboptimal": subs, "requested": requested, "skipped": skipped, "available": available,
        "obs_key": meta["obs_key"], "obs_dim": meta["obs_dim"], "action_dim": meta["action_dim"],
        "hidden_dims": meta["hidden_dims"], "activation": meta["activation"],
    }


def _build_set(out_dir: PathLike, build: Any) -> dict[str, Any]:
    """Run ``build(tmp)`` (it writes the files and returns the manifest) in a folder built aside, write the manifest
    and swap the folder in, so ``out_dir`` is always complete. Returns the manifest."""
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.tmp-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        manifest = build(tmp)
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
        replace_dir(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return manifest


# ------------------------------------------------------------------------------------------ TorchScript
_SCRIPT_RE = re.compile(r"(?:policy|critic)_(\d+)\.pt")


def load_torchscript(path: PathLike) -> Any:
    """A TorchScript module on the CPU (torch >= 2.9 deprecates TorchScript loading; released policies are
    TorchScript, so the warning is not the user's to act on)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return torch.jit.load(str(path), map_location="cpu")


def _script_tensors(path: PathLike, prefix: str) -> tuple[dict[str, torch.Tensor], list[int], int, str]:
    """An exported rsl-rl TorchScript actor or critic (``normalizer`` then an MLP of Linear and activation
    modules) as this module's tensors; refuses a normaliser other than the identity or an unknown activation."""
    module = load_torchscript(path)
    norm = getattr(module, "normalizer", None)
    if norm is None or norm.original_name != "Identity":
        raise ValueError(f"{path}: the observation normaliser is "
                         f"{getattr(norm, 'original_name', 'missing')}, only Identity is supported")
    children = list(module.named_children())
    mlp = next((m for n, m in children if n != "normalizer"), None)
    if mlp is None:
        raise ValueError(f"{path}: no MLP next to the normaliser")
    names = {m.original_name for _, m in mlp.named_children()} - {"Linear"}
    acts = {k for k, v in _ACTIVATIONS.items() if v.__name__ in names}
    if len(names) != 1 or len(acts) != 1:
        raise ValueError(f"{path}: activation modules {sorted(names)} (supported: one of "
                         f"{', '.join(v.__name__ for v in _ACTIVATIONS.values())})")
    sd = {f"mlp.{k}": v for k, v in mlp.state_dict().items()}
    tensors, hidden, in_dim = _mlp_tensors(sd, prefix)
    tensors[f"{prefix}.obs_mean"], tensors[f"{prefix}.obs_std"] = torch.zeros(in_dim), torch.ones(in_dim)
    return tensors, hidden, in_dim, acts.pop()


def _script_iteration(path: PathLike) -> int:
    m = _SCRIPT_RE.fullmatch(Path(path).name)
    if m is None:
        raise ValueError(f"{path}: cannot tell the iteration (name is not policy_<it>.pt or critic_<it>.pt)")
    return int(m.group(1))


def export_torchscript_expert(policy: PathLike, out_path: PathLike, critic: PathLike | None = None,
                              obs_key: str = "privileged") -> dict[str, Any]:
    """Convert an exported TorchScript actor (``policy_<it>.pt``, and its ``critic_<it>.pt``) into ``out_path``
    (.safetensors) + ``<stem>.json``: the same file :func:`export_expert` writes; returns the metadata."""
    tensors, hidden, obs_dim, act = _script_tensors(policy, "actor")
    meta: dict[str, Any] = {
        "format": FORMAT, "version": FORMAT_VERSION, "iteration": _script_iteration(policy), "obs_key": obs_key,
        "obs_dim": obs_dim, "action_dim": int(tensors[f"actor.layers.{len(hidden)}.weight"].shape[0]),
        "hidden_dims": hidden, "activation": act, "normalizer_eps": 0.0, "critic": critic is not None,
        "source": Path(policy).name,
    }
    if critic is not None:
        ctensors, chidden, cdim, cact = _script_tensors(critic, "critic")
        if cact != act:
            raise ValueError(f"{critic}: activation {cact} differs from the actor's {act}")
        tensors.update(ctensors)
        meta.update(critic_hidden_dims=chidden, critic_obs_dim=cdim, critic_normalizer_eps=0.0)
    _atomic_save(tensors, meta, Path(out_path))
    return meta


def export_torchscript_set(policies: Sequence[PathLike], critic: PathLike, out_dir: PathLike,
                           obs_key: str = "privileged", source: str = "") -> dict[str, Any]:
    """An expert set from TorchScript exports: the newest of ``policies`` is the expert (with ``critic``), the
    others its sub-optimal actors; the same folder layout as :func:`export_expert_set`. Returns the manifest."""
    by_it = {_script_iteration(p): Path(p) for p in policies}
    expert_it = max(by_it)
    others = sorted(i for i in by_it if i != expert_it)

    def build(tmp: Path) -> dict[str, Any]:
        meta = export_torchscript_expert(by_it[expert_it], tmp / EXPERT_FILE, critic, obs_key)
        subs = []
        for it in others:
            export_torchscript_expert(by_it[it], tmp / f"policy_{it}.safetensors", obs_key=obs_key)
            subs.append({"iteration": it, "file": f"policy_{it}.safetensors", "requested": [it]})
        return _set_manifest(source, expert_it, subs, others, [], sorted(by_it), meta)

    return _build_set(out_dir, build)


@dataclass
class ExpertSet:
    """The loaded policy mixture: expert actor, its critic, sub-optimal actors, and the manifest."""

    expert: ExpertPolicy
    critic: Critic
    suboptimal: list[ExpertPolicy] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)


def load_expert_set(path: PathLike) -> ExpertSet:
    """Load a folder written by :func:`export_expert_set`."""
    root = Path(path)
    mf = root / MANIFEST
    if not mf.is_file():
        raise FileNotFoundError(f"{root}: no {MANIFEST} (export one with `simdist train-expert --export`)")
    manifest = json.loads(mf.read_text())
    tensors, meta = _load(inside(root, manifest["expert"]["file"], f"{mf}: key 'expert.file'"))
    expert = ExpertPolicy(tensors, meta, name=f"expert_{meta['iteration']}")
    subs = [ExpertPolicy.load(inside(root, s["file"], f"{mf}: key 'suboptimal[{k}].file'"))
            for k, s in enumerate(manifest["suboptimal"])]
    return ExpertSet(expert=expert, critic=Critic(tensors, meta), suboptimal=subs, manifest=manifest)


def load_policy(path: PathLike) -> ExpertPolicy:
    """An expert actor from a ``.safetensors`` file or an expert-set folder (its expert)."""
    p = Path(path)
    if p.is_dir():
        return load_expert_set(p).expert
    return ExpertPolicy.load(p)


# ------------------------------------------------------------------------------------------ any callable
class TorchScriptPolicy:
    """A TorchScript module as a deterministic policy: ``policy(obs) -> (B, A)`` numpy, from ``obs[obs_key]``
    (float32 tensor in, the module's output out; a tuple output gives its first element, the action)."""

    def __init__(self, path: PathLike, obs_key: str) -> None:
        self.module = load_torchscript(path).eval()
        self.obs_key, self.name = obs_key, Path(path).stem

    def __call__(self, obs: Mapping[str, Any]) -> np.ndarray:
        with torch.inference_mode():
            out = self.module(torch.as_tensor(np.asarray(obs[self.obs_key], np.float32)))
        if isinstance(out, (tuple, list)):
            out = out[0]
        return out.detach().cpu().numpy().astype(np.float32)


def policy_from(spec: Any, obs_key: str) -> Any:
    """Any expert as a data-engine policy ``policy(obs_dict) -> (B, A)``: a Python callable (as is), an exported
    ``.safetensors`` actor, a TorchScript file (``.pt``/``.ts``, called on ``obs[obs_key]``), or ``module:attr``
    naming a callable object (a class is instantiated without arguments). Raises ``ValueError`` naming ``spec``."""
    import importlib

    if callable(spec) and not isinstance(spec, (str, os.PathLike)):
        return spec
    text = os.fspath(spec)
    path = Path(text).expanduser()
    if path.is_file():
        if path.suffix == ".safetensors":
            return ExpertPolicy.load(path)
        try:
            return TorchScriptPolicy(path, obs_key)
        except RuntimeError as err:
            raise ValueError(f"expert {text!r}: not a TorchScript module ({str(err).splitlines()[0]})") from err
    module, sep, attr = text.partition(":")
    if sep and attr and "/" not in module:
        try:
            target = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as err:
            raise ValueError(f"expert {text!r}: cannot import {attr!r} from {module!r} ({err})") from err
        obj = target() if isinstance(target, type) else target
        if not callable(obj):
            raise ValueError(f"expert {text!r}: {attr} is not callable (a policy maps an observation dict to actions)")
        return obj
    raise ValueError(f"expert {text!r}: not an expert-set folder, a .safetensors or TorchScript file, or module:attr")
