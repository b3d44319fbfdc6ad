"""The UR5e manipulation tasks (``ur5e-peg``, ``ur5e-table-leg``): a UR5e with a parallel-jaw gripper under
Cartesian impedance control in MuJoCo, scripted experts, initial-condition grids and proxy-real profiles.

Importing this package registers the tasks without importing MuJoCo; the env and the other names load on
first use.
"""

from simdist.components.tasks.ur5e import presets as _presets  # noqa: F401
from simdist.components.tasks.ur5e.task import PegTask, TableLegTask, UR5eTask
from simdist.lazy import lazy_getattr

_LAZY = {
    "UR5eEnv": "env", "ArmEnvConfig": "env", "PegAssembly": "assembly", "ScriptedExpert": "expert",
    "make_expert": "expert", "suboptimal_experts": "expert", "GRIDS": "grids", "get_grid": "grids",
    "PEG_SCHEMA": "profiles", "LEG_SCHEMA": "profiles", "PegProfile": "profiles", "LegProfile": "profiles",
    "build_robot_spec": "robot",
}

__all__ = ["PegTask", "TableLegTask", "UR5eTask", *_LAZY]

__getattr__ = lazy_getattr(__name__, _LAZY, globals())
