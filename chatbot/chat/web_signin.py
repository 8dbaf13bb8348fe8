"""/web: an owner's one-time sign-in link to the web board, their sessions, ending them.

Only in a direct chat: a link posted in a room would sign in whoever reads the room
first, and the list of sessions is nobody else's business. The link is bound to the
asker's identity; what the page then lets them do is decided again on every action
(chat/web_acts.py), from the configuration as it is then.
"""

from __future__ import annotations

import time

from chatbot.board.web_sessions import CREDENTIAL_PURPOSE, LINK_VALID_S
from chatbot.chat.commands import CommandCall
from chatbot.chat.host import Facet
from chatbot.chat.replies import Origin

SIGN_IN_PATH = "signin/"
SYSTEMS = ("Android", "iPhone", "iPad", "Windows", "Mac OS", "Linux")


def _when(at: float | None) -> str:
    return "-" if at is None else time.strftime("%Y-%m-%d %H:%M", time.localtime(at))


def _agent(user_agent: str | None) -> str:
    """The browser in a few words: the product tokens people recognise, not the whole line."""
    text = user_agent or "-"
    for name in ("Firefox", "Edg", "Chrome", "Safari"):
        if name + "/" in text:
            system = next((s for s in SYSTEMS if s in text), "")
            shown = "Edge" if name == "Edg" else name
            return f"{shown} ({system})" if system else shown
    return text[:40]


ALL = "all"
_BAD = object()


def _which(value: object) -> int | str | object | None:
    """A session's number (`3`, `#3`), "all", None when not given, else _BAD."""
    if value is None or value == ALL:
        return value
    digits = str(value).removeprefix("#")
    if digits.isascii() and digits.isdigit() and 0 < int(digits) < 2**63:
        return int(digits)
    return _BAD


class WebSignIn(Facet):
    async def web(self, origin: Origin, invocation: CommandCall) -> None:
        event = origin.event
        if not event.envelope.is_direct:
            await self.replies.say(event, "web_direct_only", purpose="refusal")
            return
        what = invocation.text("what")
        which = _which(invocation.args.get("which"))
        if which is _BAD or (what is None and which is not None):
            await self.replies.say(event, "web_which", purpose="refusal")
            return
        if what == "sessions":
            if isinstance(which, int):
                await self.replies.say(event, "web_number_only_revoke", purpose="refusal")
                return
            await self._sessions(origin, everyone=which == ALL)
            return
        if what == "revoke":
            await self._revoke(origin, which)
            return
        web = self.config.web if self.config is not None else None
        if web is None:
            await self.replies.say(event, "web_no_board", purpose="refusal")
            return
        if not web.public_url:
            await self.replies.say(event, "web_no_url", purpose="refusal")
            return
        link = await self.board.web_sessions.issue(origin.actor)
        url = f"{web.public_url}{SIGN_IN_PATH}{link.token}"
        await self.replies.say(
            event,
            "web_link",
            url=url,
            minutes=int(LINK_VALID_S // 60),
            purpose=CREDENTIAL_PURPOSE,
        )

    async def _sessions(self, origin: Origin, *, everyone: bool) -> None:
        """Yours, or every owner's: any owner may see and end any session (issue 33), so
        a lost phone's session can be ended by whoever notices first."""
        sessions = self.board.web_sessions
        found = await (sessions.everyone() if everyone else sessions.of(origin.actor))
        if not found:
            none = "web_sessions_all_none" if everyone else "web_sessions_none"
            await self.replies.say(origin.event, none)
            return
        lines = "\n".join(
            self.replies.text(
                "web_session_line_all" if everyone else "web_session_line",
                id=s.id,
                identity=s.identity,
                created=_when(s.signed_in_at),
                used=_when(s.last_used_at),
                agent=_agent(s.user_agent),
            )
            for s in found
        )
        await self.replies.say(
            origin.event, "web_sessions_all" if everyone else "web_sessions", lines=lines
        )

    async def _revoke(self, origin: Origin, which: object) -> None:
        sessions, event = self.board.web_sessions, origin.event
        if which is None:
            count = await sessions.revoke(origin.actor)
            await self.replies.say(event, "web_revoked", count=count)
        elif which == ALL:
            count = await sessions.revoke_everyone()
            await self.replies.say(event, "web_revoked_all", count=count)
        else:
            assert isinstance(which, int)
            ended = await sessions.revoke_any(which)
            if ended is None:
                await self.replies.say(event, "web_revoke_unknown", id=which, purpose="refusal")
            elif ended.identity == origin.actor:
                await self.replies.say(event, "web_revoked_one", id=which)
            else:
                await self.replies.say(
                    event, "web_revoked_other", id=which, identity=ended.identity
                )
