"""The rows family's tools: rows(page) over one data set, and the item-set base's submit(ids),
status() and final(count). Every verdict comes from the verifier."""

from __future__ import annotations

from pushbench.tasks.base import TaskSpec
from pushbench.tasks.rows.data import COLUMNS, ROW_ID, load_rows, row_id
from pushbench.tools.base import Observation, ToolError, tool
from pushbench.tools.items import ItemSetEnvironment
from pushbench.verifier import Verifier


class RowsEnv(ItemSetEnvironment):
    """The agent's tools over one data set; every verdict comes from the verifier."""

    item_words = {"ids": "row ids", "per_call": "ids", "items": "rows"}

    def __init__(self, task: TaskSpec, verifier: Verifier):
        super().__init__(task, verifier)
        self.dataset = task.settings["dataset"]
        self.data = load_rows(self.dataset)
        self.page_rows = int(task.settings["page_rows"])
        self.pages = -(-len(self.data) // self.page_rows)

    def id_problem(self, item: str) -> str | None:
        if ROW_ID.fullmatch(item):
            return None
        return f"id {item[:40]!r} is not a row id like those rows() shows (`r` and four digits)."

    @tool("Show one page of the data set: a header of column names, then one line per row with its "
          "id and values.",
          page={"type": "integer", "minimum": 1, "maximum": 10_000, "default": 1})
    def rows(self, page: int = 1) -> Observation:
        if page > self.pages:
            raise ToolError(f"page {page} is out of range: {self.dataset} has {self.pages} pages "
                            f"(1-{self.pages}).")
        first = (page - 1) * self.page_rows
        shown = range(first, min(first + self.page_rows, len(self.data)))
        lines = [f"rows {self.dataset}: page {page} of {self.pages} ({len(self.data)} rows)",
                 ",".join(("id", *COLUMNS[self.dataset]))]
        lines += [",".join((row_id(i), *self.data[i])) for i in shown]
        log = {"page": page, "ids": [row_id(i) for i in shown]}  # goes to the verifier's event log
        return Observation("\n".join(lines), payload={"log": log})
