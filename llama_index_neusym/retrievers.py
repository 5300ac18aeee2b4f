"""``NeuSymRetriever``: NeuSym's two-stage memory search as a LlamaIndex retriever (query engines, agent tools)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.core.vector_stores.types import MetadataFilters

from llama_index_neusym._common import (
    asearch_shown,
    bound_ids,
    check_memory,
    check_search_kwargs,
    filters_to_search_kwargs,
    open_memory,
    resolve_scope,
    result_to_node,
    search_shown,
)
from neusym import InvalidInputError, NeuSymMemory, Scope

__all__ = ["NeuSymRetriever"]


class NeuSymRetriever(BaseRetriever):
    """Retrieve memories of one scope as ``NodeWithScore`` (node id = memory id).

    Each node's metadata carries ``memory_id``, ``type``, ``created_at``/``updated_at``/``valid_from``/
    ``valid_to`` (ISO 8601), scope ids, ``tags``, ``entities``, ``score_explanation`` (one-line summary) and
    ``score_components`` (every weighted component and the graph path), ``status``, ``flags`` and ``marks``. The
    nodes are :class:`~llama_index_neusym.MemoryNode` objects: programs read the stored text, an LLM reads each
    memory as one quoted, neutralised line with its date, kind and careful-use marks (:mod:`neusym.prompting`);
    use :data:`~llama_index_neusym.MEMORY_QA_TEMPLATE` (the records framed as data) in a query engine, or
    :func:`~llama_index_neusym.render_nodes` for a prompt of your own.

    By default it returns what ``build_context`` shows a model: reviewed memories only (status ``active``; nothing
    pending review or flagged ``suspicious``; never a quarantined one); ``search_kwargs={"include_unreviewed":
    True}`` adds what awaits review, marked.

    The scope is fixed at construction: ``user_id`` is the tenant boundary, ``agent_id``/``session_id`` narrow it.
    Without any id the memory's default scope is used. ``filters`` (LlamaIndex ``MetadataFilters`` or a dict) and
    ``search_kwargs`` (``types``, ``tags``, ``entities``, ``time_from``, ``min_score``, ``recipe``, ...) narrow
    results further but can never change the scope.

    Args:
        memory: an open :class:`neusym.NeuSymMemory` (see :meth:`from_defaults` to open one).
        user_id / agent_id / session_id: the scope searched.
        similarity_top_k: how many memories to return.
        filters: metadata filters, translated to NeuSym search filters (unsupported ones raise).
        search_kwargs: further ``NeuSymMemory.search`` keyword arguments.
    """

    def __init__(
        self,
        memory: NeuSymMemory,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        similarity_top_k: int = 5,
        filters: MetadataFilters | dict[str, Any] | None = None,
        search_kwargs: dict[str, Any] | None = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        check_memory(memory)
        if isinstance(similarity_top_k, bool) or not isinstance(similarity_top_k, int) or similarity_top_k < 0:
            raise InvalidInputError(f"similarity_top_k must be a non-negative int, got {similarity_top_k!r}")
        self._memory = memory
        self._scope = resolve_scope(memory, bound_ids(None, user_id=user_id, agent_id=agent_id,
                                                      session_id=session_id))
        self._top_k = similarity_top_k
        kwargs = check_search_kwargs(search_kwargs)
        kwargs.update(filters_to_search_kwargs(filters))
        self._search_kwargs = kwargs
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    @classmethod
    def from_defaults(
        cls,
        memory: NeuSymMemory | None = None,
        *,
        data_dir: str | Path | None = None,
        embed_model: Any = None,
        llm: Any = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        similarity_top_k: int = 5,
        filters: MetadataFilters | dict[str, Any] | None = None,
        search_kwargs: dict[str, Any] | None = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
        memory_kwargs: dict[str, Any] | None = None,
    ) -> NeuSymRetriever:
        """Wrap ``memory``, or open one in ``data_dir`` with an optional LlamaIndex ``embed_model`` / ``llm``
        (``memory_kwargs`` go to :class:`NeuSymMemory`)."""
        mem = open_memory(memory, data_dir=data_dir, embed_model=embed_model, llm=llm, **(memory_kwargs or {}))
        return cls(mem, user_id=user_id, agent_id=agent_id, session_id=session_id,
                   similarity_top_k=similarity_top_k, filters=filters, search_kwargs=search_kwargs,
                   callback_manager=callback_manager, verbose=verbose)

    @property
    def memory(self) -> NeuSymMemory:
        return self._memory

    @property
    def scope(self) -> Scope:
        return self._scope

    @property
    def similarity_top_k(self) -> int:
        return self._top_k

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if not query_bundle.query_str.strip():
            return []
        hits = search_shown(self._memory, query_bundle.query_str, self._scope, k=self._top_k, **self._search_kwargs)
        return [result_to_node(h) for h in hits]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if not query_bundle.query_str.strip():
            return []
        hits = await asearch_shown(self._memory, query_bundle.query_str, self._scope, k=self._top_k,
                                   **self._search_kwargs)
        return [result_to_node(h) for h in hits]
