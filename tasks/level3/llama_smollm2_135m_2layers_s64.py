"""PyTorch twin of the task `llama_smollm2_135m_2layers_s64`.

SmolLM2-135M, model.layers.0-1: 2 decoder layers (RMSNorm, 9 query heads and 3 key/value heads
of 64, rotary embedding, causal softmax attention, SiLU-gated MLP of 1536) with the model's
rotary tables and causal mask (transformers LlamaDecoderLayer (HuggingFaceTB/SmolLM2-135M)).
A prefill of 64 tokens through the first 2 decoder layers, batch 1, eager attention: the rotary
cos/sin tables are computed in the graph from positions (iota), inverse frequencies (theta
100000 to the power -2i/d) and cos/sin, and the causal mask from two iotas, greater and where.
The input is the hidden states after the token embedding (normal(0, 1)). RMSNorm eps 1e-5; the
real model has 30 such layers.
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
        self.model_layers_0_input_layernorm = nn.RMSNorm(576, eps=1e-05)
        self.model_layers_0_self_attn_q_proj = nn.Linear(576, 576, bias=False)
        self.model_layers_0_self_attn_k_proj = nn.Linear(576, 192, bias=False)
        self.model_layers_0_self_attn_v_proj = nn.Linear(576, 192, bias=False)
        self.model_layers_0_self_attn_o_proj = nn.Linear(576, 576, bias=False)
        self.model_layers_0_post_attention_layernorm = nn.RMSNorm(576, eps=1e-05)
        self.model_layers_0_mlp_gate_proj = nn.Linear(576, 1536, bias=False)
        self.model_layers_0_mlp_up_proj = nn.Linear(576, 1536, bias=False)
        self.model_layers_0_mlp_down_proj = nn.Linear(1536, 576, bias=False)
        self.model_layers_1_input_layernorm = nn.RMSNorm(576, eps=1e-05)
        self.model_layers_1_self_attn_q_proj = nn.Linear(576, 576, bias=False)
        self.model_layers_1_self_attn_k_proj = nn.Linear(576, 192, bias=False)
        self.model_layers_1_self_attn_v_proj = nn.Linear(576, 192, bias=False)
        self.model_layers_1_self_attn_o_proj = nn.Linear(576, 576, bias=False)
        self.model_layers_1_post_attention_layernorm = nn.RMSNorm(576, eps=1e-05)
        self.model_layers_1_mlp_gate_proj = nn.Linear(576, 1536, bias=False)
        self.model_layers_1_mlp_up_proj = nn.Linear(576, 1536, bias=False)
        self.model_layers_1_mlp_down_proj = nn.Linear(1536, 576, bias=False)

    def forward(self, hidden_states):
        cos, sin = rotary_tables(64, 64, 100000.0, hidden_states.dtype, hidden_states.device)
        causal_mask = torch.full((64, 64), torch.finfo(hidden_states.dtype).min, dtype=hidden_states.dtype, device=hidden_states.device).triu(1)
        # model.layers.0
        residual = hidden_states
        hidden_states = self.model_layers_0_input_layernorm(hidden_states)
        query_states = self.model_layers_0_self_attn_q_proj(hidden_states).view(1, 64, -1, 64).transpose(1, 2)
        key_states = self.model_layers_0_self_attn_k_proj(hidden_states).view(1, 64, -1, 64).transpose(1, 2)
        value_states = self.model_layers_0_self_attn_v_proj(hidden_states).view(1, 64, -1, 64).transpose(1, 2)
        query_states = (query_states * cos) + (rotate_half(query_states) * sin)
        key_states = (key_states * cos) + (rotate_half(key_states) * sin)
        key_states = repeat_kv(key_states, 3)
        value_states = repeat_kv(value_states, 3)
        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) * 0.125
        attn_weights = attn_weights + causal_mask
        attn_weights = F.softmax(attn_weights, dim=-1)
        attn_output = torch.matmul(attn_weights, value_states).transpose(1, 2).reshape(1, 64, -1)
        hidden_states = residual + self.model_layers_0_self_attn_o_proj(attn_output)
        residual = hidden_states
        hidden_states = self.model_layers_0_post_attention_layernorm(hidden_states)
        gated = F.silu(self.model_layers_0_mlp_gate_proj(hidden_states)) * self.model_layers_0_mlp_up_proj(hidden_states)
        hidden_states = residual + self.model_layers_0_mlp_down_proj(gated)
        # model.layers.1
        residual = hidden_states
        hidden_states = self.model_layers_1_input_layernorm(hidden_states)
        query_states = self.model_layers_1_self_attn_q_proj(hidden_states).view(1, 64, -1, 64).transpose(1, 2)
        key_states = self.model_layers_1_self_attn_k_proj(hidden_states).view(1, 64, -1, 64).transpose(1, 2)
        value_states = self.model_layers_1_self_attn_v_proj(hidden_states).view(1, 64, -1, 64).transpose(1, 2)
        query_states = (query_states * cos) + (rotate_half(query_states) * sin)
        key_states = (key_states * cos) + (rotate_half(key_states) * sin)
        key_states = repeat_kv(key_states, 3)
        value_states = repeat_kv(value_states, 3)
        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) * 0.125
        attn_weights = attn_weights + causal_mask
        attn_weights = F.softmax(attn_weights, dim=-1)
        attn_output = torch.matmul(attn_weights, value_states).transpose(1, 2).reshape(1, 64, -1)
        hidden_states = residual + self.model_layers_1_self_attn_o_proj(attn_output)
        residual = hidden_states
        hidden_states = self.model_layers_1_post_attention_layernorm(hidden_states)
        gated = F.silu(self.model_layers_1_mlp_gate_proj(hidden_states)) * self.model_layers_1_mlp_up_proj(hidden_states)
        hidden_states = residual + self.model_layers_1_mlp_down_proj(gated)
        return hidden_states


def get_inputs():
    return [
        torch.empty(1, 64, 576).normal_(0.0, 1.0),
    ]


def get_init_inputs():
    return []
