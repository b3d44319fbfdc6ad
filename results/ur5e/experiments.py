"""The UR5e experiments (docs/ur5e.md, docs/ur5e-simdist.md): each step is a subcommand of ``results.ur5e.run``
(which prints its plan with ``--dry-run``) or an analysis module."""

from __future__ import annotations

from results.lab.spec import Experiment, Step, step

TASKS_DOC = "docs/ur5e.md"
DOC = "docs/ur5e-simdist.md"
R = "results/ur5e"
PEG, LEG = "ur5e-peg", "ur5e-table-leg"


def ur5e(name: str, command: str, *outputs: str, what: str = "", minutes: float | None = None) -> Step:
    """A step running ``results.ur5e.run COMMAND``."""
    return step(name, f"python -m results.ur5e.run {command}", *outputs, what=what, dry="--dry-run", minutes=minutes)


def both(command: str, *outputs: str, what: str = "", minutes: float | None = None) -> tuple[Step, Step]:
    """``COMMAND --task T`` for the peg and the table leg (``{task}`` in ``outputs`` names the task)."""
    peg, leg = (ur5e(short, f"{command} --task {task}", *(o.format(task=task) for o in outputs), what=what,
                     minutes=minutes) for short, task in (("peg", PEG), ("leg", LEG)))
    return peg, leg


def fit(short: str, task: str) -> Step:
    """The cpu recipe's pretraining of ``task`` on ur5e-data's dataset (resume: ``-- --ckpt_path .../last.ckpt``)."""
    return step(f"fit-{short}",
                f"simdist fit --config recipes/{task}/base.yaml --config recipes/{task}/pretrain.yaml",
                f"outputs/{task}/pretrain/", f"outputs/{task}/logs/", what="~25 min on 2 idle cores", minutes=25,
                needs=(f"outputs/ur5e/{task}-cpu",))


EXPERIMENTS = (
    Experiment("ur5e-expert", "Does the scripted expert solve both tasks, and how much worse are its degraded "
               "variants?", TASKS_DOC, "3. The scripted expert and its degraded variants",
               both("experts", f"{R}/experts/{{task}}/", what="~10 min", minutes=10)),
    Experiment("ur5e-data", "What does the cpu-preset dataset hold, and its V^e critic?", TASKS_DOC,
               "4. Data and value labels",
               both("data", f"{R}/data/{{task}}-cpu.json", "outputs/ur5e/{task}-cpu/", what="~1.5 h; resumes",
                    minutes=90)),
    Experiment("ur5e-profiles", "How far does each proxy-real profile push the expert, and does a retuned expert "
               "recover?", TASKS_DOC, "6. Proxy-real profiles", both("profiles", f"{R}/profiles/{{task}}/")),
    Experiment("ur5e-speed", "How fast does the env step against bare MuJoCo?", TASKS_DOC, "7. Speed",
               both("speed", f"{R}/speed/{{task}}.json", what="5 and 10 Hz, B = 16, 32 (~2 min)",
                    minutes=2)),
    Experiment("ur5e-contacts", "Which cheaper contact recipe keeps the calibration checks?", TASKS_DOC,
               "Cheaper contacts (`--contacts`), measured 2026-12-03", (
                   ur5e("rate", "rate --task ur5e-peg --contacts noslip", f"{R}/rate/ur5e-peg.json",
                        what="options: --task, --contacts RECIPE"),
                   ur5e("critic", "critic --task ur5e-peg --contacts noslip", f"{R}/critic/ur5e-peg.json",
                        what="options: --contacts RECIPE, --size ENVSxSTEPS"),
                   ur5e("creep", "creep", f"{R}/contacts/creep.json"),
                   ur5e("table", "contacts", f"{R}/contacts/table.md", minutes=0.1))),
    Experiment("ur5e-videos", "What does one lattice episode of the scripted expert look like?", TASKS_DOC,
               "8. Videos", tuple(
                   step(short, f"python -m results.ur5e.video --task {task} --agent expert --profile sim --grid wide "
                        f"--cell 0 --cameras front,wrist --out {R}/{short}-expert-sim-front-wrist.gif",
                        f"{R}/{short}-expert-sim-front-wrist.gif", what="one episode rendered afterwards, seconds",
                        minutes=0.1)
                   for short, task in (("peg", PEG), ("leg", LEG)))),
    Experiment("ur5e-pretrain", "Does the cpu recipe give a model folder that plans with the manipulation MPPI?", DOC,
               "2. Pretraining", (fit("peg", PEG), fit("leg", LEG),
                                  *both("export", "outputs/{task}/model/", what="the exported model, seconds"))),
    Experiment("ur5e-realtime", "Does the manipulation MPPI tick fit the 5 Hz period?", DOC,
               "3. Planning in real time", both("bench", f"{R}/bench/{{task}}.json", what="~1 min", minutes=1)),
    Experiment("ur5e-nominal", "Does the paper's planner pick the peg in nominal simulation, and why not?", DOC,
               "4. Nominal simulation: the paper's planner does not pick the peg, and why", (
                   *both("planner", f"{R}/planner/{{task}}/", what="~8 min a failing pass"),
                   step("latent-probe", "python -m results.ur5e.analysis.latent_probe --model outputs/ur5e-peg/model "
                        "--data outputs/ur5e/ur5e-peg-cpu", "printed",
                        what="a ridge probe of the peg's position from z"))),
    Experiment("ur5e-labels", "Which value labels rank the candidates?", DOC,
               "7.1 Value labels: only the expert's own continuation ranks the candidates", (
                   ur5e("labels", "labels", f"{R}/labels/ur5e-peg-sigma*.json"),)),
    Experiment("ur5e-gate", "Does the policy head imitate the expert at small data once the copying is removed?", DOC,
               "7.2 The policy head at small data: the copying removed, the imitation not yet", (
                   ur5e("gate", "gate", f"{R}/gate/ur5e-peg/"),)),
    Experiment("ur5e-headplan", "Does MPPI plan well on the imitating head's model?", DOC,
               "7.5 The planner on the imitating head", (ur5e("headplan", "headplan", f"{R}/planner/ur5e-peg/"),)),
    Experiment("ur5e-valueplan", "Does a value head on the expert's continuation labels let the planner pick?", DOC,
               "7.6 The value head on the expert's continuation labels", (
                   ur5e("valueplan", "valueplan", f"{R}/planner/ur5e-peg/"),
                   step("cost", "python -m results.ur5e.analysis.continuation_cost --json "
                        "results/ur5e/analysis/continuation-cost.json", f"{R}/analysis/continuation-cost.json",
                        what="what the continuation labels cost to generate"))),
    Experiment("ur5e-rankplan", "Does a value head trained on the planner's own candidates rank them?", DOC,
               "7.8 The value head trained on the planner's own candidates (beyond the paper)", (
                   ur5e("rankplan", "rankplan", f"{R}/planner/ur5e-peg/", f"{R}/analysis/rank-probe-*.json"),)),
    Experiment("ur5e-priorplan", "Does MPPI with the policy as its prior pick the peg, and the table leg?", DOC,
               "7.9 MPPI with the policy as its prior: the planner picks the peg", (
                   ur5e("peg", "priorplan", f"{R}/planner/ur5e-peg/"),
                   ur5e("leg", "leggate", f"{R}/gate/ur5e-table-leg/"))),
    Experiment("ur5e-legsize", "How does the table leg's success grow with the world model's data?", DOC,
               "7.10 Success against the world model's data size (table leg)", (
                   ur5e("legsize", "legsize", f"{R}/gate/ur5e-table-leg/legsize.md", what="options: --parts"),)),
    Experiment("ur5e-adapt", "Does the paper's adaptation protocol help the zoo's planner on proxy-real?", DOC,
               "5. Adaptation with the paper's protocol",
               both("adaptplan", f"{R}/adapt/{{task}}/", f"{R}/mechanism/{{task}}/", "outputs/{task}/adapt-zoo-*/")),
    Experiment("ur5e-response", "What does adaptation teach the dynamics: the level or the response?", DOC,
               "7.11 What adaptation teaches the dynamics: the level, not the response", (
                   step("response", "python -m results.response --only peg-sim,peg-real,leg-real",
                        f"{R}/mechanism/*/*-response.json", "results/response.md", dry="--dry-run",
                        what="reads ur5e-adapt's runs; without --only every task's rows (toy-response)",
                        needs=("outputs/ur5e-peg/adapt-zoo-peg-real/stages/stage-1/",)),)),
    Experiment("ur5e-explore", "Does exploring while collecting, or planning towards the base model's intent, "
               "help?", DOC, "7.12 Exploring while collecting, and planning towards the base model's intent", (
                   ur5e("explore", "adaptplan --explore manipulation", f"{R}/adapt/ur5e-peg/",
                        "outputs/ur5e-peg/adapt-zoo-peg-real-explore-manipulation/"),
                   ur5e("intent", "intentplan", f"{R}/adapt/ur5e-peg/intent/"))),
    Experiment("ur5e-priors", "Do persistent pushes while collecting, or weaker priors, let adaptation matter?", DOC,
               "7.13 Persistent pushes while collecting, and weaker priors", (
                   ur5e("push", "adaptplan --explore push", f"{R}/adapt/ur5e-peg/"),
                   ur5e("repeat", "adaptrepeat", f"{R}/adapt/ur5e-peg/repeat/"),
                   ur5e("priors", "priorreal", f"{R}/adapt/ur5e-peg/prior/"),
                   ur5e("legvalue", "legvalue --task ur5e-table-leg", f"{R}/gate/ur5e-table-leg/"))),
)
