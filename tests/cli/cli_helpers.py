"""Helpers shared by the CLI tests (imported as ``cli_helpers``: pytest puts this directory on ``sys.path``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from click.testing import Result
from typer.testing import CliRunner

from neusym.cli import app

__all__ = ["Cli", "one_line_error"]


@dataclass
class Cli:
    runner: CliRunner
    graph: str

    def __call__(self, *args: Any, ok: bool = True, input: str | None = None) -> Result:  # noqa: A002
        res = self.runner.invoke(app, [str(a) for a in args], input=input, catch_exceptions=False)
        if ok and res.exit_code != 0:
            raise AssertionError(f"neusym {' '.join(map(str, args))} exited {res.exit_code}\n"
                                 f"stdout: {res.stdout}\nstderr: {res.stderr}")
        return res

    def json(self, *args: Any, **kwargs: Any) -> Any:
        """Run with --json and parse stdout."""
        return json.loads(self(*args, "--json", **kwargs).stdout)



def one_line_error(res: Result) -> str:
    """The CLI's error contract: exactly one non-empty line on stderr, starting with 'error: '."""
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("error: "), res.stderr
    return lines[0]
