"""Runs where the agent CLI runs (inside its sandbox): the CLI's MCP server "board".

    python -I -S <folder>/bridge.py SOCKET

The CLI starts it as a stdio MCP server. It is only a pump: what the CLI writes to its
stdin goes to the Unix socket SOCKET, what comes back goes to its stdout. The bot serves
the MCP session on the other end (`chatbot.pipeline.run_tools`), one socket per run, so
the socket is the run's capability: whoever reaches it speaks for that run and no other.

It starts beside every run that has the bot's tools, so it starts as little of Python
as it can (as `runners.sandbox_relay` does): no site packages (`-S`), only built-in
modules (`_socket`, `_thread`, `os`). When either side ends, it ends: the CLI closing
its stdin ends the session (what the bot still answers is passed on first); the bot
closing the socket (the run is over) ends this process, and the CLI sees its server gone.
"""

import _socket
import _thread
import os
import sys

CHUNK = 65536


def _to_stdout(connection: _socket.socket, done: _thread.LockType) -> None:
    try:
        while True:
            data = connection.recv(CHUNK)
            if not data:
                break
            view = memoryview(data)
            while view:
                written = os.write(1, view)
                view = view[written:]
    except OSError:
        pass
    if not done.locked():
        os._exit(0)  # the bot ended the session while the CLI still speaks
    done.release()


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        os.write(2, b"usage: bridge SOCKET\n")
        return 2
    connection = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        connection.connect(argv[0])
    except OSError as error:
        os.write(2, f"the board's tools are not reachable: {error}\n".encode())
        return 1
    done = _thread.allocate_lock()
    _thread.start_new_thread(_to_stdout, (connection, done))
    try:
        while True:
            data = os.read(0, CHUNK)
            if not data:
                break
            connection.sendall(data)
    except OSError:
        pass
    # The CLI is done speaking: what the bot still answers is passed on, then it ends.
    done.acquire()
    try:
        connection.shutdown(_socket.SHUT_WR)
    except OSError:
        pass
    done.acquire()
    return 0


if __name__ == "__main__":
    os._exit(main(sys.argv[1:]))
