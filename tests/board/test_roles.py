"""The role table agrees with the phases, the templates and itself."""

from __future__ import annotations

from chatbot.domain.phases import RUNNING_PHASES, Phase
from chatbot.domain.roles import BY_NAME, FOR_PHASE, ROLES, ProfileFrom, is_repeatable
from runners import prompts


def test_every_running_phase_but_the_research_run_has_its_role() -> None:
    # research_running is entered by the researcher's own job, already running.
    assert set(FOR_PHASE) == RUNNING_PHASES - {Phase.RESEARCH_RUNNING}
    assert len(BY_NAME) == len(ROLES)


def test_templates_are_exactly_those_in_roles() -> None:
    named = [t for role in ROLES for t in role.templates]
    assert sorted(named) == sorted(prompts.template_names())


def test_writers_are_never_repeated_and_build_in_the_cards_worktree() -> None:
    for role in ROLES:
        assert role.repeatable is not role.writes, role.name
    assert is_repeatable("operator") and not is_repeatable("builder")
    assert not is_repeatable("deploy")  # half a merge is for a person to look at
    assert BY_NAME["builder"].lane("heavy", "light") == "heavy"
    assert BY_NAME["builder"].profile_from is ProfileFrom.LANE
    assert BY_NAME["reviewer"].lane("heavy", "light") == "role:reviewer"


def test_each_roles_templates_name_every_block_of_its_contract() -> None:
    # The prompts and the parsers cannot drift apart: what a role is told to write
    # is what its parser reads.
    for role in ROLES:
        text = "\n".join(prompts.template_text(t) for t in role.templates)
        for marker in role.contract:
            assert marker.start in text and marker.end in text, (role.name, marker.start)
