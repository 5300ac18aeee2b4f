"""Recipe: a LlamaIndex RetrieverQueryEngine that answers from NeuSym memories (NeuSymRetriever).

    python cookbook/llamaindex_query_engine.py                 # offline: llama-index-core's MockLLM
    NEUSYM_LLAMA_LLM=openai:gpt-4o-mini python cookbook/llamaindex_query_engine.py

Two users' memories share one NeuSym store. The retriever is built for Ana, so the engine answers from Ana's
memories only: Bob's never reach the prompt. Each source node carries the memory id, type, timestamps and why it
scored what it did. The recipe exits non-zero if the right memory is missing or another user's leaks in.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llama_index.core.llms.mock import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llamaindex_models import pick_embedder, pick_llm

from llama_index_neusym import MEMORY_QA_TEMPLATE, NeuSymRetriever

QUESTION = "Which city does Ana's sister live in?"


@dataclass
class Outcome:
    answer: str
    sources: list[dict[str, Any]]
    ok: bool


def main(data_dir: str | Path) -> Outcome:
    retriever = NeuSymRetriever.from_defaults(data_dir=data_dir, embed_model=pick_embedder(), user_id="ana",
                                              similarity_top_k=3)
    mem = retriever.memory
    try:
        mem.add("My sister Maya lives in Lisbon.", user_id="ana", session_id="2024-05-02")
        mem.add("I work as a nurse at the city hospital.", user_id="ana", session_id="2024-05-09")
        mem.add("I prefer trains to planes.", user_id="ana", session_id="2024-05-09")
        mem.add("My sister lives in Berlin.", user_id="bob", session_id="2024-05-03")  # another tenant

        # MockLLM echoes its prompt, so offline the "answer" shows the context the model was given.
        # the memories reach the model framed and quoted as stored data (NeuSym's frame and preamble)
        engine = RetrieverQueryEngine.from_args(retriever, llm=pick_llm(MockLLM()), text_qa_template=MEMORY_QA_TEMPLATE)
        response = engine.query(QUESTION)
        sources = [{"text": n.node.get_content(), "score": n.score, **n.node.metadata} for n in response.source_nodes]
        texts = " ".join(s["text"] for s in sources)
        ok = ("Lisbon" in texts and "Berlin" not in texts and all(s["user_id"] == "ana" for s in sources)
              and "<neusym_memories>" in str(response))  # MockLLM echoes its prompt: the frame is in it
        return Outcome(answer=str(response), sources=sources, ok=ok)
    finally:
        mem.close()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        result = main(sys.argv[1] if len(sys.argv) > 1 else tmp)
    for s in result.sources:
        print(f"[{s['score']:.3f}] {s['text']}  ({s['type']}, {s['created_at']}, id={s['memory_id'][:8]})")
        print(f"        why: {s['score_explanation']}")
    print(f"answer: {result.answer}")
    if not result.ok:
        sys.exit("FAILED: Ana's memory is missing from the sources or another user's memory leaked in")
    print("OK: answered from Ana's memories only")
