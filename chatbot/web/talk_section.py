"""The card page's part about its agent: what it asked (the full text, which chat
shortens), and how a person continues its session in a terminal."""

from __future__ import annotations

from collections.abc import Sequence

from chatbot.board import TalkRow
from chatbot.board.hand_over import HandOver
from chatbot.domain.shown import visible
from chatbot.web.markup import Safe, iso, join, tag
from chatbot.web.texts import Texts


def approvals(rows: Sequence[TalkRow], t: Texts) -> Safe:
    """Each approval the agent asked for, newest first: the exact command, escaped."""
    asked = [row for row in rows if row.kind == "approval"]
    if not asked:
        return Safe("")
    items = [
        tag(
            '<li class="approval {state}" id="approval-{id}"><p>{head}</p>'
            '<pre>{command}</pre><p class="cwd">{cwd}</p>{reason}</li>',
            state=row.state,
            id=row.id,
            head=t(
                "approval_head",
                tool=row.tool or "command",
                state=t(f"approval_{row.state}"),
                who=row.actor or "-",
                at=iso(row.created_at),
            ),
            command=visible(row.text),
            cwd=t("approval_cwd", cwd=visible(row.cwd or "-")),
            reason=tag('<p class="reason">{r}</p>', r=row.reason) if row.reason else Safe(""),
        )
        for row in asked
    ]
    return tag(
        '<section id="approvals"><h2>{h}</h2><ul class="approvals">{items}</ul></section>',
        h=t("approvals"),
        items=join(items),
    )


def hand_over(given: HandOver | None, t: Texts) -> Safe:
    if given is None:
        return Safe("")
    command = (
        tag("<pre>{c}</pre>", c=given.command)
        if given.command
        else tag("<p>{m}</p>", m=t("hand_over_none", runtime=given.runtime))
    )
    return tag(
        '<section id="session"><h2>{h}</h2><p>{session}</p><p>{worktree}</p>{command}</section>',
        h=t("session"),
        session=t("session_line", session=given.session, role=given.role, runtime=given.runtime),
        worktree=t("worktree", path=str(given.worktree)),
        command=command,
    )
