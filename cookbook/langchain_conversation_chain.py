"""Recipe: a classic ``ConversationChain`` with NeuSym as its memory.

    python cookbook/langchain_conversation_chain.py                           # offline, scripted model
    NEUSYM_CHAT_MODEL=openai:gpt-4o-mini python cookbook/langchain_conversation_chain.py

``ConversationChain`` is deprecated upstream but still everywhere; ``langchain_neusym.NeuSymChatMemory`` drops in where
``ConversationBufferMemory`` was. See langchain_conversation_chain.md.
"""

from __future__ import annotations

import warnings

from langchain_classic.chains import ConversationChain
from langchain_models import PromptLog, open_memory, pick_chat_model

from langchain_neusym import NeuSymChatMemory

warnings.filterwarnings("ignore", message=".*ConversationChain.*deprecated.*")


def chain_for(memory: object, model: object, user: str, session: str) -> ConversationChain:
    """One chain per conversation: the memory writes into the session, and reads the user's whole history."""
    return ConversationChain(llm=model, memory=NeuSymChatMemory(memory=memory, user_id=user, session_id=session,
                                                                max_tokens=400))


def main() -> None:
    log = PromptLog()
    cfg = {"callbacks": [log]}
    model = pick_chat_model([
        "Good luck with the training, Ana!",
        "Sounds like a great holiday.",
        "You're training for the Lisbon marathon in October.",
        "Noted, Bob.",
        "I don't know what you're training for yet.",
    ])

    with open_memory() as memory:  # session 1
        ana = chain_for(memory, model, "ana", "s1")
        ana.invoke({"input": "I'm training for the Lisbon marathon in October."}, cfg)
        ana.invoke({"input": "Next summer I want to visit Japan."}, cfg)

    with open_memory() as memory:  # session 2, a new process: the chain's {history} holds session 1's facts
        mark = log.mark()
        answer = chain_for(memory, model, "ana", "s2").invoke({"input": "What race am I training for?"}, cfg)
        print("session 2 answer:", answer["response"])
        assert "marathon" in log.since(mark).lower(), "the session-1 fact should reach the session-2 prompt"

        chain_for(memory, model, "bob", "b1").invoke({"input": "I collect stamps."}, cfg)
        # Ana: "forget everything about me". clear() is scoped: a memory without session_id clears the user.
        NeuSymChatMemory(memory=memory, user_id="ana").clear()

    with open_memory() as memory:  # session 3: Ana's memories are gone, Bob's are untouched
        mark = log.mark()
        chain_for(memory, model, "ana", "s3").invoke({"input": "What race am I training for?"}, cfg)
        assert "marathon" not in log.since(mark).lower(), "a forgotten fact must not reach the prompt"
        assert memory.query(user_id="bob"), "clearing Ana never touches Bob"
        print("session 3 prompt:\n" + log.since(mark))


if __name__ == "__main__":
    main()
