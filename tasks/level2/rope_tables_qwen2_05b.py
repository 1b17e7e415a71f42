"""PyTorch twin of the task `rope_tables_qwen2_05b`.

Qwen2-0.5B, model.rotary_emb + apply_rotary_pos_emb: Qwen2RotaryEmbedding (rope_theta 1e6,
default rope) and apply_rotary_pos_emb (transformers modeling_qwen2 (Qwen/Qwen2-0.5B)).
Rotary position embedding of a 256-token prefill computed from scratch: inverse frequencies 1 /
1e6^(2i/64), positions 0..255 (iota), their outer product, cos and sin of the doubled table, and
the rotation of the 14 query and 2 key heads (rotate_half). The twin computes the frequencies in
the input dtype (transformers uses float32).
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


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.base = 1000000.0
        self.dim = 64

    def forward(self, q, k):
        # Qwen2RotaryEmbedding (default rope, attention_scaling 1.0)
        inv_freq = 1.0 / (self.base ** (torch.arange(0, self.dim, 2, dtype=torch.int64).to(device=q.device, dtype=q.dtype) / self.dim))
        position_ids = torch.arange(q.shape[2], device=q.device)[None, :]
        inv_freq_expanded = inv_freq[None, :, None].expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].to(q.dtype)
        freqs = (inv_freq_expanded @ position_ids_expanded).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        return apply_rotary_pos_emb(q, k, cos, sin)


def get_inputs():
    return [
        torch.empty(1, 14, 256, 64).uniform_(-1, 1),
        torch.empty(1, 2, 256, 64).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
