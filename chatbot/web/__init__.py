"""The live web board: a read-only view of the board served by the bot itself.

`WebBoard` (server.py) serves the pages and the event stream; it reads the board
only through `chatbot.board.reads` and imports nothing from the store. The app
wires it (chatbot/app/serve.py): `[web]` in the configuration starts it, and the
store's commit hook wakes its live pages.
"""

from chatbot.web.server import WebBoard
from chatbot.web.settings import WebSettings, describe, web_settings

__all__ = ["WebBoard", "WebSettings", "describe", "web_settings"]
