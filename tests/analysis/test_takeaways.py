"""The one-line takeaways of notebooks 02-05: each line states what a small hand-made table holds,
and a missing condition gives a clear line instead of an error."""

from __future__ import annotations

import pandas as pd

from pushbench.analysis.takeaways import best_condition_line, delta_line, simlm, target_line, unit_type_line


def deltas() -> pd.DataFrame:
    rows = [("sim/pro", "s − b", 0.05, 0.0, 0.1), ("sim/mini", "s − b", 0.4, 0.3, 0.5),
            ("sim/base", "s − b", -0.2, -0.3, -0.1), ("sim/mini", "g − b", 0.9, 0.8, 1.0)]
    return pd.DataFrame(rows, columns=["model", "comparison", "delta", "ci_low", "ci_high"])


def test_simlm_prefix_only_when_every_model_is_a_simlm_profile() -> None:
    assert simlm(["sim/mini", "sim/pro"]) == "SimLM: "
    assert simlm(["sim/mini", "gpt-x"]) == "" and simlm([]) == ""


def test_delta_line_groups_models_by_where_the_interval_lies_and_gives_the_largest() -> None:
    assert delta_line(deltas(), "s − b") == (
        "SimLM: s − b, paired 95% interval above 0 for sim/mini; includes 0 for sim/pro; below 0 for sim/base; "
        "largest +0.400 [0.300, 0.500] (sim/mini)")


def test_delta_line_keeps_the_native_backend_and_says_so() -> None:
    table = pd.concat([deltas().assign(backend="native"),
                       deltas().assign(backend="langgraph", delta=1.0, ci_low=0.9, ci_high=1.0)])
    assert delta_line(table, "g − b") == (
        "SimLM: g − b (native backend), paired 95% interval above 0 for sim/mini; largest +0.900 [0.800, 1.000] (sim/mini)")


def test_delta_line_for_a_missing_comparison_says_so() -> None:
    assert delta_line(deltas(), "x − b") == "no x − b deltas"
    assert delta_line(pd.DataFrame(), "x − b") == "no x − b deltas"


def by_n() -> pd.DataFrame:
    rows = [(model, controller, target, rate) for model, scale in [("sim/mini", 1.0), ("sim/pro", 1.0)]
            for controller, rates in [("standard", (0.9, 0.0)), ("stateqgp", (1.0, 0.4))]
            for target, rate in zip((10, 100), rates)]
    return pd.DataFrame(rows, columns=["model", "controller", "target", "success_rate"])


def test_target_line_gives_the_first_models_fall_and_who_stays_above_zero() -> None:
    assert target_line(by_n(), ["standard", "gated", "stateqgp"]) == (
        "SimLM: sim/mini success from N = 10 to N = 100: standard 0.90 → 0.00, stateqgp 1.00 → 0.40; "
        "above 0 at N = 100 for all 2 models: stateqgp")


def test_target_line_without_the_controllers_or_rows_says_so() -> None:
    assert target_line(by_n(), ["gated"]) == "no controller of gated ran at both N = 10 and N = 100 for sim/mini"
    assert target_line(by_n().iloc[0:0], ["gated"]) == "no success-by-N rows"
    lost = by_n().query("not (model == 'sim/pro' and controller == 'stateqgp')")  # not run for every model
    assert target_line(lost, ["stateqgp"]).endswith("above 0 at N = 100 for all 2 models: none")


def conditions() -> pd.DataFrame:
    rows = [("sim/mini", "standard", 0.0), ("sim/mini", "unitqgp", 0.3), ("sim/mini", "unitqgp (langgraph)", 0.3),
            ("sim/pro", "unitqgp", 0.8), ("sim/pro", "gated", 0.6)]
    return pd.DataFrame(rows, columns=["model", "condition", "success"])


def test_best_condition_line_lists_ties_and_a_missing_reference() -> None:
    assert best_condition_line(conditions(), "condition", "standard") == (
        "SimLM: highest success: sim/mini unitqgp = unitqgp (langgraph) 0.300 (standard 0.000); "
        "sim/pro unitqgp 0.800 (no standard)")
    assert best_condition_line(conditions().iloc[0:0], "condition", "standard") == "no conditions"


def test_best_condition_line_keeps_the_native_backend_and_counts_many_ties() -> None:
    rows = [("sim/perfect", "native", c, 1.0) for c in ["standard", "gated", "unitqgp", "memgpt (standard)"]]
    table = pd.DataFrame(rows + [("sim/perfect", "langgraph", "unitqgp · langgraph", 1.0)],
                         columns=["model", "backend", "condition", "success"])
    assert best_condition_line(table, "condition", "standard") == (
        "SimLM: highest success (native backend): sim/perfect 4 conditions tied 1.000 (standard 1.000)")


def test_unit_type_line_pools_native_plain_transcript_units_over_models() -> None:
    rows = [("sim/mini", "native", "full", "unitqgp", "assertion", 0.5, 10),
            ("sim/pro", "native", "full", "unitqgp", "assertion", 1.0, 30),
            ("sim/pro", "langgraph", "full", "unitqgp", "assertion", 0.0, 30),
            ("sim/pro", "native", "acg", "unitqgp", "exception", 0.0, 30),
            ("sim/pro", "native", "full", "unitqgp", "exception", 0.25, 4)]
    units = pd.DataFrame(rows, columns=["model", "backend", "memory", "controller", "unit_type", "unit_pass_rate", "units"])
    assert unit_type_line(units, "unitqgp") == (
        "SimLM: unitqgp unit pass rate pooled over models: assertion 0.875 of 40 units; exception 0.250 of 4 units")
    assert unit_type_line(units, "gated") == "no gated units"
