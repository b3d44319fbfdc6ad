"""The ``gym:ID`` task family: any Gymnasium environment (an id or a ``module:Class`` entry point) as a simdist
task, built on first use (:func:`.task.gym_task_class`). Importing this package registers the family without
importing Gymnasium's MuJoCo envs; the env adapter and the PPO trainer load on first use."""

from simdist.components.tasks.gym.task import GymTask, gym_preset, gym_task_class

__all__ = ["GymTask", "gym_preset", "gym_task_class"]
