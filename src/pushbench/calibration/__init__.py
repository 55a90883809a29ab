"""Calibrating SimLM's recall to published long-context measurements (issue 19 items 1-2).

``probe`` poses the measurements' question shape (a fact at position p of an L-token context,
asked at the end) to SimLM; ``fit`` fits each profile's recall parameters to one named model's
published curves by least squares; ``stage`` is the ``calibrate`` DVC stage. docs/calibration.md
describes the data, the functional form and the fit.
"""
