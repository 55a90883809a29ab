# %% [markdown]
# # ACG beside the memory baselines on the PushBench families (ACG seed §4.5)
# **Model: SimLM**, the offline behavioural simulator (profiles `sim/mini`, `sim/base`, `sim/pro`),
# not a real LLM: the numbers below are SimLM's, not the paper's.
#
# **What is shown.** Under the standard controller on the native backend, four memories on
# RepoScan, DataOps-lite and SWE-lite: `full` (the transcript, trimmed to the window), `memgpt`,
# `langgraph-store` and `acg` (the Adaptive Consistency Graph, `docs/acg.md`). Per method:
# success (± task-bootstrap SD), median LLM calls and tokens (input + output), and **evidence
# recall** — measured with no model at all: recorded traces replayed through each memory at the
# same view budget, the share of the evidence each decision needed that its view held.
#
# **The paper's claims (§4.2, §4.5).** ACG has the highest average success over its three
# benchmarks for both models, but unevenly (first in five of six settings); its call cost varies by
# setting (Luna SWE-bench Lite: 29 median calls vs ReAct's 15). The paper's benchmarks are not
# these families, and SimLM is not those models: compare directions, not levels.

# %% tags=["parameters"]
results = "data/results"
figures = "paper_figures"
n_resamples = 10000
seed = 0

# %% [markdown]
# ## Load

# %%
from pathlib import Path

from pushbench.analysis.aggregate import load_results
from pushbench.analysis.acg import (best_method_line, by_method, load_recall, method_rows, method_table, plot_methods,
                                    plot_recall_vs_length, recall_curve, recall_table, with_recall)
from pushbench.analysis.figures import label_models, save_table, show_figure, show_table, style

style()
episodes = method_rows(load_results(results))
episodes = episodes[episodes.model.isin(set(episodes[episodes.memory == "acg"].model))].reset_index(drop=True)
recall = load_recall(results)
note = label_models(list(episodes.model.unique()))
print(f"{len(episodes)} episodes under the standard controller; {len(recall)} recall rows; {note}")

# %% [markdown]
# ## Compute

# %%
table = with_recall(method_table(episodes, n_resamples, seed), recall)
recall_by_memory = recall_table(recall)
curve = recall_curve(recall)

# %% [markdown]
# ## Success, calls and tokens per method
# Within a family and model, compare `acg` with `full`; `evidence_recall` is the family's
# model-free recall of that memory (the same for every model).

# %%
columns = ["family", "model", "memory", "success", "success_sd", "median_llm_calls", "median_tokens",
           "evidence_recall", "episodes", "flag"]
save_table(table[columns], Path(figures), "acg_methods",
           f"Memories under the standard controller: success, median LLM calls and tokens, evidence recall ({note}).")
show_table(table[columns])

# %% [markdown]
# The same success with the methods as columns, one row per family and model, and which method is
# highest where.

# %%
wide = by_method(table)
save_table(wide, Path(figures), "acg_methods_success",
           f"Success per family and model, methods as columns (SDs in acg_methods.md; {note}).")
print(best_method_line(table))
show_table(wide)

# %%
show_figure(plot_methods(table), Path(figures), "acg_success_by_method")

# %% [markdown]
# ## Evidence recall without a model
# Replayed decisions per family and memory at the recall budget (`params.yaml` `recall:`), and
# recall against the decision's action number: a memory that keeps what matters stays high as the
# history grows. Besides the three families above, the recall covers 09-acg-eval's families
# (sweissues, planning, corpus): each family's run is replayed through the same four memories,
# whichever memories it was recorded with (the evidence rules: `docs/memory.md`).

# %%
save_table(recall_by_memory, Path(figures), "acg_evidence_recall",
           "Evidence recall per family and memory (replayed traces; no model).")
show_table(recall_by_memory)

# %%
show_figure(plot_recall_vs_length(curve), Path(figures), "acg_recall_vs_length")
