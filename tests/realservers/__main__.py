"""CLI behind scripts/servers: install | start | stop | status | env."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from . import Servers, bubblewrap, ensure_installed, postgres

DEFAULT_DIR = Path(__file__).resolve().parents[2] / "var" / "servers"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/servers", description=__doc__)
    parser.add_argument(
        "--dir", type=Path, default=DEFAULT_DIR, help=f"data folder (default {DEFAULT_DIR})"
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser(
        "install",
        help="only make sure the prosody, postgresql and bubblewrap Debian packages are present",
    )
    sub.add_parser("start", help="start both servers, create accounts and rooms (idempotent)")
    sub.add_parser("stop", help="TERM both servers and wait for them to exit")
    sub.add_parser("status", help="print whether each server runs; exit 1 if one does not")
    sub.add_parser("env", help="print shell exports pointing at servers.json")
    args = parser.parse_args(argv)

    if args.cmd == "install":
        ensure_installed()
        # The store's and pipeline's tests run on a real PostgreSQL too (tests/conftest.py).
        postgres.ensure_installed()
        # Every agent run of the pipeline's real-CLI tests goes through the sandbox.
        bubblewrap.ensure_installed()
        return 0
    servers = Servers(args.dir)
    if args.cmd == "start":
        servers.start(detach=True)
        print(
            f"servers up in {servers.timings['start_total']:.2f}s; "
            f"description in {servers.json_path}",
            file=sys.stderr,
        )
        print(servers.json_path)
        return 0
    if args.cmd == "stop":
        servers.stop()
        return 0
    if args.cmd == "status":
        status = servers.status()
        print(json.dumps(status))
        return 0 if all(status.values()) else 1
    if args.cmd == "env":
        if not servers.info:
            print(f"no {servers.json_path}; run `scripts/servers start` first", file=sys.stderr)
            return 1
        x, m = servers.info["xmpp"], servers.info["matrix"]
        exports = {
            "CHATBOT_SERVERS_JSON": str(servers.json_path),
            "CHATBOT_XMPP_HOST": x["host"],
            "CHATBOT_XMPP_PORT": str(x["port"]),
            "CHATBOT_MATRIX_HOMESERVER": m["homeserver"],
        }
        for k, v in exports.items():
            print(f"export {k}={shlex.quote(v)}")
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
