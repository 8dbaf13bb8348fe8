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


def _pump(source, sink):
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


def _serve(client, path):
    upstream = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    done = _thread.allocate_lock()
    done.acquire()

    def back():
        _pump(upstream, client)
        done.release()

    _thread.start_new_thread(back, ())
    _pump(client, upstream)
    done.acquire()
    client.close()
    upstream.close()


def _accept(listener, path):
    while True:
        fd, _ = listener._accept()
        client = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM, 0, fd)
        _thread.start_new_thread(_serve, (client, path))


def main(argv):
    if len(argv) != 2:
        os.write(2, b"usage: relay SOCKET PORT\n")
        return 2
    path, port = argv[0], int(argv[1])
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    _accept(listener, path)
    return 0


if __name__ == "__main__":
    os._exit(main(sys.argv[1:]))
