"""Photo → cards: the detector, the crop classifier and the box nets, run with onnxruntime, OpenCV and numpy only.

Nothing here imports torch, ultralytics, streamlit or supervision (tests/test_structure.py checks it), so a
player's install that only scores photos stays small.
"""
