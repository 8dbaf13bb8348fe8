"""Runs inside the sandbox, beside the agent CLI: the CLI's only way to its provider.

    python -I -S -c <this file> SOCKET PORT

It listens on 127.0.0.1:PORT in the sandbox's own network namespace and copies every
connection to the Unix socket SOCKET, where the bot's forwarder (`runners.forwarder`)
adds the key and talks to the provider. It serves until the sandbox ends
(`runners.sandbox.relay_argv` starts it).

It adds to every spawn, so it starts as little of Python as it can: no site packages
(`-S`), and only built-in modules (`_socket`, `_thread`, `_signal`, `os`), whose
imports cost nothing; `socket`, `threading` and `subprocess` would import `enum` and
more, milliseconds before the program even starts.
"""

import _socket
import _thread
import os
import sys

CHUNK = 65536


def _pump(source: _socket.socket, sink: _socket.socket) -> None:
    try:
        while True:
            data = source.recv(CHUNK)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    for each, how in ((sink, _socket.SHUT_WR), (source, _socket.SHUT_RD)):
        try:
            each.shutdown(how)
        except OSError:
            pass


def _serve(client: _socket.socket, path: str) -> None:
    upstream = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    done = _thread.allocate_lock()
    done.acquire()

    def back() -> None:
        _pump(upstream, client)
        done.release()

    _thread.start_new_thread(back, ())
    _pump(client, upstream)
    done.acquire()
    client.close()
    upstream.close()


def _accept(listener: _socket.socket, path: str) -> None:
    while True:
        fd, _ = listener._accept()  # type: ignore[attr-defined]  # the bare fd; typeshed lacks it
        client = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM, 0, fd)
        _thread.start_new_thread(_serve, (client, path))


def _refuse_names() -> None:
    """Answer every DNS question on 127.0.0.1:53 at once with "no such name".

    The sandbox reaches no name server; a CLI that looks a name up anyway (codex: its
    update and analytics hosts) would wait out its resolver's timeout, 5 s with musl,
    before every exit. The sandbox's resolv.conf names 127.0.0.1, and this answers."""
    server = _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM)
    try:
        server.bind(("127.0.0.1", 53))
    except OSError:
        return  # no CAP_NET_BIND_SERVICE: lookups wait out their timeout, as before
    while True:
        query, sender = server.recvfrom(512)
        if len(query) < 12:
            continue
        # Same id, a response (QR), the question's opcode and RD kept, RA set,
        # NXDOMAIN; the question echoed, no answers.
        flags = bytes([0x80 | (query[2] & 0x79), 0x80 | 3])
        server.sendto(query[:2] + flags + query[4:6] + b"\0\0\0\0\0\0" + query[12:], sender)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        os.write(2, b"usage: relay SOCKET PORT\n")
        return 2
    path, port = argv[0], int(argv[1])
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    _thread.start_new_thread(_refuse_names, ())
    _accept(listener, path)
    return 0


if __name__ == "__main__":
    os._exit(main(sys.argv[1:]))
