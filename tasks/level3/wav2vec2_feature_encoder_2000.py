"""PyTorch twin of the task `wav2vec2_feature_encoder_2000`.

wav2vec2-base, feature_extractor, feature_projection: transformers Wav2Vec2FeatureEncoder (7
Conv1d of 512 channels, kernels 10, 3, 3, 3, 3, 2, 2, strides 5, 2, 2, 2, 2, 2, 2, no bias;
GroupNorm(512, 512) after the first; GELU) + Wav2Vec2FeatureProjection (LayerNorm(512),
Linear(512, 768)) (transformers Wav2Vec2Model (facebook/wav2vec2-base)).
The convolutional front end of wav2vec2-base and its feature projection on a 125 ms chunk of 16
kHz audio (2000 samples, normalised to normal(0, 1) as the feature extractor does), batch 1:
399, 199, 99, 49, 24, 12 and 6 frames after the seven convolutions, GroupNorm with one group per
channel over time, and 6 projected frames of 768. Conv1d is written as 1xK conv2d on a [1, C, 1,
L] view; weights are drawn as wav2vec2 initialises them (kaiming, bound sqrt(6 / fan_in)). The
output is the projected features (dropout as identity).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.feature_extractor_conv_layers_0_conv_weight = nn.Parameter(torch.empty(512, 1, 10))
        self.feature_extractor_conv_layers_1_conv_weight = nn.Parameter(torch.empty(512, 512, 3))
        self.feature_extractor_conv_layers_2_conv_weight = nn.Parameter(torch.empty(512, 512, 3))
        self.feature_extractor_conv_layers_3_conv_weight = nn.Parameter(torch.empty(512, 512, 3))
        self.feature_extractor_conv_layers_4_conv_weight = nn.Parameter(torch.empty(512, 512, 3))
        self.feature_extractor_conv_layers_5_conv_weight = nn.Parameter(torch.empty(512, 512, 2))
        self.feature_extractor_conv_layers_6_conv_weight = nn.Parameter(torch.empty(512, 512, 2))
        self.feature_extractor_conv_layers_0_layer_norm = nn.GroupNorm(512, 512)
        self.feature_projection_layer_norm = nn.LayerNorm(512)
        self.feature_projection_projection = nn.Linear(512, 768)

    def forward(self, input_values):
        hidden_states = input_values[:, None]
        hidden_states = self.feature_extractor_conv_layers_0_layer_norm(F.conv1d(hidden_states, self.feature_extractor_conv_layers_0_conv_weight, stride=5))
        hidden_states = F.gelu(hidden_states)
        hidden_states = F.conv1d(hidden_states, self.feature_extractor_conv_layers_1_conv_weight, stride=2)
        hidden_states = F.gelu(hidden_states)
        hidden_states = F.conv1d(hidden_states, self.feature_extractor_conv_layers_2_conv_weight, stride=2)
        hidden_states = F.gelu(hidden_states)
        hidden_states = F.conv1d(hidden_states, self.feature_extractor_conv_layers_3_conv_weight, stride=2)
        hidden_states = F.gelu(hidden_states)
        hidden_states = F.conv1d(hidden_states, self.feature_extractor_conv_layers_4_conv_weight, stride=2)
        hidden_states = F.gelu(hidden_states)
        hidden_states = F.conv1d(hidden_states, self.feature_extractor_conv_layers_5_conv_weight, stride=2)
        hidden_states = F.gelu(hidden_states)
        hidden_states = F.conv1d(hidden_states, self.feature_extractor_conv_layers_6_conv_weight, stride=2)
        hidden_states = F.gelu(hidden_states)
        hidden_states = hidden_states.transpose(1, 2)
        norm_hidden_states = self.feature_projection_layer_norm(hidden_states)
        feature_projection_projection = self.feature_projection_projection(norm_hidden_states)
        return feature_projection_projection


def get_inputs():
    return [
        torch.empty(1, 2000).normal_(0.0, 1.0),
    ]


def get_init_inputs():
    return []
