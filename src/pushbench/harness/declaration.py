"""An agent product is a declaration, not code: a YAML file read into ``Declaration``.

A declaration says how to start the product (an argv template), where its model endpoint goes
(environment variables or a config file it reads), which wire API it speaks, how its config names
the MCP server (one entry template per transport), which of its own tools to deny, and how it
names the MCP server's tools (``tool_names``, e.g. ``mcp__{server}__{tool}``). The built-in ones
are ``harness/agents/*.yaml``; any other file is loaded by its path (``--agent ./mine.yaml``).

Templates hold ``{placeholder}`` names (``PLACEHOLDERS``; docs/blackbox.md lists them). Inside a
string each is replaced by its text; a string that is exactly one placeholder whose value is a
list or a mapping (``"{server_args}"``, ``"{mcp_entry}"``) becomes that value, so config files
keep their structure. A name in braces that is no placeholder is an error when the file loads.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

BUILTIN_DIR = Path(__file__).with_name("agents")
APIS = ("chat-completions", "messages", "responses", "gemini")  # serve-sim serves all four
TRANSPORTS = ("stdio", "http")
PLACEHOLDERS = {
    "prompt": "the rendered prompt", "prompt_file": "a file holding it",
    "mcp_config": "the episode's mcp.json ({\"mcpServers\": {...}})", "mcp_url": "the server URL (http only)",
    "python": "this interpreter", "task": "the task id", "seed": "the episode's policy seed",
    "server_command_toml": "the stdio server command as a TOML value",
    "server_args_toml": "its arguments as a TOML array",
    "cli": "the product's installed executable", "home": "the private HOME (inside the episode folder)",
    "workdir": "the empty working folder", "model": "the serve-sim model (sim-base, ...)",
    "sim_url": "serve-sim's base URL, without /v1", "api_key": "a dummy key (serve-sim checks none)",
    "server": "the MCP server's name in configs (pushbench)", "server_command": "the stdio server command",
    "server_args": "its arguments (a list)", "server_argv": "command and arguments (a list)",
    "server_env": "the server's environment (a mapping)", "mcp_entry": "the declared MCP entry for this transport",
    "task_tools": "the task's tools under the product's names (a list)", "task_tools_csv": "the same, comma-separated",
    "deny_tools": "the declared denied tools (a list)", "deny_tools_csv": "the same, comma-separated",
    "deny_tools_off": "a mapping of each denied tool to false",
}
_NAME = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_EXACT = re.compile(r"^\{([A-Za-z_][A-Za-z0-9_]*)\}$")


class DeclarationError(ValueError):
    """A declaration file that cannot be used: the message names the file and the field."""


class Install(BaseModel):
    model_config = ConfigDict(extra="forbid")
    npm: str = Field(min_length=1)  # the npm package, installed by name and version (`make agents`)
    version: str = Field(pattern=r"^\d+\.\d+\.\d+[0-9A-Za-z.+-]*$")


class ConfigFile(BaseModel):
    """A file the product reads, written into the episode's folder before it starts."""

    model_config = ConfigDict(extra="forbid")
    path: str  # a template; must resolve inside the episode folder (usually under {home})
    format: Literal["json", "toml", "yaml", "text"]
    content: Any


class Declaration(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", max_length=64)
    description: str = ""
    binary: str = Field(min_length=1)  # the executable's name (.agents/<name>/node_modules/.bin, else PATH)
    install: Install | None = None
    version_args: list[str] = ["--version"]
    api: Literal["chat-completions", "messages", "responses", "gemini"]
    tool_names: str = "{tool}"  # how the product names an MCP server's tool
    deny_tools: list[str] = []
    command: list[str] = Field(min_length=1)
    env: dict[str, str] = {}
    clear_env: list[str] = []  # prefixes of inherited variables to drop, besides the common ones
    files: list[ConfigFile] = []
    mcp: dict[Literal["stdio", "http"], dict[str, Any]] = Field(min_length=1)

    @field_validator("tool_names")
    @classmethod
    def _tool_names(cls, value: str) -> str:
        if not value.endswith("{tool}") or set(_NAME.findall(value)) - {"server", "tool"}:
            raise ValueError("must end with {tool} and may also hold {server}, e.g. mcp__{server}__{tool}")
        return value

    def tool_prefix(self, server: str) -> str:
        """The prefix before the task's bare tool names, e.g. ``mcp__pushbench__``."""
        return self.tool_names.removesuffix("{tool}").replace("{server}", server)

    @property
    def transports(self) -> tuple[str, ...]:
        return tuple(t for t in TRANSPORTS if t in self.mcp)


def _unknown(value: Any) -> set[str]:
    if isinstance(value, str):
        return set(_NAME.findall(value)) - set(PLACEHOLDERS)
    if isinstance(value, dict):
        return set().union(*(_unknown(k) | _unknown(v) for k, v in value.items())) if value else set()
    if isinstance(value, list):
        return set().union(*(_unknown(v) for v in value)) if value else set()
    return set()


def parse(data: Any, source: str) -> Declaration:
    try:
        declaration = Declaration.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top)"
        raise DeclarationError(f"{source}: {where}: {first['msg']}") from None
    templates = [declaration.command, declaration.env, declaration.mcp,
                 [f.model_dump() for f in declaration.files]]
    unknown = set().union(*(_unknown(t) for t in templates))
    if unknown:
        raise DeclarationError(f"{source}: unknown placeholders {', '.join(sorted(unknown))}; "
                               f"known: {', '.join(sorted(PLACEHOLDERS))}")
    return declaration


def load(path: Path) -> Declaration:
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise DeclarationError(f"cannot read the declaration {path}: {err.strerror}") from None
    except yaml.YAMLError as err:
        raise DeclarationError(f"{path} is no valid YAML: {' '.join(str(err).split())[:200]}") from None
    return parse(data, str(path))


def builtin() -> dict[str, Declaration]:
    """The declarations shipped with PushBench, by name."""
    return dict(_builtin())


@lru_cache(maxsize=1)
def _builtin() -> dict[str, Declaration]:
    found = {}
    for path in sorted(BUILTIN_DIR.glob("*.yaml")):
        declaration = load(path)
        if declaration.name != path.stem:
            raise DeclarationError(f"{path}: name {declaration.name!r} differs from the file name")
        found[declaration.name] = declaration
    return found


def find(text: str) -> Declaration | None:
    """A built-in declaration by name, or a declaration file by its path (``.yaml``/``.yml``)."""
    if text.endswith((".yaml", ".yml")):
        return load(Path(text))
    return builtin().get(text)


def render(value: Any, values: dict[str, Any]) -> Any:
    """``value`` with its placeholders filled (module docstring)."""
    if isinstance(value, str):
        exact = _EXACT.match(value)
        if exact and exact[1] in values and not isinstance(values[exact[1]], str):
            return values[exact[1]]
        return _NAME.sub(lambda m: _text(values[m[1]]) if m[1] in values else m[0], value)
    if isinstance(value, dict):
        return {render(k, values): render(v, values) for k, v in value.items()}
    if isinstance(value, list):
        return [render(v, values) for v in value]
    return value


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def file_text(content: Any, fmt: str) -> str:
    """A config file's rendered content in its format."""
    if fmt == "json":
        return json.dumps(content, indent=1, sort_keys=True) + "\n"
    if fmt == "yaml":
        return yaml.safe_dump(content, sort_keys=True)
    if fmt == "toml":
        import tomlkit

        return tomlkit.dumps(content)
    return content if isinstance(content, str) else _text(content)
