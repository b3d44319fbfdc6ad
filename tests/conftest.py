"""Shared test setup: an isolated, offline Hugging Face environment and tiny world-model fixtures.

The environment variables below must be set before anything imports ``huggingface_hub``, which reads
them into ``huggingface_hub.constants`` at import time.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile

_HF_HOME = tempfile.mkdtemp(prefix="simdist-test-hf-home-")
atexit.register(shutil.rmtree, _HF_HOME, ignore_errors=True)
os.environ["HF_HOME"] = _HF_HOME
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
for _var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):  # would override the HF_HOME-based cache
    os.environ.pop(_var, None)

if "huggingface_hub" in sys.modules:  # imported early (e.g. by a plugin): patch what it already read
    from huggingface_hub import constants as _constants

    _constants.HF_HOME = _HF_HOME
    _constants.HF_HUB_CACHE = os.path.join(_HF_HOME, "hub")
    _constants.HF_HUB_OFFLINE = True
    _constants.HF_HUB_DISABLE_TELEMETRY = True

from simdist.offscreen import default_offscreen_gl  # noqa: E402 - before any test module imports MuJoCo

default_offscreen_gl()

import hashlib  # noqa: E402
from collections.abc import Mapping  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import TYPE_CHECKING, Any  # noqa: E402

import lightning  # noqa: E402, F401 - its loggers bind the stderr of their import: the real one, not a test's capture
import pytest  # noqa: E402
import torch  # noqa: E402
from huggingface_hub import CommitInfo, RepoUrl, constants  # noqa: E402
from huggingface_hub.utils import DEFAULT_IGNORE_PATTERNS, filter_repo_objects  # noqa: E402

if TYPE_CHECKING:
    from simdist.model.config import WorldModelConfig
    from simdist.model.world_model import WorldModel


REPO = Path(__file__).resolve().parents[1]
#: left out of a test's working folder: the user's own folders (what ``simdist`` writes by default), the git
#: metadata and the package (imported from its install, as a user's shell does)
NOT_IN_VIEW = frozenset({"outputs", "data", "runs", "lightning_logs", ".git", "simdist", "simdist.egg-info"})


def checkout_view(folder: Path) -> Path:
    """``folder`` as a working folder that reads like the checkout (a link to each of its entries, so
    ``recipes/...``, ``hub/...`` and ``docs/...`` resolve) without the user's folders: what a test writes to
    ``outputs/`` lands in ``folder``, and a user's earlier ``outputs/`` is never seen."""
    folder.mkdir(parents=True, exist_ok=True)
    for entry in REPO.iterdir():
        if entry.name not in NOT_IN_VIEW and not entry.name.startswith(".venv"):
            (folder / entry.name).symlink_to(entry)
    return folder


@pytest.fixture(scope="session", autouse=True)
def _session_workdir(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Session and module fixtures run in a temporary working folder too (:func:`checkout_view`)."""
    here = os.getcwd()
    os.chdir(checkout_view(tmp_path_factory.mktemp("checkout")))
    yield
    os.chdir(here)


@pytest.fixture(autouse=True)
def _test_workdir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test runs in a fresh temporary working folder (:func:`checkout_view`), never the user's checkout."""
    folder = checkout_view(tmp_path_factory.mktemp("cwd"))
    monkeypatch.chdir(folder)
    return folder


def tiny_config(**overrides: Any) -> WorldModelConfig:
    """A WorldModelConfig small enough to build, save and load in milliseconds."""
    from simdist.model.config import WorldModelConfig
    mlp = {"name": "mlp", "kwargs": {"hidden": [32]}}
    cfg = WorldModelConfig(
        obs_spec={"state": [4]}, action_dim=2, command_dim=0, history=4, horizon=3, latent_dim=16,
        encoder=mlp, dynamics=mlp, reward_head=mlp, value_head=mlp, policy_head=None,
    )
    return cfg.replace(**overrides) if overrides else cfg


def mppi_agent(model_preset: str, planner_preset: str, seed: int = 0, **settings: Any) -> Any:
    """A SimDist agent of an untrained ``model_preset`` world model (built after ``torch.manual_seed(seed)``, in
    eval mode) planning with MPPI at ``planner_preset`` with ``settings`` replacing its keys."""
    import torch

    from simdist.components.agents.simdist.modeling import SimDistAgent, SimDistAgentConfig
    from simdist.model.world_model import WorldModel
    from simdist.planning import preset_settings

    torch.manual_seed(seed)
    wm = WorldModel.from_preset(model_preset).eval()
    planner = {"planner": "mppi", **preset_settings(planner_preset, **settings)}
    return SimDistAgent(wm, SimDistAgentConfig.from_planner_dict(planner))


def fill_stats(model: WorldModel) -> None:
    """Set distinct, non-trivial normaliser statistics for every key."""
    stats = {}
    for i, key in enumerate(model.normalizer.keys):
        n = model.normalizer.mean(key).numel()
        stats[key] = {"mean": [0.1 * (i + 1) + 0.5 * j for j in range(n)],
                      "std": [1.5 + i + 0.25 * j for j in range(n)]}
    model.normalizer.set_stats(stats)


@pytest.fixture(scope="module")
def single_thread():
    """Run torch on one thread for a test module and restore the setting afterwards (tiny models run fastest
    on one thread, and two threads on shared CI cores can busy-wait)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def sim_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small toy-reach simulation dataset (expert / sub-optimal mixture, Monte-Carlo values), made once per run;
    the agents' tests read it (never write into it)."""
    from simdist.components.tasks.toy_reach import generate_toy_dataset

    out = tmp_path_factory.mktemp("toy") / "sim"
    generate_toy_dataset(str(out), transitions=600, num_envs=2, seed=0, values="mc")
    return out


@pytest.fixture(scope="session")
def bad_input_values(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The bad-input tests' folder and placeholders (tests/input_matrix.py's ``build_inputs`` on the reliability
    fixtures), made once per run; the tests check that no file of it changes."""
    import input_matrix
    from reliability_cases import build_fixtures

    root = tmp_path_factory.mktemp("bad-inputs")
    return root, input_matrix.build_inputs(root, build_fixtures(root / "fixtures"))


@pytest.fixture
def tiny_world_model() -> WorldModel:
    """The tiny MLP model with seeded weights and non-trivial normaliser statistics."""
    from simdist.model.world_model import WorldModel

    torch.manual_seed(0)
    model = WorldModel(tiny_config())
    fill_stats(model)
    return model


@pytest.fixture
def hf_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh HF hub cache, used by the real download code through ``constants.HF_HUB_CACHE``."""
    cache = tmp_path / "hf-cache"
    cache.mkdir()
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    return cache


# ------------------------------------------------------------------------------------------ cache layout
def _repo_dir(cache_dir: str | Path, repo_id: str) -> Path:
    return Path(cache_dir) / ("models--" + repo_id.replace("/", "--"))


def read_snapshot(cache_dir: str | Path, repo_id: str, ref: str = "main") -> dict[str, bytes]:
    """Files of the snapshot ``refs/<ref>`` points at ({} when the ref does not exist)."""
    repo = _repo_dir(cache_dir, repo_id)
    ref_file = repo / "refs" / ref
    if not ref_file.is_file():
        return {}
    snap = repo / "snapshots" / ref_file.read_text()
    return {p.relative_to(snap).as_posix(): p.read_bytes() for p in sorted(snap.rglob("*")) if p.is_file()}


def write_snapshot(
    cache_dir: str | Path, repo_id: str, files: Mapping[str, bytes], ref: str = "main", parent: str = "",
) -> str:
    """Write ``files`` as one commit in the real cache layout; returns the 40-hex commit id.

    ``blobs/<sha256>`` hold the contents, ``snapshots/<commit>/<path>`` are relative symlinks to them
    (plain copies where symlinks are unavailable) and ``refs/<ref>`` holds the commit id.
    """
    repo = _repo_dir(cache_dir, repo_id)
    digest = hashlib.sha1(parent.encode())
    for rel in sorted(files):
        digest.update(rel.encode() + b"\0" + hashlib.sha256(files[rel]).digest())
    commit = digest.hexdigest()
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    for rel, data in files.items():
        blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
        blob.write_bytes(data)
        link = repo / "snapshots" / commit / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.exists() or link.is_symlink():
            link.unlink()
        try:
            link.symlink_to(os.path.relpath(blob, link.parent))
        except OSError:
            shutil.copyfile(blob, link)
    ref_file = repo / "refs" / ref
    ref_file.parent.mkdir(parents=True, exist_ok=True)
    ref_file.write_text(commit)  # no trailing newline, as huggingface_hub writes it
    return commit


def populate_cache(cache_dir: str | Path, repo_id: str, folder: str | Path, ref: str = "main") -> str:
    """Put every file of ``folder`` into the HF cache as repo ``repo_id`` at ``ref``; returns the commit."""
    root = Path(folder)
    files = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    return write_snapshot(cache_dir, repo_id, files, ref)


# ------------------------------------------------------------------------------------------ fake Hub API
class FakeHfApi:
    """Stands in for ``huggingface_hub.HfApi``: commits land in the real cache layout under
    ``constants.HF_HUB_CACHE``, so the real download code then reads them back offline.
    Every call is recorded in the class attribute ``calls`` as ``(method, kwargs)``.
    """

    calls: list[tuple[str, dict[str, Any]]] = []

    def __init__(self, token: str | bool | None = None, **kwargs: Any) -> None:
        self.token = token

    def create_repo(self, repo_id: str, *, exist_ok: bool = False, **kwargs: Any) -> RepoUrl:
        self.calls.append(("create_repo", {"repo_id": repo_id, "exist_ok": exist_ok, **kwargs}))
        repo = _repo_dir(constants.HF_HUB_CACHE, repo_id)
        if repo.exists() and not exist_ok:
            raise FileExistsError(f"repo {repo_id} exists")
        (repo / "refs").mkdir(parents=True, exist_ok=True)
        return RepoUrl(f"https://huggingface.co/{repo_id}")

    def create_branch(self, repo_id: str, *, branch: str, revision: str | None = None, exist_ok: bool = False,
                      **kwargs: Any) -> None:
        self.calls.append(("create_branch", {"repo_id": repo_id, "branch": branch, "exist_ok": exist_ok}))
        refs = _repo_dir(constants.HF_HUB_CACHE, repo_id) / "refs"
        if (refs / branch).exists():
            if not exist_ok:
                raise FileExistsError(f"branch {branch} exists")
            return
        files = read_snapshot(constants.HF_HUB_CACHE, repo_id, revision or "main")
        write_snapshot(constants.HF_HUB_CACHE, repo_id, files, ref=branch)

    def upload_folder(
        self, *, repo_id: str, folder_path: str | Path, revision: str | None = None,
        commit_message: str | None = None, create_pr: bool | None = False,
        allow_patterns: list[str] | str | None = None, ignore_patterns: list[str] | str | None = None,
        **kwargs: Any,
    ) -> CommitInfo:
        self.calls.append(("upload_folder", {
            "repo_id": repo_id, "folder_path": str(folder_path), "revision": revision,
            "commit_message": commit_message, "create_pr": create_pr, "allow_patterns": allow_patterns,
            "ignore_patterns": ignore_patterns, **kwargs,
        }))
        root = Path(folder_path)
        names = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
        ignore = [*([ignore_patterns] if isinstance(ignore_patterns, str) else ignore_patterns or []),
                  *DEFAULT_IGNORE_PATTERNS]
        names = list(filter_repo_objects(names, allow_patterns=allow_patterns, ignore_patterns=ignore))
        base = revision or "main"
        refs = _repo_dir(constants.HF_HUB_CACHE, repo_id) / "refs"
        parent_file = refs / base
        parent = parent_file.read_text() if parent_file.is_file() else ""
        files = {**read_snapshot(constants.HF_HUB_CACHE, repo_id, base),
                 **{n: (root / n).read_bytes() for n in names}}
        pr_url = None
        ref = base
        if create_pr:
            num = len(list((refs / "pr").glob("*"))) + 1 if (refs / "pr").is_dir() else 1
            ref = f"pr/{num}"
            pr_url = f"https://huggingface.co/{repo_id}/discussions/{num}"
        commit = write_snapshot(constants.HF_HUB_CACHE, repo_id, files, ref=ref, parent=parent)
        return CommitInfo(
            commit_url=f"https://huggingface.co/{repo_id}/commit/{commit}",
            commit_message=commit_message or "",
            commit_description="", oid=commit, pr_url=pr_url,
        )


@pytest.fixture
def fake_hub(hf_cache: Path, monkeypatch: pytest.MonkeyPatch) -> type[FakeHfApi]:
    """Patch ``simdist.hub.push.HfApi`` with a fresh :class:`FakeHfApi` subclass writing into ``hf_cache``."""
    import simdist.hub.push

    fake = type("FakeHfApi", (FakeHfApi,), {"calls": []})
    monkeypatch.setattr(simdist.hub.push, "HfApi", fake)
    return fake
