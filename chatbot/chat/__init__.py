"""The chat side: what people say, reply and react becomes board actions.

intake.py classifies every transport event, checks authority once and dispatches;
commands.py is the command table (each entry names its handler); handlers.py does
the work; replies.py writes answers; render.py and texts.py say it.

Nothing is imported here: the command line reads the command table and the texts
without loading intake's handlers (and aiohttp with them) at every start.
"""
