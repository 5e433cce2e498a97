"""changpai.vision — card detection and classification, synthetic data, training, labelling."""
