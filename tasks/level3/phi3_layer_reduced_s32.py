"""PyTorch twin of the task `phi3_layer_reduced_s32`.

Phi-3-mini (width-reduced), model.layers.0: 1 decoder layer (RMSNorm, 8 query heads and 8
key/value heads of 96, rotary embedding, causal softmax attention, SiLU-gated MLP of 2048) with
the model's rotary tables and causal mask (transformers Phi3DecoderLayer
(microsoft/Phi-3-mini-4k-instruct architecture)).
A prefill of 32 tokens through one decoder layer, batch 1, eager attention: the rotary cos/sin
tables are computed in the graph from positions (iota), inverse frequencies (theta 10000 to the
power -2i/d) and cos/sin, and the causal mask from two iotas, greater and where. The input is
the hidden states after the token embedding (normal(0, 1)). The layer is Phi-3's (fused qkv_proj
sliced into q, k, v; fused gate_up_proj chunked into gate and up; RMSNorm eps 1e-5; rope theta
1e4; head_dim 96) with the width reduced for an edge-sized layer and the f64 reference: hidden
3072 -> 768, 32 heads -> 8, intermediate 8192 -> 2048.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


def rotary_tables(seq_len, head_dim, theta, dtype, device):
    """The model's rotary embedding (default rope type) for positions 0 .. seq_len - 1."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=dtype, device=device) / head_dim))
    freqs = torch.arange(seq_len, dtype=dtype, device=device)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x):
    """Rotates half the hidden dims of the input."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(hidden_states, n_rep):
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.model_layers_0_input_layernorm = nn.RMSNorm(768, eps=1e-05)
        self.model_layers_0_self_attn_qkv_proj = nn.Linear(768, 2304, bias=False)
        self.model_layers_0_self_attn_o_proj = nn.Linear(768, 768, bias=False)
        self.model_layers_0_post_attention_layernorm = nn.RMSNorm(768, eps=1e-05)
        self.model_layers_0_mlp_gate_up_proj = nn.Linear(768, 4096, bias=False)
        self.model_layers_0_mlp_down_proj = nn.Linear(2048, 768, bias=False)

    def forward(self, hidden_states):
        cos, sin = rotary_tables(32, 96, 10000.0, hidden_states.dtype, hidden_states.device)
        causal_mask = torch.full((32, 32), torch.finfo(hidden_states.dtype).min, dtype=hidden_states.dtype, device=hidden_states.device).triu(1)
        # model.layers.0
        residual = hidden_states
        hidden_states = self.model_layers_0_input_layernorm(hidden_states)
        qkv = self.model_layers_0_self_attn_qkv_proj(hidden_states)
        query_states = qkv[..., :768].view(1, 32, -1, 96).transpose(1, 2)
        key_states = qkv[..., 768:1536].view(1, 32, -1, 96).transpose(1, 2)
        value_states = qkv[..., 1536:].view(1, 32, -1, 96).transpose(1, 2)
        query_states = (query_states * cos) + (rotate_half(query_states) * sin)
        key_states = (key_states * cos) + (rotate_half(key_states) * sin)
        key_states = repeat_kv(key_states, 1)
        value_states = repeat_kv(value_states, 1)
        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) * 0.10206207261596575
        attn_weights = attn_weights + causal_mask
        attn_weights = F.softmax(attn_weights, dim=-1)
        attn_output = torch.matmul(attn_weights, value_states).transpose(1, 2).reshape(1, 32, -1)
        hidden_states = residual + self.model_layers_0_self_attn_o_proj(attn_output)
        residual = hidden_states
        hidden_states = self.model_layers_0_post_attention_layernorm(hidden_states)
        up_states = self.model_layers_0_mlp_gate_up_proj(hidden_states)
        gate, up_states = up_states.chunk(2, dim=-1)
        up_states = up_states * F.silu(gate)
        hidden_states = residual + self.model_layers_0_mlp_down_proj(up_states)
        return hidden_states


def get_inputs():
    return [
        torch.empty(1, 32, 768).normal_(0.0, 1.0),
    ]


def get_init_inputs():
    return []
