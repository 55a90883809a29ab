"""The two prompts of the black-box evaluation (PushBench App. D.2): default and checklist.

Both start with the task's agent-visible objective. The checklist adds an explicit step list for
progress tracking (submitted ids, pages read, verified status, no stop before N); it is the only
difference, so paired default/checklist episodes isolate its effect. Its two rules SimLM can act on
(keep a list of submitted ids; no final before status() reports N) are forms of ``pushbench.guidance``.
"""

from __future__ import annotations

from pushbench import guidance
from pushbench.tasks.base import TaskSpec

PROMPTS = ("default", "checklist")

TOOLS_NOTE = ("The tools search, submit, status and final are provided by the MCP server "
              "`pushbench`; use only these tools. You have a budget of {budget} tool calls; the "
              "episode ends when you call final or the budget is used up.")

CHECKLIST = """Work through this checklist until the task is complete:
1. {submitted_list}
2. Keep a list of the (query, page) pairs you have read; do not read the same page twice.
3. After each submit, note how many identifiers were accepted.
4. Call status() regularly and treat its verified count as the only measure of progress.
5. When a query has no unread pages left, search with a new query built from words of accepted identifiers.
6. {status_final}
7. Then call final(count) with the verified count from status()."""  # rules 1 and 6 are guidance SimLM acts on


def checklist(target: int) -> str:
    return CHECKLIST.format(submitted_list=guidance.RULE_SUBMITTED_LIST,
                            status_final=guidance.status_before_final(target))


def render_prompt(task: TaskSpec, variant: str) -> str:
    if variant not in PROMPTS:
        raise ValueError(f"unknown prompt {variant!r}; choose one of {', '.join(PROMPTS)}")
    text = f"{task.objective}\n\n{TOOLS_NOTE.format(budget=task.budget)}"
    if variant == "checklist":
        text += "\n\n" + checklist(task.target)
    return text
