"""PyTorch twin of the task `mean_tokens_minilm_pooling`.

all-MiniLM-L6-v2, 1_Pooling (pooling_mode_mean_tokens): torch.mean (sentence-transformers
models/Pooling.py).
Mean pooling of the token embeddings (384-d) of a batch of 8 sentences of 256 tokens (the
model's max_seq_length) with full attention masks, where the masked mean is the plain mean.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.mean(x, 1)


def get_inputs():
    return [
        torch.empty(8, 256, 384).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
