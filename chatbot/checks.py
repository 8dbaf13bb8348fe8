"""`chatbot check`: log in to each configured chat server and report per room.

Also lists notifications that wait in the outbox for a room, so a room the bot
cannot post to shows up here and not only in the service log.
"""

from __future__ import annotations

import time

from chatbot.config import Config
from chatbot.store import Store
from chatbot.store import chat as chat_store
from chatbot.store.kv import TransportState
from chatbot.transports.base import ProbeReport
from chatbot.transports.probe import probe_matrix, probe_xmpp
from chatbot.wiring import matrix_settings, xmpp_settings


def _yes_no(value: bool | None) -> str:
    return "unknown" if value is None else ("yes" if value else "NO")


def describe(report: ProbeReport) -> list[str]:
    lines = [
        f"{report.transport} {report.account}: "
        + ("logged in" if report.logged_in else f"NOT logged in: {report.error}")
    ]
    for room in report.rooms:
        line = (
            f"  room {room.room}: joined {_yes_no(room.joined)}, can post {_yes_no(room.can_post)}"
        )
        if report.transport == "xmpp":
            line += f", sees real JIDs {_yes_no(room.sees_real_ids)}"
            if room.sees_real_ids is False:
                line += " (nothing said there can count as an owner's)"
        if room.detail:
            line += f" — {room.detail}"
        lines.append(line)
    return lines


async def check_transports(config: Config) -> bool:
    reports: list[ProbeReport] = []
    store = await Store.open(config.bot.database) if config.bot.database.exists() else None
    try:
        if (settings := xmpp_settings(config)) is not None:
            reports.append(await probe_xmpp(settings))
        if (matrix := matrix_settings(config)) is not None:
            state = TransportState(store) if store is not None else None
            reports.append(await probe_matrix(matrix, state))
        for report in reports:
            print("\n".join(describe(report)))
        ok = all(report.ok for report in reports)
        if store is not None:
            for transport, room, count, error in await chat_store.waiting(store.reader):
                ok = ok and not error
                print(
                    f"outbox: {count} notification(s) wait for {transport} {room}"
                    + (f" (last error: {error})" if error else "")
                )
            week_ago = time.time() - 7 * 86400
            for transport, room, count, error in await chat_store.failed(store.reader, week_ago):
                ok = False
                print(
                    f"outbox: {count} notification(s) to {transport} {room} were given up "
                    f"in the last 7 days (last reason: {error}); the service log has each one, "
                    "and /status (or `chatbot cards`) shows where the board stands"
                )
        return ok
    finally:
        if store is not None:
            await store.close()
