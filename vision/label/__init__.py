"""Auto-labelling: a folder of card photos turned into training labels (YOLO-OBB, COCO, Label Studio) to review."""
