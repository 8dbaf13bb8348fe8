from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from chatbot.config import ConfigError, load_config, parse_config
from chatbot.pipeline.run_records import priced
from runners.runtimes import RUNTIMES, Usage

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "config" / "example.toml"

MINIMAL = """
[bot]
owners = ["owner@example.org"]
repo = "repo"
[runtimes.codex]
binary = "codex"
[lanes.light]
runtime = "codex"
model = "gpt-5-codex-mini"
iteration_limit = 10
"""


@pytest.fixture
def example(tmp_path: Path) -> Path:
    target = tmp_path / "example.toml"
    shutil.copy(EXAMPLE, target)
    # Every secret file the example names (a new runtime's key file too).
    named = parse_config(EXAMPLE.read_text(), target, secrets=False).secret_files()
    assert {path.name for path in named.values()} >= {
        "xmpp-password",
        "matrix-password",
        "openrouter-key",
    }
    for path in named.values():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"value-of-{path.name}\n")
    return target


def test_example_config_is_valid_and_complete(example: Path) -> None:
    config = load_config(example)
    assert config.bot.owners == ["owner@example.org", "@owner:example.org"]
    assert config.bot.database == example.parent / "var" / "board.sqlite3"
    assert config.transports == ["xmpp", "matrix"]
    profiles = config.allowed_profiles()
    assert profiles.lanes["heavy"].runtime == "claude"
    assert profiles.escalation_pool("codex") == ("gpt-5-codex", "gpt-5-codex-max")
    assert config.role("reviewer").model == "claude-sonnet-4-5"
    # Nothing that runs or connects somewhere by itself (issue 34): no deploy, no xmpp.host.
    assert config.deploy is None
    assert config.xmpp is not None and config.xmpp.host is None


def test_printed_config_never_contains_a_secret(example: Path) -> None:
    config = load_config(example)
    text = repr(config) + str(config.redacted())
    assert "value-of-" not in text
    assert "secrets/xmpp-password" in text


def _error(text: str, tmp_path: Path) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, tmp_path / "bot.toml")
    return str(caught.value)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        (MINIMAL + "[bot.extra]\na = 1\n", "bot.extra"),
        (
            MINIMAL.replace("iteration_limit = 10", "iteration_limit = 10\nitertion = 3"),
            "lanes.light.itertion",
        ),
        (MINIMAL + "[nonsense]\na = 1\n", "nonsense"),
    ],
)
def test_unknown_keys_are_named(tmp_path: Path, text: str, key: str) -> None:
    message = _error(text, tmp_path)
    assert f"{tmp_path / 'bot.toml'}: {key}: unknown key" in message


@pytest.mark.parametrize(
    ("replace", "by", "expected"),
    [
        ("iteration_limit = 10", 'iteration_limit = "10"', "lanes.light.iteration_limit"),
        ("iteration_limit = 10", "iteration_limit = 99", "lanes.light.iteration_limit"),
        ('model = "gpt-5-codex-mini"', 'model = "gpt 5; rm -rf"', "lanes.light.model"),
        ('owners = ["owner@example.org"]', 'owners = ["owner"]', "bot.owners"),
        ('owners = ["owner@example.org"]', "owners = []", "bot.owners"),
        ("[lanes.light]", "[lanes.Light-Lane]", "lanes.Light-Lane"),
        ('runtime = "codex"\nmodel', 'runtime = "claude"\nmodel', "lanes.light.runtime"),
        ('runtime = "codex"\nmodel', 'runtime = "gpt"\nmodel', "lanes.light.runtime"),
    ],
)
def test_wrong_values_are_named(tmp_path: Path, replace: str, by: str, expected: str) -> None:
    message = _error(MINIMAL.replace(replace, by, 1), tmp_path)
    assert f": {expected}" in message, message


def test_a_missing_secret_file_is_named(tmp_path: Path) -> None:
    text = MINIMAL + '[xmpp]\njid = "bot@example.org"\npassword_file = "secrets/pw"\n'
    message = _error(text, tmp_path)
    assert "xmpp.password_file" in message and str(tmp_path / "secrets" / "pw") in message
    assert "does not exist" in message


def test_an_empty_secret_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "pw").write_text("\n")
    text = MINIMAL + '[xmpp]\njid = "bot@example.org"\npassword_file = "pw"\n'
    assert "is empty" in _error(text, tmp_path)


def test_matrix_needs_exactly_one_credential(tmp_path: Path) -> None:
    text = MINIMAL + '[matrix]\nhomeserver = "http://127.0.0.1:8008"\nuser_id = "@b:localhost"\n'
    assert "exactly one of password_file or access_token_file" in _error(text, tmp_path)


def test_openrouter_needs_a_key_file(tmp_path: Path) -> None:
    text = MINIMAL + '[runtimes.openrouter]\nbinary = "codex"\n'
    assert "runtimes.openrouter.api_key_file" in _error(text, tmp_path)


def test_base_url_per_runtime(tmp_path: Path) -> None:
    (tmp_path / "gw-key").write_text("k\n")
    text = MINIMAL.replace(
        'binary = "codex"\n',
        'binary = "codex"\nbase_url = "http://127.0.0.1:8080/v1"\napi_key_file = "gw-key"\n',
    )
    text += '[runtimes.claude]\nbinary = "claude"\nbase_url = "https://llm.example.org"\n'
    config = parse_config(text, tmp_path / "bot.toml")
    assert config.runtimes["codex"].base_url == "http://127.0.0.1:8080/v1"
    assert config.runtimes["codex"].api_key_file == tmp_path / "gw-key"
    assert config.runtimes["claude"].base_url == "https://llm.example.org"


@pytest.mark.parametrize(
    "url", ["ftp://x", "http://x/ --sandbox", 'http://x/"evil"', "127.0.0.1:8080", ""]
)
def test_a_bad_base_url_is_named(tmp_path: Path, url: str) -> None:
    value = json.dumps(url)  # a valid TOML string holding any of these
    text = MINIMAL.replace('binary = "codex"\n', f'binary = "codex"\nbase_url = {value}\n')
    assert ": runtimes.codex.base_url" in _error(text, tmp_path)


def test_a_codex_key_file_needs_base_url(tmp_path: Path) -> None:
    (tmp_path / "key").write_text("k\n")
    text = MINIMAL.replace('binary = "codex"\n', 'binary = "codex"\napi_key_file = "key"\n')
    message = _error(text, tmp_path)
    assert "runtimes.codex.api_key_file" in message and "needs base_url" in message


def test_bad_toml_and_missing_file(tmp_path: Path) -> None:
    assert "not valid TOML" in _error("[bot", tmp_path)
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "absent.toml")


def test_the_console_demo_config_loads(tmp_path: Path) -> None:
    from chatbot.app import demo

    config = demo.config(tmp_path / "state")
    assert config.transports == ["console"]
    assert config.bot.seed_repo == ROOT / "chatbot" / "app" / "demo" / "seed"
    assert config.bot.repo == tmp_path / "state" / "demo-repo"
    assert config.runtimes["codex"].env["FAKE_CLI_SCENARIO"] == str(
        ROOT / "chatbot" / "app" / "demo" / "scenario.json"
    )
    # The scripted CLIs are the package's own console scripts, executable.
    binary = Path(config.runtimes["claude"].binary)
    assert binary.name == "intent-board-scripted-claude" and os.access(binary, os.X_OK)


# --- plain words (issue 13) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("replace", "by", "expected"),
    [
        (
            'owners = ["owner@example.org"]',
            'owners = ["owner@example.org"]\n[xmpp]\njid = "board"\npassword_file = "x"',
            "xmpp.jid: 'board' is not a bare JID such as board@example.org",
        ),
        (
            'model = "gpt-5-codex-mini"',
            'model = "gpt 5"',
            "lanes.light.model: 'gpt 5' is not a model name such as gpt-5-codex",
        ),
        (
            "[runtimes.codex]",
            "[runtimes.openrouterx]",
            "runtimes.openrouterx: 'openrouterx' is not a known name; use one of "
            + ", ".join(RUNTIMES),
        ),
        ("[lanes.light]", "[lanes.Light]", "lanes.Light: 'Light' is not a lane name"),
        (
            "iteration_limit = 10",
            "iteration_limit = 99",
            "lanes.light.iteration_limit: must be at most 40",
        ),
        ("iteration_limit = 10", 'iteration_limit = "10"', "must be a whole number"),
        (
            'runtime = "codex"\nmodel',
            'runtime = "gpt"\nmodel',
            "'gpt' is not one of " + ", ".join(RUNTIMES),
        ),
    ],
)
def test_messages_are_plain_words(tmp_path: Path, replace: str, by: str, expected: str) -> None:
    message = _error(MINIMAL.replace(replace, by, 1), tmp_path)
    assert expected in message, message
    # No regular expressions, no internal locations.
    assert "^" not in message and "[key]" not in message and "Input should" not in message


def test_a_misspelt_key_comes_first_with_the_key_it_meant(tmp_path: Path) -> None:
    text = MINIMAL.replace("iteration_limit = 10", "itertion_limit = 10")
    lines = _error(text, tmp_path).splitlines()
    assert lines[0].endswith(
        "lanes.light.itertion_limit: unknown key; did you mean lanes.light.iteration_limit?"
    ), lines
    assert lines[1].endswith("lanes.light.iteration_limit: missing required key")


def test_a_url_where_a_file_is_expected_is_refused(tmp_path: Path) -> None:
    text = MINIMAL.replace('repo = "repo"', 'repo = "repo"\nworkspaces = "https://h/x"')
    message = _error(text, tmp_path)
    assert "bot.workspaces: https:// is an address, not a file" in message


def test_the_database_is_a_file_or_a_postgresql_address(tmp_path: Path) -> None:
    (tmp_path / "db-password").write_text("secret\n")
    text = MINIMAL.replace(
        'repo = "repo"',
        'repo = "repo"\ndatabase = "postgresql://board@db.example.org:5432/board"\n'
        'database_password_file = "db-password"',
    )
    config = parse_config(text, tmp_path / "bot.toml")
    assert config.bot.database == "postgresql://board@db.example.org:5432/board"
    assert config.bot.sqlite_file is None
    assert config.bot.database_password_file == tmp_path / "db-password"
    # A password in the address would end up in logs and process lists.
    leaked = text.replace("board@db", "board:secret@db")
    assert "bot.database: 'postgresql://board:secret@db" in _error(leaked, tmp_path)
    other = MINIMAL.replace('repo = "repo"', 'repo = "repo"\ndatabase = "mysql://u@h/db"')
    assert "PostgreSQL address" in _error(other, tmp_path)
    sqlite = MINIMAL.replace(
        'repo = "repo"', 'repo = "repo"\ndatabase_password_file = "db-password"'
    )
    assert "only a postgresql:// database takes a password" in _error(sqlite, tmp_path)


def test_the_repository_is_a_folder_or_a_git_address(tmp_path: Path) -> None:
    for remote in ("git@git.example.org:team/app.git", "file:///srv/git/app.git"):
        text = MINIMAL.replace('repo = "repo"', f'repo = "{remote}"\nworkspaces = "ws"')
        config = parse_config(text, tmp_path / "bot.toml")
        assert config.bot.remote == remote
        assert config.bot.checkout == tmp_path / "ws" / "clone"
    local = parse_config(MINIMAL, tmp_path / "bot.toml")
    assert local.bot.remote is None and local.bot.checkout == tmp_path / "repo"


def test_xmpp_ca_certs_is_a_path_next_to_the_file(tmp_path: Path) -> None:
    (tmp_path / "pw").write_text("secret\n")
    text = MINIMAL + (
        '[xmpp]\njid = "bot@example.org"\npassword_file = "pw"\nca_certs = "certs/ca.pem"\n'
    )
    config = parse_config(text, tmp_path / "bot.toml")
    assert config.xmpp is not None and config.xmpp.ca_certs == tmp_path / "certs" / "ca.pem"


def test_matrix_encryption_keys(tmp_path: Path) -> None:
    from chatbot.app.wiring import settings_for
    from chatbot.transports.networks import MATRIX

    def matrix_settings(config):
        return settings_for(config, MATRIX)

    (tmp_path / "pw").write_text("secret\n")
    base = MINIMAL + (
        '[matrix]\nhomeserver = "http://127.0.0.1:8008"\nuser_id = "@b:localhost"\n'
        'password_file = "pw"\n'
    )
    # Default: tofu, the crypto store beside the board's database.
    settings = matrix_settings(parse_config(base, tmp_path / "bot.toml"))
    assert settings is not None and settings.trust == "tofu"
    assert settings.crypto_store == str(tmp_path / "var" / "matrix-crypto")
    text = base + 'crypto_store = "keys/e2ee"\ntrust = "verified"\n'
    settings = matrix_settings(parse_config(text, tmp_path / "bot.toml"))
    assert settings is not None and settings.trust == "verified"
    assert settings.crypto_store == str(tmp_path / "keys" / "e2ee")
    assert "matrix.trust" in _error(base + 'trust = "always"\n', tmp_path)


def test_budgets_and_prices(tmp_path: Path, example: Path) -> None:
    text = MINIMAL.replace('repo = "repo"', 'repo = "repo"\nbudget_usd_per_day = 20')
    text = text.replace("iteration_limit = 10", "iteration_limit = 10\nbudget_usd_per_card = 2.5")
    text = text.replace('binary = "codex"', 'binary = "codex"\nusd_per_million_input_tokens = 1.25')
    config = parse_config(text, tmp_path / "bot.toml")
    budgets = config.budgets()
    assert (budgets.per_day_usd, budgets.per_card_usd) == (20, {"light": 2.5})
    codex = config.runtimes["codex"]
    # 2 million tokens in at $1.25, output unpriced (0): $2.50.
    assert priced(codex, Usage(2_000_000, 0, 500)) == pytest.approx(2.5)
    assert priced(parse_config(MINIMAL, tmp_path / "b.toml").runtimes["codex"], Usage(9)) is None
    assert parse_config(MINIMAL, tmp_path / "b.toml").budgets().per_day_usd is None
    # The example configures a light-lane budget and a codex price.
    documented = load_config(example)
    assert documented.budgets().per_card_usd == {"light": 5.0}
    assert documented.runtimes["codex"].usd_per_million_output_tokens == 10.0
    message = _error(text.replace("budget_usd_per_day = 20", "budget_usd_per_day = -1"), tmp_path)
    assert ": bot.budget_usd_per_day" in message


@pytest.mark.parametrize("role", ["builder", "fixer"])
def test_the_lane_roles_have_no_role_section(tmp_path: Path, role: str) -> None:
    text = MINIMAL + f'[roles.{role}]\nmodel = "gpt-5-codex"\n'
    if role == "fixer":
        # An earlier release took a fixer profile: set aside with a warning, never exit 2
        # (tests/board/test_config_upgrades.py).
        config = parse_config(text, tmp_path / "f.toml")
        assert [found.key for found in config.deprecated] == ["roles.fixer.model"]
        assert config.role("fixer").model == ""
    else:
        message = _error(text, tmp_path)
        assert f"roles.{role}.model: the {role} runs with the card's lane ([lanes.*])" in message
        assert "only approvals may be set here" in message
    # What it may be allowed is its own: asked of the owners, or refused at once.
    config = parse_config(MINIMAL + f'[roles.{role}]\napprovals = "deny"\n', tmp_path / "a.toml")
    assert config.approvals(role) == "deny"
    assert parse_config(MINIMAL, tmp_path / "c.toml").approvals(role) == "ask"
    synthesis = parse_config(MINIMAL + '[roles.synthesis]\nmodel = "gpt-5"\n', tmp_path / "b.toml")
    assert synthesis.role("synthesis").model == "gpt-5"


def test_approvals_default_to_ask_for_writers_and_deny_for_readers(tmp_path: Path) -> None:
    config = parse_config(MINIMAL, tmp_path / "b.toml")
    assert {role: config.approvals(role) for role in ("builder", "fixer", "reviewer")} == {
        "builder": "ask",
        "fixer": "ask",
        "reviewer": "deny",
    }
    asked = parse_config(MINIMAL + '[roles.researcher]\napprovals = "ask"\n', tmp_path / "r.toml")
    assert asked.approvals("researcher") == "ask"
    message = _error(MINIMAL + '[roles.builder]\napprovals = "always"\n', tmp_path)
    assert "roles.builder.approvals" in message


# --- files that are not what they seem (issue 23) --------------------------------

XMPP_PASSWORD = '[xmpp]\njid = "bot@example.org"\npassword_file = "pw"\n'


def test_a_secret_file_that_is_not_utf8_is_named_without_its_bytes(tmp_path: Path) -> None:
    (tmp_path / "pw").write_bytes(b"caf\xe9-and-more\n")
    message = _error(MINIMAL + XMPP_PASSWORD, tmp_path)
    assert message == (
        f"{tmp_path / 'bot.toml'}: xmpp.password_file: secret file {tmp_path / 'pw'} "
        "is not UTF-8 text; write the secret as UTF-8"
    )


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda path: path.mkdir(), "is a folder; name a regular file holding only the secret"),
        (
            lambda path: path.write_bytes(b"k" * (64 * 1024 + 1)),
            "is larger than 64 KiB; name a file holding only the secret",
        ),
    ],
    ids=["folder", "huge"],
)
def test_a_secret_file_must_be_a_small_regular_file(tmp_path: Path, make, expected: str) -> None:
    make(tmp_path / "pw")
    message = _error(MINIMAL + XMPP_PASSWORD, tmp_path)
    assert message == (
        f"{tmp_path / 'bot.toml'}: xmpp.password_file: secret file {tmp_path / 'pw'} {expected}"
    )


def test_a_configuration_file_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    file = tmp_path / "bot.toml"
    file.write_bytes(MINIMAL.encode() + "# Grüße\n".encode("latin-1"))
    with pytest.raises(ConfigError) as caught:
        load_config(file)
    line = MINIMAL.count("\n") + 1
    assert str(caught.value) == (
        f"{file}: line {line}: not UTF-8 text (TOML must be); save the file as UTF-8"
    )


def test_the_database_file_is_not_a_folder(tmp_path: Path) -> None:
    (tmp_path / "var").mkdir()
    text = MINIMAL.replace('repo = "repo"', 'repo = "repo"\ndatabase = "var"')
    assert _error(text, tmp_path) == (
        f"{tmp_path / 'bot.toml'}: bot.database: {tmp_path / 'var'} is a folder; name the "
        f"database file in it, e.g. {tmp_path / 'var' / 'board.sqlite3'}"
    )
    (tmp_path / "plain").write_text("")
    inside = MINIMAL.replace('repo = "repo"', 'repo = "repo"\ndatabase = "plain/board.sqlite3"')
    assert _error(inside, tmp_path).endswith(
        f"bot.database: {tmp_path / 'plain'} is a file, not a folder"
    )
    # Folders still to be made are fine: the bot makes them at the first start.
    later = MINIMAL.replace('repo = "repo"', 'repo = "repo"\ndatabase = "new/dir/board.sqlite3"')
    assert parse_config(later, tmp_path / "bot.toml").bot.sqlite_file == (
        tmp_path / "new" / "dir" / "board.sqlite3"
    )


WEB = '[web]\nlisten = "{listen}"\ntoken_file = "token"\n'


@pytest.mark.parametrize(
    ("listen", "problem"),
    [
        ("127.0.0.1:99999", "port 99999 is not between 1 and 65535"),
        ("127.0.0.1:0", "port 0 is not between 1 and 65535"),
        ("999.0.0.1:8080", "999.0.0.1 is not an IPv4 address (four numbers from 0 to 255)"),
        ("[1::2::3]:8080", "[1::2::3] is not an IPv6 address"),
        ("-board.example.org:8080", "-board.example.org is not a host name"),
        ("board..example.org:8080", "board..example.org is not a host name"),
    ],
)
def test_the_web_listen_address_is_checked_at_load(
    tmp_path: Path, listen: str, problem: str
) -> None:
    (tmp_path / "token").write_text("a-long-enough-token-1234\n")
    message = _error(MINIMAL + WEB.format(listen=listen), tmp_path)
    assert message.startswith(f"{tmp_path / 'bot.toml'}: web.listen: {problem}"), message


@pytest.mark.parametrize(
    "listen", ["127.0.0.1:1", "0.0.0.0:65535", "[::1]:8080", "localhost:8080", "board-1.lan:80"]
)
def test_good_listen_addresses_pass(tmp_path: Path, listen: str) -> None:
    (tmp_path / "token").write_text("a-long-enough-token-1234\n")
    config = parse_config(MINIMAL + WEB.format(listen=listen), tmp_path / "bot.toml")
    assert config.web is not None and config.web.listen == listen


@pytest.mark.parametrize("fallback", ["light", "nowhere"])
def test_a_lane_fallback_names_another_configured_lane(tmp_path: Path, fallback: str) -> None:
    text = MINIMAL.replace("[lanes.light]\n", f'[lanes.light]\nfallback = "{fallback}"\n', 1)
    message = _error(text, tmp_path)
    assert f"lanes.light.fallback: {fallback!r} is not another configured lane" in message
    assert "Traceback" not in message


def test_quota_retry_defaults_to_fifteen_minutes(tmp_path: Path) -> None:
    assert parse_config(MINIMAL, tmp_path / "a.toml").bot.quota_retry_s == 900
