"""The ``viewer`` DVC stage: one site for every experiment's run folder, written to data/viewer."""

from __future__ import annotations

from pushbench import config
from pushbench.viewer.site import build_site

OUT = config.DATA / "viewer"


def main() -> None:
    names = sorted(config.params("experiments"))
    runs = [config.DATA / "runs" / name for name in names if (config.DATA / "runs" / name).is_dir()]
    stats = build_site(runs, OUT)
    print(f"viewer: {stats.pages} episode pages of {len(runs)} runs -> {OUT.relative_to(config.ROOT)}/index.html")


if __name__ == "__main__":
    main()
