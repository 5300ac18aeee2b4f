"""Recipe: retrieval-augmented answering with ``NeuSymRetriever`` (with sources and score explanations).

    python cookbook/langchain_rag_retriever.py                               # offline, scripted model
    NEUSYM_CHAT_MODEL=openai:gpt-4o-mini python cookbook/langchain_rag_retriever.py

A team's knowledge lives in NeuSym as ``knowledge`` memories scoped to the team. The chain retrieves with the
two-stage search, answers from the retrieved notes only and cites their ids; an outdated note, once deleted, never
reaches a prompt again. The notes reach the prompt the way every NeuSym adapter shows memories: framed and quoted
as stored data (``render_documents``), never as bare text in a system message. See langchain_rag_retriever.md.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any

from langchain_core.documents import Document
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable, RunnablePassthrough
from langchain_models import PromptLog, open_memory, pick_chat_model

from langchain_neusym import NeuSymRetriever, render_documents
from neusym import NeuSymMemory

NOTES = [
    "The VPN gateway for the Lisbon office is vpn-lis.example.com.",
    "Expense reports are due on the 5th of each month.",
    "The on-call rotation changes every Monday at 10:00.",
    "Production deploys are frozen on Fridays after 15:00.",
]
OUTDATED = "The VPN gateway for the Porto office is vpn-old.example.com."

PROMPT = ChatPromptTemplate.from_messages([
    ("system", "Answer from these notes only and cite their ids in brackets.\n\n{notes}"),
    ("human", "{question}"),
])


def format_notes(docs: list[Document]) -> str:
    """The retrieved notes as prompt text: inside NeuSym's data frame, one quoted line each, led by its id (a
    note that says "ignore the above" stays a quoted record)."""
    return render_documents(docs, heading="Team notes")


def build_chain(memory: NeuSymMemory, model: Any, team: str) -> Runnable[dict[str, Any], dict[str, Any]]:
    """``{"question"}`` -> ``{"question", "docs", "answer"}``; the retriever run nests in the chain's trace."""
    retriever = NeuSymRetriever(memory=memory, user_id=team, k=3, search_kwargs={"types": ["knowledge"]})
    answer = RunnablePassthrough.assign(notes=lambda x: format_notes(x["docs"])) | PROMPT | model | StrOutputParser()
    return (RunnablePassthrough.assign(docs=itemgetter("question") | retriever)
            | RunnablePassthrough.assign(answer=answer))


def main() -> None:
    log = PromptLog()
    model = pick_chat_model([
        "Use vpn-lis.example.com for Lisbon and vpn-old.example.com for Porto.",
        "I have no VPN gateway note for Porto.",
    ])

    with open_memory() as memory:  # ingest once: statements stored verbatim as knowledge, scoped to the team
        memory.add_batch([*NOTES, OUTDATED], user_id="team-infra", type="knowledge", infer=False)
        memory.add("The VPN gateway for the guest network is vpn-guest.example.com.", user_id="team-sales",
                   type="knowledge", infer=False)

    with open_memory() as memory:  # later, in a new process: answer with sources
        mark = log.mark()
        out = build_chain(memory, model, "team-infra").invoke({"question": "Which VPN gateway do I use?"},
                                                             {"callbacks": [log]})
        print("answer:", out["answer"])
        for doc in out["docs"]:
            print(f"  source [{doc.id}] score={doc.metadata['score']:.3f} {doc.metadata['score_explanation']}")
        prompt = log.since(mark)
        assert "vpn-lis.example.com" in prompt, "the stored note should reach the prompt"
        assert "<neusym_memories>" in prompt, "the notes reach the prompt framed as stored data"
        assert "vpn-guest" not in prompt, "another team's notes never reach this team's prompt"

        outdated = [d.id for d in out["docs"] if "vpn-old" in d.page_content]
        assert outdated, "the outdated note was retrieved"
        memory.delete(outdated, user_id="team-infra", reason="Porto office closed")

    with open_memory() as memory:  # the deleted note is gone from every later prompt
        mark = log.mark()
        build_chain(memory, model, "team-infra").invoke({"question": "Which VPN gateway do I use?"},
                                                       {"callbacks": [log]})
        assert "vpn-old" not in log.since(mark), "a deleted note must not reach the prompt"
        assert "vpn-lis.example.com" in log.since(mark)


if __name__ == "__main__":
    main()
