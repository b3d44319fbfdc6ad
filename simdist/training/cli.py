"""``simdist fit|validate|test`` on LightningCLI: recipes choose the module, the data and the trainer.

The module is any ``LightningModule`` named by ``class_path`` (simdist's world-model modules, or an agent's
own, e.g. a baseline's); the data is the trajectory DataModule.
"""

from __future__ import annotations

import pickle
import sys
import time
import warnings
from argparse import ArgumentError, ArgumentParser
from pathlib import Path
from typing import Any

from lightning.pytorch import LightningModule, Trainer
from lightning.pytorch.cli import LightningCLI

from simdist.data.datamodule import TrajectoryDataModule
from simdist.data.schema import DataError
from simdist.errors import InputError
from simdist.fsutil import check_output_path, remove_stale_temporaries
from simdist.registry import RegistryError
from simdist.training.checkpoint_io import use_atomic_checkpoints
from simdist.training.recipe_errors import build_error, parse_error, where_in_recipes
from simdist.training.run_state import (
    RUN_STATE,
    RunStateCallback,
    alive,
    checkpoint_dirs,
    newest_checkpoint,
    read_run_state,
)

#: the entries that make a folder a training run's (``--trainer.default_root_dir``): Lightning's checkpoints,
#: loggers' folders and saved configs
RUN_MARKERS = ("checkpoints", "lightning_logs", "logs", "version_*", "*.ckpt", "config.yaml", "hparams.yaml",
               "metrics.csv", "events.out.tfevents.*", RUN_STATE)
#: ``simdist fit --fresh``: start over in a run folder that holds an interrupted run (its checkpoints are moved aside)
FRESH = "--fresh"


def _exists(path: str | Path) -> bool:
    try:
        return Path(path).exists()
    except OSError:  # e.g. a name too long to be a path
        return False


def check_recipe_files(args: list[str]) -> None:
    """Every ``--config`` / ``-c`` recipe of ``args`` must be a readable YAML mapping: an InputError naming the
    option and the file otherwise (jsonargparse's own message names neither), before anything is built."""
    import yaml

    for path in recipe_files(args):
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
            raise InputError(f"--config {path}: not a readable YAML recipe ({' '.join(str(err).split())})") from err
        if not isinstance(data, dict):
            raise InputError(f"--config {path}: a recipe must hold a YAML mapping of options, got "
                             f"{type(data).__name__}")


def recipe_files(args: list[str]) -> list[str]:
    """The ``--config`` / ``-c`` recipe files of ``args``, in order (inline YAML strings left out)."""
    out = []
    for i, arg in enumerate(args):
        flag, eq, value = arg.partition("=")
        if flag in ("--config", "-c"):
            path = value if eq else (args[i + 1] if i + 1 < len(args) else "")
            if path and not path.lstrip().startswith(("{", "[")) and "\n" not in path:
                out.append(path)
    return out


class SimDistCLI(LightningCLI):
    """LightningCLI with any LightningModule (``class_path`` in the recipe) and trajectory data.

    Checkpoints are written atomically (:class:`~simdist.training.checkpoint_io.AtomicCheckpointIO`); a run
    resumed with ``--ckpt_path`` first removes the temporaries a killed run left beside that checkpoint,
    and continues exactly where the checkpoint was taken (resumable training loader, per-step seeds). ``fit``
    into a run folder that holds an interrupted run resumes its newest checkpoint (:mod:`.run_state`), or starts
    over with ``--fresh``; an interrupted fit (Ctrl-C) ends with exit status 130 and a line saying how to resume.
    """

    def __init__(self, args: list[str] | None = None, run: bool = True) -> None:
        args = list(args if args is not None else sys.argv[1:])
        self._fresh = FRESH in args
        args = [a for a in args if a != FRESH]
        check_recipe_files(args)
        self._recipes = recipe_files(args)
        # Frozen components are kept in eval mode on purpose during finetuning.
        warnings.filterwarnings("ignore", message=".*modules in eval mode.*")
        # Multi-process runs: every rank reads the whole validation split (simdist.data.datamodule), so the
        # held-out metrics are already equal on all ranks; training metrics are logged by rank 0 for its share.
        warnings.filterwarnings("ignore", message=".*sync_dist=True.*when logging on epoch level.*")
        # ``simdist fit ...`` hands its own argv over as ``args`` on purpose
        warnings.filterwarnings("ignore", message=".*LightningCLI's args parameter is intended.*")
        super().__init__(
            LightningModule,
            TrajectoryDataModule,
            subclass_mode_model=True,
            save_config_kwargs={"overwrite": True},
            args=args,
            run=run,
        )

    def parse_arguments(self, parser: Any, args: Any) -> None:
        """An unknown recipe key or a value of the wrong type is refused with one line naming the recipe file, the
        key and what it accepts (:func:`~simdist.training.recipe_errors.parse_error`)."""
        parsers = _parsers(parser)
        exits = [p.exit_on_error for p in parsers]
        for p in parsers:
            p.exit_on_error = False
        try:
            super().parse_arguments(parser, args)
        except ArgumentError as err:
            argv = [str(a) for a in args] if isinstance(args, list) else []
            raise parse_error(str(err), self._recipes, _groups(_subparser(parser, argv[0] if argv else "")),
                              argv) from None
        finally:
            for p, exit_on_error in zip(parsers, exits):
                p.exit_on_error = exit_on_error

    def instantiate_classes(self) -> None:
        """A recipe naming an unknown component is refused with the recipe file and the key that names it."""
        try:
            super().instantiate_classes()
        except (RegistryError, ValueError) as err:
            cause: BaseException | None = err  # jsonargparse wraps what a constructor raised in a ValueError
            while cause is not None and not isinstance(cause, RegistryError):
                cause = cause.__cause__
            if cause is None:
                built = build_error(err, self._recipes)
                if built is None:
                    raise
                raise built from err
            place = where_in_recipes(self._recipes, cause.name) if cause.name is not None else None
            raise InputError(f"{place}: {cause}" if place else str(cause)) from err

    def instantiate_trainer(self, **kwargs: Any) -> Trainer:
        trainer = super().instantiate_trainer(**kwargs)
        use_atomic_checkpoints(trainer)
        if getattr(self, "subcommand", None) == "fit":
            trainer.callbacks.append(RunStateCallback(trainer.default_root_dir))  # type: ignore[attr-defined]
        return trainer

    def _inputs(self) -> list[Path]:
        """The paths the command reads: its recipes and every existing path the parsed options name (data,
        checkpoint, a model to start from)."""
        found = [Path(p) for p in self._recipes]

        def walk(node: Any) -> None:
            if isinstance(node, dict) or hasattr(node, "items"):
                for value in node.values():
                    walk(value)
            elif isinstance(node, (list, tuple)):
                for value in node:
                    walk(value)
            elif isinstance(node, (str, Path)) and str(node) and "\n" not in str(node) and _exists(node):
                found.append(Path(node))

        subcommand = self.config.get("subcommand")
        walk(self.config[subcommand] if subcommand else self.config)
        root = Path(self.trainer.default_root_dir).resolve()
        return [p for p in found if p.resolve() != root]

    def _resume_path(self) -> Path | None:
        ckpt = self.config[self.config.subcommand].get("ckpt_path") if self.config.get("subcommand") else None
        if not ckpt or ckpt in ("last", "best", "hpc", "registry") or "://" in str(ckpt):
            return None
        return Path(ckpt)

    def _parse_ckpt_path(self) -> None:
        """Lightning reads ``--ckpt_path``'s hyperparameters first: a damaged file gets a message, not a traceback."""
        try:
            super()._parse_ckpt_path()
        except (RuntimeError, OSError, EOFError, ValueError, pickle.UnpicklingError) as err:
            path = self._resume_path()
            reason = (str(err).splitlines() or [type(err).__name__])[0].split(". ")[0]
            self.parser.error(f"--ckpt_path {path}: cannot read the checkpoint ({reason}); it is truncated or not "
                              "a Lightning checkpoint: pass an intact one (an earlier step's) or none to start over")

    def _run_subcommand(self, subcommand: str) -> None:
        """Bad or damaged training data ends the command with its message (which names the folder or shard),
        not a traceback; the checkpoints written before stay."""
        try:
            super()._run_subcommand(subcommand)
        except SystemExit:
            if subcommand == "fit" and self.trainer.interrupted:
                self._say_how_to_resume()
                raise SystemExit(130) from None
            raise
        except DataError as err:
            message = str(err)
            if "Original Traceback" in message:  # re-raised from a DataLoader worker: keep the worker's message
                message = message.rstrip().splitlines()[-1].split(": ", 1)[-1]
            print(f"simdist {subcommand}: error: {message}", file=sys.stderr)
            raise SystemExit(2) from None

    def before_fit(self) -> None:
        check_output_path(self.trainer.default_root_dir, "--trainer.default_root_dir", kind="training run",
                          markers=RUN_MARKERS, inputs=self._inputs())
        self._resume_interrupted()
        path = self._resume_path()
        if path is None:
            return
        if not path.is_file():
            self.parser.error(f"--ckpt_path {path}: no such checkpoint file (pass last.ckpt of the run to resume, "
                              "or leave --ckpt_path out to start over)")
        remove_stale_temporaries(path.parent)

    def _resume_interrupted(self) -> None:
        """A run folder holding an interrupted, killed or failed run: resume its newest checkpoint, saying so (a
        ``--ckpt_path`` given stays); with ``--fresh`` move its checkpoints aside and start over. A run still
        going in the folder is refused."""
        root = Path(self.trainer.default_root_dir)
        state = read_run_state(root)
        if not state or state.get("status") not in ("running", "interrupted", "failed"):
            return
        if state.get("status") == "running" and alive(state.get("pid")):
            raise InputError(f"--trainer.default_root_dir {root}: a fit is training there now (pid {state['pid']}, "
                             f"see {RUN_STATE}); wait until it ends or pass another folder")
        dirs = checkpoint_dirs(root, state)
        if self._fresh:
            moved = _move_aside(root, dirs)
            (root / RUN_STATE).unlink(missing_ok=True)
            print(f"simdist fit: starting over in {root} ({FRESH}); the interrupted run's checkpoints are kept in "
                  f"{', '.join(map(str, moved)) or 'none'}", file=sys.stderr)
            return
        if self._resume_path() is not None:
            return
        ckpt = newest_checkpoint(dirs)
        if ckpt is None:
            print(f"simdist fit: the interrupted run in {root} wrote no checkpoint; starting over", file=sys.stderr)
            return
        self.config_init[self.subcommand]["ckpt_path"] = str(ckpt)
        print(f"simdist fit: resuming the interrupted run in {root} from {ckpt} (it stopped at step "
              f"{state.get('step', '?')}); pass {FRESH} to start over", file=sys.stderr)

    def _say_how_to_resume(self) -> None:
        """The line an interrupted fit ends with: its newest checkpoint and how to resume from it."""
        root = Path(self.trainer.default_root_dir)
        ckpt = newest_checkpoint(checkpoint_dirs(root, read_run_state(root)))
        saved = f"its newest checkpoint is {ckpt}" if ckpt else "no checkpoint was written yet"
        print(f"simdist fit: interrupted at step {self.trainer.global_step}; {saved}; rerun the same command to "
              f"resume (or add {FRESH} to start over)", file=sys.stderr)


def _subparser(parser: ArgumentParser, command: str) -> ArgumentParser:
    """The parser of subcommand ``command`` (``parser`` itself when it has none by that name)."""
    action = getattr(parser, "_subcommands_action", None)
    return dict(getattr(action, "_name_parser_map", {})).get(command, parser)


def _parsers(parser: ArgumentParser) -> list[ArgumentParser]:
    """``parser`` and its subcommands' parsers."""
    action = getattr(parser, "_subcommands_action", None)
    return [parser, *dict(getattr(action, "_name_parser_map", {})).values()]


def _groups(parser: ArgumentParser) -> dict[str, list[str]]:
    """Each option group's accepted keys (``""``: the top-level keys), from ``parser``'s options."""
    groups: dict[str, list[str]] = {"": []}
    for action in parser._actions:
        dest = str(action.dest)
        if dest in ("help", "print_config"):
            continue
        head, _, tail = dest.partition(".")
        groups[""].append(head)
        if tail:
            groups.setdefault(head, []).append(tail.split(".")[0])
    return groups


def _move_aside(root: Path, dirs: list[Path]) -> list[Path]:
    """Move the checkpoints of an earlier run (the ``*.ckpt`` of each folder of ``dirs``) into a new
    ``superseded-TIME`` folder: beside each folder, or inside the run folder ``root`` for its own; returns the
    folders now holding them."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    moved = []
    for d in dirs:
        files = sorted(d.glob("*.ckpt")) if d.is_dir() else []
        if not files:
            continue
        target = (d if d.resolve() == root.resolve() else d.parent) / f"superseded-{stamp}" / (
            "" if d.resolve() == root.resolve() else d.name)
        target.mkdir(parents=True, exist_ok=True)
        for f in files:
            f.rename(target / f.name)
        moved.append(target)
    return moved
