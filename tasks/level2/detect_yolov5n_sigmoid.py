"""PyTorch twin of the task `detect_yolov5n_sigmoid`.

YOLOv5n, model.24 (Detect): Detect(nc=80, anchors=3 per level, ch=(64, 128, 256)): Conv2d 1x1
per level, view(bs, 3, 85, ny, nx).permute(0, 1, 3, 4, 2), sigmoid (ultralytics/yolov5
models/yolo.py).
The YOLOv5n detection head on a 320x320 image: per level (stride 8, 16, 32: 64 channels at
40x40, 128 at 20x20, 256 at 10x10) a 1x1 convolution to 3 anchors x 85 outputs, the view and
permute to [1, 3, ny, nx, 85], and the sigmoid that inference applies before decoding. The box
decoding with the grid and anchor tables (built from arange) is left out.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.na = 3
        self.no = 85
        self.m0 = nn.Conv2d(64, 255, 1)
        self.m1 = nn.Conv2d(128, 255, 1)
        self.m2 = nn.Conv2d(256, 255, 1)

    def forward(self, x0, x1, x2):
        x = [x0, x1, x2]
        z = []
        for i, conv in enumerate((self.m0, self.m1, self.m2)):
            x[i] = conv(x[i])
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            z.append(x[i].sigmoid())
        return tuple(z)


def get_inputs():
    return [
        torch.empty(1, 64, 40, 40).uniform_(-1, 1),
        torch.empty(1, 128, 20, 20).uniform_(-1, 1),
        torch.empty(1, 256, 10, 10).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
