"""PyTorch twin of the task `gqa_decode_step_smollm2_360m`.

SmolLM2-360M, model.layers.0.self_attn: LlamaAttention (15 query heads, 5 key/value heads,
head_dim 64), one decoding step with a KV cache of 1023 tokens (eager attention) (transformers
LlamaAttention (HuggingFaceTB/SmolLM2-360M)).
One decoding step of SmolLM2-360M attention at position 1023: q/k/v projections 960 -> 960, 320,
320, rotary embedding (cos/sin inputs), cache append (1023 past tokens), 15 query heads over 5
key/value heads, softmax attention, output projection.
"""

import torch
import torch.nn as nn


def rotate_half(x):
    """Rotates half the hidden dims of the input."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def repeat_kv(hidden_states, n_rep):
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.head_dim = 64
        self.num_key_value_groups = 3
        self.scaling = self.head_dim ** -0.5
        self.q_proj = nn.Linear(960, 960, bias=False)
        self.k_proj = nn.Linear(960, 320, bias=False)
        self.v_proj = nn.Linear(960, 320, bias=False)
        self.o_proj = nn.Linear(960, 960, bias=False)

    def forward(self, hidden_states, cos, sin, past_key, past_value):
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, self.head_dim)
        query_states = self.q_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)
        # DynamicCache.update: append this step's key and value
        key_states = torch.cat([past_key, key_states], dim=-2)
        value_states = torch.cat([past_value, value_states], dim=-2)
        # eager_attention_forward (no mask for a single new token)
        key_states = repeat_kv(key_states, self.num_key_value_groups)
        value_states = repeat_kv(value_states, self.num_key_value_groups)
        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) * self.scaling
        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query_states.dtype)
        attn_output = torch.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose(1, 2).contiguous()
        attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        return self.o_proj(attn_output)


def get_inputs():
    return [
        torch.empty(1, 1, 960).normal_(0, 1),
        torch.empty(1, 1, 64).uniform_(-1, 1),
        torch.empty(1, 1, 64).uniform_(-1, 1),
        torch.empty(1, 5, 1023, 64).normal_(0, 1),
        torch.empty(1, 5, 1023, 64).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
