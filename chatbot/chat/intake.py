"""The chat side of the board: what people say, reply or react becomes board actions.

`ChatIntake.handle` is the single entry point for every transport's events. Each
event goes through the same four steps, in this order:

1. classify: is it for us at all (a command, a reply to a question or request we
   posted, a reaction on our message, a direct message)? Plain chatter in a room
   is not, and is dropped before anything else happens;
2. authority: the one check (`authority.permits`) of the sender's role against
   what the act needs; strangers are told at most once an hour, nothing changes;
   an act that reached us late (caught up after the bot was away) and is older
   than `catch_up_max_age_s` is answered "too old" and not run;
3. rate limit: a token bucket per sender (not for what is caught up: those
   were sent at a person's pace, the bot only reads them at once);
4. dispatch: a command to the handler its table entry names (commands.py ->
   handlers.py), an answer, a request decision or a reaction to theirs.

Answers go back where the event came from, as a reply to it, through the outbox.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from chatbot.board import Posted, StoreUnwritable
from chatbot.board.ports import ChatSide
from chatbot.chat import commands, dispatch, reactions, render, render_help
from chatbot.chat.acts import (
    FILE_COMMANDS,
    Act,
    AnswerAct,
    ApprovalAct,
    AttachAct,
    CommandAct,
    CommentAct,
    DecideAct,
    HintAct,
    LooseAct,
    ReactAct,
    SteerAct,
    VoiceAct,
)
from chatbot.chat.authority import (
    Authority,
    Clock,
    NoticeMemory,
    Permission,
    RateLimiter,
    Standing,
    normal,
    permits,
    untrusted_device,
)
from chatbot.chat.commands import BY_NAME, ArgKind, CommandCall, UsageProblem
from chatbot.chat.files_in import FilesIn
from chatbot.chat.handlers import ChatHandlers
from chatbot.chat.reactions import yes_or_no
from chatbot.chat.replies import Origin, Replies
from chatbot.chat.voice import Transcriber
from chatbot.config import Config
from chatbot.log_context import about
from chatbot.notify.format import duration
from chatbot.transports.base import (
    Identity,
    IncomingEdit,
    IncomingEvent,
    IncomingMessage,
    IncomingReaction,
    IncomingUnreadable,
    IncomingVerification,
)

log = logging.getLogger(__name__)

# What a direct chat may say without a command prefix.
BARE_WORDS = frozenset({"help", "status", "inbox"})


class ChatIntake:
    def __init__(
        self,
        board: ChatSide,
        owners: Iterable[Identity | str] = (),
        requesters: Iterable[Identity | str] = (),
        locale: str = "en",
        *,
        authority: Authority | None = None,
        rate_capacity: int = 10,
        rate_refill_s: float = 3.0,
        notice_window_s: float = 3600.0,
        max_chars: int = render.MAX_CHARS,
        clock: Clock = time.monotonic,
        catch_up_max_age_s: float = 3600.0,
        prefixes: tuple[str, ...] = commands.DEFAULT_PREFIXES,
        config: Config | None = None,
        transcriber: Transcriber | None = None,
    ):
        self.board = board
        # Awaits the outbox's in-flight sends (wired by the service); None in unit tests.
        self.outbox_settled: Callable[[], Awaitable[None]] | None = None
        self.locale = locale
        self.authority = authority or Authority.of(owners, requesters)
        self.limiter = RateLimiter(rate_capacity, rate_refill_s, clock)
        self.notices = NoticeMemory(notice_window_s, clock)
        self.prefixes = prefixes
        self.replies = Replies(board, locale, max_chars, prefix=prefixes[0])
        self.handlers = ChatHandlers(board, self.replies, config)
        self.catch_up_max_age_s = catch_up_max_age_s
        max_mb = config.files.max_size_mb if config is not None else 20
        self.files_in = FilesIn(
            board, self.replies, max_bytes=max_mb * 1024 * 1024, transcriber=transcriber
        )

    @classmethod
    def from_config(cls, board: ChatSide, config: Config, **options: object) -> ChatIntake:
        limits = {
            "rate_capacity": config.bot.rate_limit_burst,
            "rate_refill_s": config.bot.rate_limit_refill_s,
        }
        return cls(
            board,
            locale=config.bot.locale,
            authority=Authority.from_config(config),
            catch_up_max_age_s=config.bot.catch_up_max_age_s,
            prefixes=tuple(config.bot.command_prefixes),
            config=config,
            # options are the keywords of __init__ the caller chose; checked at the call.
            **(limits | options),  # type: ignore[arg-type]
        )

    def counts(self, sender: Identity | None) -> bool:
        """Whether a sender's events are worth a row in the store (see keep_state_for)."""
        return self.authority.role(sender) is not Standing.STRANGER

    async def handle(self, event: IncomingEvent) -> None:
        """Everything a transport receives comes through here; it never raises."""
        with about(transport=event.envelope.transport):
            try:
                await self._handle(event)
            except StoreUnwritable as error:
                # Not a bug: the database takes no writes (a full disk). Say why, in one
                # line here; the store's health logged the episode and retries it.
                log.warning("chat event %s not done: %s", event.envelope.message_id, error)
                await self._say_or_log(event, "store_unwritable", reason=str(error))
            except Exception:
                log.exception("chat event %s failed", event.envelope.message_id)
                await self._say_or_log(event, "internal_error")

    async def _say_or_log(self, event: IncomingEvent, key: str, **params: Any) -> None:
        try:
            await self.replies.say(event, key, purpose="refusal", **params)
        except Exception as error:  # noqa: BLE001 - the chat goes on; the log says it
            log.warning("could not even say that it failed: %s: %s", type(error).__name__, error)

    async def _handle(self, event: IncomingEvent) -> None:
        if isinstance(event, IncomingEdit):
            await self._edit(event)
            return
        if isinstance(event, IncomingUnreadable | IncomingVerification):
            await self._transport_notice(event)
            return
        act = await self._classify(event)
        if act is None:
            return
        # --- step 2: authority, decided here and only here ---
        role = self.authority.role(event.envelope.sender)
        verdict = permits(role, act.access)
        if role is Standing.STRANGER or event.envelope.sender is None:
            if _is_help(act):
                await self._help_stranger(event)
            else:
                await self._tell_stranger(event)
            return
        if event.envelope.at is not None:
            age = time.time() - event.envelope.at
            if age > self.catch_up_max_age_s:
                limit = duration(self.catch_up_max_age_s)
                await self.replies.say(
                    event, "too_old", purpose="refusal", age=duration(age), limit=limit
                )
                return
        # --- step 3: rate limit requesters (strangers cost one notice an hour) ---
        # Owners are never limited: a flood guard must not silence the people who run
        # the bot (issue 34). A caught-up burst is not a flood either.
        limited = role is not Standing.OWNER and event.envelope.at is None
        taken = self.limiter.take(normal(event.envelope.sender)) if limited else "ok"
        if taken != "ok":
            if taken == "tell":
                wait = duration(max(1.0, self.limiter.wait_s(normal(event.envelope.sender))))
                await self.replies.say(event, "rate_limited", purpose="refusal", wait=wait)
            return
        # --- step 3b: the sending device must count (Matrix E2EE trust mode) ---
        if (device := untrusted_device(event)) is not None:
            log.info(
                "refused %s: device %r of %s: %s",
                event.envelope.message_id,
                device.id,
                event.envelope.sender,
                device.reason,
            )
            key = f"device_{device.reason}"
            await self.replies.say(event, key, purpose="refusal", device=device.id or "?")
            return
        origin = Origin(event, normal(event.envelope.sender), role)
        if verdict is Permission.DENY:
            await self.replies.say(event, "owners_only", purpose="refusal")
            return
        # --- step 4: dispatch ---
        if isinstance(act, VoiceAct):
            assert isinstance(event, IncomingMessage)
            heard = await self.files_in.hear(event)
            if heard is not None:
                await self._handle(heard)  # what was said, as if written
            return
        if isinstance(event, IncomingMessage) and event.files:
            # Only now, for a sender who counts, is anything fetched.
            kept = await self.files_in.keep(origin)
            if kept is None:
                return
            origin = dataclasses.replace(origin, files=kept)
        if verdict is Permission.AS_REQUEST:
            if isinstance(act, AttachAct):
                act = CommandAct(CommandCall(BY_NAME["attach"], {"slug": act.slug}))
            assert isinstance(act, CommandAct) and isinstance(act.parsed, CommandCall)
            await self.handlers.request(origin, act.parsed)
            return
        await self._dispatch(origin, act)

    # --- step 1 -----------------------------------------------------------------

    async def _classify(self, event: IncomingMessage | IncomingReaction) -> Act | None:
        if isinstance(event, IncomingReaction):
            return await self._classify_reaction(event)
        if any(file.voice for file in event.files) and not event.text.strip():
            # In a room, only the voice notes of people the bot knows are heard: others
            # talk to each other, and are not told off for it.
            known = self.authority.role(event.envelope.sender) is not Standing.STRANGER
            if event.envelope.is_direct or event.reply_to or known:
                return VoiceAct()
            return None
        if commands.is_command(event.text, self.prefixes):
            return CommandAct(commands.parse(event.text, self.prefixes))
        bare = event.text.strip().lower()
        if event.envelope.is_direct and bare in BARE_WORDS:
            # In a direct chat nobody else is addressed: "help", "status", "inbox" need no prefix.
            return CommandAct(commands.parse(commands.PREFIX + bare, (commands.PREFIX,)))
        if event.reply_to:
            posted = await self._posted(event.envelope.transport, event.reply_to)
            if posted is not None and posted.question_id is not None:
                question = await self.board.reads.question(posted.question_id)
                if question is not None:
                    return AnswerAct(question, text=event.text.strip())
            if posted is not None and posted.request_id is not None:
                decision = yes_or_no(event.text)
                if decision is not None:
                    return DecideAct(posted.request_id, decision)
            # asks_approval holds only with a talk_id: said again for mypy.
            if posted is not None and posted.asks_approval and posted.talk_id is not None:
                allow = yes_or_no(event.text) is True
                return ApprovalAct(posted.talk_id, allow, "" if allow else event.text.strip())
            if posted is not None and posted.purpose == "run" and posted.card_id is not None:
                return SteerAct(posted.card_id, event.text)
            if posted is not None and posted.diff_view_id is not None:
                return CommentAct(posted, event.text, event.quoted)
            if posted is not None and posted.card_id is not None and event.files:
                card = await self.board.reads.card_by_id(posted.card_id)
                if card is not None:
                    return AttachAct(card.slug)
        if event.files and event.envelope.is_direct and not event.text.strip():
            return LooseAct()
        if event.envelope.is_direct:
            open_questions = await self.board.reads.open_questions()
            if len(open_questions) == 1:
                return AnswerAct(open_questions[0], text=event.text.strip())
            return HintAct(len(open_questions))
        return None

    async def _posted(self, transport: str, message_id: str) -> Posted | None:
        found = await self.board.reads.posted(transport, message_id)
        if found is None and self.outbox_settled is not None:
            # A quick reply or reaction can overtake the outbox's record of the very
            # message it points at; once in-flight sends are recorded, look again.
            await self.outbox_settled()
            found = await self.board.reads.posted(transport, message_id)
        return found

    async def _classify_reaction(self, event: IncomingReaction) -> Act | None:
        # Taking a reaction back undoes nothing: what it caused has happened.
        added = {reactions.normalise(key) for key in event.added}
        # Several keys at once (XMPP sends the whole set): the first in table order.
        reaction = next((r for r in reactions.REACTIONS if r.key in added), None)
        if reaction is None:
            return None
        posted = await self._posted(event.envelope.transport, event.target_id)
        if posted is None:
            return None  # not a message of ours: people react to each other too
        return ReactAct(posted, reaction)

    # --- step 4 -----------------------------------------------------------------

    async def _dispatch(self, origin: Origin, act: Act) -> None:
        handlers = self.handlers
        if isinstance(act, CommandAct):
            if isinstance(act.parsed, UsageProblem):
                await self.replies.send(origin.event, render.usage_problem(act.parsed, self.locale))
                return
            if origin.files and act.parsed.name not in FILE_COMMANDS:
                await self._files_before(origin, act.parsed)
            # The command table names the handler; there is no other dispatch.
            await dispatch.carry_out(handlers, origin, act.parsed)
        elif isinstance(act, AnswerAct):
            if act.text and len(act.text) > commands.MAX_TEXT_CHARS:
                await self.replies.say(origin.event, "problem_too_long", purpose="refusal")
                return
            await handlers.answer_question(origin, act.question, text=act.text, option=act.option)
        elif isinstance(act, DecideAct):
            await handlers.requesting.decide_request(origin, act.request_id, accept=act.accept)
        elif isinstance(act, ReactAct):
            await handlers.react(origin, act.posted, act.reaction)
        elif isinstance(act, SteerAct):
            card = await self.board.reads.card_by_id(act.card_id)
            if card is None:
                await self.replies.say(origin.event, "no_card")
            else:
                await handlers.talking.steer_card(origin, card.slug, act.text)
        elif isinstance(act, CommentAct):
            await handlers.commenting.comment_on_post(origin, act.posted, act.text, act.quoted)
        elif isinstance(act, ApprovalAct):
            await handlers.talking.decide_approval(origin, act.talk_id, act.allow, act.reason)
        elif isinstance(act, AttachAct):
            await handlers.attaching.attach_to(origin, act.slug)
        elif isinstance(act, LooseAct):
            await handlers.attaching.keep_loose(origin)
        elif isinstance(act, VoiceAct):
            raise AssertionError("a voice note is heard before dispatch")
        else:
            key = "several_questions" if act.open_questions > 1 else "not_a_command"
            await self.replies.say(origin.event, key, count=act.open_questions)

    async def _files_before(self, origin: Origin, invocation: CommandCall) -> None:
        """Files sent with a command that does not take files itself (a caption such as
        `/start slug`): for the card it names, else kept until one is named."""
        names_card = any(arg.kind is ArgKind.SLUG for arg in invocation.command.args)
        slug = invocation.text("slug")
        if names_card and slug:
            await self.handlers.attaching.attach_to(origin, slug)
        else:
            await self.handlers.attaching.keep_loose(origin)

    # --- refusals -----------------------------------------------------------------

    async def _help_stranger(self, event: IncomingEvent) -> None:
        """/help is the one command anyone may use: it says how to be let in. Once an
        hour per person (or hidden room), like every answer to a stranger."""
        if self.notices.should_tell(("stranger_help", _stranger_key(event))):
            who = normal(event.envelope.sender).id if event.envelope.sender is not None else None
            text = render_help.help_text(self.locale, role=Standing.STRANGER, identity=who)
            await self.replies.send(event, text, purpose="refusal")

    async def _tell_stranger(self, event: IncomingEvent) -> None:
        key = _stranger_key(event)
        # Logged every time (the chat is told once an hour): the owner may need to see
        # who tried, e.g. to add a requester, or that a room hides real JIDs.
        log.info(
            "refused %s from %s in %s: not an owner or requester",
            type(event).__name__,
            event.envelope.sender or f"an unknown sender ({event.envelope.sender_name!r})",
            event.envelope.chat,
        )
        if self.notices.should_tell(("stranger", key)):
            await self.replies.say(event, "not_allowed", purpose="refusal")

    async def _transport_notice(self, event: IncomingUnreadable | IncomingVerification) -> None:
        """What a transport needs said to a person: a message it cannot read yet, a
        device verification's emoji. Owners and requesters only; never an act."""
        if self.authority.role(event.envelope.sender) is Standing.STRANGER:
            return
        if isinstance(event, IncomingUnreadable):
            await self.replies.say(event, "unreadable", purpose="refusal")
        elif event.state == "compare":
            emoji = ", ".join(event.emoji)
            await self.replies.say(event, "verify_compare", device=event.device_id, emoji=emoji)
        elif event.state == "done":
            await self.replies.say(event, "verify_done", device=event.device_id)
        else:
            await self.replies.say(event, "verify_cancelled", detail=event.detail or "-")

    async def _edit(self, event: IncomingEdit) -> None:
        """Edits are never executed: a corrected command could silently redo an action.

        A known sender whose edit looks like a command is told so, once an hour;
        other edits (typo fixes in conversation) and strangers' edits are ignored.
        """
        if not commands.is_command(event.text, self.prefixes) or event.envelope.sender is None:
            return
        if self.authority.role(event.envelope.sender) is Standing.STRANGER:
            return
        if self.notices.should_tell(("edit", normal(event.envelope.sender))):
            await self.replies.say(event, "edit_ignored", purpose="refusal")


def _stranger_key(event: IncomingEvent) -> object:
    # The real identity, or the chat when the identity is hidden, so a room that
    # hides JIDs is told once an hour, not once per nick.
    sent = event.envelope
    return normal(sent.sender) if sent.sender is not None else (sent.transport, sent.chat)


def _is_help(act: Act) -> bool:
    return (
        isinstance(act, CommandAct)
        and isinstance(act.parsed, CommandCall)
        and act.parsed.command.name == "help"
    )


__all__ = ["ChatIntake", "yes_or_no"]
