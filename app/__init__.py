"""changpai user-facing entry points: the CLI and the Streamlit page. Thin wiring only."""
