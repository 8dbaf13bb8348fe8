"""Runs inside the sandbox, before the agent CLI: the CLI's only way to its provider.

    python -I -S -c <this file> SOCKET PORT -- PROGRAM ARGS...

It listens on 127.0.0.1:PORT in the sandbox's own network namespace, starts the
program with this process's stdin, stdout and stderr, and copies every connection to
the Unix socket SOCKET, where the bot's forwarder (`runners.forwarder`) adds the key and
talks to the provider. It exits with the program's status.

It adds to every spawn, so it starts as little of Python as it can: no site packages
(`-S`), and only built-in modules (`_socket`, `_thread`, `_signal`, `os`), whose
imports cost nothing; `socket`, `threading` and `subprocess` would import `enum` and
more, milliseconds before the program even starts.
"""

import _signal
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
    if len(argv) < 4 or argv[2] != "--":
        os.write(2, b"usage: relay SOCKET PORT -- PROGRAM ARGS...\n")
        return 2
    path, port, program = argv[0], int(argv[1]), argv[3:]
    # Listen before the program starts, so that its first request finds the relay.
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    _thread.start_new_thread(_accept, (listener, path))
    try:
        pid = os.posix_spawn(program[0], program, os.environ)
    except OSError as error:
        os.write(2, f"sandbox: cannot start {program[0]}: {error.strerror}\n".encode())
        return 127
    # The bot ends the whole process group: a signal meant for the run reaches the
    # program too, and the relay only waits for it.
    for number in (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP):
        _signal.signal(number, lambda signum, frame: None)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    return os.waitstatus_to_exitcode(status) % 256


if __name__ == "__main__":
    sys.stdout.flush()
    os._exit(main(sys.argv[1:]))
