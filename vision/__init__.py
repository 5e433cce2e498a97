"""changpai.vision — card detection and classification, synthetic data, training, labelling."""

DEFAULT_MODEL_NAME = "changpai-v9"  # the released model under models/, used when no --model is given
