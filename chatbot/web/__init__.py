"""The live web board: a read-only view of the board served by the bot itself.

`WebBoard` (`chatbot.web.server`) serves the pages and the event stream; it reads the board
only through `chatbot.board.reads` and imports nothing from the store. The app
wires it (chatbot/app/serve.py): `[web]` in the configuration starts it, and the
store's commit hook wakes its live pages.
"""

from chatbot.web.settings import WebSettings, describe, web_settings

# WebBoard is imported from chatbot.web.server by what serves it: aiohttp takes about
# 0.2 s to import, which `chatbot check` and `init` (they only describe [web]) need not pay.
__all__ = ["WebSettings", "describe", "web_settings"]
