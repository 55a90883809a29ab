"""The static trajectory viewer: ``pushbench view RUN_DIR`` writes a site that opens from ``file://``.

``site.build_site`` writes it; ``episode`` and ``timeline`` make one episode's page data; the page
itself (``static/``: index.html, viewer.js, viewer.css) is package data, written here, no CDN.
"""

from pushbench.viewer.site import BuildStats, ViewerError, build_site

__all__ = ["BuildStats", "ViewerError", "build_site"]
