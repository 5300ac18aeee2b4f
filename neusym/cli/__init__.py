"""The ``neusym`` command line (``python -m neusym``, console script ``neusym``).

``neusym demo`` runs the multi-session demo; the other commands open a memory the way the library does (embedded
FalkorDB in ``--data-dir``/``NEUSYM_DATA_DIR`` by default, Neo4j or a FalkorDB server through the same environment
variables) and work on one scope (``--user/--agent/--session``) or, for operators, ``--all-tenants``. Every command
takes ``--json`` for machine-readable output; errors are one line on stderr and a non-zero exit code.
"""

from __future__ import annotations

from neusym.cli import _mcp, _memory, _ops  # noqa: F401 - registers the commands
from neusym.cli._app import app

__all__ = ["app", "main"]


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point; exits with the command's code."""
    app(args=argv, prog_name="neusym")
