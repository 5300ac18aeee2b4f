"""``python -m neusym.governance janitor``: run the janitor from cron/systemd, once or in a loop.

Lives in the governance package so the main ``neusym`` CLI can mount it with :func:`register` (one call) without
governance depending on the CLI module.
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import threading
from datetime import datetime
from typing import Any

__all__ = ["main", "register", "run"]


def register(sub: Any) -> None:
    """Add the ``janitor`` sub-command to an ``argparse`` sub-parser collection."""
    p = sub.add_parser("janitor", help="expire TTLs, decay, archive and purge memories (governance janitor)")
    p.add_argument("--data-dir", default=None, help="NeuSym data directory (default: NEUSYM_DATA_DIR or ~/.neusym)")
    p.add_argument("--graph", default=None, help="graph name (default: NEUSYM_GRAPH or 'neusym')")
    p.add_argument("--user-id", default=None, help="only this tenant (default: every tenant)")
    p.add_argument("--now", default=None, help="simulated clock: epoch seconds or ISO-8601 time")
    p.add_argument("--dry-run", action="store_true", help="report what would change, change nothing")
    p.add_argument("--every", type=float, default=None, metavar="SECONDS", help="keep running, one pass per interval")
    p.add_argument("--embedder", default="default", help="'default' (MiniLM) or 'hashing:<dim>' (must match the "
                                                          "embedder the data was written with)")
    p.set_defaults(func=run)


def _now(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return datetime.fromisoformat(value).timestamp()


def run(args: argparse.Namespace) -> int:
    from neusym import NeuSymConfig, NeuSymMemory

    embedder: Any = None
    if args.embedder.startswith("hashing"):
        from neusym.embeddings import HashingEmbedder

        _, _, dim = args.embedder.partition(":")
        embedder = HashingEmbedder(int(dim or 256))
    overrides: dict[str, Any] = {"graph_name": args.graph}
    if args.data_dir:
        from pathlib import Path

        overrides["data_dir"] = Path(args.data_dir)
    mem = NeuSymMemory(config=NeuSymConfig.from_env(**overrides), embedder=embedder)
    stop = threading.Event()
    if args.every:
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        while True:
            report = mem.run_janitor(now=_now(args.now), user_id=args.user_id, dry_run=args.dry_run)
            print(json.dumps({"now": report.now, "dry_run": report.dry_run, "expired": len(report.expired),
                              "decayed": report.decayed, "archived": len(report.archived),
                              "purged": len(report.purged)}), flush=True)
            if not args.every or stop.wait(args.every):
                return 0
    except KeyboardInterrupt:
        return 0
    finally:
        mem.close()


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING)
    parser = argparse.ArgumentParser(prog="python -m neusym.governance")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
