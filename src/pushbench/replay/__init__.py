"""Replaying recorded traces without calling the model: forks on the native and LangGraph backends
(`fork`, `fork_langgraph`) and model-free evidence recall (`recall`, the `recall` stage)."""
