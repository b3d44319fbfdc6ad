"""Does a model's policy head read the state or repeat the previous action? Replays logged free-start expert
episodes through the model's own history and compares its action with the expert's.

    python -m results.ur5e.analysis.copycat --model outputs/ur5e-peg/model --data outputs/ur5e/ur5e-peg-cpu

Per episode: the head's action at the first step (history = front padding, no past action) and at step 5
(the logged actions in its history) beside the expert's, and the mean absolute difference over the expert's
flagged steps of the first 30. A head that reads the state matches at step 0 as well as at step 5.

Over the episodes (each with its 95 % bootstrap interval): the xy error at steps 0 and 5, and, over the flagged
steps after the first, the head's xyz distance to the expert's action and to the previous logged action
(``copy``: a head that repeats the last action sits closer to it than to the expert's at the phase changes,
``phase_change_steps``: the flagged steps where the expert's action moves by more than 0.5 from the last one).
``--skip N`` passes over the first N qualifying episodes (e.g. those a model trained on).
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np


def replay(agent, episode, steps: int = 30) -> dict:  # type: ignore[no-untyped-def]
    """The head's actions along ``episode``'s logged history, against the logged (expert) actions."""
    history = agent.new_history(1)
    history.reset({k: v[:1] for k, v in episode.obs.items()})
    agent.reset()
    errors, picks, to_expert, to_prev = [], {}, [], []
    for t in range(min(steps, episode.length - 1)):
        action = agent.act(history).numpy()[0]
        if t in (0, 5):
            picks[t] = {"head": action[:3].round(2).tolist(), "expert": episode.actions[t, :3].round(2).tolist()}
        if episode.expert[t]:
            errors.append(float(np.abs(action - episode.actions[t]).mean()))
            prev = episode.actions[t - 1, :3] if t else None
            if prev is not None and np.abs(episode.actions[t, :3] - prev).max() > 0.5:
                to_expert.append(float(np.abs(action[:3] - episode.actions[t, :3]).mean()))
                to_prev.append(float(np.abs(action[:3] - prev).mean()))
        history.push({k: v[t + 1:t + 2] for k, v in episode.obs.items()}, episode.actions[t:t + 1])
    return {"episode": int(episode.episode_id), "steps": picks, "mean_abs_error_flagged": float(np.mean(errors)),
            "phase_change_to_expert": to_expert, "phase_change_to_previous": to_prev}


def _ci(values: list[float]) -> dict:
    from simdist import bootstrap_ci

    e = bootstrap_ci(values)
    return {"mean": e.mean, "low": e.low, "high": e.high, "n": e.n}


def main() -> None:
    from simdist import load_agent
    from simdist.data import iter_episodes

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True)
    p.add_argument("--data", required=True, help="dataset folder(s), comma-separated")
    p.add_argument("--episodes", type=int, default=6)
    p.add_argument("--skip", type=int, default=0, help="qualifying episodes passed over first")
    p.add_argument("--out", help="also write the JSON here")
    args = p.parse_args()
    agent = load_agent(args.model).with_settings(planner="policy")
    rows, seen = [], 0
    for ep in iter_episodes(args.data.split(","), shuffle_shards=False):
        if ep.meta.get("reset") == "free" and ep.meta.get("expert_policy"):
            seen += 1
            if seen <= args.skip:
                continue
            rows.append(replay(agent, ep))
            if len(rows) >= args.episodes:
                break
    first = [float(np.abs(np.subtract(r["steps"][0]["head"], r["steps"][0]["expert"])[:2]).mean()) for r in rows]
    fifth = [float(np.abs(np.subtract(r["steps"][5]["head"], r["steps"][5]["expert"])[:2]).mean()) for r in rows]
    to_expert = [v for r in rows for v in r["phase_change_to_expert"]]
    to_prev = [v for r in rows for v in r["phase_change_to_previous"]]
    report = {"model": args.model, "data": args.data, "skip": args.skip, "episodes": rows,
              "xy_error_step0": float(np.mean(first)), "xy_error_step5": float(np.mean(fifth)),
              "xy_error_step0_ci": _ci(first), "xy_error_step5_ci": _ci(fifth)}
    if to_expert:
        report["phase_change_steps"] = len(to_expert)
        report["phase_change_to_expert"] = _ci(to_expert)
        report["phase_change_to_previous"] = _ci(to_prev)
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        tmp = f"{args.out}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
