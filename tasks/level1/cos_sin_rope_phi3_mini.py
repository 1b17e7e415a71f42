"""PyTorch twin of the task `cos_sin_rope_phi3_mini`.

Phi-3-mini-4k-instruct, model.rotary_emb (cos = emb.cos(); sin = emb.sin()): torch.Tensor.cos +
torch.Tensor.sin (transformers Phi3RotaryEmbedding (microsoft/Phi-3-mini-4k-instruct)).
The cosine and sine tables of the rotary embedding for a 2048-token prefill, head size 96: emb =
cat(freqs, freqs) holds position x inverse frequency, so its angles run up to 2047 radians (drawn
uniform in [0, 2048)).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, emb):
        cos = emb.cos()
        sin = emb.sin()
        return cos, sin


def get_inputs():
    return [
        torch.empty(1, 2048, 96).uniform_(0, 2048),
    ]


def get_init_inputs():
    return []
