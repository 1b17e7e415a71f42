"""PyTorch twin of the task `pointnet_cls_1024`.

PointNet (classification, feature transform), full model: PointNetCls(k=40,
feature_transform=True): PointNetfeat (STN3d, shared MLP 64, STNkd(64), shared MLP 128, 1024,
max pool) + fc1 512, fc2 256 (BatchNorm1d, ReLU), fc3, log_softmax (fxia22/pointnet.pytorch
pointnet/model.py).
The whole PointNet classifier on one cloud of 1024 points (ModelNet40's usual sampling,
coordinates in [-1, 1]), batch 1, inference form: the input and feature transform nets (shared
1x1 Conv1d MLPs written as matmuls, max over points, fully connected layers, plus the identity
built from iota and equal), batch mmultiplications with the predicted transforms, dropout as
identity. Outputs: the 40 class log-probabilities and the 3x3 and 64x64 transforms.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.feat_stn_conv1_weight = nn.Parameter(torch.empty(64, 3, 1))
        self.feat_stn_conv1_bias = nn.Parameter(torch.empty(64))
        self.feat_stn_conv2_weight = nn.Parameter(torch.empty(128, 64, 1))
        self.feat_stn_conv2_bias = nn.Parameter(torch.empty(128))
        self.feat_stn_conv3_weight = nn.Parameter(torch.empty(1024, 128, 1))
        self.feat_stn_conv3_bias = nn.Parameter(torch.empty(1024))
        self.feat_conv1_weight = nn.Parameter(torch.empty(64, 3, 1))
        self.feat_conv1_bias = nn.Parameter(torch.empty(64))
        self.feat_fstn_conv1_weight = nn.Parameter(torch.empty(64, 64, 1))
        self.feat_fstn_conv1_bias = nn.Parameter(torch.empty(64))
        self.feat_fstn_conv2_weight = nn.Parameter(torch.empty(128, 64, 1))
        self.feat_fstn_conv2_bias = nn.Parameter(torch.empty(128))
        self.feat_fstn_conv3_weight = nn.Parameter(torch.empty(1024, 128, 1))
        self.feat_fstn_conv3_bias = nn.Parameter(torch.empty(1024))
        self.feat_conv2_weight = nn.Parameter(torch.empty(128, 64, 1))
        self.feat_conv2_bias = nn.Parameter(torch.empty(128))
        self.feat_conv3_weight = nn.Parameter(torch.empty(1024, 128, 1))
        self.feat_conv3_bias = nn.Parameter(torch.empty(1024))
        self.feat_stn_bn1 = nn.BatchNorm1d(64)
        self.feat_stn_bn2 = nn.BatchNorm1d(128)
        self.feat_stn_bn3 = nn.BatchNorm1d(1024)
        self.feat_stn_fc1 = nn.Linear(1024, 512)
        self.feat_stn_bn4 = nn.BatchNorm1d(512)
        self.feat_stn_fc2 = nn.Linear(512, 256)
        self.feat_stn_bn5 = nn.BatchNorm1d(256)
        self.feat_stn_fc3 = nn.Linear(256, 9)
        self.feat_bn1 = nn.BatchNorm1d(64)
        self.feat_fstn_bn1 = nn.BatchNorm1d(64)
        self.feat_fstn_bn2 = nn.BatchNorm1d(128)
        self.feat_fstn_bn3 = nn.BatchNorm1d(1024)
        self.feat_fstn_fc1 = nn.Linear(1024, 512)
        self.feat_fstn_bn4 = nn.BatchNorm1d(512)
        self.feat_fstn_fc2 = nn.Linear(512, 256)
        self.feat_fstn_bn5 = nn.BatchNorm1d(256)
        self.feat_fstn_fc3 = nn.Linear(256, 4096)
        self.feat_bn2 = nn.BatchNorm1d(128)
        self.feat_bn3 = nn.BatchNorm1d(1024)
        self.fc1 = nn.Linear(1024, 512)
        self.bn1 = nn.BatchNorm1d(512)
        self.fc2 = nn.Linear(512, 256)
        self.bn2 = nn.BatchNorm1d(256)
        self.fc3 = nn.Linear(256, 40)

    def forward(self, points):
        feat_stn_bn1 = self.feat_stn_bn1(F.conv1d(points, self.feat_stn_conv1_weight, self.feat_stn_conv1_bias))
        feat_stn_conv2 = F.conv1d(F.relu(feat_stn_bn1), self.feat_stn_conv2_weight, self.feat_stn_conv2_bias)
        feat_stn_conv3 = F.conv1d(F.relu(self.feat_stn_bn2(feat_stn_conv2)), self.feat_stn_conv3_weight, self.feat_stn_conv3_bias)
        feat_stn_view = torch.max(F.relu(self.feat_stn_bn3(feat_stn_conv3)), 2, keepdim=True)[0].view(-1, 1024)
        feat_stn_fc2 = self.feat_stn_fc2(F.relu(self.feat_stn_bn4(self.feat_stn_fc1(feat_stn_view))))
        feat_stn_plus_iden = self.feat_stn_fc3(F.relu(self.feat_stn_bn5(feat_stn_fc2))) + torch.eye(3, dtype=points.dtype, device=points.device).flatten()[None, :]
        feat_stn = feat_stn_plus_iden.view(-1, 3, 3)
        feat_input_transform = torch.bmm(points.transpose(2, 1), feat_stn).transpose(2, 1)
        feat_conv1 = F.conv1d(feat_input_transform, self.feat_conv1_weight, self.feat_conv1_bias)
        feat_relu1 = F.relu(self.feat_bn1(feat_conv1))
        feat_fstn_conv1 = F.conv1d(feat_relu1, self.feat_fstn_conv1_weight, self.feat_fstn_conv1_bias)
        feat_fstn_conv2 = F.conv1d(F.relu(self.feat_fstn_bn1(feat_fstn_conv1)), self.feat_fstn_conv2_weight, self.feat_fstn_conv2_bias)
        feat_fstn_conv3 = F.conv1d(F.relu(self.feat_fstn_bn2(feat_fstn_conv2)), self.feat_fstn_conv3_weight, self.feat_fstn_conv3_bias)
        feat_fstn_max = torch.max(F.relu(self.feat_fstn_bn3(feat_fstn_conv3)), 2, keepdim=True)[0]
        feat_fstn_relu4 = F.relu(self.feat_fstn_bn4(self.feat_fstn_fc1(feat_fstn_max.view(-1, 1024))))
        feat_fstn_fc3 = self.feat_fstn_fc3(F.relu(self.feat_fstn_bn5(self.feat_fstn_fc2(feat_fstn_relu4))))
        feat_fstn_plus_iden = feat_fstn_fc3 + torch.eye(64, dtype=feat_relu1.dtype, device=feat_relu1.device).flatten()[None, :]
        feat_fstn = feat_fstn_plus_iden.view(-1, 64, 64)
        feat_feature_transform = torch.bmm(feat_relu1.transpose(2, 1), feat_fstn).transpose(2, 1)
        feat_conv2 = F.conv1d(feat_feature_transform, self.feat_conv2_weight, self.feat_conv2_bias)
        feat_conv3 = F.conv1d(F.relu(self.feat_bn2(feat_conv2)), self.feat_conv3_weight, self.feat_conv3_bias)
        fc1 = self.fc1(torch.max(self.feat_bn3(feat_conv3), 2, keepdim=True)[0].view(-1, 1024))
        log_probs = F.log_softmax(self.fc3(F.relu(self.bn2(self.fc2(F.relu(self.bn1(fc1)))))), dim=1)
        return log_probs, feat_stn, feat_fstn


def get_inputs():
    return [
        torch.empty(1, 3, 1024).uniform_(-1.0, 1.0),
    ]


def get_init_inputs():
    return []
