"""The console's log file on a full disk: one line says so, no traceback per line."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from chatbot.app.logfile import LogFile
from tests.fulldisk.disk import small_disk


def test_a_full_disk_costs_one_line_not_a_traceback_per_log_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with small_disk(tmp_path) as disk:
        path = disk.path / "bot.log"
        handler = LogFile(path)
        log = logging.getLogger("test.fulldisk.logfile")
        log.propagate = False
        log.addHandler(handler)
        try:
            log.warning("before the disk filled")
            disk.fill()
            for n in range(200):
                try:
                    raise RuntimeError(f"boom {n}")
                except RuntimeError:
                    log.exception("a failure with a traceback, number %d", n)
            err = capsys.readouterr().err
            assert "Logging error" not in err and "Traceback" not in err
            assert err.count("cannot write the log file") == 1, err
            # The last lines may fit into the file's last, partly used page; the rest
            # are dropped.
            dropped = handler.dropped
            assert dropped is not None and 100 < dropped <= 200
            disk.free()
            log.warning("after space came back")
        finally:
            log.removeHandler(handler)
            handler.close()
            disk.free()
        text = path.read_text(encoding="utf-8")
    assert "before the disk filled" in text
    assert f"{dropped} log lines were dropped" in text
    assert text.index("were dropped") < text.index("after space came back")
    assert capsys.readouterr().err == ""
