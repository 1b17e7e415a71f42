"""PyTorch twin of the task `softmax_attention_llama32_1b`.

Llama-3.2-1B, model.layers.0.self_attn (eager attention: softmax(attn_weights, dim=-1)):
torch.nn.functional.softmax (transformers LlamaAttention (meta-llama/Llama-3.2-1B)).
Softmax of the scaled attention scores of 32 heads for a 256-token prefill; the causal mask
(added before the softmax) is left to Level 2.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, scores):
        return F.softmax(scores, dim=-1)


def get_inputs():
    return [
        torch.empty(1, 32, 256, 256).uniform_(-3, 3),
    ]


def get_init_inputs():
    return []
