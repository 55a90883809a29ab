"""The SimLM HTTP server (`pushbench serve-sim`): OpenAI chat and Responses, Anthropic and Gemini routes,
and the agent products' routes, all answered by SimLM (`app` builds the FastAPI app)."""
