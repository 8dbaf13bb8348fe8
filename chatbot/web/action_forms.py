"""What a signed-in owner can do on a card's page: plain HTML forms, one per action.

Each form POSTs to /card/<slug>/act with the session's CSRF token and is answered
with a redirect back to the card, so everything works without JavaScript. Only the
actions the card's phase allows are offered; a stale page may still send another,
and the answer is then chat's refusal with its way forward. What the last action
said is shown on top (`#said`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from chatbot.board import CardView, Request, TalkRow
from chatbot.board.budget import budget_stopped
from chatbot.board.talk import can_talk
from chatbot.domain.checks import SKIP_FLAG, deploy_held
from chatbot.domain.phases import Phase
from chatbot.domain.shown import visible
from chatbot.domain.transitions import Action, Stage, allowed_actions
from chatbot.web.markup import Safe, join, tag
from chatbot.web.texts import Texts

# The buttons of the card's own moves, in the order they are shown.
MOVES = (
    Action.START,
    Action.CONFIRM,
    Action.RETRY,
    Action.FIX,
    Action.DEPLOY,
    Action.CANCEL,
    Action.ARCHIVE,
)


@dataclass(frozen=True)
class Owner:
    """The signed-in owner looking at the page (or the session that just ended)."""

    identity: str
    csrf: str
    # What the last action from this session on this card answered: (text, refused).
    said: Sequence[tuple[str, bool]] = ()
    requests: Sequence[Request] = field(default_factory=list)


def _form(slug: str, csrf: str, action: str, body: Safe, *, css: str = "") -> Safe:
    return tag(
        '<form method="post" action="/card/{slug}/act" class="act {css}">'
        '<input type="hidden" name="csrf" value="{csrf}">'
        '<input type="hidden" name="action" value="{action}">{body}</form>',
        slug=slug,
        csrf=csrf,
        action=action,
        body=body,
        css=css,
    )


def _button(label: str, name: str = "", value: str = "") -> Safe:
    if name:
        return tag(
            '<button type="submit" name="{n}" value="{v}">{l}</button>', n=name, v=value, l=label
        )
    return tag('<button type="submit">{l}</button>', l=label)


def said_box(said: Sequence[tuple[str, bool]], t: Texts) -> Safe:
    """What the last action answered (`#said`), or nothing."""
    if not said:
        return Safe("")
    items = [
        tag('<p class="{css}">{text}</p>', css="refused" if refused else "done", text=text)
        for text, refused in said
    ]
    return tag(
        '<div id="said" role="status"><h3>{h}</h3>{items}</div>', h=t("said"), items=join(items)
    )


def _question(view: CardView, owner: Owner, t: Texts) -> Safe:
    question = view.open_question
    if question is None:
        return Safe("")
    slug = view.card.slug
    options = join(
        _button(option, "option", str(number))
        for number, option in enumerate(question.options, start=1)
    )
    free = tag(
        '<label>{l} <textarea name="text" rows="2" required></textarea></label>{b}',
        l=t("answer_text"),
        b=_button(t("act_answer")),
    )
    return tag(
        '<div class="answer"><p>{q}</p>{options}{free}</div>',
        q=visible(question.text) if question.kind == "agent" else question.text,
        options=_form(slug, owner.csrf, "answer", options, css="options") if options else "",
        free=_form(slug, owner.csrf, "answer", free, css="free"),
    )


def _approvals(slug: str, talk: Sequence[TalkRow], owner: Owner, t: Texts) -> Safe:
    forms = []
    for row in talk:
        if row.kind != "approval" or row.state != "open":
            continue
        deny = tag(
            '<label>{l} <input type="text" name="text" maxlength="4000"></label>{b}',
            l=t("deny_reason"),
            b=_button(t("act_deny")),
        )
        forms.append(
            tag(
                '<div class="approve" id="decide-{id}"><pre>{command}</pre>{allow}{deny}</div>',
                id=row.id,
                command=row.text,
                allow=_form(slug, owner.csrf, "approve", _button(t("act_approve"))),
                deny=_form(slug, owner.csrf, "deny", deny),
            )
        )
    return join(forms)


def _steer(view: CardView, owner: Owner, t: Texts) -> Safe:
    job = view.active_job
    running = job is not None and job.state == "running" and can_talk(job.kind)
    if not running and view.card.phase is not Phase.INTERRUPTED:
        return Safe("")
    body = tag(
        '<label>{l} <textarea name="text" rows="2" required></textarea></label>{b}',
        l=t("steer_text"),
        b=_button(t("act_steer")),
    )
    return _form(view.card.slug, owner.csrf, "steer", body, css="steer")


def _requests(slug: str, owner: Owner, t: Texts) -> Safe:
    forms = []
    for request in owner.requests:
        accept = _button(t("act_accept"), "action", "accept")
        buttons = join((accept, _button(t("act_decline"), "action", "decline")))
        forms.append(
            tag(
                '<form method="post" action="/card/{slug}/act" class="act request">'
                '<input type="hidden" name="csrf" value="{csrf}">'
                '<input type="hidden" name="request" value="{id}"><p>{line}</p>{buttons}</form>',
                slug=slug,
                csrf=owner.csrf,
                id=request.id,
                line=t(
                    "request_line",
                    id=request.id,
                    requester=request.requester,
                    command=request.command,
                    argument=request.argument,
                ),
                buttons=buttons,
            )
        )
    return join(forms)


def _past_the_checks(
    view: CardView, allowed: Sequence[Action], owner: Owner, t: Texts
) -> list[Safe]:
    """The owner's choice past the repository's checks, once, where they hold the card:
    a deploy of a commit whose checks did not pass, a retry of a card they failed
    (chat's `/deploy <slug> --skip-checks`, `/retry <slug> --skip-checks`)."""
    card = view.card
    found = []
    skip = tag('<input type="hidden" name="checks" value="{flag}">', flag=SKIP_FLAG)
    if Action.DEPLOY in allowed and deploy_held(card.data.checks, card.commit_hash) is not None:
        button = join((skip, _button(t("act_deploy_skip_checks"))))
        found.append(_form(card.slug, owner.csrf, "deploy", button, css="skip-checks"))
    if Action.RETRY in allowed and card.failure_stage == Stage.CHECKS.value:
        button = join((skip, _button(t("act_retry_skip_checks"))))
        found.append(_form(card.slug, owner.csrf, "retry", button, css="skip-checks"))
    return found


def section(view: CardView, talk: Sequence[TalkRow], owner: Owner | None, t: Texts) -> Safe:
    """The card's actions for a signed-in owner; nothing for a reader with the token."""
    if owner is None:
        return Safe("")
    card = view.card
    allowed = allowed_actions(
        card.phase, card.kind, card.failure_stage, budget_stopped=budget_stopped(card) is not None
    )
    moves = [
        _form(card.slug, owner.csrf, action.value, _button(t(f"act_{action.value}")))
        for action in MOVES
        if action in allowed
    ]
    moves += _past_the_checks(view, allowed, owner, t)
    return tag(
        '<section id="act"><h2>{h}</h2><p class="who">{who}</p>{said}{question}{approvals}'
        '{steer}{requests}<div class="moves">{moves}</div></section>',
        h=t("act"),
        who=t("signed_in_as", identity=owner.identity),
        said=said_box(owner.said, t),
        question=_question(view, owner, t),
        approvals=_approvals(card.slug, talk, owner, t),
        steer=_steer(view, owner, t),
        requests=_requests(card.slug, owner, t),
        moves=join(moves),
    )
