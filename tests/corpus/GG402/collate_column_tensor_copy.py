# source: https://github.com/asappresearch/flambe/issues/188
# label: GG402 23
# effect: warns "To copy construct from a tensor"
# note: the sampler's collate turns every example of a column into a tensor with torch.tensor(example); the dataset already yields tensors, so each is copied with the warning
import torch
from torch.nn.utils.rnn import pad_sequence


def collate_fn(data, pad=0, batch_first=True):
    """Turn a list of examples (tuples of columns) into one padded tensor per column."""
    columns = list(zip(*data))

    if isinstance(pad, (tuple, list)):
        pad_tkns = pad
        if len(pad_tkns) != len(columns):
            raise Exception(f"The number of column-specific pad tokens ({len(pad_tkns)}) does not equal "
                            f"the number of columns in the batch ({len(columns)})")
    else:
        pad_tkns = tuple([pad] * len(columns))

    batch = []
    for pad, column in zip(pad_tkns, columns):
        tensors = [torch.tensor(example) for example in column]
        sizes = [tensor.size() for tensor in tensors]

        if all(s == sizes[0] for s in sizes):
            stacked_tensors = torch.stack(tensors).squeeze(1)
            batch.append(stacked_tensors)
        else:
            padded_tensors = pad_sequence(tensors, batch_first=batch_first, padding_value=pad)
            batch.append(padded_tensors)

    return tuple(batch)


def observe():
    data = [(torch.tensor([4, 8, 15]), torch.tensor([1])),
            (torch.tensor([16, 23]), torch.tensor([0])),
            (torch.tensor([42]), torch.tensor([1]))]
    return {"batch": collate_fn(data)}
