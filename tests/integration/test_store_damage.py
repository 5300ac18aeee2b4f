"""A damaged embedded store is a typed error naming its files and the recovery, never an empty or silently shortened
store, and its damaged files are kept as they are (issue #27 item 7).

The store is written with the server killed afterwards (no compaction: every write stays in the incremental AOF),
then damaged the ways the issue found: the manifest deleted, the whole ``appendonlydir`` deleted, a command in the
middle of the incr file garbled (the server skips it: ``== CRITICAL ==``), the incr file cut short (the graph ends
behind the indexes' watermark). Each open must raise ``StoreDamagedError`` and leave the files byte-for-byte; a
second open must refuse again (nothing compacted in between); ``NEUSYM_ACCEPT_DAMAGE=1`` opens what the files hold
after keeping a copy of them.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from neusym import GraphIntegrityError, NeuSymConfig, NeuSymMemory, StoreDamagedError
from neusym.embeddings import HashingEmbedder

N = 12


def _open(data_dir: Path) -> NeuSymMemory:
    return NeuSymMemory(config=NeuSymConfig(data_dir=data_dir, graph_name="g", appendfsync="always"),
                        embedder=HashingEmbedder(16))


def _written(data_dir: Path) -> list[str]:
    """N acknowledged memories, the indexes saved (watermark N), then the server killed: nothing compacted."""
    mem = _open(data_dir)
    ids = [mem.add(f"note {i}: the parcel for flat {i} waits at the front desk", user_id="ana", infer=False)[0].id
           for i in range(N)]
    mem._engine.derived.save()
    embedded = mem._engine.executor.embedded  # type: ignore[attr-defined]
    embedded.stop(force=True)
    mem.close()  # the server is gone: nothing is compacted
    return ids


def _aof_files(data_dir: Path) -> dict[str, str]:
    aof = data_dir / "appendonlydir"
    if not aof.is_dir():
        return {}
    return {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(aof.iterdir())}


def _incr(data_dir: Path) -> Path:
    return sorted((data_dir / "appendonlydir").glob("*.incr.aof"))[-1]


def _no_manifest(data_dir: Path) -> None:
    (data_dir / "appendonlydir" / "appendonly.aof.manifest").unlink()


def _no_directory(data_dir: Path) -> None:
    shutil.rmtree(data_dir / "appendonlydir")


def _garbled(data_dir: Path) -> None:
    incr = _incr(data_dir)
    data = incr.read_bytes()
    at = data.rindex(b"CYPHER ", 0, data.rindex(b"`rows`=[{"))  # the last add's statement, unparseable now
    # (same length: the RESP framing stays right)
    incr.write_bytes(data[:at] + b"GARBLE" + data[at + 6:])


def _cut(data_dir: Path) -> None:
    incr = _incr(data_dir)
    data = incr.read_bytes()
    incr.write_bytes(data[: data.rindex(b"*3\r\n$11\r\nGRAPH.QUERY")])  # the last acknowledged write, whole


DAMAGE: dict[str, tuple[Callable[[Path], None], str]] = {
    "no_manifest": (_no_manifest, "no manifest"),
    "no_directory": (_no_directory, "is missing"),
    "garbled_command": (_garbled, "could not replay"),
    "cut_log": (_cut, "behind"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_store_is_refused_and_its_files_are_kept(tmp_path: Path, damage: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NEUSYM_ACCEPT_DAMAGE", raising=False)
    ids = _written(tmp_path)
    hurt, says = DAMAGE[damage]
    hurt(tmp_path)
    before = _aof_files(tmp_path)
    for _ in range(2):  # refused again: nothing was compacted or rewritten in between
        with pytest.raises(StoreDamagedError, match=says) as err:
            _open(tmp_path)
        assert isinstance(err.value, GraphIntegrityError)
        assert err.value.files and "NEUSYM_ACCEPT_DAMAGE" in err.value.recovery
        assert "files:" in str(err.value) and "recovery:" in str(err.value)
        after = _aof_files(tmp_path)
        if damage == "cut_log":  # loaded (the server had nothing to repair); the log is not rewritten
            assert {k: v for k, v in after.items() if k.endswith(".aof") or k.endswith(".rdb")} == {
                k: v for k, v in before.items() if k.endswith(".aof") or k.endswith(".rdb")}
        else:
            assert after == before
    # accepted: a copy of the files first, then the store opens with what they hold
    monkeypatch.setenv("NEUSYM_ACCEPT_DAMAGE", "1")
    mem = _open(tmp_path)
    try:
        kept = sorted(tmp_path.glob("appendonlydir.damaged-*"))
        if damage != "no_directory":
            assert kept and {f.name for f in kept[0].iterdir()} >= set(before)
        found = len(mem.get_many(ids, user_id="ana"))
        assert found == {"no_manifest": N, "no_directory": 0, "garbled_command": N - 1, "cut_log": N - 1}[damage]
        assert mem.admin.stats(user_id="ana")["memories"] == found
        mem.add("a new note after the recovery", user_id="ana", infer=False)
    finally:
        mem.close()
    monkeypatch.delenv("NEUSYM_ACCEPT_DAMAGE")
    mem = _open(tmp_path)  # accepted once: the store is whole again as it now is
    try:
        assert mem.admin.stats(user_id="ana")["memories"] == found + 1
    finally:
        mem.close()


def test_a_healthy_store_opens_and_compacts_as_before(tmp_path: Path) -> None:
    ids = _written(tmp_path)
    mem = _open(tmp_path)
    try:
        assert len(mem.get_many(ids, user_id="ana")) == N
    finally:
        mem.close()
    assert not (tmp_path / "falkordb.damaged").exists()
    assert sum(f.stat().st_size for f in (tmp_path / "appendonlydir").glob("*.incr.aof")) == 0  # compacted
