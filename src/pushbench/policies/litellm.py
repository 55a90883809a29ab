"""``litellm/<provider>/<model>``: every major provider through LiteLLM (an optional extra:
``pip install -e ".[litellm]"``): Anthropic, Gemini, Bedrock, Vertex, Mistral, Ollama, vLLM, any
OpenAI-compatible gateway...

The policy is ``ChatPolicy`` with LiteLLM as its transport: the same request (messages, tool
schemas, seed, ``max_tokens``, temperature), the same response cache, spend meter, retries with
their waits, deadlines, usage and tool-call handling. LiteLLM translates the OpenAI-format request
to the provider's API and the reply back; its exceptions are the openai SDK's classes, so faults
are classified as for ``openai/*``. Its own retries are off. Parameters a provider does not take
(the seed on Anthropic) are dropped, not refused. Keys come from the provider's usual variable
(``ANTHROPIC_API_KEY``, ``GEMINI_API_KEY``, AWS credentials...), as LiteLLM reads them; a local
``--base-url`` needs none.
"""

from __future__ import annotations

import os
from typing import Any

import openai

from pushbench.policies.chat import LOCAL_KEY, ChatPolicy, EndpointError, _message, resolve_options, window_for
from pushbench.policies.chat_options import ChatOptions
from pushbench.policies.spend import Meter

PING = [{"role": "user", "content": "Reply with the word OK."}]


def _litellm() -> Any:
    """LiteLLM, imported on first use (it takes seconds); its price map is the bundled one (no
    download at import) and its banners are off."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm
    except ImportError:
        raise EndpointError("litellm/* models need the litellm extra: pip install -e \".[litellm]\"") from None
    litellm.suppress_debug_info = True
    return litellm


class LiteLLMPolicy(ChatPolicy):
    provider = "litellm"

    def __init__(self, model: str, options: ChatOptions | None = None, meter: Meter | None = None):
        if model.count("/") < 1 or not all(model.split("/")):
            raise EndpointError(f"litellm/{model}: name the provider and the model, as litellm/<provider>/<model> "
                                "(e.g. litellm/anthropic/claude-sonnet-4-5, litellm/ollama/llama3.1)")
        super().__init__(model, options, meter)

    def _endpoint(self) -> str:
        return (self.options.base_url or "").rstrip("/")

    def _key(self) -> str | None:
        """The key given as an option, a placeholder for a local server, else LiteLLM's own lookup."""
        if self.options.api_key:
            return self.options.api_key
        if self.endpoint:
            return LOCAL_KEY
        env = _litellm().validate_environment(self.model)
        if not env.get("keys_in_environment", True):
            raise EndpointError(f"{self.name} needs credentials: set {', '.join(env.get('missing_keys') or ['its key'])}"
                                " (a local server given with --base-url needs none)")
        return None

    def _window(self) -> int:
        return window_for(self.model.split("/")[-1])

    def _send(self, body: dict[str, Any], content: bytes, timeout: float) -> Any:
        return _litellm().completion(**body, api_base=self.endpoint or None, api_key=self.api_key, timeout=timeout,
                                     num_retries=0, max_retries=0, drop_params=True)

    def check_endpoint(self) -> None:
        """One tiny request (a few tokens): LiteLLM has no uniform model list."""
        where = self.endpoint or f"the {self.model.split('/')[0]} API"
        try:
            _litellm().completion(model=self.model, messages=PING, max_tokens=1, api_base=self.endpoint or None,
                                  api_key=self.api_key, timeout=min(30.0, self.options.request_timeout),
                                  num_retries=1, drop_params=True)
        except (openai.AuthenticationError, openai.PermissionDeniedError) as err:
            raise EndpointError(f"{self.name}: {where} refused the credentials: {_message(err)}") from None
        except openai.NotFoundError as err:
            raise EndpointError(f"{self.name}: {where} does not serve this model: {_message(err)}") from None
        except openai.APIConnectionError as err:
            raise EndpointError(f"{self.name}: cannot reach {where} ({_message(err)}); is the server running and "
                                "--base-url right?") from None
        except openai.BadRequestError as err:
            if "model" in str(getattr(err, "code", "") or "") or "model" in _message(err).lower():
                raise EndpointError(f"{self.name}: {where} does not serve this model: {_message(err)}") from None
        except openai.APIStatusError as err:
            raise EndpointError(f"{self.name}: {where} answered HTTP {err.status_code}: {_message(err)}") from None

    def close(self) -> None:
        pass  # LiteLLM keeps its own clients


def litellm_policy(model: str, meter: Meter | None = None, **options: Any) -> LiteLLMPolicy:
    """The ``litellm`` provider's factory (``pushbench.registry.PROVIDERS``)."""
    return LiteLLMPolicy(model, resolve_options(**options), meter)
