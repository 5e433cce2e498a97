"""A player's own deck: its faces found in one calibration photo without knowing the deck (find), named by their
place or their heads (name), and the classifier fitted to them in seconds (fit)."""
