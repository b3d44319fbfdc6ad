#!/usr/bin/env bash
# SimDist's loop on a standard benchmark we did not write: Gymnasium's HalfCheetah-v5 with an actuation-latency
# shift (profile `lag` of the gym:ID tasks: actions act 3 control steps late). Page: docs/gym.md.
# Usage, from the repository root:   bash results/gym/run.sh STAGE SEED      (STAGE: expert data pretrain planner
#   loop ranking baseline probe, or all; expert = expert-sim expert-shift calibrate, which may run as separate
#   processes). Every stage resumes when rerun with the same arguments; each skips work already done. Do not edit
#   this file while a stage runs (bash reads it as it goes).
# Runs write under outputs/gym/ (git ignores it); the small result JSON files land in results/gym/s$SEED/.
# Knobs (environment): ENV_ID (HalfCheetah-v5), PROFILE (lag), ITERS (PPO iterations, 1000 = 1M steps with 16 envs
#   x 64 steps), TRANSITIONS (pretraining data, 1000000), EPOCHS (pretraining, 10), TRIALS (30), SAMPLES/ITERATIONS
#   (MPPI budget: 256 x 2), SCHEDULE (adapt: real minutes per stage, 0,2,5), SIMDIST (the command), OUT and RESULTS
#   (the run and result folders), FIT_ARGS and ADAPT_ARGS (extra options of simdist fit / simdist adapt), STATES
#   and CANDIDATES (cloned states and candidates per state of the plan-ranking analysis, 40 and 32 <= samples),
#   EXPERT_SEED (the seed whose PPO experts, ladder and critic the stages use; default SEED: pretraining seeds 1
#   and 2 may reuse seed 0's experts with EXPERT_SEED=0, their data and pretraining still drawn with SEED),
#   PRIOR_STD (MPPI sampled around the policy prior: warm start from the policy head's chunk, initial std
#   PRIOR_STD instead of the paper's 2.0 around the shifted plan; the planner, loop and ranking stages' files and
#   folders then carry `-priorSTD`, e.g. adapt-curve-lag1-prior0.3.json, beside the paper planner's).
set -euo pipefail
stage=${1:?usage: run.sh STAGE SEED  (STAGE: expert data pretrain planner loop baseline all)}
seed=${2:?usage: run.sh STAGE SEED}
simdist=${SIMDIST:-.venv/bin/simdist}
env_id=${ENV_ID:-HalfCheetah-v5}
profile=${PROFILE:-lag}
task="gym:$env_id"
iters=${ITERS:-1000}
transitions=${TRANSITIONS:-1000000}
epochs=${EPOCHS:-10}
trials=${TRIALS:-30}
samples=${SAMPLES:-256}
iterations=${ITERATIONS:-2}
schedule=${SCHEDULE:-0,2,5}
out=${OUT:-outputs/gym/$env_id}
res=${RESULTS:-results/gym/s$seed}
eseed=${EXPERT_SEED:-$seed}  # the PPO experts' seed: other pretraining seeds may share seed 0's experts
kept_ppo=${RESULTS:-results/gym/s$eseed}/ppo  # the PPO checkpoints kept in git (restore-ppo, keep)
read -r -a fit_args <<< "${FIT_ARGS:-}"      # extra simdist fit options (e.g. --data.windows_per_epoch 2000)
read -r -a adapt_args <<< "${ADAPT_ARGS:-}"  # extra simdist adapt options (e.g. --epochs 1)
prior_std=${PRIOR_STD:-}
tag=${prior_std:+-prior$prior_std}  # the planner variant's suffix of result files and run folders
mppi=(--samples "$samples" --iterations "$iterations")  # evaluate and mechanism spell the MPPI options this way
adapt_mppi=(--num_samples "$samples" --iterations "$iterations")  # simdist adapt (jsonargparse) spells them so
if [[ -n $prior_std ]]; then
  mppi+=(--warm-start policy --init-std "$prior_std")
  adapt_mppi+=(--warm_start policy --init_std "$prior_std")
fi
mkdir -p "$out" "$res"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OMP_WAIT_POLICY=PASSIVE

evaluate() {  # evaluate NAME AGENT PROFILE [options]: one JSON per row, skipped when present
  local name=$1 agent=$2 prof=$3; shift 3
  [[ -s $res/$name.json ]] && return 0
  $simdist evaluate --task "$task" --agent "$agent" --profile "$prof" --trials "$trials" --envs 10 --seed 100 \
    --json "$@" > "$res/.$name.json.tmp" && mv "$res/.$name.json.tmp" "$res/$name.json"
}

restore-ppo() {  # restore-ppo RUN: a PPO log folder with no checkpoint starts from the ones kept in results/ (keep)
  local log=$out/ppo-$1-s$eseed kept=$kept_ppo/$1
  if ! compgen -G "$log/model_*.pt" > /dev/null && [[ -d $kept ]]; then
    mkdir -p "$log" && cp "$kept"/model_*.pt "$log"/
  fi
}

keep() {  # the newest full checkpoint of each PPO run (to resume training) and the sim run's ladder every 100
  # iterations without optimiser state (to export the sub-optimal set), into results/ (small files, committed)
  local run log kept newest it
  for run in sim "$profile"; do
    log=$out/ppo-$run-s$eseed kept=$kept_ppo/$run
    compgen -G "$log/model_*.pt" > /dev/null || continue
    mkdir -p "$kept" && rm -f "$kept"/model_*.pt
    newest=$(ls "$log" | sed -n 's/^model_\([0-9]*\)\.pt$/\1/p' | sort -n | tail -1)
    cp "$log/model_$newest.pt" "$kept/"
    if [[ $run == sim ]]; then
      for it in $(ls "$log" | sed -n 's/^model_\([0-9]*\)\.pt$/\1/p' | sort -n); do
        (( it % 100 == 0 && it != newest )) || continue
        .venv/bin/python -c 'import sys, torch
c = torch.load(sys.argv[1], weights_only=False)
torch.save({k: c[k] for k in ("actor_state_dict", "critic_state_dict", "iter")}, sys.argv[2])' \
          "$log/model_$it.pt" "$kept/model_$it.pt"
      done
    fi
  done
}

expert-sim() {  # the PPO expert on the simulator, with its sub-optimal checkpoint ladder
  restore-ppo sim
  $simdist train-expert --task "$task" --log-dir "$out/ppo-sim-s$eseed" --iterations "$iters" --seed "$eseed" \
    --export "$out/experts-sim-s$eseed"
}

expert-shift() {  # a PPO expert trained on the shifted profile (the calibration's upper reference)
  restore-ppo "$profile"
  $simdist train-expert --task "$task" --profile "$profile" --log-dir "$out/ppo-$profile-s$eseed" \
    --iterations "$iters" --seed "$eseed" --export "$out/experts-$profile-s$eseed"
}

calibrate() {  # the shift's calibration rows: zero-shot <= 70 % of nominal, shift-trained expert >= 90 %
  evaluate expert-sim-on-sim "expert:$out/experts-sim-s$eseed" sim
  evaluate expert-sim-on-$profile "expert:$out/experts-sim-s$eseed" "$profile"
  evaluate expert-$profile-on-$profile "expert:$out/experts-$profile-s$eseed" "$profile"
}

data() {  # the expert / sub-optimal ladder mixture with perturbation windows, on the simulator
  $simdist generate --task "$task" --experts "$out/experts-sim-s$eseed" --envs 16 --transitions "$transitions" \
    --seed "$seed" --out "$out/data-s$seed" --no-progress --json > "$res/data.json"
}

pretrain() {  # all components on the simulator data; resumes from last.ckpt; exports the model folder
  local root=$out/pretrain-s$seed ckpt=()
  [[ -s $root/checkpoints/last.ckpt ]] && ckpt=(--ckpt_path "$root/checkpoints/last.ckpt")
  if [[ ! -s $out/model-s$seed/config.json ]]; then
    $simdist fit --config recipes/gym/base.yaml --config recipes/gym/pretrain.yaml \
      --model.init_args.preset "$task" --data.train "$out/data-s$seed" --seed_everything "$seed" \
      --trainer.max_epochs "$epochs" --trainer.default_root_dir "$root" --trainer.logger false \
      --trainer.enable_progress_bar false "${ckpt[@]}" "${fit_args[@]}"  # the recipe's ModelCheckpoint: last.ckpt
    $simdist export --ckpt "$root/checkpoints/last.ckpt" --out "$out/model-s$seed"
  fi
}

planner() {  # the pretrained model's MPPI, zero-shot, on the simulator and on the shifted profile
  evaluate "planner-on-sim$tag" "$out/model-s$seed" sim "${mppi[@]}"
  evaluate "planner-on-$profile$tag" "$out/model-s$seed" "$profile" "${mppi[@]}"
}

loop() {  # proxy-real logging and dynamics-only finetuning on the shifted profile (resumable run folder)
  $simdist adapt --task "$task" --agent "$out/model-s$seed" --real "$profile" --schedule "$schedule" \
    --out "$out/adapt-$profile$tag-s$seed" --episodes_per_eval "$trials" "${adapt_mppi[@]}" \
    --seed "$seed" "${adapt_args[@]}"
  cp "$out/adapt-$profile$tag-s$seed/curve.json" "$res/adapt-curve-$profile$tag.json"
  ranking
}

ranking() {  # plan ranking on lag before and after adaptation: Spearman rho of the models' predicted returns of the
  # planner's candidates against their true returns from cloned states (the sim expert and its critic continue)
  local last
  last=$(ls -d "$out/adapt-$profile$tag-s$seed/stages/stage-"* | sort -V | tail -1)
  [[ -s $res/ranking-$profile$tag.json ]] || $simdist mechanism --task "$task" --real "$profile" \
    --model "pretrained=$out/model-s$seed" --model "adapted=$last" --expert-set "$out/experts-sim-s$eseed" \
    "${mppi[@]}" --states "${STATES:-40}" --candidates "${CANDIDATES:-32}" \
    --envs 8 --seed "$seed" --out "$res/ranking-$profile$tag.json"
}

baseline() {  # the model's behaviour-cloned policy head (same data) on both profiles; with BASELINES=1 also the
  # paper's baselines protocol (IQL and single-step BC beside SimDist, results/baselines/gym-halfcheetah-PROFILE/)
  evaluate bc-policy-on-$profile "$out/model-s$seed" "$profile" --planner policy
  evaluate bc-policy-on-sim "$out/model-s$seed" sim --planner policy
  if [[ ${BASELINES:-0} == 1 && $env_id == HalfCheetah-v5 && $profile == lag* ]]; then
    .venv/bin/python -m results.baselines.compare --task "gym-halfcheetah-$profile" --model "$out/model-s$seed" \
      --seeds "$seed" --agents iql,bc --jobs 1
  fi
}

probe() {  # the calibration rows on the newest checkpoints of PPO runs still training (IT: the sim run's iteration)
  local it
  it=$(ls "$out/ppo-sim-s$eseed" | sed -n 's/^model_\([0-9]*\)\.pt$/\1/p' | sort -n | tail -1)
  local sets=$out/probe-s$eseed-it$it dir=$res/probe-it$it
  mkdir -p "$dir"
  $simdist train-expert --task "$task" --log-dir "$out/ppo-sim-s$eseed" --iterations 0 --expert "$it" \
    --export "$sets/sim" > /dev/null
  (res=$dir; evaluate expert-sim-on-sim "expert:$sets/sim" sim; evaluate expert-sim-on-$profile "expert:$sets/sim" "$profile")
  if compgen -G "$out/ppo-$profile-s$eseed/model_*.pt" > /dev/null; then
    $simdist train-expert --task "$task" --profile "$profile" --log-dir "$out/ppo-$profile-s$eseed" --iterations 0 \
      --expert "$it" --export "$sets/$profile" > /dev/null  # its checkpoint nearest to the sim run's
    (res=$dir; evaluate expert-$profile-on-$profile "expert:$sets/$profile" "$profile")
  fi
}

sweep() {  # the newest probe's sim expert zero-shot on latencies 1 and 2 (the calibration's alternatives to lag's 3)
  local it dir
  it=$(ls -d "$out/probe-s$eseed-it"* | sed 's/.*-it//' | sort -n | tail -1)
  dir=$res/sweep-it$it
  mkdir -p "$dir" "$out/sweep"
  for lat in 1 2; do
    printf 'name: lag%s\nlatency: %s\n' "$lat" "$lat" > "$out/sweep/lag$lat.yaml"
    (res=$dir; evaluate expert-sim-on-latency$lat "expert:$out/probe-s$eseed-it$it/sim" "$out/sweep/lag$lat.yaml")
  done
}

expert() { expert-sim; expert-shift; calibrate; }

case "$stage" in
  expert|expert-sim|expert-shift|calibrate|probe|sweep|keep|data|pretrain|planner|loop|ranking|baseline) "$stage" ;;
  all) expert; data; pretrain; planner; loop; baseline ;;
  *) echo "run.sh: unknown stage '$stage' (expert expert-sim expert-shift calibrate probe sweep keep data pretrain planner loop ranking baseline all)" >&2
     exit 2 ;;
esac
