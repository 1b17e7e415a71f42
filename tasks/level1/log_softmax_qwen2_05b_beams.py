"""PyTorch twin of the task `log_softmax_qwen2_05b_beams`.

Qwen2-0.5B, lm_head logits -> log_softmax (beam search scores): torch.nn.functional.log_softmax
(transformers GenerationMixin._beam_search (Qwen/Qwen2-0.5B)).
Log-probabilities over the 151936-token vocabulary for 4 beams of one decoding step; logits
drawn normal(0, 3).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, logits):
        return F.log_softmax(logits, dim=-1)


def get_inputs():
    return [
        torch.empty(4, 151936).normal_(0.0, 3.0),
    ]


def get_init_inputs():
    return []
