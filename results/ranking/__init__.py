"""Plan ranking as a training signal (docs/ranking.md): ranking data from the simulator and ranking distillation
into the score heads, measured by the gates of the plan-ranking work."""
