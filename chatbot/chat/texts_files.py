"""What the chat says about files and voice notes, in English and German (merged into
texts.py)."""

# Sentences read better unwrapped.
# ruff: noqa: E501

from __future__ import annotations

EN: dict[str, str] = {
    "cmd_attach": "give a card the file sent with it, or just before",
    "file_not_taken": "📎 {name} was not taken: {reason}. Nothing else was done; send it again (or a smaller one) when that is fixed.",
    "files_loose": "📎 Got {files}. Which card is it for? Send /attach <slug>, /steer <slug> <text>, /draft <text> or /answer <slug> <text> within {minutes} minutes and it goes with it, or reply with it to a card's message.",
    "files_attached": "📎 {slug}: attached {files}. Its next run gets them.",
    "files_nothing": "Nothing to attach: send the file first (or with /attach {slug} as its caption), then /attach {slug} within {minutes} minutes.",
    "files_with": " With {files}.",
    "files_of_card": "Files:",
    "files_not_here": "Files cannot be sent from here: send them to the bot from XMPP or Matrix, then /attach there.",
    "voice_heard": "🎙 heard: {heard}",
    "voice_off": "🎙 Voice notes are not turned on: the bot needs a speech-to-text service. An operator adds [transcription] with base_url, model and api_key_file to the config (see the docs, Files and voice). Meanwhile, write it.",
    "voice_failed": "🎙 Your voice note could not be heard: {reason}. Write it instead, or try again.",
    "voice_not_audio": "🎙 That voice note was not audio ({looked}). Write it instead, or send it again.",
    "file_answer_text": "(see the attached {files})",
    "diff_patch": "📎 {slug}: the whole change as one file ({lines} lines).",
    "diff_patch_cut": "📎 {slug}: the change as one file, cut at the size limit after {lines} lines; the web card page has the rest.",
    "log_file": "📎 {slug}: its log as a file ({events}, {runs}).",
    "file_cannot_send": "This chat cannot take files from the bot; {command} shows it here as text.",
}

DE: dict[str, str] = {
    "cmd_attach": "einer Karte die mitgeschickte (oder gerade geschickte) Datei geben",
    "file_not_taken": "📎 {name} wurde nicht angenommen: {reason}. Sonst ist nichts geschehen; schicke sie noch einmal (oder eine kleinere), wenn das behoben ist.",
    "files_loose": "📎 {files} erhalten. Für welche Karte? Schicke innerhalb von {minutes} Minuten /attach <slug>, /steer <slug> <Text>, /draft <Text> oder /answer <slug> <Text>, dann geht es mit, oder antworte damit auf eine Nachricht der Karte.",
    "files_attached": "📎 {slug}: {files} angehängt. Ihr nächster Lauf bekommt sie.",
    "files_nothing": "Nichts anzuhängen: Schicke zuerst die Datei (oder mit /attach {slug} als Beschriftung), dann innerhalb von {minutes} Minuten /attach {slug}.",
    "files_with": " Mit {files}.",
    "files_of_card": "Dateien:",
    "files_not_here": "Von hier aus lassen sich keine Dateien schicken: Schicke sie dem Bot über XMPP oder Matrix und dort /attach.",
    "voice_heard": "🎙 verstanden: {heard}",
    "voice_off": "🎙 Sprachnachrichten sind nicht eingeschaltet: Der Bot braucht einen Spracherkennungsdienst. Ein Betreiber ergänzt [transcription] mit base_url, model und api_key_file in der Konfiguration (siehe Doku, Dateien und Sprache). Bis dahin bitte schreiben.",
    "voice_failed": "🎙 Deine Sprachnachricht konnte nicht verstanden werden: {reason}. Schreibe es stattdessen oder versuche es noch einmal.",
    "voice_not_audio": "🎙 Diese Sprachnachricht war kein Ton ({looked}). Schreibe es stattdessen oder schicke sie noch einmal.",
    "file_answer_text": "(siehe angehängte {files})",
    "diff_patch": "📎 {slug}: die ganze Änderung als eine Datei ({lines} Zeilen).",
    "diff_patch_cut": "📎 {slug}: die Änderung als eine Datei, an der Größengrenze nach {lines} Zeilen abgeschnitten; die Kartenseite im Web zeigt den Rest.",
    "log_file": "📎 {slug}: ihr Protokoll als Datei ({events}, {runs}).",
    "file_cannot_send": "Dieser Chat nimmt keine Dateien vom Bot; {command} zeigt es hier als Text.",
}
