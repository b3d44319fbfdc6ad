"""The task-generic reality-profile mechanism: key checks, errors, layering, the key tables, every task."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from simdist.profiles import (
    ProfileError,
    ProfileKey,
    ProfileSchema,
    Range,
    builtin_names,
    load_profile_data,
    profile_table,
)
from simdist.tasks import make_task, task_class, task_names

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Demo:
    name: str = "custom"
    description: str = ""
    gain: float = 1.0
    steps: int = 0
    mode: str = "a"
    offset: list[float] = field(default_factory=lambda: [0.0, 0.0])
    spots: list[dict] = field(default_factory=list)


SPOT = ProfileSchema((
    ProfileKey("x", "list[float]", doc="span", unit="m", length=2, range="[-1, 1]", increasing=True),
    ProfileKey("grip", "float", None, "grip", range="(0, 2]", nullable=True),
), nested=True)
SCHEMA = ProfileSchema.from_dataclass(Demo, [
    ProfileKey("gain", "float", doc="a gain", range="(0, 5]"),
    ProfileKey("steps", "int", doc="a delay", unit="steps", range="[0, 10]"),
    ProfileKey("mode", "str", doc="a mode", choices=("a", "b")),
    ProfileKey("offset", "list[float]", doc="an offset", unit="m", length=2, ranges=("[-1, 1]", "[0, 1]")),
    ProfileKey("spots", "list[mapping]", doc="regions", schema=SPOT),
])


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def test_range_notation_round_trips() -> None:
    r = Range.parse("(0, 5]")
    assert str(r) == "(0, 5]" and 5 in r and 0 not in r and 0.1 in r and 5.01 not in r
    assert str(Range.parse("[0, inf)")) == "[0, inf)" and 1e9 in Range.parse("[0, inf)")
    assert float("nan") not in Range.parse("[-inf, inf]")
    with pytest.raises(ValueError, match="bad range"):
        Range.parse("0..5")


def test_defaults_come_from_the_dataclass_and_cover_its_fields() -> None:
    data = SCHEMA.validate({})
    assert data == {"name": "custom", "description": "", "gain": 1.0, "steps": 0, "mode": "a",
                    "offset": [0.0, 0.0], "spots": []}
    assert isinstance(SCHEMA.build(data), Demo)

    @dataclass
    class Missing:
        name: str = "x"
        gain: float = 1.0
        other: int = 0

    with pytest.raises(ValueError, match="other"):
        ProfileSchema.from_dataclass(Missing, [ProfileKey("gain", "float")])


@pytest.mark.parametrize("text, message", [
    ("gain: -0.2\n", r"p\.yaml: gain = -0.2 is out of range \(0, 5\]"),
    ("gain: .nan\n", "gain = .nan is not a number"),
    ("gain: fast\n", "gain = 'fast' is not a number"),
    ("gain: true\n", "gain = true is not a number"),
    ("steps: 1.5\n", "steps = 1.5 is not an integer"),
    ("steps: 11\n", r"steps = 11 is out of range \[0, 10\]"),
    ("mode: c\n", "mode = 'c' is not one of a, b"),
    ("offset: [0.0]\n", r"offset = \[0.0\] needs 2 values, got 1"),
    ("offset: [0.0, -0.5]\n", r"offset\[1\] = -0.5 is out of range \[0, 1\]"),
    ("offset: null\n", "offset = null is not accepted"),
    ("gian: 1\n", "unknown key 'gian'; known keys: name, description, gain, steps, mode, offset, spots"),
    ("spots: [{x: [0.5, 0.2]}]\n", r"spots\[0\].x = \[0.5, 0.2\] must be increasing"),
    ("spots: [{grip: 1}]\n", r"spots\[0\].x is required"),
    ("spots: [{x: [0, 1], grip: 3}]\n", r"spots\[0\].grip = 3 is out of range \(0, 2\]"),
    ("spots: [{x: [0, 1], gripp: 1}]\n", r"spots\[0\]: unknown key 'gripp'; known keys: x, grip"),
    ("- a list\n", "must be a YAML mapping"),
])
def test_errors_name_file_key_value_and_accepted(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, "p.yaml", text)
    with pytest.raises(ProfileError, match=message) as err:
        load_profile_data(path, SCHEMA)
    assert str(path) in str(err.value)


def test_every_problem_is_listed_and_nested_values_normalised(tmp_path: Path) -> None:
    with pytest.raises(ProfileError) as err:
        SCHEMA.validate({"gain": 0, "steps": -1}, "x.yaml")
    assert str(err.value).splitlines() == ["x.yaml: gain = 0 is out of range (0, 5]",
                                           "x.yaml: steps = -1 is out of range [0, 10]"]
    data = SCHEMA.validate({"gain": 2, "spots": [{"x": [0, 1]}]})
    assert data["gain"] == 2.0 and isinstance(data["gain"], float)
    assert data["spots"] == [{"x": [0.0, 1.0], "grip": None}]


def test_names_paths_and_builtins(tmp_path: Path) -> None:
    builtin = tmp_path / "builtin"
    builtin.mkdir()
    _write(builtin, "soft.yaml", "gain: 0.5\n")
    assert builtin_names(builtin) == ["soft"] and builtin_names(None) == []
    soft = load_profile_data("soft", SCHEMA, builtin)
    assert soft["gain"] == 0.5 and soft["name"] == "soft"
    _write(builtin, "bad.yaml", "gain: 9\n")
    with pytest.raises(ProfileError, match=r"^bad.yaml: gain = 9"):  # a built-in is named by its file
        load_profile_data("bad", SCHEMA, builtin)
    with pytest.raises(ProfileError, match="unknown reality profile 'hard'; built-ins: bad, soft"):
        load_profile_data("hard", SCHEMA, builtin)
    with pytest.raises(ProfileError, match="does not exist"):
        load_profile_data(tmp_path / "nope.yaml", SCHEMA, builtin)
    assert load_profile_data({"name": "d", "steps": 3}, SCHEMA)["steps"] == 3
    with pytest.raises(ProfileError, match="^profile 'd': steps = 30"):
        load_profile_data({"name": "d", "steps": 30}, SCHEMA)


def test_layering_with_base(tmp_path: Path) -> None:
    builtin = tmp_path / "builtin"
    builtin.mkdir()
    _write(builtin, "soft.yaml", "description: soft\ngain: 0.5\nsteps: 2\noffset: [0.1, 0.2]\n")
    child = _write(tmp_path, "child.yaml", "base: soft\nsteps: 4\n")
    data = load_profile_data(child, SCHEMA, builtin)
    assert (data["gain"], data["steps"], data["offset"]) == (0.5, 4, [0.1, 0.2])
    assert data["name"] == "child" and data["description"] == ""  # name and description are not inherited
    grandchild = _write(tmp_path, "grandchild.yaml", "base: child.yaml\nname: gc\ngain: 1.5\n")
    data = load_profile_data(grandchild, SCHEMA, builtin)
    assert (data["name"], data["gain"], data["steps"]) == ("gc", 1.5, 4)
    assert load_profile_data({"base": "soft", "mode": "b"}, SCHEMA, builtin)["gain"] == 0.5
    _write(tmp_path, "a.yaml", "base: b.yaml\n")
    _write(tmp_path, "b.yaml", "base: a.yaml\n")
    with pytest.raises(ProfileError, match="cycle"):
        load_profile_data(tmp_path / "a.yaml", SCHEMA, builtin)
    with pytest.raises(ProfileError, match="orphan.yaml: base = 'missing': unknown reality profile"):
        load_profile_data(_write(tmp_path, "orphan.yaml", "base: missing\n"), SCHEMA, builtin)
    with pytest.raises(ProfileError, match="over.yaml: gain = 7"):  # the layered result is checked
        load_profile_data(_write(tmp_path, "over.yaml", "base: soft\ngain: 7\n"), SCHEMA, builtin)


def test_key_table_lists_nested_keys() -> None:
    table = profile_table(SCHEMA)
    assert "| `gain` | float | (0, 5] | `1.0` |  | a gain |" in table
    assert "| `offset` | list[float] | 2 values, in [-1, 1] x [0, 1] | `[0.0, 0.0]` | m | an offset |" in table
    assert "| `spots[].x` | list[float] | 2 values, each in [-1, 1], increasing | required | m | span |" in table


# ---- every registered task ---------------------------------------------------------------------------


def _bad_value(key: ProfileKey) -> object | None:
    """A value of ``key``'s type outside its accepted range, or None if every value is accepted."""
    r = key.element_range(0 if key.ranges else None)
    if r is None:
        return None
    bad = r.low - 1.0 if r.low > -float("inf") else r.high + 1.0
    if key.type == "int":
        return int(bad)
    if key.type == "float":
        return bad
    values = [r.low if r.low_closed else r.high] * (key.length or max(key.min_length, 1))
    values[0] = bad
    return values


@pytest.mark.parametrize("task", task_names())
def test_every_task_declares_checked_profile_keys(task: str, tmp_path: Path) -> None:
    cls = task_class(task)
    schema = cls.profile_schema()
    assert schema is not None, f"task {task} declares no profile keys"
    for name in cls.profiles():  # every built-in loads and builds the task
        assert cls.load_profile(name) is not None
        make_task(task, profile=name)
    checked = 0
    for key in schema.keys:
        bad = _bad_value(key)
        if bad is None:
            continue
        path = _write(tmp_path, "bad.yaml", f"{key.name}: {bad}\n")
        with pytest.raises(ProfileError) as err:
            cls.load_profile(path)
        first = str(err.value).splitlines()[0]
        assert first.startswith(f"{path}: {key.name}") and "out of range" in first, first
        with pytest.raises(ProfileError, match=re.escape(key.name)):  # refused when the task is built
            make_task(task, profile=str(path))
        checked += 1
    assert checked >= 3
    with pytest.raises(ProfileError, match="unknown key 'no_such_key'"):
        cls.load_profile({"no_such_key": 1})


def test_docs_key_tables_match_the_schemas() -> None:
    """docs/profiles.md carries each task's generated table (``simdist tasks --profile-keys TASK``)."""
    from simdist.registry import list_families

    doc = (ROOT / "docs" / "profiles.md").read_text()
    task_class("gym:Pendulum-v1")  # a task family's tasks share one table, under PREFIX:ID
    families = list_families("task")
    for task in task_names():
        prefix = task.partition(":")[0]
        marker = f"{prefix}:ID" if prefix in families else task
        table = profile_table(task_class(task).profile_schema())
        assert f"<!-- profile-keys {marker} -->\n{table}\n<!-- /profile-keys -->" in doc, (
            f"regenerate the {marker} table in docs/profiles.md with `simdist tasks --profile-keys {task}`")


def test_tasks_command_prints_the_key_table(capsys: pytest.CaptureFixture[str]) -> None:
    from simdist.tools.components import tasks_main

    assert tasks_main(["--profile-keys", "toy-reach"]) == 0
    assert capsys.readouterr().out.strip() == profile_table(task_class("toy-reach").profile_schema())
    assert tasks_main([]) == 0
    assert "profile keys: tilt, mass_scale, friction" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="unknown task"):
        tasks_main(["--profile-keys", "nope"])


def test_core_profile_module_names_no_task() -> None:
    text = (ROOT / "simdist" / "profiles.py").read_text().lower()
    assert not [w for w in ("go2", "toy", "unitree", "quadruped") if w in text]


@pytest.mark.parametrize("name, profile", [("go2", "foam"), ("toy-reach", "real"), ("ur5e-peg", "peg-real")])
def test_a_task_parses_its_profile_once(name: str, profile: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The task parses the profile name when it is built; its name, description and envs use the parsed object,
    never the name again (the training simulator's env may read its own profile: toy-reach's ``sim``)."""
    import simdist.components.tasks.go2.profiles as go2_profiles
    import simdist.components.tasks.toy_reach.profiles as toy_profiles
    import simdist.tasks as tasks
    from simdist import make_task
    from simdist.profiles import load_profile_data

    reads: list[object] = []

    def counted(source: object, *args: object, **kwargs: object) -> object:
        reads.append(source)
        return load_profile_data(source, *args, **kwargs)

    for module in (go2_profiles, toy_profiles, tasks):
        monkeypatch.setattr(module, "load_profile_data", counted)
    task = make_task(name, profile=profile)
    assert reads == [profile] and task.profile_name == task.profile.name
    assert task.name.endswith(f":{task.profile.name}")
    for real in (True, False):
        task.make_env(1, seed=0, real=real).close()
    assert task.describe()["profile"] == task.profile.name and reads.count(profile) == 1
