"""PyTorch twin of the task `cumsum_box_filter_guided_filter`.

Guided filter (DeepGuidedFilter), BoxFilter.forward (x.cumsum(dim=2)): torch.Tensor.cumsum
(wuhuikai/DeepGuidedFilter
GuidedFilteringLayer/GuidedFilter_PyTorch/guided_filter_pytorch/box_filter.py).
The vertical running sum of the box filter's integral image, on a 720p RGB guide image in [0, 1]: a
scan down the 720 rows of each column (a strided axis).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.cumsum(dim=2)


def get_inputs():
    return [
        torch.empty(1, 3, 720, 1280).uniform_(0, 1),
    ]


def get_init_inputs():
    return []
