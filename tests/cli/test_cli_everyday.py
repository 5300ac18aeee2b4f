"""Everyday CLI paths (issue 30 item 5): a restore right after an export says how to proceed, and repeating it with
that flag is idempotent."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import Cli, one_line_error


def test_restore_right_after_export_names_skip_existing(cli: Cli, tmp_path: Path) -> None:
    cli("add", "I keep bees in Ghent.", "-u", "ana")
    cli("add", "My sister Marta lives in Porto.", "-u", "ana")
    f = tmp_path / "ana.jsonl"
    n = cli.json("export", f, "-u", "ana")["counts"]["memory"]
    res = cli("restore", f, "-u", "ana", ok=False)
    assert res.exit_code == 2
    assert "--skip-existing" in one_line_error(res)
    for _ in range(2):  # the named way is idempotent
        again = cli.json("restore", f, "-u", "ana", "--skip-existing")
        assert again["restored"]["skipped"] == n and again["restored"]["memories"] == 0
    assert cli.json("stats", "-u", "ana")["memories"] == n
