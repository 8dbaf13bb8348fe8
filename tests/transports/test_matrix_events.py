"""What a Matrix event means: identity, replies, edits, reactions."""

from __future__ import annotations

from typing import Any

import pytest

from chatbot.transports.base import Identity, IncomingEdit, IncomingMessage, Room
from chatbot.transports.matrix.events import (
    Dropped,
    ReactionAdded,
    Redaction,
    after_own_join,
    notice_content,
    parse_event,
    reaction_content,
    reaction_txn_id,
    strip_reply_fallback,
)

ME = "@bot:localhost"
ROOM = "!r:localhost"


def ev(
    content: dict[str, Any],
    *,
    etype: str = "m.room.message",
    sender: str = "@owner:localhost",
    event_id: str = "$e1",
    **extra: Any,
) -> dict[str, Any]:
    return {"type": etype, "sender": sender, "event_id": event_id, "content": content, **extra}


def parse(source: dict[str, Any]):
    return parse_event(source, room_id=ROOM, own_user_id=ME)


def test_text_message_identity_is_the_sender_id() -> None:
    m = parse(ev({"msgtype": "m.text", "body": " /status "}))
    assert isinstance(m, IncomingMessage)
    assert m.envelope.sender == Identity("matrix", "@owner:localhost")
    assert m.envelope.chat == Room("matrix", ROOM)
    assert m.text == "/status" and m.envelope.message_id == "$e1" and m.reply_to is None


def test_display_name_plays_no_part() -> None:
    # A stranger calling himself "Owner": only `sender` counts.
    m = parse(
        ev(
            {"msgtype": "m.text", "body": "hi", "displayname": "Owner"},
            sender="@stranger:localhost",
        )
    )
    assert m.envelope.sender == Identity("matrix", "@stranger:localhost")


def test_reply_goes_by_event_id_and_drops_the_fallback_quote() -> None:
    m = parse(
        ev(
            {
                "msgtype": "m.text",
                "body": "> <@bot:localhost> Approve card x?\n> second line\n\nyes please",
                "m.relates_to": {"m.in_reply_to": {"event_id": "$question"}},
            }
        )
    )
    assert isinstance(m, IncomingMessage)
    assert m.reply_to == "$question" and m.text == "yes please"


def test_reply_without_fallback_keeps_its_body() -> None:
    m = parse(
        ev(
            {
                "msgtype": "m.text",
                "body": "> quoted on purpose",
                "m.relates_to": {
                    "m.in_reply_to": {"event_id": "$q"},
                    "is_falling_back": True,
                    "rel_type": "m.thread",
                    "event_id": "$root",
                },
            }
        )
    )
    assert m.text == "> quoted on purpose" and m.reply_to == "$q"


def test_edit_is_never_a_message() -> None:
    m = parse(
        ev(
            {
                "msgtype": "m.text",
                "body": "* /approve all",
                "m.new_content": {"msgtype": "m.text", "body": "/approve all"},
                "m.relates_to": {"rel_type": "m.replace", "event_id": "$orig"},
            }
        )
    )
    assert isinstance(m, IncomingEdit)
    assert m.target_id == "$orig" and m.text == "/approve all"


@pytest.mark.parametrize(
    "source, reason",
    [
        (ev({"msgtype": "m.notice", "body": "bot talk"}), "msgtype:m.notice"),
        (ev({"msgtype": "m.text", "body": "me"}, sender=ME), "own"),
        (ev({}), "redacted"),
        (ev({"membership": "join"}, etype="m.room.member"), "type:m.room.member"),
        ({"type": "m.room.message", "content": {"body": "x"}}, "malformed"),
        (ev({"msgtype": "m.text", "body": "   "}), "no-body"),
        (
            ev({"m.relates_to": {"rel_type": "m.reference", "event_id": "$x"}}, etype="m.reaction"),
            "reaction-malformed",
        ),
    ],
)
def test_dropped(source: dict[str, Any], reason: str) -> None:
    assert parse(source) == Dropped(reason)


def test_reaction_annotation() -> None:
    r = parse(ev(reaction_content("$target", "👍"), etype="m.reaction", event_id="$re"))
    assert r == ReactionAdded(
        room_id=ROOM, sender="@owner:localhost", target_id="$target", key="👍", event_id="$re"
    )


@pytest.mark.parametrize(
    "source",
    [
        ev({"redacts": "$re"}, etype="m.room.redaction", event_id="$red"),  # room v11+
        ev({}, etype="m.room.redaction", event_id="$red", redacts="$re"),  # older rooms
    ],
)
def test_redaction_either_room_version(source: dict[str, Any]) -> None:
    assert parse(source) == Redaction(
        room_id=ROOM, sender="@owner:localhost", redacts="$re", event_id="$red"
    )


def test_strip_reply_fallback_leaves_plain_text_alone() -> None:
    assert strip_reply_fallback("no quote here") == "no quote here"
    assert strip_reply_fallback("> <@a:x.org> a\n\nb\n> c") == "b\n> c"
    # A quote of the sender's own (lines of a /diff) is not a fallback: it stays.
    assert strip_reply_fallback("> 12 + x = 1\n\nwhy?") == "> 12 + x = 1\n\nwhy?"


def test_backlog_before_our_own_join_is_skipped() -> None:
    join = {
        "type": "m.room.member",
        "state_key": ME,
        "sender": ME,
        "event_id": "$j",
        "content": {"membership": "join"},
        "unsigned": {"prev_content": {"membership": "invite"}},
    }
    profile_change = {
        **join,
        "event_id": "$p",
        "unsigned": {"prev_content": {"membership": "join"}},
    }
    old, new = ev({"msgtype": "m.text", "body": "old"}), ev({"msgtype": "m.text", "body": "new"})
    assert after_own_join([old, join, new], ME) == [new]
    assert after_own_join([old, profile_change, new], ME) == [old, profile_change, new]


def test_notice_content_has_plain_and_html_bodies_and_reply() -> None:
    c = notice_content("**done**", "<b>done</b>", reply_to="$q")
    assert c == {
        "msgtype": "m.notice",
        "body": "**done**",
        "format": "org.matrix.custom.html",
        "formatted_body": "<b>done</b>",
        "m.relates_to": {"m.in_reply_to": {"event_id": "$q"}},
        "m.mentions": {},
    }
    assert notice_content("plain") == {"msgtype": "m.notice", "body": "plain", "m.mentions": {}}


def test_a_mention_is_a_pill_and_m_mentions_in_a_message_that_rings() -> None:
    c = notice_content("Question for demo:\nwhich?", "<p>Question</p>", mentions=["@owner:hs.test"])
    # m.notice would be silenced by the default push rules, mention or not.
    assert c["msgtype"] == "m.text"
    assert c["m.mentions"] == {"user_ids": ["@owner:hs.test"]}
    assert c["body"] == "@owner:hs.test: Question for demo:\nwhich?"
    assert c["formatted_body"].startswith(
        '<p><a href="https://matrix.to/#/@owner:hs.test">@owner:hs.test</a>:</p>\n<p>Question</p>'
    )
    plain = notice_content("a <b> & c", mentions=["@o:hs"])
    assert plain["formatted_body"].endswith("<p>a &lt;b&gt; &amp; c</p>")


def test_an_edit_mentions_nobody() -> None:
    from chatbot.transports.matrix.events import edit_content

    c = edit_content("$orig", "step 2", "<p>step 2</p>")
    assert c["m.mentions"] == {} and c["m.new_content"]["m.mentions"] == {}
    assert c["msgtype"] == "m.notice"


def test_reaction_txn_id_is_stable_per_reaction() -> None:
    assert reaction_txn_id(ROOM, "$a", "👍") == reaction_txn_id(ROOM, "$a", "👍")
    assert reaction_txn_id(ROOM, "$a", "👍") != reaction_txn_id(ROOM, "$a", "👎")


def test_content_is_cut_below_the_event_size_limit() -> None:
    from chatbot.transports.matrix.events import content_bytes, fit_content

    content = notice_content("é" * 70_000, "<b>" + "x" * 70_000 + "</b>", reply_to="$t")
    assert fit_content(content)
    assert content_bytes(content) <= 60_000 and content["body"].endswith("…")
    assert "formatted_body" not in content and content["m.relates_to"]
    small = notice_content("hi", "<b>hi</b>")
    assert not fit_content(small) and small["formatted_body"] == "<b>hi</b>"
