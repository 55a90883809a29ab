"""Computations behind the paper's tables and figures; notebooks call these and only show results."""
