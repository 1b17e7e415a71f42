"""PyTorch twin of the task `conv1d_k10_s5_wav2vec2_feature_stem`.

wav2vec2-base (facebook/wav2vec2-base), feature_extractor.conv_layers.0.conv: torch.nn.Conv1d(1,
512, kernel_size=10, stride=5, bias=False) (transformers Wav2Vec2GroupNormConvLayer).
The first convolution of the waveform feature encoder on one second of 16 kHz audio (normalised to
zero mean and unit variance): 16000 samples -> 512 channels x 3199 frames, kernel 10, stride 5. A
1-D convolution is a 2-D one over a height-1 image: the graph reshapes the input to [1,1,1,16000]
and the [512,1,10] weight to [512,1,1,10].
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super().__init__()
        # The parameter of nn.Conv1d(1, 512, kernel_size=10, stride=5, bias=False), applied functionally.
        self.weight = nn.Parameter(torch.empty(out_channels, in_channels, kernel_size))
        self.stride = stride

    def forward(self, x):
        return F.conv1d(x, self.weight, stride=self.stride)


def get_inputs():
    return [
        torch.empty(1, 1, 16000).normal_(0.0, 1.0),
    ]


def get_init_inputs():
    return [1, 512, 10, 5]
