"""Reading text: the one place that compiles patterns over memory and query text (see :mod:`neusym.language.regex`).

Imports nothing at package import time beyond the standard library: data and engines load on first use.
"""
