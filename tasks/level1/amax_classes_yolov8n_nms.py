"""PyTorch twin of the task `amax_classes_yolov8n_nms`.

YOLOv8n, non_max_suppression (xc = prediction[:, 4:mi].amax(1) > conf_thres): torch.Tensor.amax
(ultralytics ultralytics/utils/ops.py).
The best class score of each of the 33600 candidate boxes of a 1280x1280 image (ultralytics' large
input for small objects, 160x160 + 80x80 + 40x40 = 33600 candidates), before the confidence
threshold of NMS: rows 4..83 of the [4 box + 80 class] x 33600 prediction, maximum over the class
axis.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, nc):
        super().__init__()
        self.nc = nc

    def forward(self, prediction):
        mi = 4 + self.nc  # mask start index
        return prediction[:, 4:mi].amax(1)


def get_inputs():
    return [
        torch.empty(1, 84, 33600).uniform_(0, 1),
    ]


def get_init_inputs():
    return [80]
