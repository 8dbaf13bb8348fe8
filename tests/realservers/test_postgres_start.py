"""The test PostgreSQL's own start: a port taken between picking it and binding it
costs a retry, not the PostgreSQL half of a worker's tests (a quiet fresh-clone run lost
83 tests that way, with the reason removed together with the server's folder)."""

from __future__ import annotations

import socket

import pytest

from tests.realservers import proc
from tests.realservers.postgres import Postgres


def test_a_port_taken_before_the_server_binds_it_costs_a_retry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        picks = [taken.getsockname()[1]]
        real_free_port = proc.free_port
        monkeypatch.setattr(proc, "free_port", lambda: picks.pop() if picks else real_free_port())
        server = Postgres().start()
        try:
            assert server.port != taken.getsockname()[1]
            assert server.fresh_schema().startswith("t_")
        finally:
            server.stop()


def test_a_server_that_never_starts_says_why_each_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        monkeypatch.setattr(proc, "free_port", lambda: taken.getsockname()[1])
        with pytest.raises(RuntimeError) as failed:
            Postgres().start()
    message = str(failed.value)
    assert "did not start in 3 tries" in message
    assert message.count("--- postgres.log ---") == 3, message
    assert "Address already in use" in message, message
