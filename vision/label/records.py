"""One labelled photo: the record a labelling job keeps for each photo and hands to every label format."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vision.types import Recognition, RecordError


@dataclass
class LabelledPhoto:
    """A photo's labels: its path under the photo folder, the bytes' hash it was labelled from (a photo replaced under
    its name is labelled again), what was recognized in it — or why it was skipped — and, for a photo most tools
    cannot open (HEIC), the name of its JPEG copy under OUT/images and the path the formats give for it."""

    rel: str
    recognition: Recognition | None = None
    sha: str = ""
    error: str | None = None
    copy: str | None = None
    file_name: str | None = None

    @property
    def image_name(self) -> str:
        """The image path the formats name, relative to the photo folder."""
        return self.file_name or self.rel

    @property
    def cards(self) -> list:
        return self.recognition.cards if self.recognition else []

    def flagged(self, min_conf: float) -> list[bool]:
        """Which cards a person should look at: read with less than ``min_conf``."""
        return [c.confidence < min_conf for c in self.cards]

    def to_record(self) -> dict[str, Any]:
        return {"rel": self.rel, "sha": self.sha} | ({"error": self.error} if self.error else {}) | \
            ({"recognition": self.recognition.to_dict()} if self.recognition else {})

    @classmethod
    def from_record(cls, d: Any) -> LabelledPhoto:
        """A kept record (this shape, or the flat one of earlier versions: width, height and cards at the top);
        RecordError for one that cannot be read (the photo is then labelled again)."""
        if not isinstance(d, dict) or not isinstance(d.get("rel"), str):
            raise RecordError("A labelling record must name its photo.")
        if d.get("error"):
            return cls(d["rel"], None, str(d.get("sha", "")), str(d["error"]))
        rec = d.get("recognition", {k: d[k] for k in ("width", "height", "cards") if k in d})
        return cls(d["rel"], Recognition.from_dict(rec), str(d.get("sha", "")))
