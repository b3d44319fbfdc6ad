"""Numbers the toy task and its env share (this module imports nothing, so reading them loads no MuJoCo)."""

#: success: the puck within this distance (m) of the goal (the env's ``info["success"]``, the task's success)
SUCCESS_RADIUS = 0.15
