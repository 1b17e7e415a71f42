"""PyTorch twin of the task `mobilevit_block_xs_stage4`.

MobileViT-XS, stages.4.1: timm MobileVitBlock(96, 96, transformer_dim=144, transformer_depth=3,
patch_size=2, num_heads=4) (timm mobilevit_xs).
The last MobileViT block of MobileViT-XS on a 256x256 image (96 channels at 8x8): local 3x3
convolution, 1x1 projection to 144, 2x2 patches (4 sequences of 16 tokens), three transformer
layers (4 heads, SiLU MLP 144 -> 288 -> 144), folding, projection to 96, concatenation and the
3x3 fusion convolution.
"""

import torch
import torch.nn as nn


def attention(x, qkv, proj, num_heads):
    """timm Attention.forward, non-fused path."""
    B, N, C = x.shape
    head_dim = C // num_heads
    qkv = qkv(x).reshape(B, N, 3, num_heads, head_dim).permute(2, 0, 3, 1, 4)
    q, k, v = qkv.unbind(0)
    q = q * head_dim ** -0.5
    attn = q @ k.transpose(-2, -1)
    attn = attn.softmax(dim=-1)
    x = attn @ v
    x = x.transpose(1, 2).reshape(B, N, C)
    return proj(x)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.depth = 3
        self.num_heads = 4
        self.act = nn.SiLU(inplace=True)
        self.conv_kxk_conv = nn.Conv2d(96, 96, 3, padding=1, bias=False)
        self.conv_kxk_bn = nn.BatchNorm2d(96)
        self.conv_1x1 = nn.Conv2d(96, 144, 1, bias=False)
        self.t0_norm1 = nn.LayerNorm(144)
        self.t0_attn_qkv = nn.Linear(144, 432)
        self.t0_attn_proj = nn.Linear(144, 144)
        self.t0_norm2 = nn.LayerNorm(144)
        self.t0_mlp_fc1 = nn.Linear(144, 288)
        self.t0_mlp_fc2 = nn.Linear(288, 144)
        self.t1_norm1 = nn.LayerNorm(144)
        self.t1_attn_qkv = nn.Linear(144, 432)
        self.t1_attn_proj = nn.Linear(144, 144)
        self.t1_norm2 = nn.LayerNorm(144)
        self.t1_mlp_fc1 = nn.Linear(144, 288)
        self.t1_mlp_fc2 = nn.Linear(288, 144)
        self.t2_norm1 = nn.LayerNorm(144)
        self.t2_attn_qkv = nn.Linear(144, 432)
        self.t2_attn_proj = nn.Linear(144, 144)
        self.t2_norm2 = nn.LayerNorm(144)
        self.t2_mlp_fc1 = nn.Linear(144, 288)
        self.t2_mlp_fc2 = nn.Linear(288, 144)
        self.norm = nn.LayerNorm(144)
        self.conv_proj_conv = nn.Conv2d(144, 96, 1, bias=False)
        self.conv_proj_bn = nn.BatchNorm2d(96)
        self.conv_fusion_conv = nn.Conv2d(192, 96, 3, padding=1, bias=False)
        self.conv_fusion_bn = nn.BatchNorm2d(96)

    def forward(self, x):
        def mlp(i, v):
            v = getattr(self, f"t{i}_mlp_fc1")(v)
            v = nn.functional.silu(v)
            return getattr(self, f"t{i}_mlp_fc2")(v)

        shortcut = x
        # local representation
        x = self.act(self.conv_kxk_bn(self.conv_kxk_conv(x)))
        x = self.conv_1x1(x)
        # unfold (feature map -> patches)
        patch_h, patch_w = 2, 2
        B, C, H, W = x.shape
        num_patch_h, num_patch_w = H // patch_h, W // patch_w
        num_patches = num_patch_h * num_patch_w
        patch_area = patch_h * patch_w
        x = x.reshape(B * C * num_patch_h, patch_h, num_patch_w, patch_w).transpose(1, 2)
        x = x.reshape(B, C, num_patches, patch_area).transpose(1, 3).reshape(B * patch_area, num_patches, -1)
        # global representations (timm vision transformer Blocks with SiLU MLPs)
        for i in range(self.depth):
            x = x + attention(getattr(self, f"t{i}_norm1")(x), getattr(self, f"t{i}_attn_qkv"),
                              getattr(self, f"t{i}_attn_proj"), self.num_heads)
            x = x + mlp(i, getattr(self, f"t{i}_norm2")(x))
        x = self.norm(x)
        # fold (patches -> feature map)
        x = x.contiguous().view(B, patch_area, num_patches, -1)
        x = x.transpose(1, 3).reshape(B * C * num_patch_h, num_patch_w, patch_h, patch_w)
        x = x.transpose(1, 2).reshape(B, C, num_patch_h * patch_h, num_patch_w * patch_w)
        x = self.act(self.conv_proj_bn(self.conv_proj_conv(x)))
        return self.act(self.conv_fusion_bn(self.conv_fusion_conv(torch.cat((shortcut, x), dim=1))))


def get_inputs():
    return [
        torch.empty(1, 96, 8, 8).uniform_(-0.5, 2),
    ]


def get_init_inputs():
    return []
