"""Synthetic photos: card faces of a deck, tables, scenes of cards laid out, and the datasets written from them."""
