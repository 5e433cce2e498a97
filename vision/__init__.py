"""changpai.vision — card detection and classification, synthetic data, training, labelling."""

DEFAULT_MODEL_NAME = "changpai-v9"  # the released model under models/, used when no --model is given
# `changpai calibrate`: scenes of card crops rendered from a deck's faces (half as many hands are mined);
# on seed 9005's held-out deck 160 gave 80 % whole-photo exact, 320 gave 75, 82.5 and 90 % in three runs (the
# fine-tuning varies from run to run; vision.calibrate), in 11–12.5 min here
CALIBRATION_SCENES = 320
