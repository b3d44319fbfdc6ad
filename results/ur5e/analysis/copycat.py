"""Does a model's policy head read the state or repeat the previous action? Replays logged free-start expert
episodes through the model's own history and compares its action with the expert's.

    python results/ur5e/analysis/copycat.py --model outputs/ur5e-peg/model --data outputs/ur5e/ur5e-peg-cpu

Per episode: the head's action at the first step (history = front padding, no past action) and at step 5
(the logged actions in its history) beside the expert's, and the mean absolute difference over the expert's
flagged steps of the first 30. A head that reads the state matches at step 0 as well as at step 5.
"""

from __future__ import annotations

import argparse
import json

import numpy as np


def replay(agent, episode, steps: int = 30) -> dict:  # type: ignore[no-untyped-def]
    """The head's actions along ``episode``'s logged history, against the logged (expert) actions."""
    history = agent.new_history(1)
    history.reset({k: v[:1] for k, v in episode.obs.items()})
    agent.reset()
    errors, picks = [], {}
    for t in range(min(steps, episode.length - 1)):
        action = agent.act(history).numpy()[0]
        if t in (0, 5):
            picks[t] = {"head": action[:3].round(2).tolist(), "expert": episode.actions[t, :3].round(2).tolist()}
        if episode.expert[t]:
            errors.append(float(np.abs(action - episode.actions[t]).mean()))
        history.push({k: v[t + 1:t + 2] for k, v in episode.obs.items()}, episode.actions[t:t + 1])
    return {"episode": int(episode.episode_id), "steps": picks, "mean_abs_error_flagged": float(np.mean(errors))}


def main() -> None:
    from simdist import load_agent
    from simdist.data import iter_episodes

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--episodes", type=int, default=6)
    args = p.parse_args()
    agent = load_agent(args.model).with_settings(planner="policy")
    rows = []
    for ep in iter_episodes(args.data, shuffle_shards=False):
        if ep.meta.get("reset") == "free" and ep.meta.get("expert_policy"):
            rows.append(replay(agent, ep))
            if len(rows) >= args.episodes:
                break
    first = np.mean([np.abs(np.subtract(r["steps"][0]["head"], r["steps"][0]["expert"])[:2]).mean() for r in rows])
    fifth = np.mean([np.abs(np.subtract(r["steps"][5]["head"], r["steps"][5]["expert"])[:2]).mean() for r in rows])
    print(json.dumps({"episodes": rows, "xy_error_step0": first, "xy_error_step5": fifth}, indent=1))


if __name__ == "__main__":
    main()
