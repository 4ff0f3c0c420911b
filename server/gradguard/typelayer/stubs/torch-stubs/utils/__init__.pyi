from torch.utils import data as data
