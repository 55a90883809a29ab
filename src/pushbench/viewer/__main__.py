"""The ``viewer`` DVC stage: one site for every experiment's run folder (and the ``forks`` stage's,
so each fork is listed beside its parent), written to data/viewer."""

from __future__ import annotations

from pushbench import config
from pushbench.viewer.site import build_site

OUT = config.DATA / "viewer"
FORKS = "forks"  # pushbench.replay.fork.OUT (not imported: the stage does not depend on the fork code)


def main() -> None:
    names = sorted(config.params("experiments"))
    names += [FORKS] if "forks" in config.params() else []
    runs = [config.DATA / "runs" / name for name in names if (config.DATA / "runs" / name).is_dir()]
    stats = build_site(runs, OUT, workers=int(config.params("run.workers")))
    print(f"viewer: {stats.pages} episode pages of {len(runs)} runs -> {OUT.relative_to(config.ROOT)}/index.html")


if __name__ == "__main__":
    main()
