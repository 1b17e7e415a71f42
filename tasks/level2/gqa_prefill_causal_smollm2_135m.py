"""PyTorch twin of the task `gqa_prefill_causal_smollm2_135m`.

SmolLM2-135M, model.layers.0.self_attn: LlamaAttention (9 query heads, 3 key/value heads,
head_dim 64), prefill with the causal mask (eager attention) (transformers LlamaAttention
(HuggingFaceTB/SmolLM2-135M)).
Self-attention of a 128-token prefill in SmolLM2-135M: q/k/v projections 576 -> 576, 192, 192,
rotary embedding with the cos/sin tables the model passes in (inputs), repeat_kv of the 3
key/value heads to 9 (expand), scaled scores plus the causal mask (the model's
torch.finfo(float32).min above the diagonal, built here from iota, greater and where), softmax,
weighted values, output projection 576 -> 576.
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
        self.q_proj = nn.Linear(576, 576, bias=False)
        self.k_proj = nn.Linear(576, 192, bias=False)
        self.v_proj = nn.Linear(576, 192, bias=False)
        self.o_proj = nn.Linear(576, 576, bias=False)

    def forward(self, hidden_states, cos, sin):
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, self.head_dim)
        query_states = self.q_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)
        # the causal mask the model builds for a prefill from position 0
        q_len = hidden_states.shape[1]
        causal_mask = torch.full((q_len, q_len), torch.finfo(hidden_states.dtype).min, dtype=hidden_states.dtype, device=hidden_states.device)
        causal_mask = torch.triu(causal_mask, diagonal=1)[None, None, :, :]
        # eager_attention_forward
        key_states = repeat_kv(key_states, self.num_key_value_groups)
        value_states = repeat_kv(value_states, self.num_key_value_groups)
        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) * self.scaling
        attn_weights = attn_weights + causal_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query_states.dtype)
        attn_output = torch.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose(1, 2).contiguous()
        attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        return self.o_proj(attn_output)


def get_inputs():
    return [
        torch.empty(1, 128, 576).normal_(0, 1),
        torch.empty(1, 128, 64).uniform_(-1, 1),
        torch.empty(1, 128, 64).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
