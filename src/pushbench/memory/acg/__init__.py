"""ACG, the Adaptive Consistency Graph execution memory (seed §3, App. A–B; DESIGN §5; docs/acg.md).

One module per part: ``units`` (source-grounded memory units), ``graph`` (semantic and
source-affinity edges), ``entropy`` (two-level structural-entropy clustering, incremental),
``retrieval`` (seeds and expansion), ``views`` (per-requirement decision views), ``render``
(budget-aware rendering) and ``builder`` (the ``acg`` context builder).
"""

from pushbench.memory.acg.builder import ACGMemory

__all__ = ["ACGMemory"]
