"""The AdaBN probe: alpha 0 is the network as trained, alpha 1 normalizes with the batch alone; a scene folder is read."""

import json

import cv2
import numpy as np
import pytest
import torch

from vision.eval.adapt import adapted_recognizer, main, mixed_bn, probe


def _net():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                              torch.nn.Conv2d(4, 2, 1), torch.nn.BatchNorm2d(2))
    for bn in (net[1], net[4]):  # trained statistics far from any one batch's
        bn.running_mean.uniform_(-2, 2)
        bn.running_var.uniform_(0.5, 3)
        bn.weight.data.uniform_(0.5, 2)
        bn.bias.data.uniform_(-1, 1)
    return net.eval()


def test_alpha_zero_is_the_network_as_trained():
    net, x = _net(), torch.randn(5, 3, 8, 8) * 3 + 1
    with torch.no_grad():
        before = net(x)
        layers = mixed_bn(net)
        after = net(x)
    assert len(layers) == 2
    assert torch.allclose(before, after, atol=1e-5)


def test_alpha_one_normalizes_with_the_batch_alone():
    net, x = _net(), torch.randn(6, 3, 8, 8) * 3 + 1
    layers = mixed_bn(net, alpha=1.0)
    with torch.no_grad():
        y = net(x)
    bn = layers[-1].bn
    assert torch.allclose(y.mean((0, 2, 3)), bn.bias, atol=1e-4)  # the batch's own mean, then the layer's shift
    assert torch.allclose(y.std((0, 2, 3), unbiased=False), bn.weight.abs(), atol=1e-3)
    layers[0].alpha = layers[1].alpha = 0.5  # in between: neither
    with torch.no_grad():
        half = net(x)
    assert not torch.allclose(half, y, atol=1e-3)


def _folder(tmp_path):
    """One rendered-like scene: two upright cards on a dark table, labelled 1t and 2t."""
    img = np.full((400, 300, 3), 40, np.uint8)
    img[60:340, 60:120] = 220
    img[60:340, 170:230] = 200
    (tmp_path / "gt").mkdir()
    (tmp_path / "images").mkdir()
    cv2.imwrite(str(tmp_path / "images" / "000000.jpg"), img)
    quad = lambda x0: [[x0, 60], [x0 + 60, 60], [x0 + 60, 340], [x0, 340]]  # noqa: E731
    gt = {"image": "images/000000.jpg", "cards": [{"code": "1t", "quad": quad(60), "visible": 1.0},
                                                  {"code": "2t", "quad": quad(170), "visible": 1.0}]}
    (tmp_path / "gt" / "000000.json").write_text(json.dumps(gt))
    return tmp_path


def test_a_scene_folder_is_read_at_each_alpha(tmp_path):
    r = probe(_folder(tmp_path), None, (0.0, 0.5), progress=False)
    assert r["cards"] == 2
    assert set(r["right"]) == {"0.0", "0.5"}
    (scene,) = r["per_scene"]
    assert scene["cards"] == 2 and 0 < scene["plain_top"] <= 1
    assert all(0 <= v <= 2 for v in scene["right"].values())


def test_bad_input_gets_one_sentence(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        main([str(tmp_path)])
    assert e.value.code == 2 and "has no gt/" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main([str(_folder(tmp_path)), "--alpha", "0,two"])
    assert e.value.code == 2 and "--alpha takes numbers" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main([str(tmp_path), "--model", str(tmp_path / "nowhere")])
    assert e.value.code == 2 and "does not exist" in capsys.readouterr().err


def test_kept_statistics_serve_the_later_batches():
    net, x = _net(), torch.randn(6, 3, 8, 8) * 3 + 1
    layers = mixed_bn(net, alpha=1.0)
    with torch.no_grad():
        loose = net(x[:2])  # statistics of these two alone
        for layer in layers:
            layer.keep = True
        whole = net(x)  # the first batch: its statistics are kept
        later = net(x[:2])
    assert torch.allclose(later, whole[:2], atol=1e-5)
    assert not torch.allclose(later, loose, atol=1e-3)


def test_the_adapted_recognizer_reads_as_released_at_alpha_zero_and_is_restored():
    import vision.infer.recognize as rec
    from vision.infer.model import _sessions, model_info

    info = model_info(None)
    _, cls = _sessions(str(info.path))
    rng = np.random.default_rng(3)
    crops = [rng.integers(0, 255, (128, 128, 3), dtype=np.uint8) for _ in range(3)]
    onnx = rec._classifier_run(cls, crops)
    before = rec._classifier_run, rec.recognize_found
    with adapted_recognizer(None, 0.0):
        assert rec._classifier_run is not before[0]
        torch_p = rec._classifier_run(cls, crops)
    assert (rec._classifier_run, rec.recognize_found) == before
    assert np.abs(torch_p - onnx).max() < 2e-3


def test_hands_take_a_model_folder_and_one_alpha(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        main([str(_folder(tmp_path)), "--hands", "--alpha", "0.1,0.2"])
    assert e.value.code == 2 and "one --alpha" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main([str(tmp_path), "--hands", "--alpha", "0.2", "--model", str(tmp_path / "x.pt")])
    assert e.value.code == 2 and "model folder" in capsys.readouterr().err
