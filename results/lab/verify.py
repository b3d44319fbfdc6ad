"""Does a step regenerate its committed results? :func:`verify` reruns it in a scratch checkout of ``HEAD`` (a
temporary detached ``git worktree`` under the system's temp folder, removed afterwards) with its committed output
files removed, and compares what it writes with what is committed (:mod:`results.lab.compare`).

Nothing git ignores is in the scratch checkout: a step that reads ``outputs/``, ``data/`` or ``runs/`` (its
``needs``, or a path under them in its command that is not one of its outputs) is reported ``needs`` and not run,
so no check ever reads or writes the user's own folders. Every committed file the run changed counts, inside the
step's declared outputs or not (``git status`` of the scratch checkout)."""

from __future__ import annotations

import datetime
import fnmatch
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from results.lab.compare import compare
from results.lab.run import resolve
from results.lab.spec import Experiment, Step
from results.runner import ROOT


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def braces(pattern: str) -> list[str]:
    """``a{b,c}d`` as ``abd``, ``acd`` (nested and repeated braces too), as the shell expands them; a name in
    braces without a comma is a placeholder (``adapt-{profile}/``) and matches anything, as ``*`` does."""
    m = re.search(r"\{([^{}]*)\}", pattern)
    if m is None:
        return [pattern]
    alternatives = m.group(1).split(",") if "," in m.group(1) else ["*"]
    return [p for alt in alternatives for p in braces(pattern[:m.start()] + alt + pattern[m.end():])]


def matches(output: str, path: str) -> bool:
    """Whether the tracked file ``path`` is one of ``output``'s: the file itself, a file matching its ``*``, or a
    file anywhere under it when it is a folder (``.../``)."""
    for pattern in braces(output):
        if pattern.endswith("/"):
            parents = [p.rstrip("/") for p in _prefixes(path)]
            if any(fnmatch.fnmatchcase(p, pattern.rstrip("/")) for p in parents):
                return True
        elif fnmatch.fnmatchcase(path, pattern):
            return True
    return False


def _prefixes(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def committed_outputs(step: Step, tracked: list[str]) -> list[str]:
    """The files at ``HEAD`` that are ``step``'s outputs."""
    return [p for p in tracked if any(matches(o, p) for o in step.outputs)]


def _ignored(root: Path, paths: list[str]) -> set[str]:
    """Those of ``paths`` git ignores."""
    if not paths:
        return set()
    done = subprocess.run(["git", "-C", str(root), "check-ignore", "--no-index", "--stdin"], input="\n".join(paths),
                          capture_output=True, text=True)
    return set(done.stdout.split())


def needs(step: Step, root: Path, tracked: list[str]) -> list[str]:
    """What ``step`` reads that a clean checkout lacks: its declared ``needs`` not tracked at ``HEAD``, and the
    paths in its command that git ignores and that are not under its outputs (``--runs outputs/x``)."""
    tokens = {t.split("=", 1)[-1] for t in step.command}
    paths = sorted(t for t in tokens if "/" in t and not t.startswith(("-", "/")) and "=" not in t)
    outputs = [p for o in step.outputs for p in braces(o)]
    read = [p for p in sorted(_ignored(root, paths))
            if not any(o.rstrip("/").startswith(p.rstrip("/")) or p.startswith(o) for o in outputs)]
    present = set(tracked) | {d for p in tracked for d in _prefixes(p)}
    declared = [n.rstrip("/") for n in step.needs]
    implied = [r for r in read if not any(n.startswith(r.rstrip("/")) or r.startswith(n) for n in declared)]
    return [n for n in step.needs if n.rstrip("/") not in present] + implied


#: the packages setup.py installs from folders of other names (``simdist.components`` is ``components/``): linked
#: into the scratch checkout so that they, too, come from it and not from the installed (editable) checkout
PACKAGE_LINKS = {"simdist/components": "components", "simdist/zoo_files": "hub"}


@contextmanager
def scratch(root: Path = ROOT, keep: bool = False) -> Iterator[Path]:
    """A detached checkout of ``root``'s ``HEAD`` under the temp folder, with ``.venv`` linked to this
    interpreter's environment (the shell runners call ``.venv/bin/python``) and the :data:`PACKAGE_LINKS`; removed
    afterwards unless ``keep``
    (then ``git worktree remove --force PATH`` removes it)."""
    parent = Path(tempfile.mkdtemp(prefix="simdist-verify-"))
    tree = parent / "repo"
    _git(root, "worktree", "add", "--detach", "--quiet", str(tree), "HEAD")
    try:
        if sys.prefix != sys.base_prefix:
            (tree / ".venv").symlink_to(sys.prefix, target_is_directory=True)
        for link, folder in PACKAGE_LINKS.items():
            if (tree / folder).is_dir() and (tree / link).parent.is_dir() and not (tree / link).exists():
                (tree / link).symlink_to(tree / folder, target_is_directory=True)
        yield tree
    finally:
        if keep:
            print(f"kept the scratch checkout {tree} (its step's output: {tree.parent / 'step.log'})", flush=True)
        else:
            subprocess.run(["git", "-C", str(root), "worktree", "remove", "--force", str(tree)], capture_output=True)
            shutil.rmtree(parent, ignore_errors=True)
            subprocess.run(["git", "-C", str(root), "worktree", "prune"], capture_output=True)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_step(step: Step, tree: Path, log: Path, timeout_s: float | None) -> tuple[int | None, float]:
    """Run ``step`` in ``tree`` (its packages first on the path, one thread, the Hub offline), output to ``log``;
    (exit status or None on timeout, CPU seconds of it and its children)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), *filter(None, [os.environ.get("PYTHONPATH")])]),
           "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    before = _cpu()
    with open(log, "wb") as out:
        proc = subprocess.Popen(resolve(step.command), cwd=tree, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            code: int | None = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait()
            code = None
    return code, _cpu() - before


def _status(tree: Path) -> dict[str, str]:
    """``git status`` of the scratch checkout: path -> ``M``, ``D`` or ``??`` (every untracked file)."""
    found = {}
    for line in _git(tree, "status", "--porcelain", "--untracked-files=all", "--no-renames").splitlines():
        code, path = line[:2].strip(), line[3:]
        if path.strip('"') not in (".venv", *PACKAGE_LINKS):
            found[path.strip('"')] = code
    return found


@dataclass(frozen=True)
class Plan:
    """What :func:`verify` would do with one step: ``run``, or the verdict (``needs``, ``skipped``) and why not."""

    experiment: Experiment
    step: Step
    action: str
    note: str
    outputs: tuple[str, ...]


def tracked_files(root: Path = ROOT) -> list[str]:
    """The files git holds at ``root``'s ``HEAD``."""
    return _git(root, "ls-tree", "-r", "--name-only", "HEAD").splitlines()


def plan(e: Experiment, s: Step, named: bool, max_minutes: float | None, root: Path = ROOT,
         tracked: list[str] | None = None) -> Plan:
    """Whether to run ``s``: not when it needs what a clean checkout lacks, writes no committed file, costs more
    than ``max_minutes``, or has no known cost and was not ``named`` on the command line (``tracked``:
    :func:`tracked_files`, read here when not given)."""
    tracked = tracked_files(root) if tracked is None else tracked
    outputs = tuple(committed_outputs(s, tracked))
    absent = needs(s, root, tracked)
    if absent:
        return Plan(e, s, "needs", "needs " + ", ".join(absent), outputs)
    if not outputs:
        return Plan(e, s, "skipped", "writes no committed file (" + ", ".join(s.outputs) + ")", outputs)
    if s.minutes is not None and max_minutes is not None and s.minutes > max_minutes:
        return Plan(e, s, "skipped", f"costs ~{s.minutes:g} min, over --max-minutes {max_minutes:g}", outputs)
    if s.minutes is None and not named:
        return Plan(e, s, "skipped", "cost unknown: name the step to run it", outputs)
    return Plan(e, s, "run", f"~{s.minutes:g} min" if s.minutes is not None else "cost unknown", outputs)


def _entry(p: Plan, commit: str, verdict: str, note: str = "", **fields: Any) -> dict[str, Any]:
    return {"experiment": p.experiment.name, "step": p.step.name, "commit": commit, "verdict": verdict,
            "date": datetime.date.today().isoformat(), "note": note, **fields}


def verify(p: Plan, root: Path = ROOT, timeout_s: float | None = None, keep: bool = False) -> dict[str, Any]:
    """The ledger entry of one planned step: for a step to ``run``, ``identical`` (every committed file it wrote
    or changed reproduced), ``differs`` (with the differences: each file's JSON keys and largest absolute
    difference, its text lines, or its bytes; committed outputs it did not write) or ``failed``. ``keep``: leave
    the scratch checkout and the step's output for a look."""
    commit = _git(root, "rev-parse", "HEAD").strip()
    if p.action != "run":
        return _entry(p, commit, p.action, p.note)
    with scratch(root, keep) as tree, tempfile.TemporaryDirectory(prefix="simdist-verify-old-") as old:
        for rel in p.outputs:
            (Path(old) / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.move(tree / rel, Path(old) / rel)
        log = tree.parent / "step.log"
        code, cpu = run_step(p.step, tree, log, timeout_s)
        text = log.read_text(encoding="utf-8", errors="replace")
        if code != 0:
            tail = " / ".join(line.strip() for line in text.strip().splitlines()[-3:])
            why = "timed out" if code is None else f"exit {code}"
            return _entry(p, commit, "failed", f"{why}: {tail}"[:400], cpu_s=round(cpu, 1))
        status = _status(tree)
        differences: list[dict[str, Any]] = []
        ignored: set[str] = set()
        compared = sorted(set(p.outputs) | {f for f, c in status.items() if c == "M"})
        for rel in compared:
            if status.get(rel) == "D":
                differences.append({"file": rel, "kind": "missing"})
                continue
            before = Path(old) / rel if rel in p.outputs else None
            if before is None:
                before = Path(old) / "_head" / rel
                before.parent.mkdir(parents=True, exist_ok=True)
                before.write_bytes(subprocess.run(["git", "-C", str(tree), "show", f"HEAD:{rel}"],
                                                  capture_output=True, check=True).stdout)
            d = compare(before, tree / rel)
            if d is not None and d["kind"] == "same":
                ignored |= set(d["ignored"])
            elif d is not None:
                differences.append({"file": rel, **d, **({} if rel in p.outputs else {"outside": True})})
        new = sorted(f for f, c in status.items() if c == "??")
    note = ("JSON fields ignored: " + ", ".join(sorted(ignored))) if ignored else ""
    if new:
        note += ("; " if note else "") + f"{len(new)} files not committed: " + ", ".join(new[:3])
    return _entry(p, commit, "differs" if differences else "identical", note, files=len(compared),
                  cpu_s=round(cpu, 1), differences=differences)
