"""Figure and table output: profile order, reproducible bytes, the SimLM label."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from pushbench.analysis.figures import SIM_NOTE, label_models, model_order, save_figure, save_table, style


def test_models_go_weakest_profile_first_then_others_by_name() -> None:
    assert model_order(["sim/pro", "openai/x", "sim/perfect", "sim/mini", "sim/base", "sim/mini"]) == [
        "sim/mini", "sim/base", "sim/pro", "sim/perfect", "openai/x"]


def test_tables_are_sorted_by_profile_and_keep_the_inner_order(tmp_path: Path) -> None:
    table = pd.DataFrame({"model": ["sim/base", "sim/base", "sim/mini", "sim/pro"],
                          "controller": ["gated", "standard", "gated", "gated"], "success": [0.5, 0.25, 0.125, 1.0]})
    csv, md = save_table(table, tmp_path, "t", "caption")
    assert csv.read_text().splitlines() == ["model,controller,success", "sim/mini,gated,0.1250",
                                            "sim/base,gated,0.5000", "sim/base,standard,0.2500",
                                            "sim/pro,gated,1.0000"]
    assert md.read_text().startswith("caption\n\n| model")


def test_figures_are_the_same_bytes_twice_and_say_simlm(tmp_path: Path) -> None:
    style()
    outputs = []
    for folder in ("a", "b"):
        fig, ax = plt.subplots()
        ax.plot([0, 1], [0, 1])
        ax.set_title(label_models(["sim/base"]))
        outputs.append([p.read_bytes() for p in save_figure(fig, tmp_path / folder, "f")])
    assert outputs[0] == outputs[1]
    assert label_models(["sim/base", "sim/mini"]) == SIM_NOTE
    assert "openai/x" in label_models(["openai/x", "sim/base"])


PROFILES = ["sim/perfect", "sim/pro", "sim/mini", "sim/base"]  # deliberately not in profile order
WEAKEST_FIRST = ["sim/mini", "sim/base", "sim/pro", "sim/perfect"]


def test_target_scaling_panels_go_weakest_profile_first() -> None:
    from pushbench.analysis.reposcan import plot_scaling

    scaling = pd.DataFrame([{"model": m, "controller": c, "target": n, "success_rate": 0.5, "bootstrap_sd": 0.1}
                            for m in PROFILES for c in ("standard", "gated") for n in (10, 25)])
    deltas = pd.DataFrame([{"model": m, "target": n, "comparison": "gated − standard", "delta": 0.1,
                            "ci_low": 0.0, "ci_high": 0.2} for m in PROFILES for n in (10, 25)])
    fig = plot_scaling(scaling, deltas, ["standard", "gated"])
    assert [ax.get_title() for ax in fig.axes[:4]] == WEAKEST_FIRST
    plt.close(fig)


def test_ablation_bars_go_weakest_profile_first() -> None:
    from pushbench.analysis.reposcan import plot_ablation

    table = pd.DataFrame([{"model": m, "controller": c, "success": 0.5, "success_sd": 0.1}
                          for m in PROFILES for c in ("gated", "stateqgp")])
    deltas = pd.DataFrame([{"model": m, "comparison": "stateqgp − gated", "delta": 0.1, "ci_low": 0.0,
                            "ci_high": 0.2} for m in PROFILES])
    fig = plot_ablation(table, deltas, ["gated", "stateqgp"])
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == WEAKEST_FIRST
    plt.close(fig)


def test_blackbox_agents_go_by_their_model_weakest_first() -> None:
    from pushbench.analysis.blackbox import plot_counts

    counts = pd.DataFrame([{"agent": f"standin-{m.replace('/', '-')}", "model": m, "target": n, "prompt": p,
                            "successes": 1} for m in PROFILES for n in (50, 100) for p in ("default", "checklist")])
    fig = plot_counts(counts)
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == [
        f"standin-{m.replace('/', '-')}" for m in WEAKEST_FIRST]
    plt.close(fig)


def test_shown_tables_go_weakest_first_with_three_decimals_and_the_same_text_every_time() -> None:
    from pushbench.analysis.figures import show_table

    table = pd.DataFrame({"model": ["sim/pro", "sim/mini"], "success": [0.9, 2 / 3], "sd": [float("nan"), 0.05],
                          "episodes": [108, 108]})
    view = show_table(table)
    html = view._repr_html_()
    assert html.index("sim/mini") < html.index("sim/pro")
    assert "<td>0.667</td>" in html and "<td>0.900</td>" in html and "<td>108</td>" in html
    assert "<td>–</td>" in html and "<th>" in html and "0.666" not in html
    assert repr(view).splitlines()[1].split() == ["sim/mini", "0.667", "0.050", "108"]
    assert repr(show_table(table)) == repr(view)
    assert "1,234.5" in show_table(pd.DataFrame({"tokens": [1234.5]}), floatfmt=",.1f")._repr_html_()


def test_a_shown_figure_is_the_saved_png(tmp_path: Path) -> None:
    from pushbench.analysis.figures import show_figure

    style()
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    view = show_figure(fig, tmp_path, "f")
    assert view._repr_png_() == (tmp_path / "f.png").read_bytes()
    assert (tmp_path / "f.pdf").is_file()
    assert repr(view) == "f.png + f.pdf"  # no memory address in the notebook's text/plain output
