"""Recipe: an LCEL chat chain that remembers the user across sessions (and forgets on request).

    python cookbook/langchain_lcel_chat.py                                  # offline, scripted model
    NEUSYM_CHAT_MODEL=openai:gpt-4o-mini python cookbook/langchain_lcel_chat.py

The chain is ``retrieve context -> prompt -> model -> save the turn``. Each "session" opens the memory afresh, as a
new process would: what survives is what NeuSym persisted. See langchain_lcel_chat.md.
"""

from __future__ import annotations

from typing import Any

from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable, RunnablePassthrough
from langchain_models import PromptLog, forget_about, open_memory, pick_chat_model

from langchain_neusym import NeuSymRetrievalRunnable, NeuSymSaveRunnable
from neusym import NeuSymMemory

PROMPT = ChatPromptTemplate.from_messages([
    ("system", "You are a friendly cooking assistant. What you remember about the user:\n{context}"),
    ("human", "{input}"),
])


def build_chain(memory: NeuSymMemory, model: Any) -> Runnable[dict[str, Any], dict[str, Any]]:
    """``{"input": ...}`` -> ``{"input", "context", "output"}``; the user and session come from the config."""
    return (
        RunnablePassthrough.assign(context=NeuSymRetrievalRunnable(memory=memory, k=5, max_tokens=500))
        | RunnablePassthrough.assign(output=PROMPT | model | StrOutputParser())
        | NeuSymSaveRunnable(memory=memory)
    )


def session(user: str, session_id: str, log: PromptLog) -> dict[str, Any]:
    return {"configurable": {"user_id": user, "session_id": session_id}, "callbacks": [log]}


def main() -> None:
    log = PromptLog()
    model = pick_chat_model([
        "Nice to meet you, Ana! I'll keep that in mind.",
        "Great, I'll suggest dishes with some heat.",
        "How about roasted chickpeas with paprika? Nut-free and crunchy.",
        "How about a bowl of popcorn?",
    ])

    with open_memory() as memory:  # session 1: Ana introduces herself
        chain = build_chain(memory, model)
        chain.invoke({"input": "Hi, I'm Ana. I am allergic to peanuts."}, session("ana", "monday", log))
        chain.invoke({"input": "Also, I love spicy food."}, session("ana", "monday", log))

    with open_memory() as memory:  # session 2, a new process: the allergy comes back from memory
        chain = build_chain(memory, model)
        mark = log.mark()
        answer = chain.invoke({"input": "Am I allergic to anything? Suggest a snack."}, session("ana", "friday", log))
        print("session 2 answer:", answer["output"])
        assert "peanut" in log.since(mark).lower(), "the session-1 fact should reach the session-2 prompt"
        forgotten = forget_about(memory, "my peanut allergy", user_id="ana")  # "please forget my allergy"
        print("forgot", len(forgotten), "memories mentioning peanuts")

    with open_memory() as memory:  # session 3: the forgotten fact is gone, the rest is still there
        chain = build_chain(memory, model)
        mark = log.mark()
        chain.invoke({"input": "Am I allergic to anything? Suggest a snack."}, session("ana", "sunday", log))
        prompt = log.since(mark).lower()
        assert "peanut" not in prompt, "a forgotten fact must not reach the prompt"
        assert "spicy" in prompt, "what was not forgotten is still remembered"
        print("session 3 prompt:\n" + log.since(mark))


if __name__ == "__main__":
    main()
