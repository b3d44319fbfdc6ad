"""Image datasets for the UR5e image world models: a state dataset re-rendered with camera images.

:func:`add_images` reads a dataset made by ``simdist generate --task ur5e-peg ...`` (or the table leg) and
writes a new dataset folder with every episode's groups plus ``image_<cam>`` ((S, S, 3) RGB pixels, the
env's layout) and ``joints`` (the six arm joint angles, ``proprio[:, :6]``, as the env with cameras gives
them). The images are drawn from the stored ``physics`` rows (:mod:`.render`) with one
:class:`~.render.VisualRandomization` draw per episode (seeded by the run's seed and the episode id; stored
as ``meta["visual_seed"]``). Images are stored as uint8 ``.npy`` (a quarter of float32); reading gives float
0..255, which the ``timm_image`` encoder with ``raw_pixels`` scales itself. Shards and ``dataset.json`` are
written atomically and an interrupted run resumes where it stopped (rerun the same command). It is the UR5e
tasks' data generator with ``--images-from`` (:meth:`UR5eTask.generate <.task.UR5eTask.generate>`)::

    simdist generate --task ur5e-peg --images-from outputs/ur5e/ur5e-peg-cpu \\
        --out outputs/ur5e/ur5e-peg-cpu-images --cameras front,side,wrist --image-size 64 --max-episodes 1000

Disk: one step costs 3 x S x S x 3 bytes (36 kB at 64 px), so 1,000 episodes of about 130 steps take
about 4.8 GB at 64 px.

:func:`camera_settings` gives the env settings (``cameras``, ``image_size``) for the image groups an
agent's world model reads, for the task to build envs that render them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from simdist.data.schema import DataError, DatasetSpec, Episode

__all__ = ["PixelEpisode", "add_images", "camera_settings", "image_spec", "parse_cameras", "render_episode",
           "visual_seed"]

IMAGE_PREFIX = "image_"
JOINTS = "joints"
#: ``proprio`` starts with the six arm joint angles (see :mod:`.env`)
JOINT_DIMS = 6
CAMERAS = ("front", "side", "wrist")


class PixelEpisode(Episode):
    """An :class:`Episode` whose ``image_*`` groups are written as uint8 ``.npy`` (values 0..255); read back,
    they are float32 like any group."""

    def arrays(self) -> dict[str, np.ndarray]:
        out = super().arrays()
        for group in self.obs:
            if group.startswith(IMAGE_PREFIX):
                out[f"obs.{group}"] = out[f"obs.{group}"].astype(np.uint8)
        return out


def image_keys(cameras: Sequence[str]) -> list[str]:
    return [f"{IMAGE_PREFIX}{cam}" for cam in cameras]


def image_spec(spec: DatasetSpec, cameras: Sequence[str], size: int) -> DatasetSpec:
    """``spec`` plus ``joints`` (6) and ``image_<cam>`` (size, size, 3)."""
    if "proprio" not in spec.obs or "physics" not in spec.obs:
        raise DataError(f"the source dataset has groups {sorted(spec.obs)}; rendering needs 'proprio' and "
                        "'physics' (a UR5e state dataset from `simdist generate`)")
    obs = {**spec.obs, JOINTS: (JOINT_DIMS,), **{k: (size, size, 3) for k in image_keys(cameras)}}
    return replace(spec, obs=obs)


def visual_seed(seed: int, episode_id: int) -> int:
    """The per-episode seed of the visual randomisation (independent of the order episodes are read in)."""
    return int(np.random.SeedSequence([int(seed), int(episode_id)]).generate_state(1)[0])


def render_episode(rig: Any, ep: Episode, seed: int) -> PixelEpisode:
    """``ep`` with ``joints`` and the rig's images of its ``physics`` rows under visual draw ``seed``."""
    import mujoco

    from simdist.components.tasks.ur5e.render import set_physics_state

    rig.randomize(seed)
    frames: dict[str, list[np.ndarray]] = {key: [] for key in rig.keys}
    data = mujoco.MjData(rig.model)
    for row in ep.obs["physics"]:
        set_physics_state(rig.model, data, row)
        for key, image in rig.render_data(data).items():
            frames[key].append(image)
    obs = {**ep.obs, JOINTS: ep.obs["proprio"][:, :JOINT_DIMS].copy(),
           **{key: np.stack(images) for key, images in frames.items()}}
    meta = {**ep.meta, "visual_seed": seed}
    return PixelEpisode(obs=obs, actions=ep.actions, commands=ep.commands, rewards=ep.rewards, values=ep.values,
                        expert=ep.expert, episode_id=ep.episode_id, meta=meta)


def task_model(task_name: str, physics_width: int) -> Any:
    """The training simulator's ``MjModel`` of ``task_name``, checked against the dataset's physics rows."""
    from simdist.tasks import make_task, task_class

    if not callable(getattr(task_class(task_name), "assembly", None)):  # duck-typed: .task imports this module
        raise ValueError(f"--task {task_name!r}: not a UR5e task (ur5e-peg or ur5e-table-leg)")
    env = make_task(task_name, profile=None).make_env(1, 0, real=False)
    try:
        model = env.model
    finally:
        env.close()
    width = model.nq + 7 * model.nmocap
    if width != physics_width:
        raise DataError(f"the dataset's physics rows have {physics_width} values, task {task_name!r} needs {width} "
                        "(nq + 7 x nmocap): pass the task the data were generated for (--task)")
    return model


def _dataset_task(src: str, task: str | None) -> str:
    from simdist.data.shards import read_dataset_info

    name = task or read_dataset_info(src).get("metadata", {}).get("task")
    if not name:
        raise DataError(f"{src}: dataset.json names no task; pass --task ur5e-peg or --task ur5e-table-leg")
    return str(name)


def _check_resume(out: str, settings: dict[str, Any]) -> None:
    """Refuse to add to an ``out`` rendered with other settings (cameras, size, seed, randomisation; the
    source folder may have moved)."""
    from simdist.data.shards import DATASET_INFO, read_dataset_info

    if not os.path.isfile(os.path.join(out, DATASET_INFO)):
        return
    before = dict(read_dataset_info(out).get("metadata", {}).get("images") or {})
    before.pop("source", None)
    now = {k: v for k, v in settings.items() if k != "source"}
    if before != now:
        raise DataError(f"--out {out!r} already holds a dataset rendered with other settings ({before}, now "
                        f"{now}): give a new folder, or the same options to resume it")


def _check_paths(src: str, out: str) -> None:
    from simdist.data.shards import DATASET_INFO

    if not os.path.isfile(os.path.join(src, DATASET_INFO)):
        raise DataError(f"--images-from {src!r}: not a dataset folder (no {DATASET_INFO})")
    if Path(src).resolve() == Path(out).resolve():
        raise DataError(f"--out {out!r} is the source folder (--images-from); give a new folder")


def first_episode_ids(src: str, max_episodes: int | None) -> list[int]:
    """The ids of the first ``max_episodes`` episodes of ``src`` in shard order (all if None), from its index."""
    from simdist.data.shards import read_dataset_info

    ids = [int(i) for shard in read_dataset_info(src)["shards"] for i in shard["episode_ids"]]
    return ids if max_episodes is None else ids[:max_episodes]


def _check_options(size: int, max_episodes: int | None) -> None:
    if size < 8:
        raise DataError(f"--image-size must be >= 8 pixels, got {size}")
    if max_episodes is not None and max_episodes < 1:
        raise DataError(f"--max-episodes must be >= 1, got {max_episodes}")


def add_images(src: str | os.PathLike, out: str | os.PathLike, *, cameras: Sequence[str] = CAMERAS,
               size: int = 64, max_episodes: int | None = None, task: str | None = None, seed: int = 0,
               randomization: Any = "default", progress: bool = True) -> dict[str, Any]:
    """Write ``out``: the first ``max_episodes`` episodes of ``src`` (all if None, in shard order) with images
    and ``joints``; returns a summary. ``randomization``: a :class:`~.render.VisualRandomization`, "default"
    (its defaults) or None (nominal visuals). Resumes an interrupted run (same arguments)."""
    from simdist.components.tasks.ur5e.render import CameraRig, VisualRandomization, camera_ids
    from simdist.data.shards import EpisodeWriter, load_spec, read_dataset_info

    src, out = os.fspath(src), os.fspath(out)
    _check_paths(src, out)
    _check_options(size, max_episodes)
    spec = load_spec(src)
    assert spec is not None  # _check_paths found dataset.json
    out_spec = image_spec(spec, cameras, size)
    task_name = _dataset_task(src, task)
    model = task_model(task_name, spec.obs["physics"][0])
    camera_ids(model, cameras)  # names an unknown camera before any work
    visuals = VisualRandomization() if randomization == "default" else randomization
    settings = {"source": os.path.abspath(src), "cameras": list(cameras), "size": int(size), "seed": int(seed),
                "randomization": None if visuals is None else vars(visuals)}
    _check_resume(out, settings)
    wanted = first_episode_ids(src, max_episodes)
    started = time.perf_counter()
    with EpisodeWriter(out, out_spec, metadata={**read_dataset_info(src).get("metadata", {}), "images": settings}
                       ) as writer, CameraRig(model, cameras, size, randomization=visuals, seed=seed) as rig:
        todo = set(wanted) - writer.completed_episode_ids
        written = _render_into(writer, rig, src, todo, seed, progress)
    return {"out": out, "task": task_name, "episodes": len(wanted), "written_episodes": written,
            "cameras": list(cameras), "size": int(size), "seconds": round(time.perf_counter() - started, 2)}


def _render_into(writer: Any, rig: Any, src: str, todo: set[int], seed: int, progress: bool) -> int:
    """Render and write the episodes ``todo`` of ``src`` (the others are skipped before decoding)."""
    from simdist.data.engine import progress_bar
    from simdist.data.shards import iter_episodes

    if not todo:
        return 0
    bar, written = progress_bar(len(todo), progress, desc="render", unit="ep"), 0
    try:
        for ep in iter_episodes(src, shuffle_shards=False, split_by_node=False, split_by_worker=False,
                                select_ids=todo.__contains__):
            writer.write(render_episode(rig, ep, visual_seed(seed, ep.episode_id)))
            written += 1
            bar.update(1)
            if written == len(todo):
                break
    finally:
        bar.close()
    return written


def camera_settings(agent: Any) -> dict[str, Any]:
    """``ArmEnvConfig`` settings (``cameras``, ``image_size``) rendering the ``image_<cam>`` groups ``agent``'s
    world model reads; {} for an agent that reads none (or has no world model, e.g. the scripted expert)."""
    from simdist.planning.history import history_for
    from simdist.tasks import TaskError

    history = history_for(agent, 1)
    spec = history.obs_spec if history is not None else {}
    shapes = {k[len(IMAGE_PREFIX):]: tuple(v) for k, v in spec.items() if k.startswith(IMAGE_PREFIX)}
    if not shapes:
        return {}
    sizes = {_square_size(cam, shape) for cam, shape in shapes.items()}
    if len(sizes) != 1:
        raise TaskError(f"the model's cameras have different image sizes {shapes}; the env renders one size")
    return {"cameras": tuple(shapes), "image_size": sizes.pop()}


def _square_size(cam: str, shape: Sequence[int]) -> int:
    from simdist.tasks import TaskError

    if len(shape) != 3 or shape[-1] != 3 or shape[0] != shape[1]:
        raise TaskError(f"image_{cam}: the env renders square (S, S, 3) images, the model reads {tuple(shape)}")
    return int(shape[0])


def check_request(src: str, out: str, cameras: str) -> None:
    """Refuse, before any work, a source that is no dataset folder, ``out`` the source itself, or bad cameras."""
    _check_paths(src, out)
    parse_cameras(cameras)


def parse_cameras(text: str) -> tuple[str, ...]:
    """``--cameras front,wrist`` → ``("front", "wrist")``: distinct names of :data:`CAMERAS`."""
    from simdist.tasks import TaskError

    cams = tuple(c.strip() for c in text.split(",") if c.strip())
    bad = [c for c in cams if c not in CAMERAS]
    if not cams or bad or len(set(cams)) != len(cams):
        raise TaskError(f"--cameras {text!r}: give distinct names of {', '.join(CAMERAS)} (bad: {bad or 'none given'})")
    return cams
