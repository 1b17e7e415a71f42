"""PyTorch twin of the task `detect_decode_yolov5n`.

YOLOv5n, model.24 (Detect, inference): Detect(nc=80, 3 anchors per level, ch=(64, 128, 256)) in
inference: conv, view/permute, sigmoid, grid and anchor decoding, concatenation
(ultralytics/yolov5 models/yolo.py).
The whole YOLOv5n detection head at inference on a 320x320 image: per level (stride 8, 16, 32) a
1x1 convolution to 3 x 85, view and permute, sigmoid, box centres (2 sigmoid - 0.5 + cell index
from iota) x stride and sizes (2 sigmoid)^2 x anchor, and the concatenation of the 6300
candidate boxes. The anchors buffer (in grid units) is drawn from [1, 12].
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.na = 3
        self.no = 85
        self.stride = (8.0, 16.0, 32.0)
        self.register_buffer("anchors", torch.empty(3, 3, 2))
        self.m0 = nn.Conv2d(64, 255, 1)
        self.m1 = nn.Conv2d(128, 255, 1)
        self.m2 = nn.Conv2d(256, 255, 1)

    def forward(self, x0, x1, x2):
        def make_grid(nx, ny, i):
            d, dt = self.anchors[i].device, self.anchors[i].dtype
            shape = 1, self.na, ny, nx, 2  # grid shape
            y, x = torch.arange(ny, device=d, dtype=dt), torch.arange(nx, device=d, dtype=dt)
            yv, xv = torch.meshgrid(y, x, indexing="ij")
            grid = torch.stack((xv, yv), 2).expand(shape) - 0.5  # add grid offset, i.e. y = 2.0 * x - 0.5
            anchor_grid = (self.anchors[i] * self.stride[i]).view((1, self.na, 1, 1, 2)).expand(shape)
            return grid, anchor_grid

        x = [x0, x1, x2]
        z = []
        for i, conv in enumerate((self.m0, self.m1, self.m2)):
            x[i] = conv(x[i])
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            grid, anchor_grid = make_grid(nx, ny, i)
            xy, wh, conf = x[i].sigmoid().split((2, 2, self.no - 4), 4)
            xy = (xy * 2 + grid) * self.stride[i]  # xy
            wh = (wh * 2) ** 2 * anchor_grid  # wh
            y = torch.cat((xy, wh, conf), 4)
            z.append(y.view(bs, self.na * nx * ny, self.no))
        return torch.cat(z, 1)


def get_inputs():
    return [
        torch.empty(1, 64, 40, 40).uniform_(-1, 1),
        torch.empty(1, 128, 20, 20).uniform_(-1, 1),
        torch.empty(1, 256, 10, 10).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
