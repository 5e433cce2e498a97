"""changpai.vision — card detection and classification, synthetic data, training, labelling."""

DEFAULT_MODEL_NAME = "changpai-v30"  # the released model under models/, used when no --model is given
# `changpai calibrate`: scenes of card crops rendered from a deck's faces (half as many hands are mined);
# chosen on seed 9005's held-out deck (160 vs 320 scenes: commit e450be6)
CALIBRATION_SCENES = 320
# `changpai calibrate --fit fast`: scenes rendered with the deck's faces (about 30 crops each) to refit the last layer on
FAST_SCENES = 100
# `changpai calibrate` cuts its fine-tuning to the epochs that end within this many minutes from its start
CALIBRATION_MINUTES = 15.0
