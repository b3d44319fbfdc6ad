"""The Go2 protocol runner's plan (results/official/protocol.py): the 8-minute protocol's commands stay what its
recorded runs used, and a pilot on fewer minutes gets its own run folders, result names and schedule."""

from __future__ import annotations

import pytest

protocol = pytest.importorskip("results.official.protocol")


def _adapt_commands(minutes: float) -> list[list[str]]:
    return [cmd for _, cmd in protocol.plan("adapt", minutes)]


def test_the_8_minute_protocol_logs_into_its_recorded_folder_with_its_recorded_schedule() -> None:
    first, shorter = _adapt_commands(protocol.MINUTES)
    assert first[first.index("--out") + 1] == "outputs/official-protocol/foam-hard"
    assert first[first.index("--schedule") + 1] == "[0, 8]" and "--data_from" not in first
    assert shorter[shorter.index("--data_from") + 1] == "outputs/official-protocol/foam-hard"
    assert first[first.index("--finetune.epochs") + 1] == "100" and shorter[-1] == "10"


def test_a_pilot_has_its_own_folders_names_and_schedule() -> None:
    first, shorter = _adapt_commands(2.0)
    assert first[first.index("--out") + 1] == "outputs/official-protocol/foam-hard-2min"
    assert first[first.index("--schedule") + 1] == "[0, 2]"
    assert shorter[shorter.index("--out") + 1] == "outputs/official-protocol/foam-hard-2min-10pass"
    assert shorter[shorter.index("--data_from") + 1] == "outputs/official-protocol/foam-hard-2min"
    judged = [str(out) for out, _ in protocol.plan("adapted", 2.0)]
    assert "results/official/protocol/foam-hard/adapted-2min-100pass_seed0.json" in judged
    assert "results/official/protocol/foam-hard/control-adapted-2min-10pass_paper_std2.0_last.json" in judged
    agents = {cmd[cmd.index("--agent") + 1] for _, cmd in protocol.plan("adapted", 2.0) if "--agent" in cmd}
    assert agents == {f"results/official/protocol/foam-hard/models/adapted-2min-{p}pass" for p in (100, 10)}


def test_minutes_outside_the_protocol_are_refused_with_the_option_named(capsys: pytest.CaptureFixture[str]) -> None:
    for bad in ("0", "9"):
        with pytest.raises(SystemExit):
            protocol.main(["adapt", "--minutes", bad, "--dry-run"])
        assert "--minutes must be in (0, 8]" in capsys.readouterr().err
