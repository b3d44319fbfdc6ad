"""Regenerate the tables of docs/reliability.md by running every case (2 minutes; 5 more for the live kills).

    python docs/reliability_table.py                      # bad inputs, plus one SIGKILL per command (run now)
    python docs/reliability_table.py --faults FILE        # SIGKILL rows from the slow suite's report instead
    python docs/reliability_table.py --no-inputs --faults FILE --section faults-newer  # only those rows, there
    python docs/reliability_table.py --soak FILE          # also the soak numbers (tests/test_soak.py's report)
    python docs/reliability_table.py --matrix-only        # only the bad-input matrix (in-process, seconds)
    python docs/reliability_table.py --generated-only     # only the generated inputs and the limits (seconds)

Bad inputs run as real ``simdist`` subprocesses (tests/reliability_cases.py); the table quotes what they
print. SIGKILL rows come from tests/fault_harness.py: live (one kill point per command, the second of
each scenario) or from ``SIMDIST_FAULT_REPORT`` of ``pytest -m slow tests/test_fault_injection.py``
(every point). Only the parts between the ``<!-- generated:NAME -->`` markers are rewritten.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

import fault_harness as fh  # noqa: E402
import generated_inputs as gi  # noqa: E402
import input_matrix as im  # noqa: E402
import reliability_cases as rc  # noqa: E402

DOC = REPO / "docs" / "reliability.md"


def _cell(text: str) -> str:
    """Markdown table cell: one line, pipes escaped, code spans for messages."""
    return text.replace("|", "\\|").replace("\n", "<br>")


def run_cases(root: Path, only: list[str] | None = None) -> list[dict]:
    """Run every case as a subprocess; returns the rows (command, message, traceback?, lost, open)."""
    fx = rc.build_fixtures(root / "fixtures")
    rows = []
    for case in rc.CASES:
        if only and case.key not in only:
            continue
        d = root / case.key
        d.mkdir(parents=True, exist_ok=True)
        values = {"root": str(fx.root), **rc._fixture_paths(fx, d), **case.prepare(fx, d)}
        before = rc.tree_digest(fx.root)
        cmd = ([sys.executable] if case.python else [sys.executable, "-m", "simdist.cli"]) + case.command(values)
        proc = subprocess.run(cmd, capture_output=True, text=True, env=fh.child_env(), cwd=REPO, timeout=600)
        output = proc.stderr + proc.stdout
        message = rc.message_of(output).replace(str(root) + "/", "")
        out = Path(values["out"])
        wrote = out.exists() and any(p.suffix == ".tar" for p in out.rglob("*"))
        intact = rc.tree_digest(fx.root) == before
        lost = case.lost if intact and not wrote else f"CHECK: inputs changed={not intact}, data written={wrote}"
        rows.append({"key": case.key, "input": case.input, "command": case.shown(values, root), "rc": proc.returncode,
                     "message": message, "traceback": rc.is_traceback(output), "expected": case.expect in message,
                     "lost": lost, "open": case.open, "api": case.python})
        print(f"{case.key}: rc={proc.returncode} traceback={rows[-1]['traceback']}", flush=True)
    return rows


def render_cases(rows: list[dict]) -> str:
    lines = ["| # | input | command | what the user sees (exit status) | lost |", "|---|---|---|---|---|"]
    for i, r in enumerate(rows, 1):
        seen = f"`{_cell(r['message'])}` ({r['rc']})"
        if r.get("api"):  # a library call: the exception is how it answers
            seen = f"raises `{_cell(r['message'])}`"
        elif r["traceback"]:
            seen = f"**raw traceback** ending in {seen}"
        if r["open"]:
            seen += f" — **open**: {_cell(r['open'])}"
        elif not r["expected"]:
            seen += " — **CHECK**: not the expected message"
        lines.append(f"| {i} | {_cell(r['input'])} | `{_cell(r['command'])}` | {seen} | {_cell(r['lost'])} |")
    return "\n".join(lines)


def run_matrix(root: Path) -> list[dict]:
    """The bad-input matrix of tests/input_matrix.py, in this process (its work trapped, as the test runs it)."""
    import os

    values = im.build_inputs(root / "matrix", rc.build_fixtures(root / "matrix" / "fixtures"))
    here = os.getcwd()
    os.chdir(values["work"])
    try:
        results = [im.check(case, values, root / "matrix") for case in im.all_cases(values)]
    finally:
        os.chdir(here)
    refused = sum(not r["problems"] for r in results)
    print(f"bad-input matrix: {refused} of {len(results)} bad inputs refused before any work", flush=True)
    return results


def render_matrix(results: list[dict]) -> str:
    """A count line, one row per command and one per option (its bad inputs and one message)."""
    refused = sum(not r["problems"] for r in results)
    options = sorted({(r["command"], r["option"]) for r in results})
    lines = [f"**{refused} of {len(results)} bad inputs refused** before any work, with exit status 2 and one line "
             f"naming the option or the path ({len(options)} options of "
             f"{len({r['command'] for r in results})} commands).", "",
             "| command | option | bad inputs tried | refused | what the user sees (one of them) |",
             "|---|---|---|---|---|"]
    for command, option in options:
        rows = [r for r in results if (r["command"], r["option"]) == (command, option)]
        ok = sum(not r["problems"] for r in rows)
        kinds = ", ".join(f"{r['kind']}" + ("" if not r["problems"] else f" (**{'; '.join(r['problems'])}**)")
                          for r in rows)
        example = next((r for r in rows if not r["problems"]), rows[0])
        lines.append(f"| `simdist {command}` | `{option}` | {_cell(kinds)} | {ok}/{len(rows)} | "
                     f"`{_cell(example['message'][:240])}` |")
    return "\n".join(lines)


#: bad values drawn per option for the generated table (the test draws as many, 3 for adapt)
GENERATED_EXAMPLES = 6


def run_generated(root: Path) -> tuple[list[dict], list[dict]]:
    """The generated bad inputs of tests/generated_inputs.py (in this process) and the bounded options."""
    import os

    values = im.build_inputs(root / "generated", rc.build_fixtures(root / "generated" / "fixtures"))
    here = os.getcwd()
    os.chdir(values["work"])
    try:
        results = gi.explore(values, root / "generated", GENERATED_EXAMPLES)
        limits = gi.bounded_options(values)
    finally:
        os.chdir(here)
    refused = sum(not r["problems"] for r in results)
    print(f"generated inputs: {refused} of {len(results)} refused at parse time", flush=True)
    return results, limits


def render_generated(results: list[dict], limits: list[dict]) -> str:
    refused = sum(not r["problems"] for r in results)
    commands = sorted({r["command"] for r in results})
    lines = [f"**{refused} of {len(results)} generated bad inputs refused** at parse time, with exit status 2 and "
             f"one line naming the option ({len({(r['command'], r['option']) for r in results})} options of "
             f"{len(commands)} commands, {GENERATED_EXAMPLES} draws each).", "",
             "| command | options | drawn | refused | what the user sees (one of them) |", "|---|---|---|---|---|"]
    for command in commands:
        rows = [r for r in results if r["command"] == command]
        ok = [r for r in rows if not r["problems"]]
        example = next((r for r in ok if len(r["value"]) <= 12), (ok or rows)[0])
        bad = "; ".join(f"{r['option']}={r['value']!r}: {', '.join(r['problems'])}" for r in rows if r["problems"])
        lines.append(f"| `simdist {command}` | {len({r['option'] for r in rows})} | {len(rows)} | {len(ok)}"
                     f"{' — **' + _cell(bad[:300]) + '**' if bad else ''} | `{_cell(example['message'][:200])}` |")
    lines += ["", "Upper limits (each option's `--help` states its limit; the AdaptConfig fields' in "
              "`simdist adapt --help`):", "", "| command | option | accepts | `--help` says so |",
              "|---|---|---|---|"]
    lines += [f"| `simdist {r['command']}` | `{r['option']}` | {r['range']} | "
              f"{'yes' if r['help_states_it'] else '**no**'} |" for r in limits]
    return "\n".join(lines)


def run_faults(root: Path) -> list[dict]:
    """One kill per scenario (its second point), against an uninterrupted run: toy generate, go2 generate,
    toy fit, toy adapt (the fit's model)."""
    reports = []
    gen = fh.toy_generate(20_000)
    ref = root / "toy-generate" / "ref"
    fh.run(gen.command(ref, False), root / "runs.log").check()
    reports.append(fh.inject(gen, ref, root / "toy-generate" / "kill", gen.points[1], 11, root / "runs.log"))
    go2 = fh.go2_generate()
    go2_ref = root / "go2" / "ref"
    fh.run(go2.command(go2_ref, False), root / "runs.log").check()
    reports.append(fh.inject(go2, go2_ref, root / "go2" / "kill", go2.points[1], 21, root / "runs.log"))
    fit = fh.toy_fit(ref)
    fit_ref = root / "fit" / "ref"
    fh.run(fit.command(fit_ref, False), root / "runs.log").check()
    reports.append(fh.inject(fit, fit_ref, root / "fit" / "kill", fit.points[1], 31, root / "runs.log"))
    model = root / "toy-model"
    last = sorted((fit_ref / "epochs").glob("end-*.ckpt"))[-1]
    fh.run(fh.simdist_command("export", "--ckpt", str(last), "--out", str(model)), root / "runs.log").check()
    adapt = fh.toy_adapt(model)
    adapt_ref = root / "adapt" / "ref"
    fh.run(adapt.command(adapt_ref, False), root / "runs.log").check()
    reports.append(fh.inject(adapt, adapt_ref, root / "adapt" / "kill", adapt.points[1], 41, root / "runs.log"))
    fx = rc.build_fixtures(root / "fixtures")  # an untrained IQL folder on the toy world model
    for name, scn in (("ur5e", fh.ur5e_generate()), ("demos", fh.toy_demos()),
                      ("adapt-iql", fh.toy_adapt(fx.agents / "iql", "IQL", freeze="heads_only"))):
        ref_n = root / name / "ref"
        fh.run(scn.command(ref_n, False), root / "runs.log").check()
        reports.append(fh.inject(scn, ref_n, root / name / "kill", scn.points[1], 51, root / "runs.log"))
    for r in reports:
        print(r.summary(), flush=True)
    return [asdict(r) for r in reports]


def render_faults(reports: list[dict]) -> str:
    lines = ["| # | command (killed, then rerun the same way) | SIGKILL | on disk at the kill | what the rerun says "
             "| lost |", "|---|---|---|---|---|---|"]
    for i, r in enumerate(reports, 1):
        extra = r.get("extra", {})
        at = extra.get("killed_after_s")
        when = r["phase"] if at is None else f"{at:.1f} s after start: {r['phase']}"
        if not r["killed"]:
            when += " (**not killed: the command had finished**)"
        planted = extra.get("planted") or []
        disk = extra.get("on_disk_at_kill", "")
        if planted:
            disk += f"; planted half-written temporaries: {', '.join(planted)}"
        problems = r["differences"] + r["leftovers"] + r["id_problems"]
        lost = "nothing: bit-exact, no temporary left, no id lost or duplicated" if not problems else \
            "**" + _cell("; ".join(problems[:4])) + "**"
        said = extra.get("rerun_said") or "exit 0"
        lines.append(f"| {i} | `{_cell(r['command'])}` | {_cell(when)} | {_cell(disk)} | {_cell(said)} | {lost} |")
    return "\n".join(lines)


def render_soak(soak: dict) -> str:
    lines = []
    ticks = soak.get("planner_ticks")
    if ticks:
        lines += [f"Planner: {ticks['ticks']:,} ticks of the real-time MPPI preset on `go2-slope` "
                  f"({ticks['ms_per_tick']:.1f} ms/tick), VmRSS (MiB) at tick 0, 1,000, ..., 10,000: "
                  f"{', '.join(f'{v:.0f}' for v in ticks['rss_mib_every_1000_ticks'])}; growth after the first "
                  f"1,000 ticks: {100 * ticks['growth_after_warmup']:+.2f} %.", ""]
    gen = soak.get("generation")
    if gen:
        samples = [s for s in gen["samples_s_mib_committed"] if s[1] > 0]
        step = max(1, len(samples) // 12)
        shown = ", ".join(f"{t:.0f} s: {r:.0f} MiB ({c:,})" for t, r, c in samples[::step])
        lines += [f"Generation: `simdist generate --task toy-reach --envs 256 --transitions 1000000` wrote "
                  f"{gen['transitions']:,} transitions in {gen['episodes']:,} episodes ({gen['shards']} shards) in "
                  f"{gen['wall_s']:.0f} s; child VmRSS over time (transitions committed): {shown}; growth after "
                  f"the first committed shard: {100 * gen['growth_after_warmup']:+.2f} %.", ""]
    return "\n".join(lines).strip()


def replace_section(doc: str, name: str, body: str) -> str:
    pattern = re.compile(rf"(<!-- generated:{name} -->\n).*?(<!-- /generated:{name} -->)", re.S)
    if not pattern.search(doc):
        raise SystemExit(f"{DOC}: no <!-- generated:{name} --> section")
    return pattern.sub(lambda m: m.group(1) + body.rstrip("\n") + "\n" + m.group(2), doc)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--faults", type=Path, help="fault report JSON of the slow suite (default: run one kill "
                                                    "per command now)")
    parser.add_argument("--no-faults", action="store_true", help="leave the SIGKILL table as it is")
    parser.add_argument("--section", default="faults", help="the generated section the SIGKILL rows go to")
    parser.add_argument("--no-inputs", action="store_true", help="leave the bad-input table as it is")
    parser.add_argument("--soak", type=Path, help="soak report JSON of tests/test_soak.py")
    parser.add_argument("--only", nargs="*", help="case keys to run (prints them; the doc is not rewritten)")
    parser.add_argument("--matrix-only", action="store_true", help="rewrite only the bad-input matrix section")
    parser.add_argument("--generated-only", action="store_true",
                        help="rewrite only the generated bad inputs and the limits")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="simdist-reliability-") as tmp:
        doc = replace_section(DOC.read_text(), "generated", render_generated(*run_generated(Path(tmp))))
        if args.generated_only:
            DOC.write_text(doc)
            print(f"wrote {DOC}")
            return 0
        doc = replace_section(doc, "matrix", render_matrix(run_matrix(Path(tmp))))
        if args.matrix_only:
            DOC.write_text(doc)
            print(f"wrote {DOC}")
            return 0
        if not args.no_inputs:
            rows = run_cases(Path(tmp), args.only)
            if args.only:
                for r in rows:
                    print(json.dumps(r, indent=1))
                return 0
            doc = replace_section(doc, "inputs", render_cases(rows))
        if not args.no_faults:
            reports = json.loads(args.faults.read_text()) if args.faults else run_faults(Path(tmp) / "faults")
            doc = replace_section(doc, args.section, render_faults(reports))
    if args.soak:
        doc = replace_section(doc, "soak", render_soak(json.loads(args.soak.read_text())))
    DOC.write_text(doc)
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
