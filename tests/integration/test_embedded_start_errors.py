"""Typed, explaining errors when the embedded server cannot start (issue #27 item 12): a directory where NeuSym keeps
a file is named (not a raw ``IsADirectoryError``), and a server that fails says why (its log) and how long it ran
(not "did not start in 17s" one second after it exited)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from neusym import BackendUnavailableError, NeuSymConfig, NeuSymMemory
from neusym.embeddings import HashingEmbedder
from neusym.symbolic.executors import embedded


def _open(data_dir: Path) -> NeuSymMemory:
    return NeuSymMemory(config=NeuSymConfig(data_dir=data_dir, graph_name="g", appendfsync="everysec"),
                        embedder=HashingEmbedder(16))


@pytest.mark.parametrize("name", ["falkordb.clients", "falkordb.start.lock", "falkordb.server.lock",
                                  "falkordb.log", "falkordb.sock", "falkordb.lock"])
def test_a_directory_where_a_file_belongs_is_named(tmp_path: Path, name: str) -> None:
    data_dir = tmp_path / "fk"
    (data_dir / name).mkdir(parents=True)
    with pytest.raises(BackendUnavailableError) as err:
        _open(data_dir)
    assert name in str(err.value)
    assert not isinstance(err.value.__cause__, IsADirectoryError) or "is a directory" in str(err.value)
    assert "did not start in" not in str(err.value)


def test_a_failed_start_reports_the_servers_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that dies at once (here: a stand-in binary that logs Redis' disk-full line and exits) is reported
    with that line and as having exited, without waiting out the start timeout."""
    fake = tmp_path / "redis-server"
    fake.write_text("#!/bin/sh\n"
                    "echo '123:M 04 Dec 2026 12:00:00.000 # Can'\"'\"'t open the append-only file "
                    "appendonly.aof.1.incr.aof: No space left on device' >&2\n"
                    "exit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    real = embedded._binaries()
    monkeypatch.setattr(embedded, "_binaries", lambda: (str(fake), real[1]))
    with pytest.raises(BackendUnavailableError) as err:
        _open(tmp_path / "fk")
    text = str(err.value)
    assert "No space left on device" in text.splitlines()[0]
    assert "exited after" in text and "did not start in" not in text
