"""The ``neusym`` command line (``python -m neusym``)."""

from __future__ import annotations

import argparse
import sys

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="neusym")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the multi-session memory demo on the embedded default")
    demo.add_argument("--data-dir", default=None)
    demo.add_argument("--phase", choices=["all", "write", "verify"], default="all")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from neusym.demo import run_demo

        sys.exit(run_demo(args.data_dir, phase=args.phase))
