"""The chat side: what people say, reply and react becomes board actions.

intake.py classifies every transport event, checks authority once and dispatches;
commands.py is the command table (each entry names its handler); handlers.py does
the work; replies.py writes answers; render.py and texts.py say it.
"""

from chatbot.chat.intake import ChatIntake

__all__ = ["ChatIntake"]
