"""Counterfactual forks: replay a recorded episode up to step K, then continue under another condition.

The replay makes no call for the recorded agent: each recorded action is executed again on a fresh
environment of the task under the recorded controller, and the observation must equal the recorded
one (else :class:`ForkError`). Meanwhile the fork's memory ingests every event, as the native loop
feeds it, so at step K it holds what it would have held had it run from the start (its system
prompt is the new controller's, as in a fresh run of the new condition). A memory's own tool
calls and summaries are the recorded ones when the fork keeps the recorded memory at the recorded
window; any other memory's own requests during the replay go to the new model (counted).

From step K the new controller (fresh state), memory and model run the native loop to the end.
The fork is a normal episode row and trace in its own run folder, marked with ``parent`` (the
recorded episode id) and ``fork_step`` (K); its LLM calls and tokens count only the calls it made.
SimLM's mind starts at the fork (its random draws begin there), so a fork at K > 0 under the
recorded condition continues plausibly, not necessarily as the recorded episode did; a fork at
step 0 is exactly a fresh run of the new condition at the same seed (a test checks it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from pushbench.backends.native import (EpisodeRun, apply, control, decode, memory_origin, start_memory, step,
                                       stopped)
from pushbench.memory.base import Event, bind_llm, memory_tools
from pushbench.policies import make_policy
from pushbench.policies.base import PolicyStop, turn_from_message
from pushbench.registry import BACKENDS, CONTROLLERS, MEMORIES, Entry, UnknownName
from pushbench.log.models import EpisodeRow, FormatError, Trace
from pushbench.log.names import EPISODES, TRACES, trace_path
from pushbench.log.rows import append_row, read_done, sort_jsonl
from pushbench.log.traces import read_trace, write_trace
from pushbench.runner.grid import EpisodeSpec
from pushbench.tasks import get_family, load_tasks
from pushbench.tools.base import ToolCall
from pushbench.viewer.timeline import Turn, walk


class ForkError(ValueError):
    """Bad input to a fork, or a replay that does not reproduce the recording (one line)."""


@dataclass(frozen=True)
class ForkSpec:
    parent: dict[str, Any]  # the recorded episode's row
    at: int  # replay this many steps, then continue under the new condition
    controller: str
    memory: str
    model: str
    label: str = ""  # how --at named this step ("50%" or "12")
    backend: str = "native"  # the loop the fork continues on (langgraph: from a checkpoint of the replay)

    @property
    def episode(self) -> EpisodeSpec:
        p = self.parent
        return EpisodeSpec(p["family"], p["task_id"], self.controller, self.memory, self.model, self.backend,
                           int(p["seed"]))

    @property
    def episode_id(self) -> str:
        p = self.parent
        return f"{self.episode.episode_id}|fork@{self.at}<{p['controller']}|{p['memory']}|{p['model']}"


def load_run(run_dir: Path) -> list[dict[str, Any]]:
    from pushbench.viewer.site import ViewerError, load_rows

    try:
        return load_rows(Path(run_dir))
    except ViewerError as err:
        raise ForkError(str(err)) from None


def read_recording(run_dir: Path, episode_id: str) -> Trace:
    path = trace_path(run_dir, episode_id)
    if not path.is_file():
        raise ForkError(f"no trace of {episode_id} in {run_dir}")
    try:
        return read_trace(path)
    except FormatError as err:
        raise ForkError(str(err)) from None


def check_names(controller: str, memory: str, model: str) -> None:
    for registry, name in ((CONTROLLERS, controller), (MEMORIES, memory)):
        try:
            registry.entry(name)
        except UnknownName as err:
            raise ForkError(str(err)) from None
    try:
        make_policy(model)
    except Exception as err:  # an unknown model, or an API model without its settings here
        raise ForkError(str(err).splitlines()[0] if str(err) else f"cannot make model {model!r}") from None


@dataclass
class Prefix:
    """The fork's live objects brought to step K by the replay (no model call for the agent)."""

    run: EpisodeRun
    policy: Any
    controller: Any
    memory: Any
    seed: int
    turns: list[Turn]  # the recorded external turns
    side_calls: int  # the new model's calls for the memory's own requests during the replay


def recorded_turns(spec: ForkSpec, trace: Trace) -> list[Turn]:
    own = frozenset(t["function"]["name"] for t in memory_tools(MEMORIES.make(spec.parent["memory"])))
    turns = [t for t in walk(trace.transcript, own) if t.step is not None]
    if not 0 <= spec.at < len(turns):
        raise ForkError(f"--at must be from 0 to {len(turns) - 1} for {spec.parent['episode_id']} "
                        f"({len(turns)} recorded steps), got {spec.at}")
    return turns


def replay_prefix(spec: ForkSpec, trace: Trace, task: Any, master_seed: int,
                  policy_options: dict[str, Any] | None = None) -> Prefix:
    """A fresh environment, the new controller, memory and model, and the recorded steps before K
    re-executed under the recorded controller (each observation checked against the recording)."""
    env = get_family(task.family).environment(task)
    policy = make_policy(spec.model, **(policy_options or {}))
    controller, memory = CONTROLLERS.make(spec.controller), MEMORIES.make(spec.memory)
    recorded_controller = CONTROLLERS.make(spec.parent["controller"])
    seed = spec.episode.policy_seed(master_seed)
    start_memory(memory, controller, env)
    run = EpisodeRun(env)
    messages = trace.transcript
    turns = recorded_turns(spec, trace)
    same_memory = spec.memory == spec.parent["memory"]  # the recorded memory calls are replayed into it
    recorded_summaries = same_memory and spec.model == spec.parent["model"]  # same window: same evictions
    side = iter([m for m in messages if str(m.get("name") or "").startswith("memory-")])
    for turn in turns[: spec.at]:
        _replay_turn(run, turn, messages, memory, recorded_controller, policy, seed, same_memory,
                     side if recorded_summaries else None)
    return Prefix(run, policy, controller, memory, seed, turns, run.llm_calls)


def fork_episode(spec: ForkSpec, trace: Trace, task: Any, master_seed: int,
                 policy_options: dict[str, Any] | None = None) -> tuple[dict[str, Any], Trace]:
    """Run one fork; return its row and its trace."""
    if spec.backend == "langgraph":
        fork_on_langgraph = Entry(BACKENDS.entry("langgraph").meta["fork"]).load()  # lazy: it builds on this module
        prefix = fork_on_langgraph(spec, trace, task, master_seed, policy_options)
    elif spec.backend == "native":
        prefix = replay_prefix(spec, trace, task, master_seed, policy_options)
        run, tools = prefix.run, prefix.run.env.schemas()
        while not run.env.done:
            try:
                step(run, prefix.policy, prefix.controller, prefix.memory, tools, prefix.seed)
            except PolicyStop as stop:
                stopped(run, prefix.memory, stop)
    else:
        raise ForkError(f"forks run on the native or langgraph backend, not {spec.backend!r}")
    run = prefix.run
    row = {"episode_id": spec.episode_id, **_spec_dict(spec.episode), "target": task.target,
           "budget": task.budget, "llm_calls": run.llm_calls, "input_tokens": run.input_tokens,
           "output_tokens": run.output_tokens, "parent": spec.parent["episode_id"], "fork_step": spec.at,
           "fork_at": spec.label or str(spec.at), "replay_side_calls": prefix.side_calls}
    out_trace = Trace(spec.episode_id, run.env.verifier.events, objective=task.objective, messages=run.transcript,
                      parent=spec.parent["episode_id"], fork_step=spec.at)
    return row, out_trace


def _spec_dict(spec: EpisodeSpec) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(spec)


def _replay_turn(run: EpisodeRun, turn: Turn, messages: list[dict[str, Any]], memory: Any, controller: Any,
                 policy: Any, seed: int, memory_calls: bool, side: Any) -> None:
    """Re-execute one recorded turn (and, into the recorded memory, its own calls) on the fresh env;
    ``side``: the recorded summaries to answer the memory's own requests with (else the new model)."""
    from pushbench.backends.native import side_llm

    bind_llm(memory, _recorded_side(side, run.transcript) if side is not None else side_llm(run, policy, seed))
    for call_at, reply_at in (turn.memory if memory_calls else []):
        memory.render(policy.context_window)
        message = messages[call_at]
        memory.ingest(Event(run.env.steps + 1, "action", message))
        run.transcript.append(message)
        recorded_call = cast(ToolCall, turn_from_message(message).call)  # a memory call's message holds its call
        call = decode(recorded_call)
        text = memory.handle(call)
        if side is not None and text != messages[reply_at].get("content"):
            raise ForkError(f"replay diverged before step {run.env.steps + 1}: the memory's reply to "
                            f"{call.name} differs from the recorded one")
        reply = {"role": "tool", "tool_call_id": call.call_id, "content": text}
        memory.ingest(Event(run.env.steps, "memory", reply, memory_origin(recorded_call)))  # as the live loop
        run.transcript.append(reply)
    memory.render(policy.context_window)
    recorded = turn_from_message(messages[turn.action])
    run.transcript.append(messages[turn.action])
    memory.ingest(Event(run.env.steps + 1, "action", messages[turn.action]))
    apply(run, recorded, control(recorded, controller, run.env), controller, memory)
    expected = messages[turn.reply]["content"] if turn.reply is not None else None
    if run.transcript[-1].get("content") != expected:
        raise ForkError(f"replay diverged at step {turn.step}: the observation differs from the recorded one "
                        "(the environment or the recorded controller changed since the run)")


def _recorded_side(replies: Any, transcript: list[dict[str, Any]]):
    """The recorded memory's own requests answered with the recorded replies, in order (no model)."""
    def ask(messages: list[dict[str, Any]], tools: list[dict[str, Any]], purpose: str) -> dict[str, Any]:
        reply = next(replies, None)
        if reply is None:
            raise ForkError("the replay asked the memory for more summaries than the recording holds")
        transcript.append(reply)
        return reply
    return ask


def fork_points(at: str, steps: int) -> list[tuple[str, int]]:
    """``--at``: step numbers, or percentages of the parent's steps (``25%,50%``), as (label, step);
    a step two labels round to is kept once, under the first."""
    out: list[tuple[str, int]] = []
    for part in (p.strip() for p in at.split(",") if p.strip()):
        try:
            k = round(float(part[:-1]) / 100 * steps) if part.endswith("%") else int(part)
        except ValueError:
            raise ForkError(f"--at takes step numbers or percentages, got {part!r}") from None
        if k not in [step for _, step in out]:
            out.append((part, k))
    if not out:
        raise ForkError("--at names no step")
    return out


def fork_steps(at: str, steps: int) -> list[int]:
    return [k for _, k in fork_points(at, steps)]


@dataclass(frozen=True)
class Selection:
    """Which recorded episodes a grid of forks starts from (``None``: no restriction)."""

    controller: str | None = None  # the parents' controller
    models: tuple[str, ...] | None = None  # the parents' models
    per_model: int | None = None  # at most this many failed parents per model, evenly by episode id


def select_parents(rows: list[dict[str, Any]], run_dir: Path, selection: Selection) -> list[dict[str, Any]]:
    if rows and "success" not in rows[0]:
        raise ForkError(f"{run_dir} is not scored: run `pushbench score {run_dir}` to find its failed episodes")
    failed = [r for r in rows if not r.get("success")
              and (selection.controller is None or r["controller"] == selection.controller)
              and (selection.models is None or r["model"] in selection.models)]
    if selection.per_model is None:
        return failed
    out = []
    for model in sorted({r["model"] for r in failed}):
        mine = sorted((r for r in failed if r["model"] == model), key=lambda r: r["episode_id"])
        every = max(1, -(-len(mine) // selection.per_model))  # ceil: an even sample by episode id
        out.extend(mine[::every][: selection.per_model])
    return out


def run_forks(run_dir: Path, out: Path, at: str, controller: str, memory: str | None, model: str | None,
              episode: str | None, master_seed: int, *, backend: str | None = None,
              selection: Selection = Selection(), workers: int = 1) -> list[str]:
    """Fork ``episode`` (or every failed episode of ``run_dir`` the selection keeps) at each step
    of ``at``; ``backend`` None: each parent's own; resumable."""
    rows = load_run(run_dir)
    if episode is not None:
        parents = [r for r in rows if r["episode_id"] == episode]
        if not parents:
            raise ForkError(f"episode {episode!r} is not in {run_dir}")
    else:
        parents = select_parents(rows, Path(run_dir), selection)
    if backend not in (None, "native", "langgraph"):
        raise ForkError(f"--backend must be native or langgraph, got {backend!r}")
    specs = []
    for parent in parents:
        if "steps" not in parent and any(p.endswith("%") for p in at.split(",")):
            raise ForkError(f"{run_dir} is not scored: percentages of --at need each episode's steps")
        on = backend or ("langgraph" if parent.get("backend") == "langgraph" else "native")
        for label, k in fork_points(at, int(parent.get("steps", 0))):
            specs.append(ForkSpec(parent, k, controller, memory or parent["memory"], model or parent["model"],
                                  label, on))
    for name in {(s.controller, s.memory, s.model) for s in specs}:
        check_names(*name)
    return _run_specs(Path(run_dir), Path(out), specs, master_seed, workers)


def _job(job: tuple[ForkSpec, Path, Any, int]) -> tuple[dict[str, Any], Trace]:
    spec, run_dir, task, master_seed = job
    return fork_episode(spec, read_recording(run_dir, spec.parent["episode_id"]), task, master_seed)


def _results(jobs: list[tuple[ForkSpec, Path, Any, int]], workers: int):
    if workers <= 1 or len(jobs) <= 1:
        yield from map(_job, jobs)
        return
    import multiprocessing as mp

    with mp.get_context("fork").Pool(workers) as pool:
        yield from pool.imap_unordered(_job, jobs, chunksize=1)


def _run_specs(run_dir: Path, out: Path, specs: list[ForkSpec], master_seed: int, workers: int = 1) -> list[str]:
    tasks: dict[str, dict[str, Any]] = {}
    done = read_done(out / EPISODES)
    jobs = []
    for spec in specs:
        if spec.episode_id in done:
            continue
        family = spec.parent["family"]
        if family not in tasks:
            try:
                tasks[family] = {t.task_id: t for t in load_tasks(family)}
            except FileNotFoundError as err:
                raise ForkError(str(err)) from None
        task = tasks[family].get(spec.parent["task_id"])
        if task is None:
            raise ForkError(f"task {spec.parent['task_id']!r} is not in the {family} manifest")
        if not trace_path(run_dir, spec.parent["episode_id"]).is_file():  # before anything is written
            raise ForkError(f"no trace of {spec.parent['episode_id']} in {run_dir}")
        jobs.append((spec, run_dir, task, master_seed))
    written = []
    for row, trace in _results(jobs, workers):
        write_trace(out / TRACES, trace)
        with open(out / EPISODES, "a", encoding="utf-8") as handle:
            append_row(handle, EpisodeRow.from_facts(row))
        written.append(row["episode_id"])
    if (out / EPISODES).is_file():
        sort_jsonl(out / EPISODES)
    return sorted(written)


# --------------------------------------------------------------------------- the `forks` DVC stage

OUT = "forks"  # the stage's run folder under data/runs (the viewer stage shows it beside its parents)

def stage() -> Path:
    """Fork the configured run's failed episodes (params ``forks``) into ``data/runs/forks``, scored."""
    from pushbench import config
    from pushbench.scoring import score_run

    params = config.params("forks")
    out = config.RUNS / OUT
    models = params.get("models")
    selection = Selection(params.get("from_controller"), tuple(models) if models else None, params.get("per_model"))
    run_forks(config.RUNS / params["run"], out, ",".join(str(a) for a in params["at"]), params["controller"],
              params.get("memory"), params.get("model"), None, int(config.params("seed")),
              selection=selection, workers=int(config.params("run.workers")))
    out.mkdir(parents=True, exist_ok=True)
    (out / EPISODES).touch()  # no failed parent: an empty run folder, still scored
    score_run(out)
    return out


if __name__ == "__main__":
    import time

    began = time.perf_counter()
    written = stage()
    print(f"forks -> {written.name}/ in {time.perf_counter() - began:.0f} s")
