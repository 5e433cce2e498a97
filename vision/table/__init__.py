"""Cards → layout → hand → hu: the recognized cards arranged as a hand on the table and scored (uses scoring/)."""
