"""PyTorch twin of the task `gpt2_block_s64`.

GPT-2 (124M), transformer.h.0: transformers GPT2Block: ln_1, GPT2Attention (c_attn Conv1D(2304,
768), 12 heads, causal mask from the tril buffer via torch.where, c_proj), residual, ln_2,
GPT2MLP (c_fc, gelu_new, c_proj), residual (transformers GPT2Block (openai-community/gpt2)).
One GPT-2 block over a 64-token prompt, batch 1, eager attention, dropout as identity. Conv1D
keeps its weight as [in, out] (x @ W + b); weights are drawn normal(0, 0.02) as GPT-2
initialises them (c_proj scaled by 1/sqrt(2 n_layer)); LayerNorm eps 1e-5. The causal mask is
built from two iotas and greater, and applied with where.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn_c_attn_weight = nn.Parameter(torch.empty(768, 2304))
        self.attn_c_attn_bias = nn.Parameter(torch.empty(2304))
        self.attn_c_proj_weight = nn.Parameter(torch.empty(768, 768))
        self.attn_c_proj_bias = nn.Parameter(torch.empty(768))
        self.mlp_c_fc_weight = nn.Parameter(torch.empty(768, 3072))
        self.mlp_c_fc_bias = nn.Parameter(torch.empty(3072))
        self.mlp_c_proj_weight = nn.Parameter(torch.empty(3072, 768))
        self.mlp_c_proj_bias = nn.Parameter(torch.empty(768))
        self.ln_1 = nn.LayerNorm(768)
        self.ln_2 = nn.LayerNorm(768)

    def forward(self, hidden_states):
        causal_mask = torch.tril(torch.ones(64, 64, dtype=torch.bool, device=hidden_states.device))
        residual = hidden_states
        hidden_states = self.ln_1(hidden_states)
        qkv = torch.addmm(self.attn_c_attn_bias, hidden_states.view(-1, 768), self.attn_c_attn_weight).view(1, 64, 2304)
        query, key, value = qkv.split(768, dim=2)
        query = query.view(1, 64, 12, 64).permute(0, 2, 1, 3)
        key = key.view(1, 64, 12, 64).permute(0, 2, 1, 3)
        value = value.view(1, 64, 12, 64).permute(0, 2, 1, 3)
        attn_weights = torch.matmul(query, key.transpose(-1, -2)) / 8.0
        attn_weights = torch.where(causal_mask, attn_weights, torch.finfo(attn_weights.dtype).min)
        attn_weights = F.softmax(attn_weights, dim=-1)
        attn_output = torch.matmul(attn_weights, value).permute(0, 2, 1, 3).contiguous().view(1, 64, 768)
        attn_output = torch.addmm(self.attn_c_proj_bias, attn_output.view(-1, 768), self.attn_c_proj_weight).view(1, 64, 768)
        hidden_states = attn_output + residual
        residual = hidden_states
        hidden_states = self.ln_2(hidden_states)
        hidden_states = torch.addmm(self.mlp_c_fc_bias, hidden_states.view(-1, 768), self.mlp_c_fc_weight).view(1, 64, 3072)
        hidden_states = F.gelu(hidden_states, approximate="tanh")
        hidden_states = torch.addmm(self.mlp_c_proj_bias, hidden_states.view(-1, 3072), self.mlp_c_proj_weight).view(1, 64, 768)
        hidden_states = residual + hidden_states
        return hidden_states


def get_inputs():
    return [
        torch.empty(1, 64, 768).normal_(0.0, 1.0),
    ]


def get_init_inputs():
    return []
