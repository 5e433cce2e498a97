"""Figures: how well a model finds and reads cards and scores hands on a labelled set, and comparisons of reports."""
