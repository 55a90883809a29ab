"""Confinement for agent-controlled workspaces and the code an agent may run in them.

* ``process``: confined paths (``resolve_inside``), a clean environment, resource limits, timeouts
  and process-group kills for child processes (the weak sandbox);
* ``jail``: the bubblewrap jail (namespaces, a read-only system, only the episode's copy writable);
* ``files``: tool writes that encode first and replace files atomically.
"""

from pushbench.sandbox.files import UnencodableText, encode_text, write_bytes_atomic, write_text_atomic
from pushbench.sandbox.jail import (JAIL, SANDBOX_VERSION, WEAK_SANDBOX_ENV, Bind, JailUnavailable,
                                    jail_problem, require_jail, run_jailed, weak_sandbox_chosen)
from pushbench.sandbox.process import (MAX_OUTPUT_BYTES, SYSTEM_PATH, Limits, PathRefused, SandboxResult,
                                       clean_env, resolve_inside, run_limited, run_sandboxed)

__all__ = ["JAIL", "MAX_OUTPUT_BYTES", "SANDBOX_VERSION", "SYSTEM_PATH", "WEAK_SANDBOX_ENV", "Bind",
           "JailUnavailable", "Limits", "PathRefused", "SandboxResult", "UnencodableText", "clean_env",
           "encode_text", "jail_problem", "require_jail", "resolve_inside", "run_jailed", "run_limited",
           "run_sandboxed", "weak_sandbox_chosen", "write_bytes_atomic", "write_text_atomic"]
