"""General knowledge the engine reads text with (no framework imports, no I/O beyond its own package data).

:mod:`neusym.knowledge.isa` answers "is a steak a kind of meat?", "is a cardiologist a person?" from Princeton WordNet
3.0's noun hierarchy, shipped as a compact table (``data/wordnet_isa.npz``, built by
``scripts/build_wordnet_isa.py``; licence in ``data/WORDNET_LICENSE``).
"""
