"""What a result's numbers depend on besides its command: library versions, thread counts, model weights.

Results are bit-for-bit reproducible on CPU for the same command and seed on the same machine with the same
versions and thread counts (``docs/reproducibility.md``); :func:`provenance` records those conditions next
to the numbers, so two results that differ can be told apart from a nondeterministic run.
"""

from __future__ import annotations

import hashlib
import platform
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch


def _version(module: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(module)
    except Exception:  # noqa: BLE001 - not installed, or no metadata
        return None


def source_commit() -> str | None:
    """The last git commit that changed the simdist source (``simdist/``, ``components/``) in use, ``+dirty``
    with uncommitted changes there, or None when it is not a git checkout (an installed wheel). Commits that
    change only documentation or tests do not change it."""
    root = Path(__file__).resolve().parents[1]
    try:
        def git(*args: str) -> str:
            return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10,
                                  check=True).stdout.strip()

        commit = git("log", "-1", "--format=%H", "--", "simdist", "components")
        dirty = git("status", "--porcelain", "--untracked-files=no", "--", "simdist", "components")
    except (OSError, subprocess.SubprocessError):
        return None
    return commit + ("+dirty" if dirty else "") if commit else None


def provenance(model: Any = None) -> dict[str, Any]:
    """Versions (simdist and its source commit, torch, mujoco, numpy, lightning, Python), CPU, torch thread
    counts and, for a ``model`` (a torch module, an agent with a ``world_model``, an expert), the fingerprint
    of its weights."""
    import torch

    info: dict[str, Any] = {name: _version(name) for name in ("simdist", "torch", "mujoco", "numpy", "lightning")}
    info["torch"] = torch.__version__  # with its build tag (+cpu, +cu130)
    info["source_commit"] = source_commit()
    info |= {"python": platform.python_version(), "machine": platform.machine(), "processor": platform.processor(),
             "torch_threads": torch.get_num_threads(), "torch_interop_threads": torch.get_num_interop_threads()}
    module = agent_module(model)
    if module is not None:
        info["model_weights"] = weights_fingerprint(module)
    return info


def agent_module(agent: Any) -> Any:
    """The torch module holding an agent's weights: its ``world_model``, ``model``, ``policy`` or ``net`` (the
    first that is a module), the agent itself if it is one, else None."""
    import torch

    for attr in ("world_model", "model", "policy", "net"):
        module = getattr(agent, attr, None)
        if isinstance(module, torch.nn.Module):
            return module
    return agent if isinstance(agent, torch.nn.Module) else None


def weights_fingerprint(model: torch.nn.Module) -> str:
    """SHA-256 (first 16 hex digits) of the model's parameters and buffers, so a resumed run can tell
    that a model id (e.g. a zoo folder rebuilt in place) now holds other weights."""
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()[:16]
