"""``NeuSymRetriever``: NeuSym's two-stage search (FAISS + BM25, then graph re-scoring) as a LangChain retriever."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever, LangSmithRetrieverParams
from langchain_core.runnables import RunnableConfig, ensure_config
from pydantic import Field, field_validator

from langchain_neusym._common import (
    SCOPE_KEYS,
    ScopedModel,
    asearch_shown,
    check_search_kwargs,
    config_ids,
    resolve_scope,
    result_to_document,
    search_shown,
)
from neusym import InvalidInputError, Scope

__all__ = ["NeuSymRetriever"]


class NeuSymRetriever(BaseRetriever, ScopedModel):
    """Retrieve memories as ``Document`` objects, best first.

    Each document's ``id`` is the memory id and its metadata carries ``type``, ``created_at``/``updated_at``/
    ``valid_from``, the scope ids, ``status``, ``flags``, ``marks`` (the careful-use marks a prompt should show),
    ``score`` and the score explanation (``score_explanation`` as a one-line summary, ``explanation`` with every
    component and the graph path).

    What it returns by default is what ``build_context`` shows a model: reviewed memories only (status
    ``active``; nothing pending review or flagged ``suspicious`` by screening; never a quarantined one).
    ``search_kwargs={"include_unreviewed": True}`` (or per call) adds what awaits review, marked in ``marks``.
    ``page_content`` is the stored text as it is, for programs: to put documents into a prompt, render them with
    :func:`langchain_neusym.render_documents` (framed, quoted and marked as data, :mod:`neusym.prompting`).

    Args:
        memory: an open :class:`neusym.NeuSymMemory`.
        k: how many documents to return (``invoke(query, k=...)`` overrides it per call).
        user_id / agent_id / session_id / scope: the scope searched. Ids set here are bound: a call may fill ids
            left open (``invoke(q, user_id=...)`` or ``config={"configurable": {"user_id": ...}}``) but never
            change a bound one. With no id at all the memory's default scope is searched.
        search_kwargs: filters for :meth:`NeuSymMemory.search` (``types``, ``tags``, ``entities``, ``statuses``,
            ``plan_states``, ``valid_at``, ``time_from``, ``time_to``, ``min_score``, ``recipe``, ...); any of them
            may also be passed to ``invoke`` for one call.

    Example::

        retriever = NeuSymRetriever(memory=mem, user_id="ana", k=5, search_kwargs={"types": ["preference"]})
        docs = retriever.invoke("what does Ana like to eat?")
    """

    k: int = 4
    search_kwargs: dict[str, Any] = Field(default_factory=dict)

    @field_validator("search_kwargs")
    @classmethod
    def _check_search_kwargs(cls, value: dict[str, Any]) -> dict[str, Any]:
        return check_search_kwargs(value)

    @field_validator("k")
    @classmethod
    def _check_k(cls, value: int) -> int:
        if isinstance(value, bool) or value < 0:
            raise InvalidInputError(f"k must be a non-negative int, got {value!r}")
        return value

    # ------------------------------------------------------------------ LangChain hooks
    def invoke(self, input: str, config: RunnableConfig | None = None, **kwargs: Any) -> list[Document]:  # noqa: A002
        """As :meth:`BaseRetriever.invoke`; scope ids in ``config["configurable"]`` fill ids left open."""
        return super().invoke(input, config, **self._with_config_ids(config, kwargs))

    async def ainvoke(self, input: str, config: RunnableConfig | None = None,  # noqa: A002
                      **kwargs: Any) -> list[Document]:
        return await super().ainvoke(input, config, **self._with_config_ids(config, kwargs))

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
                                k: int | None = None, **kwargs: Any) -> list[Document]:
        scope, call = self._call_args(k, kwargs)
        return [result_to_document(r) for r in search_shown(self.memory, query, scope, **call)]

    async def _aget_relevant_documents(self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun,
                                       k: int | None = None, **kwargs: Any) -> list[Document]:
        scope, call = self._call_args(k, kwargs)
        return [result_to_document(r) for r in await asearch_shown(self.memory, query, scope, **call)]

    def _get_ls_params(self, **kwargs: Any) -> LangSmithRetrieverParams:
        params = super()._get_ls_params(**kwargs)
        params["ls_vector_store_provider"] = "NeuSym"
        params["ls_embedding_model"] = getattr(self.memory.embedder, "name", None)
        return params

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _with_config_ids(config: RunnableConfig | None, kwargs: dict[str, Any]) -> dict[str, Any]:
        ids = config_ids(ensure_config(config))
        return {**{k: v for k, v in ids.items() if k not in kwargs}, **kwargs} if ids else kwargs

    def _call_args(self, k: int | None, kwargs: dict[str, Any]) -> tuple[Scope, dict[str, Any]]:
        call_ids = {key: kwargs.pop(key) for key in SCOPE_KEYS if key in kwargs}
        scope = resolve_scope(self.memory, self.bound_ids(), call_ids)
        call = {**self.search_kwargs, **check_search_kwargs(kwargs)}
        call["k"] = self.k if k is None else k
        return scope, call
