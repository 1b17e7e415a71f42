"""PyTorch twin of the task `attention_output_minilm_l6`.

all-MiniLM-L6-v2, encoder.layer.0.attention: transformers BertAttention (BertSelfAttention, 12
heads of 32, eager) + BertSelfOutput (dense, LayerNorm(eps=1e-12) of the residual sum)
(transformers BertModel (sentence-transformers/all-MiniLM-L6-v2)).
Self-attention of the MiniLM sentence encoder over a 128-token sentence without padding (so the
additive attention mask is zero and left out): query, key and value projections 384 -> 384, 12
heads of 32, scores divided by sqrt(32), softmax, context, then the output dense layer, the
residual add of the layer input and LayerNorm.
"""

import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.num_attention_heads = 12
        self.attention_head_size = 32
        self.query = nn.Linear(384, 384)
        self.key = nn.Linear(384, 384)
        self.value = nn.Linear(384, 384)
        self.output_dense = nn.Linear(384, 384)
        self.output_LayerNorm = nn.LayerNorm(384, eps=1e-12)

    def forward(self, hidden_states):
        def transpose_for_scores(x):
            new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
            return x.view(new_x_shape).permute(0, 2, 1, 3)

        # BertSelfAttention
        query_layer = transpose_for_scores(self.query(hidden_states))
        key_layer = transpose_for_scores(self.key(hidden_states))
        value_layer = transpose_for_scores(self.value(hidden_states))
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
        attention_scores = attention_scores / math.sqrt(self.attention_head_size)
        attention_probs = nn.functional.softmax(attention_scores, dim=-1)
        context_layer = torch.matmul(attention_probs, value_layer)
        context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
        context_layer = context_layer.view(context_layer.size()[:-2] + (384,))
        # BertSelfOutput
        out = self.output_dense(context_layer)
        return self.output_LayerNorm(out + hidden_states)


def get_inputs():
    return [
        torch.empty(1, 128, 384).normal_(0, 1),
    ]


def get_init_inputs():
    return []
