"""PushBench: measuring and enforcing quantitative goal persistence in long-horizon LLM agents."""

__version__ = "0.1.0"
