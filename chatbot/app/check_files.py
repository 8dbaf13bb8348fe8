"""`chatbot check`: where files people send are kept, and whether voice notes are heard."""

from __future__ import annotations

import stat

from chatbot.config import Config


def files_lines(config: Config) -> list[tuple[str, bool]]:
    files = config.files
    folder = config.files_folder
    limits = f"at most {files.max_size_mb} MB a file, {files.quota_mb} MB in all"
    found = [(f"files: kept in {folder}, {limits}", True)]
    if folder.exists():
        mode = stat.S_IMODE(folder.stat().st_mode)
        if mode & 0o077:
            found.append(
                (f"files: {folder} is mode {mode:o}; others can read it: chmod 700 {folder}", False)
            )
    section = config.transcription
    if section is None:
        found.append(
            ("voice notes: not heard (add [transcription] base_url, model, api_key_file)", True)
        )
    else:
        found.append((f"voice notes: heard by {section.base_url} ({section.model})", True))
    return found
