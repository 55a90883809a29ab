"""The run folder's format: what an experiment writes and every later stage reads.

A run folder holds ``episodes.jsonl`` (one :class:`~pushbench.log.models.EpisodeRow` per line, sorted
by episode id), ``traces/`` (one gzip JSON :class:`~pushbench.log.models.Trace` per episode) and,
once scored, ``scored.jsonl`` and ``summary.json``.

- ``names``: the file names, and an episode's trace file name;
- ``models``: the typed row and trace with their format version (``FORMAT``), and the version check;
- ``traces``: the one trace writer and reader;  ``rows``: the one writer and reader of the JSONL rows.

Nothing here imports the rest of PushBench, so any stage can read a run folder cheaply.
"""
