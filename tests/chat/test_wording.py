"""Issue 34's wording list: counts in the singular where there is one, what an answer
did in words (not a phase id), /budget's lanes apart from the roles' own, move codes in
words, in English and German."""

from __future__ import annotations

import pytest

from chatbot.chat import render_spend
from chatbot.chat.texts import CATALOGUES
from chatbot.domain.action_labels import LABELS, action_label
from chatbot.domain.counted import NOUNS, counted
from chatbot.domain.phases import Kind, Phase
from chatbot.domain.transitions import Action
from chatbot.notify.texts import TEXTS as NOTIFY
from chatbot.store import jobs as job_store
from chatbot.store import telemetry
from chatbot.web.texts import CATALOGUES as WEB
from tests.records import run_record

from .conftest import Env, make_env, msg


def test_a_count_takes_its_nouns_form_in_both_languages() -> None:
    assert [counted(n, "run") for n in (0, 1, 2)] == ["0 runs", "1 run", "2 runs"]
    assert [counted(n, "card", "de") for n in (1, 2)] == ["1 Karte", "2 Karten"]
    assert counted(1, "more line", "de") == "1 weitere Zeile"
    assert counted(3, "child", "fr") == "3 children"  # an unknown locale reads English
    assert all(set(forms) == {"en", "de"} for forms in NOUNS.values())


COUNTS = ("count", "total", "n", "runs", "days", "gaps", "moves", "cards", "rooms")
PLURALS = ("runs", "cards", "events", "lines", "days", "jobs", "children", "gap", "Läufe", "Karte")


@pytest.mark.parametrize("where", ["chat", "web", "notify"])
def test_no_catalogue_writes_a_count_before_a_plural_noun(where: str) -> None:
    # "{count} runs" reads "1 runs"; "card(s)" is what the helper replaces: the field
    # takes the counted noun instead (domain/counted.py).
    catalogues = {"chat": CATALOGUES, "web": WEB, "notify": NOTIFY}[where]
    for locale, catalogue in catalogues.items():
        for key, text in catalogue.items():
            assert "(s)" not in text and "(n)" not in text and "(en)" not in text, (locale, key)
            for field in COUNTS:
                for noun in PLURALS:
                    assert f"{{{field}}} {noun}" not in text, (locale, key)


def test_every_move_has_words_in_both_languages() -> None:
    for locale in ("en", "de"):
        assert set(Action) <= set(LABELS[locale])
        assert all(label and "_" not in label for label in LABELS[locale].values())
    assert action_label("review_approved") == "review approved"
    assert action_label("operator_direct", "de") == "Operator lässt direkt umsetzen"
    assert action_label("written_by_a_later_version") == "written_by_a_later_version"


async def test_budget_lists_lanes_and_the_roles_own_apart_with_1_run(env: Env) -> None:
    card = await env.card("login")
    async with env.store.transaction() as db:
        light, _ = await job_store.enqueue(db, kind="builder", lane="light")
        job_store_operator, _ = await job_store.enqueue(db, kind="operator", lane="role:operator")
        for job, role, cost in ((light, "builder", 0.5), (job_store_operator, "operator", 0.25)):
            await telemetry.record(
                db, run_record(role=role, cost_usd=cost, job_id=job.id, card_id=card.id)
            )
    text = (await env.one(msg("/budget"))).text
    assert "role:" not in text and "1 runs" not in text
    assert "Today: $0.75, 2 runs (no day budget)." in text
    lines = text.splitlines()
    lanes = lines.index("Per lane (last 7 days):")
    roles = lines.index("Per role with a lane of its own (last 7 days):")
    assert lines[lanes + 1] == "  light: $0.50, 1 run"
    assert lines[roles + 1] == "  operator: $0.25, 1 run"


def test_budget_in_german_counts_too() -> None:
    from chatbot.board import SpendReport
    from chatbot.store.spend import Spend

    report = SpendReport(
        day=None,
        today=Spend("today", 0.5, 1),
        days=[Spend("2026-12-01", 0.5, 1)],
        lanes=[],
        cards=[],
        per_card_usd={},
        roles=[Spend("reviewer", 0.5, 1)],
    )
    text = render_spend.budget(report, "de")
    assert "Heute: $0.50, 1 Lauf (kein Tagesbudget)." in text
    assert "Je Rolle mit eigener Lane (letzte 7 Tage):\n  reviewer: $0.50, 1 Lauf" in text
    assert "Je Lane" not in text  # no configured lane ran


@pytest.mark.parametrize(
    ("phase", "kind", "said"),
    [
        (Phase.DRAFT_QUESTION, Kind.DRAFT, "Answer recorded for d; the planner is on it again."),
        (Phase.NEEDS_HUMAN, Kind.INTENT, "Answer recorded for d; the operator runs again with it."),
        (Phase.FIXER_QUESTION, Kind.INTENT, "Answer recorded for d; the fixer goes on with it."),
    ],
)
async def test_an_answer_says_what_happens_now(
    env: Env, phase: Phase, kind: Kind, said: str
) -> None:
    # Issue 34: "Answer recorded for draft-1; now draft running."
    await env.card("d", phase, kind=kind)
    assert (await env.one(msg("/answer d German"))).text == said


async def test_an_answer_in_german(store, tmp_path) -> None:
    env = make_env(store, tmp_path, locale="de")
    await env.card("d", Phase.DRAFT_QUESTION, kind=Kind.DRAFT)
    text = (await env.one(msg("/answer d Deutsch"))).text
    assert text == "Antwort für d gespeichert; der Planner arbeitet wieder daran."
