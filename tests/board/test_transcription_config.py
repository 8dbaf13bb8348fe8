"""[transcription]: checked like every section, its key a secret file (issue 36)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.config import ConfigError, parse_config

from .test_config import MINIMAL


def _parse(tmp_path: Path, section: str):
    return parse_config(MINIMAL + "[transcription]\n" + section, tmp_path / "bot.toml")


def test_the_section_is_optional_and_its_key_is_a_secret_file(tmp_path: Path) -> None:
    assert parse_config(MINIMAL, tmp_path / "bot.toml").transcription is None
    (tmp_path / "stt-key").write_text("sk-123\n")
    config = _parse(tmp_path, 'base_url = "http://127.0.0.1:9/v1"\napi_key_file = "stt-key"\n')
    assert config.transcription is not None and config.transcription.model == "whisper-1"
    assert config.secret_files()["transcription.api_key_file"] == tmp_path / "stt-key"


@pytest.mark.parametrize(
    ("section", "key"),
    [
        ('base_url = "ftp://example.org"\n', "transcription.base_url"),
        ('base_url = "http://x/v1"\nmodel = "whisper 1; rm"\n', "transcription.model"),
        ('base_url = "http://x/v1"\nlanguage = "english"\n', "transcription.language"),
        ('model = "whisper-1"\n', "transcription.base_url"),
        ('base_url = "http://x/v1"\napi_key_file = "nope"\n', "transcription.api_key_file"),
    ],
)
def test_a_bad_value_names_its_key(tmp_path: Path, section: str, key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _parse(tmp_path, section)
    assert key in str(caught.value)


def test_check_says_where_files_live_and_whether_voice_notes_are_heard(tmp_path: Path) -> None:
    from chatbot.app.check_files import files_lines

    plain = dict(files_lines(parse_config(MINIMAL, tmp_path / "bot.toml")))
    assert any(line.startswith("voice notes: not heard (add [transcription]") for line in plain)
    config = _parse(tmp_path, 'base_url = "http://127.0.0.1:9/v1"\n')
    folder = config.files_folder
    folder.mkdir(parents=True)
    folder.chmod(0o755)
    found = files_lines(config)
    assert ("voice notes: heard by http://127.0.0.1:9/v1 (whisper-1)", True) in found
    assert [line for line, fine in found if not fine] == [
        f"files: {folder} is mode 755; others can read it: chmod 700 {folder}"
    ]
