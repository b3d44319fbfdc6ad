"""The bad-input matrix: every option of every command, with bad inputs derived from the option's declared type.

Each command's parser is captured as the command builds it (``parse_args`` is intercepted once), so a new option
joins the matrix without an edit here. Numbers get bad values by their declared type (``positive_int``: negative,
zero, fractional, NaN, infinite, huge; a ``float``: NaN, infinite, ...), choices an unknown one; path options get
the bad paths of their role (an output folder: a file, a path under a file, an unwritable place, a non-empty
folder of something else; an input file: missing, a folder, empty, truncated; a model or dataset: missing, a file,
empty, of another task). The role of a path option is named by its destination in :data:`PATH_ROLES` (argparse
declares paths as plain strings).

Every case runs the command in this process with the work itself replaced by a trap (:data:`WORK`): the command
must refuse the input with exit status 2 and one error line naming the option or the path, without a traceback,
before the trap is reached, and without changing a file of the working folder. The valid command line of each
command (:data:`COMMANDS`) must reach the trap, so each refusal is the bad value's doing.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import logging
import os
import shutil
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: a path where nothing can be created, whoever runs (root writes through permission bits; not into /proc)
UNWRITABLE = "/proc/simdist-no-such/out"


class WorkStarted(BaseException):  # noqa: N818 (a signal, not an error: nothing may catch it)
    """Raised by a trap in place of a command's work."""


def _trap(name: str) -> Callable[..., Any]:
    def trap(*args: Any, **kwargs: Any) -> Any:
        raise WorkStarted(name)
    return trap


def _task_method(name: str) -> tuple[Any, str]:
    from simdist.tasks import task_class

    return task_class("toy-reach"), name


def _attr(module: str, name: str) -> Callable[[], tuple[Any, str]]:
    def where() -> tuple[Any, str]:
        import importlib

        return importlib.import_module(module), name
    return where


#: command → where its work starts (object and attribute replaced by a trap while a case runs)
WORK: dict[str, Callable[[], tuple[Any, str]]] = {
    "generate": lambda: _task_method("generate"),
    "evaluate": lambda: _task_method("evaluate"),
    "adapt": lambda: (__import__("simdist.workflows.adaptation", fromlist=["AdaptationLoop"]).AdaptationLoop, "run"),
    "demos": _attr("simdist.workflows.demos", "record_demos"),
    "export": lambda: (__import__("simdist.model.world_model", fromlist=["WorldModel"]).WorldModel, "save_pretrained"),
    "diagnose": _attr("simdist.diagnostics.action_information", "action_information"),
    "mechanism": _attr("simdist.diagnostics.mechanism", "run_mechanism"),
    "demo": _attr("simdist.workflows.demo_pipeline", "run_demo"),
}

#: command → a valid command line ({model}, {data}, {ckpt}, {work}: the fixtures and the working folder)
COMMANDS: dict[str, list[str]] = {
    "generate": ["--task", "toy-reach", "--out", "{work}/gen", "--envs", "2", "--transitions", "50"],
    "evaluate": ["--task", "toy-reach", "--agent", "{model}", "--trials", "1"],
    "adapt": ["--task", "toy-reach", "--agent", "{model}", "--real", "real", "--schedule", "0,1", "--out",
              "{work}/adapt"],
    "demos": ["--task", "toy-reach", "--agent", "expert", "--episodes", "2", "--out", "{work}/demos"],
    "export": ["--ckpt", "{ckpt}", "--out", "{work}/export"],
    "diagnose": ["--model", "{model}", "--data", "{data}", "--windows", "8"],
    "mechanism": ["--task", "toy-reach", "--real", "real", "--model", "a={model}", "--states", "2", "--candidates",
                  "4"],
    "demo": ["--task", "toy-reach", "--out", "{work}/demo"],
}

#: (command or "*", option destination) → the role of a path or name option
PATH_ROLES: dict[tuple[str, str], str] = {
    ("*", "out"): "out-folder", ("diagnose", "out"): "out-file", ("mechanism", "out"): "out-file",
    ("*", "agent"): "model", ("*", "model"): "model", ("*", "pretrained"): "model",
    ("*", "data"): "dataset", ("*", "ckpt"): "checkpoint", ("*", "metrics"): "json-file",
    ("export", "planner"): "json-file", ("evaluate", "planner"): "name", ("*", "train_config"): "text-file",
    ("*", "profile"): "profile", ("*", "real"): "profile", ("*", "experts"): "experts", ("*", "task"): "name",
    ("*", "config"): "yaml-file", ("*", "reference"): "name",
}
#: options left out: flags, free text and settings with no bad value of their type
SKIP = {"help", "json", "tag", "repo_id", "description", "base_model", "device", "no_progress", "progress",
        "current_weights", "rank", "world_size", "all", "expert_only", "no_video", "data_from", "prior"}


@dataclass(frozen=True)
class Case:
    command: str
    option: str  # the flag as typed
    kind: str  # what is bad, in words
    value: str  # the bad value, with {placeholders}


# ------------------------------------------------------------------------------------------------- bad values
INT_BAD = {"negative": "-3", "zero": "0", "fractional": "1.5", "NaN": "nan", "infinite": "inf",
           "huge": "100000000000000000000000"}
#: bad values of any number; a declared range adds its own (below)
FLOAT_BAD = {"NaN": "nan", "infinite": "inf", "huge": "1e400", "text": "many"}
ROLE_BAD: dict[str, dict[str, str]] = {
    "out-folder": {"a file": "{file}", "under a file": "{file}/out", "unwritable": UNWRITABLE,
                   "non-empty folder of something else": "{foreign}"},
    "out-file": {"a folder": "{foreign}", "under a file": "{file}/report.json", "unwritable": UNWRITABLE},
    "model": {"missing": "{work}/no-such-model", "a file": "{file}", "empty folder": "{empty}",
              "of another task": "{other_model}"},
    "dataset": {"missing": "{work}/no-such-data", "a file": "{file}", "empty folder": "{empty}",
                "truncated index": "{truncated_data}", "of another task": "{other_data}"},
    "checkpoint": {"missing": "{work}/no-such.ckpt", "a folder": "{empty}", "empty": "{empty_file}",
                   "truncated": "{truncated_ckpt}"},
    "json-file": {"missing": "{work}/no-such.json", "a folder": "{empty}", "empty": "{empty_file}",
                  "truncated": "{truncated_json}"},
    "text-file": {"missing": "{work}/no-such.yaml", "a folder": "{empty}"},
    "yaml-file": {"missing": "{work}/no-such.yaml", "a folder": "{empty}", "truncated": "{truncated_yaml}"},
    "profile": {"unknown name": "moon", "missing file": "{work}/no-such.yaml", "empty file": "{empty_yaml}",
                "truncated file": "{truncated_yaml}", "of another task": "{other_profile}"},
    "experts": {"unknown name": "no-such-experts", "missing folder": "{work}/no-such-experts"},
    "name": {"unknown": "no-such-name"},
}


def _number_bad(action: argparse.Action) -> dict[str, str] | None:
    """The bad values of a number option by its declared type (None: not a number option)."""
    from simdist import arguments as a

    kind = action.type
    if isinstance(kind, (a.IntRange, a.IntList)):  # a declared range: outside it, below and above
        bad = {k: v for k, v in INT_BAD.items() if k not in ("negative", "zero") or int(v) < kind.low}
        bad["above the limit"] = str(kind.high + 1)
        if isinstance(kind, a.IntList):
            bad["an empty item"] = "1,"
        return bad
    if isinstance(kind, a.FloatRange):
        low = {k: v for k, v in {"negative": "-3", "zero": "0"}.items()
               if float(v) < kind.low or (float(v) == kind.low and not kind.closed)}
        return {**low, "above the limit": f"{kind.high * 2:g}", **FLOAT_BAD}
    if kind is int:  # any integer is allowed (a seed, an offset)
        return {k: v for k, v in INT_BAD.items() if k in ("fractional", "NaN", "infinite")}
    if kind is a.positive_int:
        return dict(INT_BAD)
    if kind is a.nonnegative_int:
        return {k: v for k, v in INT_BAD.items() if k != "zero"}
    ranges = {float: {}, a.positive_float: {"negative": "-3", "zero": "0"}, a.nonnegative_float: {"negative": "-3"},
              a.unit_interval: {"negative": "-0.5", "above 1": "1.5"}, a.decay: {"negative": "-0.5", "1": "1"}}
    if kind in ranges:
        return {**ranges[kind], **FLOAT_BAD}
    return None


def _hint_bad(hint: Any) -> dict[str, str] | None:
    """The bad values of a dataclass field of type ``hint`` (its range is the class's own check, not declared)."""
    if hint is None:
        return None
    args = [a for a in typing.get_args(hint) if a is not type(None)] or [hint]
    if int in args and bool not in args:
        return {k: v for k, v in INT_BAD.items() if k in ("fractional", "NaN", "infinite")}
    if float in args or any(float in typing.get_args(a) for a in args):
        return dict(FLOAT_BAD)
    return None


def option_cases(command: str, parser: argparse.ArgumentParser) -> list[Case]:
    """The bad inputs of every option of ``parser`` (a command's), by declared type or role."""
    cases: list[Case] = []
    hints = _dataclass_hints(parser)
    for action in parser._actions:
        flags = [o for o in action.option_strings if o.startswith("--")]
        if not flags or action.nargs == 0 or action.dest in SKIP or isinstance(action, argparse._HelpAction):
            continue
        flag = flags[0]
        role = PATH_ROLES.get((command, action.dest)) or PATH_ROLES.get(("*", action.dest))
        number = _number_bad(action) or _hint_bad(hints.get(action.dest))
        if role is not None:
            bad = ROLE_BAD[role]
        elif action.choices is not None:
            bad = {"unknown choice": "no-such-choice"}
        elif number is not None:
            bad = number
        else:
            continue
        cases += [Case(command, flag, kind, value) for kind, value in bad.items()]
    return cases


def _dataclass_hints(parser: argparse.ArgumentParser) -> dict[str, Any]:
    """Declared field types of the dataclass a jsonargparse parser was built from (``simdist adapt``)."""
    import jsonargparse

    return adapt_hints() if isinstance(parser, jsonargparse.ArgumentParser) else {}


def adapt_hints() -> dict[str, Any]:
    """``simdist adapt``'s declared types by option: AdaptConfig's own fields, its parts' settings as
    ``finetune.KEY``, ``evaluation.KEY`` and ``collection.KEY``, and the flat spellings of those."""
    from simdist.model.freeze import FinetuneConfig
    from simdist.workflows.adaptation import FINETUNE_FIELDS, AdaptConfig
    from simdist.workflows.flat_settings import TYPES
    from simdist.workflows.loop_parts import CollectionConfig, EvaluationConfig

    hints = {k: v for k, v in typing.get_type_hints(AdaptConfig).items()
             if k not in ("finetune", "evaluation", "collection")}
    finetune = typing.get_type_hints(FinetuneConfig)
    hints |= {f"finetune.{k}": finetune[k] for k in FINETUNE_FIELDS}
    hints |= {f"evaluation.{k}": v for k, v in typing.get_type_hints(EvaluationConfig).items()}
    hints |= {f"collection.{k}": v for k, v in typing.get_type_hints(CollectionConfig).items()}
    return hints | TYPES


# ------------------------------------------------------------------------------------------------- running
class _Captured(BaseException):  # noqa: N818
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser


@contextlib.contextmanager
def _patched(obj: Any, name: str, value: Any) -> Iterator[None]:
    old = getattr(obj, name)
    setattr(obj, name, value)
    try:
        yield
    finally:
        setattr(obj, name, old)


def capture_parser(command: str, values: dict[str, str]) -> argparse.ArgumentParser:
    """The parser ``simdist COMMAND`` builds for its valid command line."""
    import jsonargparse

    from simdist.cli import main

    def grab(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise _Captured(self)

    with _patched(argparse.ArgumentParser, "parse_args", grab), \
            _patched(jsonargparse.ArgumentParser, "parse_args", grab):
        try:
            main([command, *fill(COMMANDS[command], values)])
        except _Captured as got:
            return got.parser
    raise AssertionError(f"simdist {command} built no parser")


def fill(argv: list[str], values: dict[str, str]) -> list[str]:
    return [a.format(**values) for a in argv]


def with_value(argv: list[str], flag: str, value: str) -> list[str]:
    """``argv`` with option ``flag`` set to ``value`` (replaced where given, else appended)."""
    out = list(argv)
    if flag in out:
        out[out.index(flag) + 1] = value
    else:
        out += [flag, value]
    return out


def run(command: str, argv: list[str]) -> tuple[int | str, str]:
    """``simdist COMMAND ARGV`` in this process with its work trapped: (exit status or "work", stderr + stdout)."""
    obj, name = WORK[command]()
    with _patched(obj, name, _trap(command)):
        return call([command, *argv])


def call(argv: list[str]) -> tuple[int | str, str]:
    """``simdist ARGV`` in this process: (exit status, or "work" where a trap raised :class:`WorkStarted`,
    stderr + stdout; an uncaught exception's traceback as a user would see it)."""
    from simdist.cli import main

    err, out = io.StringIO(), io.StringIO()
    root = logging.getLogger()
    handlers = list(root.handlers)
    root.handlers = []  # setup_logging binds a fresh handler to this case's stream
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            try:
                code: int | str = main(argv)
            except SystemExit as stop:
                code = stop.code if isinstance(stop.code, int) else (1 if stop.code else 0)
                if isinstance(stop.code, str):
                    err.write(stop.code + "\n")
            except WorkStarted:
                code = "work"
            except Exception:  # a bug: what a user would see is the traceback
                import traceback

                err.write(traceback.format_exc())
                code = 1
    finally:
        root.handlers = handlers
    return code, err.getvalue() + out.getvalue()


def digest(folder: Path) -> dict[str, tuple[int, int, int]]:
    """Every file under ``folder``: (size, mtime_ns, mode)."""
    out = {}
    for dirpath, _, files in os.walk(folder):
        for f in files:
            p = Path(dirpath) / f
            st = p.lstat()
            out[str(p.relative_to(folder))] = (st.st_size, st.st_mtime_ns, st.st_mode)
    return out


def build_inputs(root: Path, fx: Any) -> dict[str, str]:
    """The placeholders: fixtures (``fx``: tests/reliability_cases.Fixtures) and bad paths, under ``root``."""
    import torch

    from simdist.model.world_model import WorldModel
    from simdist.training.module import CKPT_CONFIG_KEY

    work = root / "work"
    work.mkdir(parents=True, exist_ok=True)
    (work / "file").write_text("a user's file\n")
    (work / "foreign").mkdir(exist_ok=True)
    (work / "foreign" / "notes.txt").write_text("a user's notes\n")
    (work / "empty").mkdir(exist_ok=True)
    (work / "empty.bin").write_bytes(b"")
    (work / "empty.yaml").write_text("")
    (work / "truncated.yaml").write_text("tilt: [0.1, 0.2\n")
    (work / "truncated.json").write_text('{"success_rate": 0.')
    (work / "other.yaml").write_text("base: ptfe-slope-5.7deg\nfriction: 0.1\n")  # a Go2 profile's keys
    ckpt = work / "model.ckpt"
    if not ckpt.exists():
        wm = WorldModel.from_pretrained(fx.model)
        torch.save({CKPT_CONFIG_KEY: wm.config.to_dict(), "state_dict": {f"world_model.{k}": v for k, v in
                                                                          wm.state_dict().items()}}, ckpt)
    raw = ckpt.read_bytes()
    (work / "truncated.ckpt").write_bytes(raw[: len(raw) // 2])
    data = work / "truncated-data"
    if not data.exists():
        shutil.copytree(fx.data, data)
        text = (data / "dataset.json").read_text()
        (data / "dataset.json").write_text(text[: len(text) // 2])
    other = work / "other-data"
    if not other.exists():  # another task's dataset: its spec reads other observations
        shutil.copytree(fx.data, other)
        info = json.loads((other / "dataset.json").read_text())
        info["spec"]["obs"] = {"proprio": [35], "extero": [315]}
        info["spec"]["action_dim"] = 12
        (other / "dataset.json").write_text(json.dumps(info))
    from simdist.zoo import find

    go2 = find("go2-slope").bundled()
    return {"work": str(work), "model": str(fx.model), "data": str(fx.data), "ckpt": str(ckpt),
            "file": str(work / "file"), "foreign": str(work / "foreign"), "empty": str(work / "empty"),
            "empty_file": str(work / "empty.bin"), "empty_yaml": str(work / "empty.yaml"),
            "truncated_yaml": str(work / "truncated.yaml"), "truncated_json": str(work / "truncated.json"),
            "truncated_ckpt": str(work / "truncated.ckpt"), "truncated_data": str(data),
            "other_data": str(other), "other_model": str(go2), "other_profile": str(work / "other.yaml")}


def all_cases(values: dict[str, str]) -> list[Case]:
    cases = []
    for command in COMMANDS:
        cases += option_cases(command, capture_parser(command, values))
    return cases


def contract(code: int | str, output: str, names: list[str]) -> list[str]:
    """What is wrong with a refusal: not exit status 2, a traceback, not one line, none of ``names`` in it."""
    lines = [ln for ln in output.splitlines() if ln.strip()]
    problems = []
    if code != 2:
        problems.append("reached the work" if code == "work" else f"exit status {code}")
    if "Traceback" in output:
        problems.append("traceback")
    if len(lines) != 1:
        problems.append(f"{len(lines)} lines")
    if code == 2 and lines and not any(n and n in lines[-1] for n in names):
        problems.append("names neither the option nor the path")
    return problems


def check(case: Case, values: dict[str, str], root: Path) -> dict[str, Any]:
    """Run one case; returns what happened (``problems`` empty when it was refused as it should be)."""
    value = case.value.format(**values)
    if case.command == "mechanism" and case.option == "--model":
        value = f"a={value}"
    argv = with_value(fill(COMMANDS[case.command], values), case.option, value)
    before = digest(root)
    code, output = run(case.command, argv)
    lines = [ln for ln in output.splitlines() if ln.strip()]
    message = lines[-1] if lines else ""
    problems = contract(code, output, [case.option, case.option.replace("-", "_").lstrip("_"), value,
                                       Path(value).name])
    if digest(root) != before:
        problems.append("changed the working folder")
    return {**dataclasses.asdict(case), "value": value.replace(str(root) + "/", ""), "code": code,
            "message": message.replace(str(root) + "/", ""), "problems": problems}

