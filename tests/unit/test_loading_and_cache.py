"""Loads that make someone wait say so; one-time derived data is computed once per machine (issue 30 item 1).

No timed assertions: the notice is driven by events (a zero delay, and a block that waits for the announcement),
the cache by counting how often the data is computed.
"""

from __future__ import annotations

import logging
import stat
import threading
from pathlib import Path

import numpy as np
import pytest

from neusym import cache_files
from neusym.cache_files import cached_array, content_digest
from neusym.embeddings import CachedEmbedder, HashingEmbedder, MiniLMEmbedder, preload
from neusym.embeddings.tables import content_key_of, table_embedder
from neusym.loading import loading, show_on_stderr


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []
        self.seen = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())
        self.seen.set()


@pytest.fixture
def notices() -> _Records:
    log = logging.getLogger("neusym.loading")
    handler = _Records()
    old = log.level
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    yield handler
    log.removeHandler(handler)
    log.setLevel(old)


def test_a_slow_load_is_announced_while_it_runs_and_when_it_ends(notices: _Records) -> None:
    with loading("the test table", after=0.0):
        assert notices.seen.wait(30), "the notice must appear during the load"
        assert notices.lines == ["loading the test table ..."]
    assert len(notices.lines) == 2 and notices.lines[1].startswith("loaded the test table in ")


def test_a_fast_load_says_nothing(notices: _Records) -> None:
    with loading("the quick table", after=3600.0):
        pass
    assert notices.lines == []


def test_a_failed_load_says_it_failed(notices: _Records) -> None:
    with pytest.raises(RuntimeError), loading("the broken table", after=0.0):
        notices.seen.wait(30)
        raise RuntimeError("boom")
    assert notices.lines[-1].startswith("loading the broken table failed")


def test_show_on_stderr_is_idempotent() -> None:
    log = logging.getLogger("neusym.loading")
    before = list(log.handlers)
    try:
        show_on_stderr()
        show_on_stderr()
        ours = [h for h in log.handlers if type(h).__name__ == "_Stderr"]
        assert len(ours) == 1 and log.level == logging.INFO and not log.propagate
    finally:
        for h in list(log.handlers):
            if h not in before:
                log.removeHandler(h)
        log.propagate = True


# ---------------------------------------------------------------------------------------------------- the cache
@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(cache_files.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_cached_array_computes_once_and_keeps_the_file_private(cache: Path) -> None:
    calls: list[int] = []

    def compute() -> np.ndarray:
        calls.append(1)
        return np.arange(6, dtype=np.float32).reshape(2, 3)

    digest = content_digest(["a", "b"])
    first = cached_array("tables", digest, compute, shape=(2, 3))
    second = cached_array("tables", digest, compute, shape=(2, 3))
    assert len(calls) == 1 and np.array_equal(first, second)
    path = cache / "tables" / f"{digest}.npy"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_a_damaged_or_misshapen_entry_is_recomputed(cache: Path) -> None:
    digest = content_digest(["x"])
    cached_array("tables", digest, lambda: np.ones((2, 2), dtype=np.float32))
    path = cache / "tables" / f"{digest}.npy"
    path.write_bytes(path.read_bytes()[:20])  # truncated
    assert cached_array("tables", digest, lambda: np.zeros((2, 2), dtype=np.float32)).sum() == 0
    out = cached_array("tables", digest, lambda: np.full((3, 2), 7.0, dtype=np.float32), shape=(3, 2))
    assert out.shape == (3, 2) and float(out[0, 0]) == 7.0


def test_the_cache_can_be_turned_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cache_files.CACHE_ENV, "off")
    calls: list[int] = []

    def compute() -> np.ndarray:
        calls.append(1)
        return np.zeros(1)

    cached_array("tables", "d", compute)
    cached_array("tables", "d", compute)
    assert len(calls) == 2 and cache_files.cache_dir() is None


def test_digests_separate_their_parts() -> None:
    assert content_digest(["ab", "c"]) != content_digest(["a", "bc"])


def test_an_unwritable_cache_only_costs_the_computation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv(cache_files.CACHE_ENV, str(blocker / "cache"))
    assert cached_array("tables", "d", lambda: np.ones(2)).tolist() == [1.0, 1.0]


# ---------------------------------------------------------------------------------------------------- tables
class _Counting(HashingEmbedder):
    """A hashing embedder that pins its vectors (declares a content key) and counts the texts it embeds."""

    def __init__(self, key: str | None) -> None:
        super().__init__(32)
        self.key = key
        self.embedded = 0

    @property
    def content_key(self) -> str | None:
        return self.key

    def embed_documents(self, texts: list[str]) -> np.ndarray:  # type: ignore[override]
        self.embedded += len(texts)
        return super().embed_documents(texts)


def test_a_pinned_models_table_is_embedded_once_per_machine(cache: Path) -> None:
    texts = ["where I live: my home town", "who I work for", "small talk"]
    first = _Counting("pinned-v1")
    a = table_embedder(first)(texts)
    second = _Counting("pinned-v1")  # another process, same model
    b = table_embedder(second)(texts)
    assert first.embedded == 3 and second.embedded == 0 and np.array_equal(a, b)
    other = _Counting("pinned-v2")  # another model: its own entry
    table_embedder(other)(texts)
    assert other.embedded == 3
    changed = _Counting("pinned-v1")  # other texts: their own entry
    table_embedder(changed)([*texts, "a new slot"])
    assert changed.embedded == 4


def test_an_unpinned_models_table_is_not_cached(cache: Path) -> None:
    model = _Counting(None)
    table_embedder(model)(["a", "b"])
    table_embedder(model)(["a", "b"])
    assert model.embedded == 4 and not (cache / "tables").exists()


def test_content_keys_of_the_default_model() -> None:
    minilm = MiniLMEmbedder()
    key = content_key_of(CachedEmbedder(minilm))
    assert key is not None and key == minilm.content_key and not minilm.loaded
    assert content_key_of(MiniLMEmbedder(verify=False)) is None
    assert content_key_of(HashingEmbedder(16)) is None


def test_preload_loads_through_wrappers_and_leaves_remote_models_alone() -> None:
    class Local:
        name, dimension = "local", 4
        loads = 0

        def load(self) -> None:
            Local.loads += 1

    class Remote:
        name, dimension = "remote", 4

    wrapped = type("W", (), {"name": "local", "dimension": 4, "inner": Local()})()
    assert preload(wrapped) and Local.loads == 1
    assert not preload(Remote())


def test_the_update_detector_embeds_its_slot_table_through_the_table_embedder() -> None:
    from neusym.governance.updates import UpdateDetector

    calls: dict[str, int] = {"embed": 0, "table": 0}
    model = HashingEmbedder(32)

    def embed(texts: list[str]) -> np.ndarray:
        calls["embed"] += 1
        return model.embed_documents(texts)

    def table(texts: list[str]) -> np.ndarray:
        calls["table"] += 1
        return model.embed_documents(texts)

    detector = UpdateDetector(None, None, embed, embed_table=table)  # type: ignore[arg-type]
    m = detector.slot_matrix()
    assert m is not None and m.shape[1] == 32 and calls == {"embed": 0, "table": 1}
    detector.slot_matrix()
    assert calls["table"] == 1
