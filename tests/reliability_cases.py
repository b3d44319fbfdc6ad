"""Bad inputs and what the user sees: the cases of docs/reliability.md.

Each :class:`Case` prepares its bad input in a folder of its own (from small fixtures: a toy world model and a
tiny toy dataset), names the command a user would type and a pattern the message must match. The quick tests
(``tests/test_reliability.py``) run the cheap cases in-process; ``docs/reliability_table.py`` runs every case
as a real subprocess and writes the message it printed into the table, so the table cannot drift.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
PY = sys.executable


@dataclass
class Fixtures:
    """A toy world model folder, a tiny toy dataset folder (with its shards) and one small folder per agent
    type (``agents/<type>``), under ``root``."""

    root: Path
    model: Path
    data: Path

    @property
    def agents(self) -> Path:
        return self.root / "agents"


def build_fixtures(root: Path) -> Fixtures:
    """Write the fixtures (seconds): the ``toy`` preset with seeded weights and unit statistics, ~600
    transitions of toy-reach with Monte-Carlo values (no critic fit), and an untrained agent of every type."""
    import torch
    from helpers import toy_world_model, untrained_agents

    from simdist.components.tasks.toy_reach import generate_toy_dataset
    from simdist.model.world_model import WorldModel

    root.mkdir(parents=True, exist_ok=True)
    model, data = root / "toy-model", root / "toy-data"
    if not (model / "model.safetensors").exists():
        torch.manual_seed(0)
        wm = WorldModel.from_preset("toy")
        wm.normalizer.set_stats({k: {"mean": [0.0] * wm.normalizer.mean(k).numel(),
                                     "std": [1.0] * wm.normalizer.mean(k).numel()} for k in wm.normalizer.keys})
        wm.save_pretrained(model)
    if not (data / "dataset.json").exists():
        generate_toy_dataset(str(data), num_envs=4, transitions=600, seed=0, values="mc",
                             progress=False)
    fx = Fixtures(root, model, data)
    if not (fx.agents / "done").exists():
        for name, agent in untrained_agents(toy_world_model(data)).items():
            agent.save_pretrained(fx.agents / name)
        (fx.agents / "done").write_text("")
    return fx


@dataclass
class Case:
    """One bad input: ``prepare(fixtures, folder)`` writes it and returns the placeholders of ``argv``."""

    key: str
    input: str  # what is wrong, in words
    argv: list[str]  # the command (``simdist`` subcommand and options, or ``python -c ...``), with {placeholders}
    expect: str  # a substring the message must contain
    prepare: Callable[[Fixtures, Path], dict[str, str]] = lambda fx, d: {}
    quick: bool = True  # cheap enough for the default test suite
    lost: str = "nothing: refused before any work"
    python: bool = False  # argv is run with the interpreter instead of ``simdist``
    open: str | None = None  # a known gap: what the user sees instead, and the fix (outside this suite's files)
    display: str | None = None  # how the table shows the command, when argv is too long to read

    def command(self, values: dict[str, str]) -> list[str]:
        """The argv with its placeholders filled in."""
        return [a.format(**values) for a in self.argv]

    def shown(self, values: dict[str, str], root: Path) -> str:
        """The command as the table prints it (fixture paths shortened)."""
        if self.display:
            return self.display
        words = [a.replace(str(root) + "/", "") for a in self.command(values)]
        if self.python:
            return "python " + " ".join(_quote(w) for w in words)
        return "simdist " + " ".join(_quote(w) for w in words)


def _quote(word: str) -> str:
    return f"'{word}'" if any(c in word for c in " ;()\"") else word


# ---------------------------------------------------------------------------------------------- preparers
def _model_copy(fx: Fixtures, d: Path) -> Path:
    out = d / "model"
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(fx.model, out)
    return out


def _weights(edit: Callable[[dict], dict]) -> Callable[[Fixtures, Path], dict[str, str]]:
    def prepare(fx: Fixtures, d: Path) -> dict[str, str]:
        from safetensors.torch import load_file, save_file

        m = _model_copy(fx, d)
        state = edit(load_file(m / "model.safetensors"))
        save_file(state, str(m / "model.safetensors"), metadata={"format": "pt"})
        return {"model": str(m)}
    return prepare


def _nan_first(state: dict) -> dict:
    key = sorted(k for k in state if state[k].is_floating_point() and "normalizer" not in k)[0]
    state[key] = state[key].clone()
    state[key].view(-1)[0] = float("nan")
    return state


def _drop_one(state: dict) -> dict:
    state.pop(sorted(state)[-1])
    return state


def _add_one(state: dict) -> dict:
    import torch

    state["dynamics.extra_layer.weight"] = torch.zeros(3, 3)
    return state


def _truncate_weights(fx: Fixtures, d: Path) -> dict[str, str]:
    m = _model_copy(fx, d)
    raw = (m / "model.safetensors").read_bytes()
    (m / "model.safetensors").write_bytes(raw[: len(raw) // 2])
    return {"model": str(m)}


def _zero_weights(fx: Fixtures, d: Path) -> dict[str, str]:
    m = _model_copy(fx, d)
    (m / "model.safetensors").write_bytes(b"")
    return {"model": str(m)}


def _config(edit: Callable[[dict], dict | str]) -> Callable[[Fixtures, Path], dict[str, str]]:
    def prepare(fx: Fixtures, d: Path) -> dict[str, str]:
        m = _model_copy(fx, d)
        new = edit(json.loads((m / "config.json").read_text()))
        (m / "config.json").write_text(new if isinstance(new, str) else json.dumps(new, indent=1))
        return {"model": str(m)}
    return prepare


def _newer(cfg: dict) -> dict:
    cfg["schema_version"] = 99
    return cfg


def _wider(cfg: dict) -> dict:
    cfg["latent_dim"] = 48
    return cfg


def _data_copy(fx: Fixtures, d: Path) -> Path:
    out = d / "data"
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(fx.data, out)
    return out


def _shard(edit: Callable[[bytes], bytes]) -> Callable[[Fixtures, Path], dict[str, str]]:
    def prepare(fx: Fixtures, d: Path) -> dict[str, str]:
        data = _data_copy(fx, d)
        shard = sorted(data.glob("*.tar"))[0]
        shard.write_bytes(edit(shard.read_bytes()))
        return {"data": str(data)}
    return prepare


def _garbage_tar(raw: bytes) -> bytes:
    """A valid tar archive whose members are no episodes."""
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, text in (("notes.txt", b"hello"), ("ep000000000.readme", b"not an episode")):
            info = tarfile.TarInfo(name)
            info.size = len(text)
            tar.addfile(info, io.BytesIO(text))
    return buf.getvalue()


def _noise(raw: bytes) -> bytes:
    return np.random.default_rng(0).integers(0, 256, len(raw), dtype=np.uint8).tobytes()


def _parts_only(fx: Fixtures, d: Path) -> dict[str, str]:
    out = d / "data"
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(fx.data, out / "part-0000")
    return {"data": str(out)}


def _empty(fx: Fixtures, d: Path) -> dict[str, str]:
    (d / "empty").mkdir(exist_ok=True)
    return {"data": str(d / "empty")}


def _fixture_paths(fx: Fixtures, d: Path) -> dict[str, str]:
    return {"model": str(fx.model), "data": str(fx.data), "out": str(d / "out")}


def _truncated_checkpoint(fx: Fixtures, d: Path) -> dict[str, str]:
    (d / "last.ckpt").write_bytes(b"PK\x03\x04" + b"\0" * 64)
    return {**_fixture_paths(fx, d), "ckpt": str(d / "last.ckpt")}


def _agent_copy(fx: Fixtures, d: Path, agent: str) -> Path:
    out = d / agent
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(fx.agents / agent, out)
    return out


def _agent_json(agent: str, name: str, edit: Callable[[dict], dict]) -> Callable[[Fixtures, Path], dict[str, str]]:
    """The ``agent`` fixture folder with its JSON file ``name`` edited."""
    def prepare(fx: Fixtures, d: Path) -> dict[str, str]:
        m = _agent_copy(fx, d, agent)
        (m / name).write_text(json.dumps(edit(json.loads((m / name).read_text())), indent=1))
        return {"model": str(m)}
    return prepare


def _agent_nan(agent: str) -> Callable[[Fixtures, Path], dict[str, str]]:
    def prepare(fx: Fixtures, d: Path) -> dict[str, str]:
        from safetensors.torch import load_file, save_file

        m = _agent_copy(fx, d, agent)
        save_file(_nan_first(load_file(m / "model.safetensors")), str(m / "model.safetensors"),
                  metadata={"format": "pt"})
        return {"model": str(m)}
    return prepare


def _setting(path: str, value: object) -> Callable[[dict], dict]:
    """An edit setting the dotted key ``path`` of a JSON object to ``value``."""
    def edit(cfg: dict) -> dict:
        *head, last = path.split(".")
        node = cfg
        for k in head:
            node = node[k]
        node[last] = value
        return cfg
    return edit


def _nan_stats(fx: Fixtures, d: Path) -> dict[str, str]:
    data = _data_copy(fx, d)
    info = json.loads((data / "dataset.json").read_text())
    info["stats_state"]["obs/state"]["mean"][0] = float("nan")
    (data / "dataset.json").write_text(json.dumps(info))
    return {"data": str(data)}


def _shard_deleted(fx: Fixtures, d: Path) -> dict[str, str]:
    data = _data_copy(fx, d)
    sorted(data.glob("*.tar"))[0].unlink()
    return {"data": str(data)}


def _shard_outside(fx: Fixtures, d: Path) -> dict[str, str]:
    data = _data_copy(fx, d)
    info = json.loads((data / "dataset.json").read_text())
    info["shards"][0]["name"] = "../../outside.tar"
    (data / "dataset.json").write_text(json.dumps(info))
    return {"data": str(data)}


def _generated(seed: int) -> Callable[[Fixtures, Path], dict[str, str]]:
    """A dataset ``simdist generate`` wrote with ``seed`` (2 envs, 120 transitions), as ``{dataset}``."""
    def prepare(fx: Fixtures, d: Path) -> dict[str, str]:
        from simdist.cli import main

        out = d / "dataset"
        if not (out / "origin.json").exists():
            assert main([*GENERATE_SMALL[:-1], str(out), "--seed", str(seed), "--no-progress", "--json"]) == 0
        return {"dataset": str(out)}
    return prepare


def _legacy_dataset(fx: Fixtures, d: Path) -> dict[str, str]:
    """The fixture dataset (seed 0, 4 envs; written without origin.json, as before the record existed)."""
    return {"dataset": str(_data_copy(fx, d))}


def _weights_device(fx: Fixtures, d: Path) -> dict[str, str]:
    m = _model_copy(fx, d)
    (m / "model.safetensors").unlink()
    (m / "model.safetensors").symlink_to("/dev/zero")
    return {"model": str(m)}


def _binary_card(fx: Fixtures, d: Path) -> dict[str, str]:
    """A zoo (``$SIMDIST_ZOO``) of one entry whose bundled model card holds binary bytes."""
    zoo = d / "zoo"
    if zoo.exists():
        shutil.rmtree(zoo)
    shutil.copytree(fx.model, zoo / "card")
    (zoo / "card" / "README.md").write_bytes(bytes(range(256)))
    (zoo / "models.yaml").write_text("schema_version: 1\nmodels:\n  - {name: card, repo_id: user/card, "
                                     "task: toy-reach, architecture: toy, recipe: recipes/toy, status: planned, "
                                     "folder: card}\n")
    return {"zoo": str(zoo)}


def _yaml(text: str, placeholder: str = "profile") -> Callable[[Fixtures, Path], dict[str, str]]:
    """A YAML file ``bad.yaml`` holding ``text`` (a reality profile, or a recipe), as ``{placeholder}``."""
    def prepare(fx: Fixtures, d: Path) -> dict[str, str]:
        (d / "bad.yaml").write_text(text)
        return {placeholder: str(d / "bad.yaml")}
    return prepare


FIT = ["fit", "--config", "recipes/toy/base.yaml", "--config", "recipes/toy/pretrain.yaml", "--data.train", "{data}",
       "--trainer.max_steps", "2", "--trainer.logger", "false", "--trainer.default_root_dir", "{out}",
       "--trainer.enable_progress_bar", "false"]
EVALUATE = ["evaluate", "--task", "toy-reach", "--agent", "{model}", "--trials", "1"]
ADAPT = ["adapt", "--task", "toy-reach", "--agent", "{model}", "--real", "real", "--schedule", "0,1", "--out", "{out}"]
GENERATE = ["generate", "--task", "toy-reach", "--out", "{out}"]
PARTS = [*GENERATE, "--envs", "2", "--transitions", "100", "--parts"]
UR5E_EVALUATE = ["evaluate", "--task", "ur5e-peg", "--agent", "expert", "--trials", "1"]
DEMOS = ["demos", "--task", "toy-reach", "--agent", "expert", "--episodes", "2", "--out", "{out}"]
GENERATE_SMALL = ["generate", "--task", "toy-reach", "--envs", "2", "--transitions", "120", "--out", "{dataset}"]
ZOO_SHOW = ("import os, sys; from simdist.cli import main; os.environ['SIMDIST_ZOO'] = sys.argv[1]\n"
            "try: code = main(['zoo', 'show', 'card'])\nfinally: del os.environ['SIMDIST_ZOO']\n"
            "raise SystemExit(code)")
MECHANISM = ["mechanism", "--task", "toy-reach", "--real", "real", "--states", "2", "--candidates", "4",
             "--out", "{out}/report.json"]

WRITE_NAN = ("import numpy as np, sys; from simdist.data import DatasetSpec, Episode, EpisodeWriter; "
             "spec = DatasetSpec(obs={{'state': (4,)}}, action_dim=2, dt=0.1); "
             "z = np.zeros(5, np.float32); "
             "ep = Episode(obs={{'state': np.full((5, 4), np.nan, np.float32)}}, actions=np.zeros((5, 2), np.float32), "
             "commands=np.zeros((5, 0), np.float32), rewards=z, values=z, expert=np.zeros(5, bool), episode_id=0); "
             "w = EpisodeWriter(sys.argv[1], spec); w.write(ep)")

CASES: list[Case] = [
    # -- model files (any command that loads an agent; evaluate shown)
    Case("weights-truncated", "model.safetensors truncated to half its size", EVALUATE,
         "is corrupted or truncated", _truncate_weights),
    Case("weights-empty", "model.safetensors of zero bytes", EVALUATE, "is corrupted or truncated", _zero_weights),
    Case("weights-nan", "a NaN in one weight tensor", EVALUATE, "NaN", _weights(_nan_first)),
    Case("config-invalid", "config.json is not JSON", EVALUATE, "is not a readable JSON file",
         _config(lambda c: "{not json")),
    Case("config-newer", "config.json from a newer schema (schema_version 99)", EVALUATE, "newer",
         _config(_newer)),
    Case("shape-mismatch", "config.json's latent_dim changed (weights of another shape)", EVALUATE,
         "shape mismatches", _config(_wider)),
    Case("keys-missing", "a weight tensor missing from model.safetensors", EVALUATE, "missing keys",
         _weights(_drop_one)),
    Case("keys-unexpected", "an extra tensor in model.safetensors", EVALUATE, "unexpected keys",
         _weights(_add_one)),
    Case("agent-missing", "--agent names no folder and no Hub repo", [*EVALUATE[:4], "{root}/no-such-model",
                                                                      *EVALUATE[5:]],
         "simdist evaluate: error:"),
    # -- episode data
    Case("writer-nan", "an episode with NaN observations given to EpisodeWriter.write",
         ["-c", WRITE_NAN, "{out}"], "contains NaN", lambda fx, d: {"out": str(d / "out")}, python=True,
         display="python -c '... EpisodeWriter(OUT, spec).write(Episode(obs={\"state\": all NaN}, ...))'",
         lost="nothing: the episode is refused, the folder keeps only what was committed before"),
    Case("shard-truncated", "a shard cut to half its size", FIT, "truncated or corrupt",
         _shard(lambda b: b[: len(b) // 2]), quick=False,
         lost="nothing is written; the message names the shard to regenerate or drop"),
    Case("shard-garbage", "a shard that is a tar of non-episode files", FIT, "shard", _shard(_garbage_tar),
         quick=False, lost="nothing is written; the message names the shard"),
    Case("shard-noise", "a shard overwritten with random bytes", FIT, "truncated or corrupt", _shard(_noise),
         quick=False, lost="nothing is written; the message names the shard"),
    Case("parts-only", "a dataset folder with part folders but no top-level dataset.json", FIT,
         "part folders", _parts_only, quick=False),
    Case("empty-folder", "an empty dataset folder", FIT, "not a dataset", _empty, quick=False),
    Case("ckpt-truncated", "--ckpt_path names a truncated checkpoint", [*FIT, "--ckpt_path", "{ckpt}"],
         "cannot read the checkpoint", _truncated_checkpoint, quick=False),
    Case("ckpt-missing", "--ckpt_path names no file", [*FIT, "--ckpt_path", "{root}/no-such.ckpt"],
         "no such checkpoint", quick=False),
    # -- counts
    Case("generate-envs-0", "simdist generate --envs 0", [*GENERATE, "--envs", "0"],
         "--envs: must be an integer in [1, 4096]"),
    Case("generate-envs-neg", "simdist generate --envs -4", [*GENERATE, "--envs", "-4"],
         "--envs: must be an integer in [1, 4096]"),
    Case("generate-transitions-0", "simdist generate --transitions 0", [*GENERATE, "--transitions", "0"],
         "must be > 0"),
    Case("generate-transitions-neg", "simdist generate --transitions -100", [*GENERATE, "--transitions", "-100"],
         "must be > 0"),
    Case("adapt-envs-0", "simdist adapt --num_envs 0", [*ADAPT, "--num_envs", "0"],
         "num_envs must be an integer in [1,"),
    Case("adapt-eval-neg", "simdist adapt --episodes_per_eval -1", [*ADAPT, "--episodes_per_eval", "-1"],
         "episodes_per_eval must be an integer in [0,"),
    Case("adapt-schedule", "simdist adapt --schedule 1,2 (not starting at 0)", [*ADAPT[:-4], "--schedule", "1,2",
                                                                                "--out", "{out}"],
         "schedule must start at 0"),
    Case("adapt-epochs-0", "simdist adapt --epochs 0", [*ADAPT, "--epochs", "0"], "epochs must be an integer in [1,"),
    Case("adapt-envs-neg", "simdist adapt --num_envs -2", [*ADAPT, "--num_envs", "-2"],
         "num_envs must be an integer in [1,"),
    Case("adapt-agent-missing", "simdist adapt with --agent naming nothing", [*ADAPT[:4], "{root}/no-such-model",
                                                                             *ADAPT[5:]],
         "no-such-model"),
    Case("evaluate-trials-0", "simdist evaluate --trials 0", [*EVALUATE[:-1], "0"],
         "--trials: must be an integer in [1, 100000]"),
    # -- names
    Case("task-unknown", "an unknown task", ["generate", "--task", "no-such-task", "--out", "{out}"],
         "unknown task"),
    Case("task-unknown-adapt", "an unknown task in adapt", [*ADAPT[:2], "no-such-task", *ADAPT[3:]], "unknown task"),
    Case("task-unknown-evaluate", "an unknown task in evaluate", [*EVALUATE[:2], "no-such-task", *EVALUATE[3:]],
         "simdist evaluate: error:"),
    Case("profile-unknown", "an unknown reality profile", [*EVALUATE, "--profile", "moon"], "moon"),
    Case("profile-unknown-adapt", "an unknown reality profile in adapt", [*ADAPT[:6], "moon", *ADAPT[7:]], "moon"),
    Case("go2-profile-unknown", "an unknown Go2 profile", ["evaluate", "--task", "go2", "--agent", "{model}",
                                                           "--profile", "moon", "--trials", "1"], "moon"),
    # -- files named in their errors: model folders of every agent type, datasets
    Case("config-unknown-component", "config.json names an unknown dynamics", EVALUATE,
         "config.json: key 'dynamics.name': unknown dynamics", _config(_setting("dynamics.name", "no_such_dyn"))),
    Case("config-component-kwargs", "config.json gives the encoder an argument it does not take", EVALUATE,
         "config.json: key 'encoder.kwargs'", _config(_setting("encoder.kwargs.wings", 2))),
    Case("planner-unknown", "planner.json names an unknown planner",
         [*EVALUATE[:4], "{model}", "--planner", "agent", "--trials", "1"], "planner.json: key 'planner'",
         _agent_json("simdist", "planner.json", _setting("planner", "no_such_planner"))),
    Case("planner-setting", "planner.json holds a setting the planner does not take",
         [*EVALUATE[:4], "{model}", "--planner", "agent", "--trials", "1"], "planner.json",
         _agent_json("simdist", "planner.json", _setting("samples_per_step", 4))),
    # the model's own planner.json runs by default, so its values are checked without --planner agent
    Case("planner-samples-text", "planner.json: num_samples \"many\" (evaluate's default)",
         [*EVALUATE[:4], "{model}", "--trials", "1"], "planner.json: key 'num_samples': expected an integer",
         _agent_json("simdist", "planner.json", _setting("num_samples", "many"))),
    Case("planner-samples-fraction", "planner.json: num_samples 1.5 (not rounded to 1)",
         [*EVALUATE[:4], "{model}", "--trials", "1"], "planner.json: key 'num_samples': expected an integer",
         _agent_json("simdist", "planner.json", _setting("num_samples", 1.5))),
    Case("planner-temperature-neg", "planner.json: temperature -1",
         [*EVALUATE[:4], "{model}", "--trials", "1"], "planner.json: key 'temperature'",
         _agent_json("simdist", "planner.json", _setting("temperature", -1))),
    Case("planner-init-std-nan", "planner.json: init_std NaN (adapt's default)",
         [*ADAPT[:4], "{model}", *ADAPT[5:]], "planner.json: key 'init_std'",
         _agent_json("simdist", "planner.json", _setting("init_std", float("nan")))),
    Case("simdist-bc-json", "simdist_bc.json holds a negative bc_lr", EVALUATE, "simdist_bc.json",
         _agent_json("simdist_bc", "simdist_bc.json", _setting("bc_lr", -1.0))),
    Case("agent-type-unknown", "config.json names an agent type nobody registered", EVALUATE,
         "config.json: unknown agent_type 'ppo'", _agent_json("bc", "config.json", _setting("agent_type", "ppo"))),
    Case("bc-config-hidden", "a BC folder whose config.json gives hidden as text", EVALUATE,
         "config.json", _agent_json("bc", "config.json", _setting("hidden", "wide"))),
    Case("bc-config-stats-nan", "a BC folder whose config.json statistics hold NaN", EVALUATE,
         "config.json", _agent_json("bc", "config.json", _setting("stats.obs/state.mean", [float("nan")] * 4))),
    Case("bc-weights-nan", "a BC folder with a NaN weight", EVALUATE, "NaN", _agent_nan("bc")),
    Case("iql-settings", "an IQL folder whose expectile is 2", EVALUATE, "config.json",
         _agent_json("iql", "config.json", _setting("settings.expectile", 2.0))),
    Case("iql-weights-nan", "an IQL folder with a NaN weight", EVALUATE, "NaN", _agent_nan("iql")),
    Case("rlpd-settings", "an RLPD folder with one critic", EVALUATE, "config.json",
         _agent_json("rlpd", "config.json", _setting("settings.num_critics", 1))),
    Case("rlpd-weights-nan", "an RLPD folder with a NaN weight", EVALUATE, "NaN", _agent_nan("rlpd")),
    Case("sgft-encoder", "an SGFT folder whose policy names an unknown encoder", EVALUATE,
         "config.json: key 'encoder.name'", _agent_json("sgft", "config.json", _setting("policy.encoder.name", "x"))),
    Case("sgft-weights-nan", "an SGFT folder with a NaN weight", EVALUATE, "NaN", _agent_nan("sgft")),
    Case("dp-sampler", "a Diffusion Policy folder naming an unknown sampler", EVALUATE, "config.json",
         _agent_json("diffusion_policy", "config.json", _setting("sampler", "euler-maruyama"))),
    Case("dp-weights-nan", "a Diffusion Policy folder with a NaN weight", EVALUATE, "NaN",
         _agent_nan("diffusion_policy")),
    Case("simdist-bc-weights-nan", "a SimDist+BC folder with a NaN weight", EVALUATE, "NaN",
         _agent_nan("simdist_bc")),
    Case("stats-nan", "dataset.json statistics holding NaN", FIT,
         "key 'stats_state.obs/state.mean[0]': expected a finite number",
         _nan_stats, quick=False, lost="nothing is written; the message names the file and the key"),
    Case("shard-deleted", "a shard listed in dataset.json deleted", FIT, "lists 1 shard(s) that do not exist",
         _shard_deleted, quick=False, lost="nothing is written; the message names the index and the shard"),
    Case("adapt-freeze-baseline", "simdist adapt of an IQL folder with the default --freeze dynamics_only",
         [*ADAPT[:4], "{model}", *ADAPT[5:]], "freeze='dynamics_only': a iql agent trains its heads on a frozen",
         lambda fx, d: {"model": str(fx.agents / "iql"), "out": str(d / "out")}),
    Case("adapt-freeze-unknown", "simdist adapt --freeze everything", [*ADAPT, "--freeze", "everything"],
         "freeze='everything'"),
    # -- UR5e tasks: options and profiles
    Case("ur5e-grid", "simdist evaluate --task ur5e-peg --grid medium", [*UR5E_EVALUATE, "--grid", "medium"],
         "argument --grid: invalid choice"),
    Case("ur5e-control-hz", "simdist evaluate --task ur5e-peg --control-hz 7", [*UR5E_EVALUATE, "--control-hz", "7"],
         "argument --control-hz: invalid choice"),
    Case("ur5e-profile-unknown", "an unknown UR5e profile", [*UR5E_EVALUATE, "--profile", "moon"], "moon"),
    Case("ur5e-clearance", "a peg profile with a negative clearance", [*UR5E_EVALUATE, "--profile", "{profile}"],
         "clearance", _yaml("base: peg-real\nclearance: -0.001\n")),
    Case("ur5e-latency", "a peg profile with latency_ms NaN", [*UR5E_EVALUATE, "--profile", "{profile}"],
         "latency_ms", _yaml("base: peg-real\nlatency_ms: .nan\n")),
    Case("ur5e-key-typo", "a peg profile with a misspelt key (latency)", [*UR5E_EVALUATE, "--profile", "{profile}"],
         "latency", _yaml("base: peg-real\nlatency: 40\n")),
    Case("ur5e-profile-yaml", "a profile file that is not YAML", [*UR5E_EVALUATE, "--profile", "{profile}"],
         "bad.yaml", _yaml("clearance: [0.001\n")),
    Case("ur5e-leg-clearance", "a table-leg profile with radial_clearance as text",
         ["evaluate", "--task", "ur5e-table-leg", "--agent", "expert", "--trials", "1", "--profile", "{profile}"],
         "radial_clearance", _yaml("base: table-leg-real\nradial_clearance: wide\n")),
    Case("ur5e-experts", "simdist generate --task ur5e-peg --experts go2 (its experts are scripted)",
         ["generate", "--task", "ur5e-peg", "--experts", "go2", "--envs", "2", "--transitions", "100", "--out",
          "{out}"], "--experts does not apply"),
    Case("ur5e-critic-envs-0", "simdist generate --task ur5e-peg --critic-envs 0",
         ["generate", "--task", "ur5e-peg", "--critic-envs", "0", "--out", "{out}"], "argument --critic-envs"),
    # -- recipes
    Case("recipe-not-yaml", "a recipe that is not YAML", ["fit", "--config", "recipes/toy/base.yaml", "--config",
                                                          "{recipe}"], "bad.yaml: not a readable YAML recipe",
         _yaml("trainer:\n  max_steps: [1, 2\n", "recipe")),
    Case("recipe-missing", "a recipe path naming no file", ["fit", "--config", "{root}/no-such-recipe.yaml"],
         "no-such-recipe.yaml: not a readable YAML recipe"),
    Case("recipe-unknown-key", "a recipe with a misspelt trainer key", ["fit", "--config", "recipes/toy/base.yaml",
                                                                       "--config", "{recipe}"], "trainer.max_stepz",
         _yaml("trainer:\n  max_stepz: 3\n", "recipe")),
    # -- simdist demos
    Case("demos-episodes-0", "simdist demos --episodes 0", [*DEMOS[:6], "0", *DEMOS[7:]],
         "--episodes: must be an integer in [1, 1000000]"),
    Case("demos-envs-0", "simdist demos --num-envs 0", [*DEMOS, "--num-envs", "0"],
         "must be an integer in [1, 4096]"),
    Case("demos-attempts-0", "simdist demos --max-attempts 0", [*DEMOS, "--max-attempts", "0"], "must be > 0"),
    Case("demos-agent-missing", "simdist demos --agent naming nothing", [*DEMOS[:4], "{root}/no-such-model",
                                                                        *DEMOS[5:]], "no-such-model"),
    Case("demos-profile", "simdist demos --profile naming a bad profile file",
         [*DEMOS, "--profile", "{profile}"], "tilt", _yaml("base: real\ntilt: .inf\n")),
    Case("demos-bad-agent-folder", "simdist demos --agent a folder with a NaN weight",
         [*DEMOS[:4], "{model}", *DEMOS[5:]], "NaN", _agent_nan("bc")),
    # -- distributed generation
    Case("parts-0", "simdist generate --parts 0", [*PARTS, "0"], "argument --parts: must be > 0"),
    Case("world-size-0", "simdist generate --world-size 0", [*PARTS, "2", "--rank", "0", "--world-size", "0"],
         "argument --world-size"),
    Case("rank-too-big", "simdist generate --rank 2 --world-size 2", [*PARTS, "2", "--rank", "2", "--world-size", "2"],
         "--rank"),
    Case("rank-negative", "simdist generate --rank -1 --world-size 2",
         [*PARTS, "2", "--rank", "-1", "--world-size", "2"], "--rank"),
    Case("rank-alone", "simdist generate --rank 1 without --world-size", [*PARTS, "2", "--rank", "1"],
         "--world-size"),
    Case("parts-fewer", "simdist generate --parts 1 --world-size 2", [*PARTS, "1", "--rank", "0", "--world-size", "2"],
         "--parts"),
    # -- simdist mechanism
    Case("mechanism-model-form", "simdist mechanism --model without NAME=", [*MECHANISM, "--model", "{model}"],
         "--model"),
    Case("mechanism-reference", "simdist mechanism --reference naming no model",
         [*MECHANISM, "--model", "a={model}", "--reference", "b"], "--reference"),
    Case("mechanism-skip", "simdist mechanism --skip -1", [*MECHANISM, "--model", "a={model}", "--skip", "-1"],
         "--skip: must be >= 0"),
    Case("mechanism-states-0", "simdist mechanism --states 0", [*MECHANISM, "--model", "a={model}", "--states", "0"],
         "must be > 0"),
    Case("mechanism-samples-0", "simdist mechanism --num-samples 0", [*MECHANISM, "--model", "a={model}",
                                                                      "--num-samples", "0"], "--num-samples"),
    Case("mechanism-model-missing", "simdist mechanism --model naming no folder",
         [*MECHANISM, "--model", "a={root}/no-such-model"], "no-such-model"),
    Case("mechanism-bad-folder", "simdist mechanism --model a folder with an unknown dynamics",
         [*MECHANISM, "--model", "a={model}"], "key 'dynamics.name'",
         _config(_setting("dynamics.name", "no_such_dyn"))),
    Case("evaluate-samples-neg", "simdist evaluate --num-samples -5", [*EVALUATE, "--num-samples", "-5"],
         "--num-samples"),
    Case("evaluate-init-std-nan", "simdist evaluate --init-std nan", [*EVALUATE, "--init-std", "nan"],
         "--init-std"),
    Case("evaluate-ensemble-2", "simdist evaluate --temporal-ensemble 2", [*EVALUATE, "--temporal-ensemble", "2"],
         "argument --temporal-ensemble: must be in [0, 1)"),
    # -- datasets that cannot mix, paths that stay inside their folder
    Case("dataset-other-seed", "simdist generate into a dataset another --seed made",
         [*GENERATE_SMALL, "--seed", "2"], "seed 1 there, 2 now", _generated(1), quick=False),
    Case("dataset-legacy-seed", "simdist generate --seed 1 into a dataset written before origin.json (seed 0)",
         ["generate", "--task", "toy-reach", "--envs", "4", "--transitions", "600", "--seed", "1", "--out",
          "{dataset}"], "seed 0 there, 1 now", _legacy_dataset),
    Case("shard-outside", "dataset.json names a shard '../../outside.tar'", FIT, "key 'shards[0].name'",
         _shard_outside, quick=False),
    # -- recipes at the door
    Case("recipe-unknown-preset", "a recipe naming an unknown world-model preset", [*FIT, "--config", "{recipe}"],
         "key 'model.init_args.preset': unknown preset 'nosuch'",
         _yaml("model:\n  init_args:\n    preset: nosuch\n", "recipe")),
    Case("recipe-module-key", "a recipe with a misspelt module option (lrr)", [*FIT, "--config", "{recipe}"],
         "key 'model.init_args.lrr': unknown key; simdist.training.PretrainModule accepts",
         _yaml("model:\n  init_args:\n    lrr: 0.1\n", "recipe")),
    Case("recipe-type", "a recipe giving text for a number (lr: fast)", [*FIT, "--config", "{recipe}"],
         "key 'model.init_args.lr': expected float, got 'fast'",
         _yaml("model:\n  init_args:\n    lr: fast\n", "recipe")),
    Case("recipe-stages", "the pretraining and the finetuning recipe together",
         [*FIT[:5], "--config", "recipes/toy/finetune.yaml", *FIT[5:]], "two training stages cannot be combined"),
    # -- odd files and entry points
    Case("gym-not-env", "a gym: entry point that is callable but not an environment",
         ["evaluate", "--task", "gym:collections:OrderedDict", "--agent", "expert", "--trials", "1"],
         "an entry point must be a gymnasium.Env class"),
    Case("weights-device", "model.safetensors a symlink to /dev/zero", EVALUATE,
         "is not a regular file (a character device)", _weights_device),
    Case("card-binary", "a bundled model card (README.md) of binary bytes", ["-c", ZOO_SHOW, "{zoo}"],
         "the model card is not UTF-8 text", _binary_card, python=True,
         display="SIMDIST_ZOO=zoo simdist zoo show card"),
]


def tree_digest(folder: Path) -> str:
    """SHA-256 over the relative paths and contents of every file under ``folder``."""
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(folder)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def message_of(output: str) -> str:
    """The lines a user reads as the error: argparse's ``error:`` line, else the last exception line (and
    the lines of a multi-line message after it), else the last line."""
    lines = [ln.rstrip() for ln in output.splitlines() if ln.strip()]
    for i, line in enumerate(lines):
        if ": error:" in line or line.startswith("error:"):
            return "\n".join(lines[i:])
    for i in range(len(lines) - 1, -1, -1):
        head = lines[i].split(":", 1)[0]
        if head.endswith(("Error", "Exception")) and " " not in head.strip():
            return "\n".join(lines[i:])
    return lines[-1] if lines else ""


def is_traceback(output: str) -> bool:
    return "Traceback (most recent call last)" in output
