"""PyTorch twin of the task `convnext_atto_160`.

ConvNeXt-Atto, full model: timm ConvNeXt (convnext_atto: depths (2, 2, 6, 2), dims (40, 80, 160,
320), conv_mlp=True): stem (4x4 patchify conv, LayerNorm2d), 4 stages, head (global pool,
LayerNorm2d, fc) (timm convnext_atto).
The whole ConvNeXt-Atto, batch 1, inference form (drop path as identity). The input is reduced
from 224x224 to 160x160 (1.1 to 0.56 GFLOP) for the f64 reference; channels are the model's and
the stages run at 40, 20, 10 and 5 pixels. LayerNorm2d (eps 1e-6) normalises over channels via
permutes; the trained layer scales are drawn from [0.1, 1]. The output is the 1000 class logits.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.stages_0_blocks_0_gamma = nn.Parameter(torch.empty(40))
        self.stages_0_blocks_1_gamma = nn.Parameter(torch.empty(40))
        self.stages_1_blocks_0_gamma = nn.Parameter(torch.empty(80))
        self.stages_1_blocks_1_gamma = nn.Parameter(torch.empty(80))
        self.stages_2_blocks_0_gamma = nn.Parameter(torch.empty(160))
        self.stages_2_blocks_1_gamma = nn.Parameter(torch.empty(160))
        self.stages_2_blocks_2_gamma = nn.Parameter(torch.empty(160))
        self.stages_2_blocks_3_gamma = nn.Parameter(torch.empty(160))
        self.stages_2_blocks_4_gamma = nn.Parameter(torch.empty(160))
        self.stages_2_blocks_5_gamma = nn.Parameter(torch.empty(160))
        self.stages_3_blocks_0_gamma = nn.Parameter(torch.empty(320))
        self.stages_3_blocks_1_gamma = nn.Parameter(torch.empty(320))
        self.stem_0 = nn.Conv2d(3, 40, 4, stride=4)
        self.stem_1 = nn.LayerNorm(40, eps=1e-06)
        self.stages_0_blocks_0_conv_dw = nn.Conv2d(40, 40, 7, padding=3, groups=40)
        self.stages_0_blocks_0_norm = nn.LayerNorm(40, eps=1e-06)
        self.stages_0_blocks_0_mlp_fc1 = nn.Conv2d(40, 160, 1)
        self.stages_0_blocks_0_mlp_fc2 = nn.Conv2d(160, 40, 1)
        self.stages_0_blocks_1_conv_dw = nn.Conv2d(40, 40, 7, padding=3, groups=40)
        self.stages_0_blocks_1_norm = nn.LayerNorm(40, eps=1e-06)
        self.stages_0_blocks_1_mlp_fc1 = nn.Conv2d(40, 160, 1)
        self.stages_0_blocks_1_mlp_fc2 = nn.Conv2d(160, 40, 1)
        self.stages_1_downsample_0 = nn.LayerNorm(40, eps=1e-06)
        self.stages_1_downsample_1 = nn.Conv2d(40, 80, 2, stride=2)
        self.stages_1_blocks_0_conv_dw = nn.Conv2d(80, 80, 7, padding=3, groups=80)
        self.stages_1_blocks_0_norm = nn.LayerNorm(80, eps=1e-06)
        self.stages_1_blocks_0_mlp_fc1 = nn.Conv2d(80, 320, 1)
        self.stages_1_blocks_0_mlp_fc2 = nn.Conv2d(320, 80, 1)
        self.stages_1_blocks_1_conv_dw = nn.Conv2d(80, 80, 7, padding=3, groups=80)
        self.stages_1_blocks_1_norm = nn.LayerNorm(80, eps=1e-06)
        self.stages_1_blocks_1_mlp_fc1 = nn.Conv2d(80, 320, 1)
        self.stages_1_blocks_1_mlp_fc2 = nn.Conv2d(320, 80, 1)
        self.stages_2_downsample_0 = nn.LayerNorm(80, eps=1e-06)
        self.stages_2_downsample_1 = nn.Conv2d(80, 160, 2, stride=2)
        self.stages_2_blocks_0_conv_dw = nn.Conv2d(160, 160, 7, padding=3, groups=160)
        self.stages_2_blocks_0_norm = nn.LayerNorm(160, eps=1e-06)
        self.stages_2_blocks_0_mlp_fc1 = nn.Conv2d(160, 640, 1)
        self.stages_2_blocks_0_mlp_fc2 = nn.Conv2d(640, 160, 1)
        self.stages_2_blocks_1_conv_dw = nn.Conv2d(160, 160, 7, padding=3, groups=160)
        self.stages_2_blocks_1_norm = nn.LayerNorm(160, eps=1e-06)
        self.stages_2_blocks_1_mlp_fc1 = nn.Conv2d(160, 640, 1)
        self.stages_2_blocks_1_mlp_fc2 = nn.Conv2d(640, 160, 1)
        self.stages_2_blocks_2_conv_dw = nn.Conv2d(160, 160, 7, padding=3, groups=160)
        self.stages_2_blocks_2_norm = nn.LayerNorm(160, eps=1e-06)
        self.stages_2_blocks_2_mlp_fc1 = nn.Conv2d(160, 640, 1)
        self.stages_2_blocks_2_mlp_fc2 = nn.Conv2d(640, 160, 1)
        self.stages_2_blocks_3_conv_dw = nn.Conv2d(160, 160, 7, padding=3, groups=160)
        self.stages_2_blocks_3_norm = nn.LayerNorm(160, eps=1e-06)
        self.stages_2_blocks_3_mlp_fc1 = nn.Conv2d(160, 640, 1)
        self.stages_2_blocks_3_mlp_fc2 = nn.Conv2d(640, 160, 1)
        self.stages_2_blocks_4_conv_dw = nn.Conv2d(160, 160, 7, padding=3, groups=160)
        self.stages_2_blocks_4_norm = nn.LayerNorm(160, eps=1e-06)
        self.stages_2_blocks_4_mlp_fc1 = nn.Conv2d(160, 640, 1)
        self.stages_2_blocks_4_mlp_fc2 = nn.Conv2d(640, 160, 1)
        self.stages_2_blocks_5_conv_dw = nn.Conv2d(160, 160, 7, padding=3, groups=160)
        self.stages_2_blocks_5_norm = nn.LayerNorm(160, eps=1e-06)
        self.stages_2_blocks_5_mlp_fc1 = nn.Conv2d(160, 640, 1)
        self.stages_2_blocks_5_mlp_fc2 = nn.Conv2d(640, 160, 1)
        self.stages_3_downsample_0 = nn.LayerNorm(160, eps=1e-06)
        self.stages_3_downsample_1 = nn.Conv2d(160, 320, 2, stride=2)
        self.stages_3_blocks_0_conv_dw = nn.Conv2d(320, 320, 7, padding=3, groups=320)
        self.stages_3_blocks_0_norm = nn.LayerNorm(320, eps=1e-06)
        self.stages_3_blocks_0_mlp_fc1 = nn.Conv2d(320, 1280, 1)
        self.stages_3_blocks_0_mlp_fc2 = nn.Conv2d(1280, 320, 1)
        self.stages_3_blocks_1_conv_dw = nn.Conv2d(320, 320, 7, padding=3, groups=320)
        self.stages_3_blocks_1_norm = nn.LayerNorm(320, eps=1e-06)
        self.stages_3_blocks_1_mlp_fc1 = nn.Conv2d(320, 1280, 1)
        self.stages_3_blocks_1_mlp_fc2 = nn.Conv2d(1280, 320, 1)
        self.head_norm = nn.LayerNorm(320, eps=1e-06)
        self.head_fc = nn.Linear(320, 1000)

    def forward(self, x):
        stem = self.stem_1(self.stem_0(x).permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        stages_0_blocks_0_norm = self.stages_0_blocks_0_norm(self.stages_0_blocks_0_conv_dw(stem).permute(0, 2, 3, 1))
        stages_0_blocks_0_mlp_fc1 = self.stages_0_blocks_0_mlp_fc1(stages_0_blocks_0_norm.permute(0, 3, 1, 2))
        stages_0_blocks_0_layer_scale = self.stages_0_blocks_0_mlp_fc2(F.gelu(stages_0_blocks_0_mlp_fc1)).mul(self.stages_0_blocks_0_gamma.reshape(1, -1, 1, 1))
        stages_0_blocks_0 = stages_0_blocks_0_layer_scale + stem
        stages_0_blocks_1_norm = self.stages_0_blocks_1_norm(self.stages_0_blocks_1_conv_dw(stages_0_blocks_0).permute(0, 2, 3, 1))
        stages_0_blocks_1_mlp_fc1 = self.stages_0_blocks_1_mlp_fc1(stages_0_blocks_1_norm.permute(0, 3, 1, 2))
        stages_0_blocks_1_layer_scale = self.stages_0_blocks_1_mlp_fc2(F.gelu(stages_0_blocks_1_mlp_fc1)).mul(self.stages_0_blocks_1_gamma.reshape(1, -1, 1, 1))
        stages_0_blocks_1 = stages_0_blocks_1_layer_scale + stages_0_blocks_0
        stages_1_downsample_0_nchw = self.stages_1_downsample_0(stages_0_blocks_1.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        stages_1_downsample = self.stages_1_downsample_1(stages_1_downsample_0_nchw)
        stages_1_blocks_0_norm = self.stages_1_blocks_0_norm(self.stages_1_blocks_0_conv_dw(stages_1_downsample).permute(0, 2, 3, 1))
        stages_1_blocks_0_mlp_fc1 = self.stages_1_blocks_0_mlp_fc1(stages_1_blocks_0_norm.permute(0, 3, 1, 2))
        stages_1_blocks_0_layer_scale = self.stages_1_blocks_0_mlp_fc2(F.gelu(stages_1_blocks_0_mlp_fc1)).mul(self.stages_1_blocks_0_gamma.reshape(1, -1, 1, 1))
        stages_1_blocks_0 = stages_1_blocks_0_layer_scale + stages_1_downsample
        stages_1_blocks_1_norm = self.stages_1_blocks_1_norm(self.stages_1_blocks_1_conv_dw(stages_1_blocks_0).permute(0, 2, 3, 1))
        stages_1_blocks_1_mlp_fc1 = self.stages_1_blocks_1_mlp_fc1(stages_1_blocks_1_norm.permute(0, 3, 1, 2))
        stages_1_blocks_1_layer_scale = self.stages_1_blocks_1_mlp_fc2(F.gelu(stages_1_blocks_1_mlp_fc1)).mul(self.stages_1_blocks_1_gamma.reshape(1, -1, 1, 1))
        stages_1_blocks_1 = stages_1_blocks_1_layer_scale + stages_1_blocks_0
        stages_2_downsample_0_nchw = self.stages_2_downsample_0(stages_1_blocks_1.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        stages_2_downsample = self.stages_2_downsample_1(stages_2_downsample_0_nchw)
        stages_2_blocks_0_norm = self.stages_2_blocks_0_norm(self.stages_2_blocks_0_conv_dw(stages_2_downsample).permute(0, 2, 3, 1))
        stages_2_blocks_0_mlp_fc1 = self.stages_2_blocks_0_mlp_fc1(stages_2_blocks_0_norm.permute(0, 3, 1, 2))
        stages_2_blocks_0_layer_scale = self.stages_2_blocks_0_mlp_fc2(F.gelu(stages_2_blocks_0_mlp_fc1)).mul(self.stages_2_blocks_0_gamma.reshape(1, -1, 1, 1))
        stages_2_blocks_0 = stages_2_blocks_0_layer_scale + stages_2_downsample
        stages_2_blocks_1_norm = self.stages_2_blocks_1_norm(self.stages_2_blocks_1_conv_dw(stages_2_blocks_0).permute(0, 2, 3, 1))
        stages_2_blocks_1_mlp_fc1 = self.stages_2_blocks_1_mlp_fc1(stages_2_blocks_1_norm.permute(0, 3, 1, 2))
        stages_2_blocks_1_layer_scale = self.stages_2_blocks_1_mlp_fc2(F.gelu(stages_2_blocks_1_mlp_fc1)).mul(self.stages_2_blocks_1_gamma.reshape(1, -1, 1, 1))
        stages_2_blocks_1 = stages_2_blocks_1_layer_scale + stages_2_blocks_0
        stages_2_blocks_2_norm = self.stages_2_blocks_2_norm(self.stages_2_blocks_2_conv_dw(stages_2_blocks_1).permute(0, 2, 3, 1))
        stages_2_blocks_2_mlp_fc1 = self.stages_2_blocks_2_mlp_fc1(stages_2_blocks_2_norm.permute(0, 3, 1, 2))
        stages_2_blocks_2_layer_scale = self.stages_2_blocks_2_mlp_fc2(F.gelu(stages_2_blocks_2_mlp_fc1)).mul(self.stages_2_blocks_2_gamma.reshape(1, -1, 1, 1))
        stages_2_blocks_2 = stages_2_blocks_2_layer_scale + stages_2_blocks_1
        stages_2_blocks_3_norm = self.stages_2_blocks_3_norm(self.stages_2_blocks_3_conv_dw(stages_2_blocks_2).permute(0, 2, 3, 1))
        stages_2_blocks_3_mlp_fc1 = self.stages_2_blocks_3_mlp_fc1(stages_2_blocks_3_norm.permute(0, 3, 1, 2))
        stages_2_blocks_3_layer_scale = self.stages_2_blocks_3_mlp_fc2(F.gelu(stages_2_blocks_3_mlp_fc1)).mul(self.stages_2_blocks_3_gamma.reshape(1, -1, 1, 1))
        stages_2_blocks_3 = stages_2_blocks_3_layer_scale + stages_2_blocks_2
        stages_2_blocks_4_norm = self.stages_2_blocks_4_norm(self.stages_2_blocks_4_conv_dw(stages_2_blocks_3).permute(0, 2, 3, 1))
        stages_2_blocks_4_mlp_fc1 = self.stages_2_blocks_4_mlp_fc1(stages_2_blocks_4_norm.permute(0, 3, 1, 2))
        stages_2_blocks_4_layer_scale = self.stages_2_blocks_4_mlp_fc2(F.gelu(stages_2_blocks_4_mlp_fc1)).mul(self.stages_2_blocks_4_gamma.reshape(1, -1, 1, 1))
        stages_2_blocks_4 = stages_2_blocks_4_layer_scale + stages_2_blocks_3
        stages_2_blocks_5_norm = self.stages_2_blocks_5_norm(self.stages_2_blocks_5_conv_dw(stages_2_blocks_4).permute(0, 2, 3, 1))
        stages_2_blocks_5_mlp_fc1 = self.stages_2_blocks_5_mlp_fc1(stages_2_blocks_5_norm.permute(0, 3, 1, 2))
        stages_2_blocks_5_layer_scale = self.stages_2_blocks_5_mlp_fc2(F.gelu(stages_2_blocks_5_mlp_fc1)).mul(self.stages_2_blocks_5_gamma.reshape(1, -1, 1, 1))
        stages_2_blocks_5 = stages_2_blocks_5_layer_scale + stages_2_blocks_4
        stages_3_downsample_0_nchw = self.stages_3_downsample_0(stages_2_blocks_5.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        stages_3_downsample = self.stages_3_downsample_1(stages_3_downsample_0_nchw)
        stages_3_blocks_0_norm = self.stages_3_blocks_0_norm(self.stages_3_blocks_0_conv_dw(stages_3_downsample).permute(0, 2, 3, 1))
        stages_3_blocks_0_mlp_fc1 = self.stages_3_blocks_0_mlp_fc1(stages_3_blocks_0_norm.permute(0, 3, 1, 2))
        stages_3_blocks_0_layer_scale = self.stages_3_blocks_0_mlp_fc2(F.gelu(stages_3_blocks_0_mlp_fc1)).mul(self.stages_3_blocks_0_gamma.reshape(1, -1, 1, 1))
        stages_3_blocks_0 = stages_3_blocks_0_layer_scale + stages_3_downsample
        stages_3_blocks_1_norm = self.stages_3_blocks_1_norm(self.stages_3_blocks_1_conv_dw(stages_3_blocks_0).permute(0, 2, 3, 1))
        stages_3_blocks_1_mlp_fc1 = self.stages_3_blocks_1_mlp_fc1(stages_3_blocks_1_norm.permute(0, 3, 1, 2))
        stages_3_blocks_1_layer_scale = self.stages_3_blocks_1_mlp_fc2(F.gelu(stages_3_blocks_1_mlp_fc1)).mul(self.stages_3_blocks_1_gamma.reshape(1, -1, 1, 1))
        stages_3_blocks_1 = stages_3_blocks_1_layer_scale + stages_3_blocks_0
        head_norm = self.head_norm(F.adaptive_avg_pool2d(stages_3_blocks_1, 1).permute(0, 2, 3, 1))
        head_fc = self.head_fc(torch.flatten(head_norm.permute(0, 3, 1, 2), 1))
        return head_fc


def get_inputs():
    return [
        torch.empty(1, 3, 160, 160).uniform_(-1.0, 1.0),
    ]


def get_init_inputs():
    return []
