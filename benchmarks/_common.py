"""Shared helpers for the benchmarks: machine description, RSS, percentiles, embedders, report writing.

Benchmarks measure; they never assert on time. Every report carries the machine, the date and the exact command so
a number in the README can be traced back to the run that produced it.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "DocCachedEmbedder",
    "QueryCachedEmbedder",
    "build_embedder",
    "dir_size",
    "machine_info",
    "pct",
    "quiet_logs",
    "rss_mb",
    "write_json",
]


def machine_info(module: str = "") -> dict[str, Any]:
    """CPU model, cores usable by this process, memory, Python and library versions."""
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem_gb = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    versions: dict[str, str] = {}
    for mod in ("numpy", "faiss", "onnxruntime", "tokenizers", "torch", "sentence_transformers", "bm25s", "falkordb",
                "langchain_community", "mem0"):
        if mod in ("torch", "sentence_transformers") and mod not in sys.modules:
            continue  # report them when this run used them; importing them here would cost seconds and memory
        try:
            m = __import__(mod)
            versions[mod] = str(getattr(m, "__version__", "?"))
        except Exception:  # noqa: BLE001 - optional packages
            continue
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                check=False, cwd=Path(__file__).resolve().parent).stdout.strip()
    except OSError:
        commit = ""
    return {
        "cpu": cpu,
        "cores": cores,
        "memory_gb": mem_gb,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "versions": versions,
        "git_commit": commit,
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": " ".join(["python -m", module or Path(sys.argv[0]).stem, *sys.argv[1:]]),
    }


def rss_mb() -> float:
    """Resident set size of this process in MiB (from /proc, no psutil)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


def pid_rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


def dir_size(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:
                continue
    return total


def pct(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if len(values) else float("nan")


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, default=str) + "\n")


def quiet_logs() -> None:
    import logging
    import warnings

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    warnings.filterwarnings("ignore")
    for name in ("neusym", "mem0", "faiss", "sentence_transformers", "transformers", "httpx", "bm25s"):
        logging.getLogger(name).setLevel(logging.ERROR)


class DocCachedEmbedder:
    """Caches document vectors (so every system in one run indexes the SAME vectors without re-encoding) but never
    query vectors: each system pays for its own query embedding, so end-to-end latencies stay comparable."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self._docs: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self.encoded = 0

    @property
    def name(self) -> str:
        return str(self.inner.name)

    @property
    def dimension(self) -> int:
        return int(self.inner.dimension)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        missing = list(dict.fromkeys(t for t in texts if t not in self._docs))
        if missing:
            vecs = self.inner.embed_documents(missing)
            self.encoded += len(missing)
            with self._lock:
                for t, v in zip(missing, vecs, strict=True):
                    self._docs[t] = np.asarray(v, dtype=np.float32)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.vstack([self._docs[t] for t in texts]).astype(np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return np.asarray(self.inner.embed_query(text), dtype=np.float32)


class QueryCachedEmbedder(DocCachedEmbedder):
    """Also caches queries: for tuning loops, where only retrieval quality matters."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self._queries: dict[str, np.ndarray] = {}

    def embed_query(self, text: str) -> np.ndarray:
        v = self._queries.get(text)
        if v is None:
            v = self._queries[text] = super().embed_query(text)
        return v

    def prime_queries(self, texts: Sequence[str]) -> None:
        """Encode many queries in one batch (valid for symmetric models such as MiniLM and the hashing one)."""
        todo = [t for t in dict.fromkeys(texts) if t not in self._queries]
        if todo:
            for t, v in zip(todo, self.inner.embed_documents(todo), strict=True):
                self._queries[t] = np.asarray(v, dtype=np.float32)

    def time_queries(self, texts: Sequence[str]) -> dict[str, float]:
        """Live single-query embedding latency of the inner model (ms percentiles)."""
        import time

        ms = []
        for t in texts:
            t0 = time.perf_counter()
            self.inner.embed_query(t)
            ms.append((time.perf_counter() - t0) * 1000)
        return {"p50": round(pct(ms, 50), 2), "p95": round(pct(ms, 95), 2), "n": len(ms)}


def build_embedder(kind: str, *, cache_queries: bool = False) -> DocCachedEmbedder:
    """``minilm`` (offline all-MiniLM-L6-v2 on onnxruntime, int8: the default everywhere), ``minilm-torch`` (the
    same model in fp32 on sentence-transformers/torch, needs ``neusym[torch]``: for before/after comparisons) or
    ``hashing`` (fast, for smoke tests)."""
    if kind == "minilm":
        from neusym.embeddings import MiniLMEmbedder

        inner: Any = MiniLMEmbedder()
        inner.load()
    elif kind == "minilm-torch":
        from neusym.embeddings import SentenceTransformerEmbedder

        inner = SentenceTransformerEmbedder()
        inner.load()
    elif kind == "hashing":
        from neusym.embeddings import HashingEmbedder

        inner = HashingEmbedder(384)
    else:
        raise SystemExit(f"unknown embedder {kind!r} (minilm | minilm-torch | hashing)")
    return QueryCachedEmbedder(inner) if cache_queries else DocCachedEmbedder(inner)
