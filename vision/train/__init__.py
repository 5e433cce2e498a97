"""Training and releasing the recognizer's networks (ultralytics and torch, imported only where a net is trained)."""
