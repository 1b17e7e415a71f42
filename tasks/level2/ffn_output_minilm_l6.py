"""PyTorch twin of the task `ffn_output_minilm_l6`.

all-MiniLM-L6-v2, encoder.layer.0 (intermediate, output): transformers BertIntermediate
(Linear(384, 1536), GELU) + BertOutput (Linear(1536, 384), LayerNorm(eps=1e-12) of the residual
sum) (transformers BertModel (sentence-transformers/all-MiniLM-L6-v2)).
The feed-forward half of a MiniLM encoder layer over a 128-token sentence (post-norm BERT
layout): Linear 384 -> 1536, exact GELU, Linear 1536 -> 384, the residual add of the attention
output and LayerNorm.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.intermediate_dense = nn.Linear(384, 1536)
        self.intermediate_act_fn = nn.GELU()
        self.output_dense = nn.Linear(1536, 384)
        self.output_LayerNorm = nn.LayerNorm(384, eps=1e-12)

    def forward(self, attention_output):
        intermediate_output = self.intermediate_act_fn(self.intermediate_dense(attention_output))
        hidden_states = self.output_dense(intermediate_output)
        return self.output_LayerNorm(hidden_states + attention_output)


def get_inputs():
    return [
        torch.empty(1, 128, 384).normal_(0, 1),
    ]


def get_init_inputs():
    return []
