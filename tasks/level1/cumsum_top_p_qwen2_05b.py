"""PyTorch twin of the task `cumsum_top_p_qwen2_05b`.

Qwen2-0.5B, TopPLogitsWarper (sorted_logits.softmax(dim=-1).cumsum(dim=-1)): torch.Tensor.cumsum
(transformers generation/logits_process.py (Qwen/Qwen2-0.5B)).
Cumulative probabilities for nucleus (top-p) sampling over the 151936-token vocabulary, 8 sequences
sampled at once (num_return_sequences=8); the probabilities are drawn uniform in [0, 1.3e-5) (their
sums end near 1).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, probs):
        return probs.cumsum(dim=-1)


def get_inputs():
    return [
        torch.empty(8, 151936).uniform_(0, 1.3e-5),
    ]


def get_init_inputs():
    return []
