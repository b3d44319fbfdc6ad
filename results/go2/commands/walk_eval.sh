# Sourced by the measurement scripts.
# eval_once FILE ARGS... runs one `simdist evaluate --json ARGS` into FILE, written atomically (FILE.tmp, then
# renamed) and skipped when FILE exists, so the scripts resume; stderr goes to FILE.err, removed on success. A
# failed evaluation is reported and the script goes on (its file stays missing, so a rerun retries it).
# walk_eval FILE MODEL ARGS... is eval_once for MODEL on the 10 m course at 0.5 m/s (10 randomised trials; ARGS
# add terrain, planner, seed...).
eval_once() {
  local F=$1; shift
  [ -s "$F" ] && return 0
  simdist evaluate --json "$@" > "$F.tmp" 2> "$F.err" && mv "$F.tmp" "$F" && rm -f "$F.err" \
    || echo "eval_once: $F failed, see $F.err" >&2
  return 0
}
walk_eval() {
  local F=$1 M=$2; shift 2
  eval_once "$F" --controller model:$M --course-length 10 --speeds 0.5 --trials 10 --randomize "$@"
}
