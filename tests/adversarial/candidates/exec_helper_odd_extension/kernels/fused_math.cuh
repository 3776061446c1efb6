# Python, whatever the extension says: model_new.py runs this text with exec().
import torch


def forward(x, y, scale):
    return torch.sigmoid(torch.addcmul(y, x, scale))
