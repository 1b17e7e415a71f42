"""PyTorch twin of the task `dfl_decode_yolov8n_640`.

YOLOv8n, model.22 (Detect._inference): Detect._inference: concatenated level outputs, split into
box (64) and class (80) channels, DFL(16), make_anchors, dist2bbox(xywh=True) * strides,
cls.sigmoid() (ultralytics/ultralytics ultralytics/nn/modules/head.py).
Box decoding of the YOLOv8n detection head on a 640x640 image: the three level outputs (144
channels at 80x80, 40x40, 20x20) are flattened and concatenated to 8400 anchors, split into 4x16
distance bins and 80 class logits; DFL takes the softmax over the 16 bins and their expectation
(a 1x1 convolution with the arange(16) weight, built from iota); dist2bbox turns the left-
top/right-bottom distances around the anchor points (grid cell centres from iota, as
make_anchors builds them) into centre and size, scaled by the level strides 8, 16, 32; the class
scores pass a sigmoid. Inputs are raw head logits, normal(0, 2).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x0, x1, x2):
        x0_flat = x0.view(1, 144, -1)
        x1_flat = x1.view(1, 144, -1)
        x2_flat = x2.view(1, 144, -1)
        x_cat = torch.cat([x0_flat, x1_flat, x2_flat], 2)
        sx0_i = torch.arange(80, dtype=x0.dtype, device=x0.device)
        sy0_i = torch.arange(80, dtype=x0.dtype, device=x0.device)
        sx0_f = sx0_i
        sy0_f = sy0_i
        offset0 = 0.5
        sx0 = sx0_f + offset0
        sy0 = sy0_f + offset0
        ax0 = torch.meshgrid(sy0, sx0, indexing="ij")[1].reshape(1, -1)
        ay0 = torch.meshgrid(sy0, sx0, indexing="ij")[0].reshape(1, -1)
        stride0 = torch.full((1, 6400), 8.0, dtype=x0.dtype, device=x0.device)
        sx1_i = torch.arange(40, dtype=x0.dtype, device=x0.device)
        sy1_i = torch.arange(40, dtype=x0.dtype, device=x0.device)
        sx1_f = sx1_i
        sy1_f = sy1_i
        offset1 = 0.5
        sx1 = sx1_f + offset1
        sy1 = sy1_f + offset1
        ax1 = torch.meshgrid(sy1, sx1, indexing="ij")[1].reshape(1, -1)
        ay1 = torch.meshgrid(sy1, sx1, indexing="ij")[0].reshape(1, -1)
        stride1 = torch.full((1, 1600), 16.0, dtype=x0.dtype, device=x0.device)
        sx2_i = torch.arange(20, dtype=x0.dtype, device=x0.device)
        sy2_i = torch.arange(20, dtype=x0.dtype, device=x0.device)
        sx2_f = sx2_i
        sy2_f = sy2_i
        offset2 = 0.5
        sx2 = sx2_f + offset2
        sy2 = sy2_f + offset2
        ax2 = torch.meshgrid(sy2, sx2, indexing="ij")[1].reshape(1, -1)
        ay2 = torch.meshgrid(sy2, sx2, indexing="ij")[0].reshape(1, -1)
        stride2 = torch.full((1, 400), 32.0, dtype=x0.dtype, device=x0.device)
        anchor_x = torch.cat([ax0, ax1, ax2], 1)
        anchor_y = torch.cat([ay0, ay1, ay2], 1)
        anchors = torch.cat([anchor_x, anchor_y], 0)
        strides = torch.cat([stride0, stride1, stride2], 1)
        box = x_cat[:, 0:64]
        cls = x_cat[:, 64:144]
        box_view = box.view(1, 4, 16, 8400)
        box_t = box_view.transpose(2, 1)
        box_softmax = box_t.softmax(1)
        dfl_weight_i = torch.arange(16, dtype=box_softmax.dtype, device=box_softmax.device).view(1, 16, 1, 1)
        dfl_weight = dfl_weight_i
        dfl_conv = F.conv2d(box_softmax, dfl_weight)
        dist = dfl_conv.view(1, 4, 8400)
        lt = dist[:, 0:2]
        rb = dist[:, 2:4]
        anchor_points = anchors.unsqueeze(0)
        x1y1 = anchor_points - lt
        x2y2 = anchor_points + rb
        xy_sum = x1y1 + x2y2
        two = 2
        c_xy = xy_sum / two
        wh = x2y2 - x1y1
        bbox = torch.cat([c_xy, wh], 1)
        dbox = bbox * strides
        cls_sigmoid = torch.sigmoid(cls)
        y = torch.cat([dbox, cls_sigmoid], 1)
        return y


def get_inputs():
    return [
        torch.empty(1, 144, 80, 80).normal_(0, 2),
        torch.empty(1, 144, 40, 40).normal_(0, 2),
        torch.empty(1, 144, 20, 20).normal_(0, 2),
    ]


def get_init_inputs():
    return []
