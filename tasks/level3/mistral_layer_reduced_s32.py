"""PyTorch twin of the task `mistral_layer_reduced_s32`.

Mistral-7B (width-reduced), model.layers.0: 1 decoder layer (RMSNorm, 8 query heads and 2
key/value heads of 128, rotary embedding, causal softmax attention, SiLU-gated MLP of 3584) with
the model's rotary tables and causal mask (transformers MistralDecoderLayer
(mistralai/Mistral-7B-v0.3 architecture)).
A prefill of 32 tokens through one decoder layer, batch 1, eager attention: the rotary cos/sin
tables are computed in the graph from positions (iota), inverse frequencies (theta 1e+06 to the
power -2i/d) and cos/sin, and the causal mask from two iotas, greater and where. The input is
the hidden states after the token embedding (normal(0, 1)). The layer is Mistral's
(grouped-query attention 4:1 with head_dim 128, SiLU-gated MLP, RMSNorm eps 1e-5, rope theta
1e6) with the width reduced for an edge-sized layer and the f64 reference: hidden 4096 -> 1024,
32/8 heads -> 8/2, intermediate 14336 -> 3584 (the same ratios). The sliding window (4096) is
longer than the sequence, so the mask is plain causal.
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
        self.model_layers_0_input_layernorm = nn.RMSNorm(1024, eps=1e-05)
        self.model_layers_0_self_attn_q_proj = nn.Linear(1024, 1024, bias=False)
        self.model_layers_0_self_attn_k_proj = nn.Linear(1024, 256, bias=False)
        self.model_layers_0_self_attn_v_proj = nn.Linear(1024, 256, bias=False)
        self.model_layers_0_self_attn_o_proj = nn.Linear(1024, 1024, bias=False)
        self.model_layers_0_post_attention_layernorm = nn.RMSNorm(1024, eps=1e-05)
        self.model_layers_0_mlp_gate_proj = nn.Linear(1024, 3584, bias=False)
        self.model_layers_0_mlp_up_proj = nn.Linear(1024, 3584, bias=False)
        self.model_layers_0_mlp_down_proj = nn.Linear(3584, 1024, bias=False)

    def forward(self, hidden_states):
        cos, sin = rotary_tables(32, 128, 1000000.0, hidden_states.dtype, hidden_states.device)
        causal_mask = torch.full((32, 32), torch.finfo(hidden_states.dtype).min, dtype=hidden_states.dtype, device=hidden_states.device).triu(1)
        # model.layers.0
        residual = hidden_states
        hidden_states = self.model_layers_0_input_layernorm(hidden_states)
        query_states = self.model_layers_0_self_attn_q_proj(hidden_states).view(1, 32, -1, 128).transpose(1, 2)
        key_states = self.model_layers_0_self_attn_k_proj(hidden_states).view(1, 32, -1, 128).transpose(1, 2)
        value_states = self.model_layers_0_self_attn_v_proj(hidden_states).view(1, 32, -1, 128).transpose(1, 2)
        query_states = (query_states * cos) + (rotate_half(query_states) * sin)
        key_states = (key_states * cos) + (rotate_half(key_states) * sin)
        key_states = repeat_kv(key_states, 4)
        value_states = repeat_kv(value_states, 4)
        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) * 0.08838834764831845
        attn_weights = attn_weights + causal_mask
        attn_weights = F.softmax(attn_weights, dim=-1)
        attn_output = torch.matmul(attn_weights, value_states).transpose(1, 2).reshape(1, 32, -1)
        hidden_states = residual + self.model_layers_0_self_attn_o_proj(attn_output)
        residual = hidden_states
        hidden_states = self.model_layers_0_post_attention_layernorm(hidden_states)
        gated = F.silu(self.model_layers_0_mlp_gate_proj(hidden_states)) * self.model_layers_0_mlp_up_proj(hidden_states)
        hidden_states = residual + self.model_layers_0_mlp_down_proj(gated)
        return hidden_states


def get_inputs():
    return [
        torch.empty(1, 32, 1024).normal_(0.0, 1.0),
    ]


def get_init_inputs():
    return []
