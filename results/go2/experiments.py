"""The Go2 experiments (docs/go2.md): each step is a subcommand of ``results.go2.run``, which prints its plan with
``--dry-run``."""

from __future__ import annotations

from results.lab.spec import Experiment, Step, step

DOC = "docs/go2.md"
RUN = "python -m results.go2.run"
R = "results/go2"
S4_32K = ("--stage stage4 --ckpt outputs/go2/pretrain-s4/step32000.ckpt --model outputs/go2/pretrain-s4/model-32k "
          "--out results/go2/stage4-32k")
S4_37K = ("--stage stage4 --ckpt outputs/go2/pretrain-s4/checkpoints/last.ckpt --model outputs/go2/pretrain-s4/model "
          "--out results/go2/stage4-37k")


def go2(name: str, command: str, *outputs: str, what: str = "", minutes: float | None = None,
        needs: tuple[str, ...] = ()) -> Step:
    """A step running ``results.go2.run COMMAND``."""
    return step(name, f"{RUN} {command}", *outputs, what=what, dry="--dry-run", minutes=minutes, needs=needs)


EXPERIMENTS = (
    Experiment("go2-expert", "Does the privileged expert walk every terrain and profile, and does PPO finetuned on a "
               "profile complete it?", DOC, "2. The privileged expert", (
                   go2("bars", "expert", f"{R}/expert-2549/", f"{R}/expert-2549/summary.json",
                       what="the 20 s bars on flat, slope, boxes and rough terrain (~1 h)", minutes=60),
                   go2("profiles", "expert-profiles", f"{R}/expert-2549/profile_*.json", minutes=0.5,
                       what="15 CPU s (python -m results verify)"),
                   go2("walks", "expert-walks", f"{R}/expert_{{flat,slope}}{{,_nominal}}.json",
                       what="the 10 m walks (also section 4); 33 CPU s", minutes=1),
                   go2("ppo-profiles", "ppo-profiles", f"{R}/ppo_on_*.json", what="~5 min a profile", minutes=15))),
    Experiment("go2-pretrain", "Which data and pretraining stages give a model that walks?", DOC, "3. Pretraining", (
        go2("data", "data", "data/go2/", what="the pretraining datasets and their throughput (~15 min each)",
            minutes=15),
        go2("pretrain", "pretrain", "outputs/go2/", what="the stages, 30-70 min each; resumes from last.ckpt"))),
    Experiment("go2-zoo-model", "Does the zoo model meet the bar in nominal simulation?", DOC,
               "4.1 The zoo model: the bar is met", (
                   go2("pretrain", "pretrain --stages 4-ema", "outputs/go2/pretrain-s4-ema/"),
                   go2("walks", "ema-walks", f"{R}/stage4-ema/", what="the averaged checkpoints' walks (~2 h)",
                       minutes=120),
                   go2("table", "readme-table", "printed", what="the summary table: mean, 95 % CI, trials"))),
    Experiment("go2-checkpoints", "How do earlier checkpoints predict and walk?", DOC, "4.2 Earlier checkpoints", (
        go2("measure-32k", f"measure {S4_32K}", f"{R}/stage4-32k/",
            what="one checkpoint's held-out losses, walks and head errors (~1 h)", minutes=60),
        go2("measure-37k", f"measure {S4_37K}", f"{R}/stage4-37k/"),
        go2("measure-27k", "measure --stage stage3-walk-starts --ckpt outputs/go2/pretrain-ws/checkpoints/last.ckpt "
            "--model outputs/go2/pretrain-ws/model --out results/go2/walk-start", f"{R}/walk-start/"))),
    Experiment("go2-temporal-ensemble", "Does temporal ensembling steady the planner's actions?", DOC,
               "4.3 Temporal ensembling", (
                   go2("decays", "temporal-ensemble", f"{R}/temporal-ensemble/", what="~3 h", minutes=180),
                   go2("jitter", "action-jitter", f"{R}/stage4-ema/action_jitter_slope.json",
                       needs=("outputs/go2/pretrain-s4/model-32k/",)))),
    Experiment("go2-reset-phase", "Does the protocol's reset phase explain the falls at the start of a walk?", DOC,
               "4.4 Where it failed: the start of a walk", (
                   go2("reset-phase", "reset-phase --model outputs/go2/pretrain-cont/model", f"{R}/reset-phase/",
                       what="the 20,000-step model (stage 2's checkpoint, exported there) (~30 min)", minutes=30),)),
    Experiment("go2-own-states", "Do student takeovers in the data help the policy head on its own states?", DOC,
               "4.5 Where it fails now: its own states", (
                   go2("pretrain", "pretrain --stages 4,student --stop-at-32k", "outputs/go2/pretrain-s4/",
                       "outputs/go2/pretrain-student/"),
                   go2("measure-32k", f"measure {S4_32K}", f"{R}/stage4-32k/"),
                   go2("measure-student", "measure --stage stage4 --ckpt outputs/go2/pretrain-student/checkpoints/"
                       "last.ckpt --model outputs/go2/pretrain-student/model --out results/go2/student-32k",
                       f"{R}/student-32k/"))),
    Experiment("go2-realtime", "Does the paper-size planner walk better than the real-time preset?", DOC,
               "4.6 The paper-size planner against the real-time preset", (
                   go2("mppi", "paper-vs-realtime", f"{R}/mppi_flat_3m_*.json", what="~10 min", minutes=10),)),
    Experiment("go2-demo", "Does one adaptation round on a proxy-real profile help, as the demo shows?", DOC,
               "5. The demo", (go2("demo", "demo", f"{R}/demo/", what="the before/after table and videos (~7 min "
                                   "on 2 idle cores, 11 CPU min: docs/reproducibility.md)", minutes=11),)),
    Experiment("go2-adapt", "Does dynamics-only adaptation of the zoo model close the gap on PTFE and foam?", DOC,
               "6.1 With the zoo's model", (
                   go2("curve", "adapt-curve", f"{R}/adapt-{{profile}}-{{tag}}/",
                       what="the adaptation schedules and the value AUC (~25 min)", minutes=25),)),
    Experiment("go2-planner-reach", "Can the real-time planner act on adapted dynamics?", DOC,
               "6.3 The real-time planner cannot act on adapted dynamics", (
                   go2("reach", "planner-reach", f"{R}/planner-reach/", what="reads go2-adapt's runs (~15 min)",
                       minutes=15,
                       needs=("outputs/adapt/ptfe57-ema-speeds/stages/stage-2/",)),)),
    Experiment("go2-wide-search", "Do wider MPPI searches find the adapted actions?", DOC, "6.4 Wider searches", (
        go2("search", "wide-search", f"{R}/wide-search/", what="~1 h", minutes=60),)),
    Experiment("go2-friction", "Does a gentler PTFE slope change the outcome?", DOC,
               "6.5 A gentler PTFE slope does not change it", (
                   go2("sweep", "friction-sweep", f"{R}/ptfe-friction/", f"{R}/ptfe-friction/table.md",
                       what="frictions 0.14-0.20 (~1.5 h)", minutes=90),)),
    Experiment("go2-ablations", "Which parts of the model should adaptation finetune?", DOC,
               "6.6 Ablations: which parts to finetune", (
                   go2("ablations", "ablations", f"{R}/ablations-ema/", what="reads the demo's run (~20 min)",
                       minutes=20,
                       needs=("outputs/go2-demo/",)),)),
)
