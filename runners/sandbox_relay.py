"""Runs inside the sandbox, before the agent CLI: the CLI's only way to its provider.

    python -I -S -c <this file> SOCKET PORT -- PROGRAM ARGS...

It listens on 127.0.0.1:PORT in the sandbox's own network namespace, starts the
program with this process's stdin, stdout and stderr, and copies every connection to
the Unix socket SOCKET, where the bot's forwarder (`runners.forwarder`) adds the key and
talks to the provider. It exits with the program's status. Standard library only, no
site packages (`-S`): it starts in a few milliseconds and trusts nothing of the
sandbox's.
"""

import os
import signal
import socket
import subprocess
import sys
import threading


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for each, how in ((sink, socket.SHUT_WR), (source, socket.SHUT_RD)):
            try:
                each.shutdown(how)
            except OSError:
                pass


def _serve(client: socket.socket, path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _accept(listener: socket.socket, path: str) -> None:
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_serve, args=(client, path), daemon=True).start()


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: relay SOCKET PORT -- PROGRAM ARGS...\n")
        return 2
    path, port, program = argv[0], int(argv[1]), argv[3:]
    # The namespace's loopback starts down; bwrap brings it up. Listen before the
    # program starts, so its first request finds the relay.
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    threading.Thread(target=_accept, args=(listener, path), daemon=True).start()
    try:
        child = subprocess.Popen(program)
    except OSError as error:
        sys.stderr.write(f"sandbox: cannot start {program[0]}: {error.strerror or error}\n")
        return 127
    # The bot ends the whole process group; a signal meant for the run reaches the
    # program too, and the relay only waits for it.
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda number, frame: None)
    status = child.wait()
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    os._exit(main(sys.argv[1:]))
