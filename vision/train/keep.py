"""Teaching the classifier something new without forgetting what it read right: its fine-tune's loss gains a pull
toward the starting network's readings (distillation from the start, "learning without forgetting").

Fine-tunes on the CPU that taught a new deck family (the heroes tries, docs/training.md) lost own-style decks they had
read right: a worn deck with dot numerals read 4w as 5w, a deck with Suzhou numerals 2t as 4t. Replaying own crops
did not stop it. Here each training crop the start reads right (its top reading is the label) adds the divergence of
the student's readings from the start's, softened by ``temperature``; crops the start reads wrong (the new family's)
are taught by the labels alone. The start is the run's start checkpoint (runs/NAME_start.pt: its classes in the
training folders' order, as the student's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


class KeepLoss:
    """Cross-entropy on the labels plus ``weight`` × T² × KL(start ‖ student) at temperature T on the crops the
    start reads right. Called as ultralytics calls a model's criterion: ``(preds, batch) -> (loss, items)``."""

    def __init__(self, start, weight: float, temperature: float = 2.0):
        self.start, self.weight, self.t = start, float(weight), float(temperature)

    def __call__(self, preds: Any, batch: dict[str, Any]):
        import torch
        import torch.nn.functional as F

        logits = preds[1] if isinstance(preds, (list, tuple)) else preds
        ce = F.cross_entropy(logits, batch["cls"], reduction="mean")
        with torch.no_grad():
            out = self.start(batch["img"])
            start = out[1] if isinstance(out, (list, tuple)) else out  # eval mode: (probabilities, logits)
            right = (start.argmax(1) == batch["cls"]).float()
        kl = F.kl_div(F.log_softmax(logits / self.t, 1), F.log_softmax(start / self.t, 1), reduction="none",
                      log_target=True).sum(1)
        keep = (kl * right).sum() / right.sum().clamp(min=1.0) * self.t**2  # no host sync a step
        loss = ce + self.weight * keep
        return loss, {"loss": loss.detach()}


def load_start(path: str | Path):
    """The start checkpoint's network, in eval mode, frozen."""
    import torch

    from vision.train.average import checkpoint_network

    net = checkpoint_network(torch.load(Path(path), map_location="cpu", weights_only=False), Path(path)).eval()
    for p in net.parameters():
        p.requires_grad_(False)
    return net


def keep_callback(start_path: str | Path, weight: float, temperature: float = 2.0):
    """An ultralytics callback (on_pretrain_routine_end) that gives the trainer's model the KeepLoss; the EMA copy
    made before it keeps the plain loss, so the val loss the run reports stays the labels' cross-entropy."""

    def attach(trainer) -> None:
        start = load_start(start_path).to(trainer.device)
        model = trainer.model.module if hasattr(trainer.model, "module") else trainer.model
        model.criterion = KeepLoss(start, weight, temperature)

    return attach
