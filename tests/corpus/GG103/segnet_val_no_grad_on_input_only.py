# source: https://github.com/xiaoyufenfei/Efficient-Segmentation-Networks/pull/5
# label: GG103 37
# effect: graph_built
# note: val() puts only the input's device move under torch.no_grad(); the forward right after it runs with grad enabled ("make torch.no_grad effective, avoid out of memory")
import time

import numpy as np
import torch


def get_iou(data_list, num_classes):
    hist = np.zeros((num_classes, num_classes))
    for gt, pred in data_list:
        keep = gt < num_classes
        hist += np.bincount(num_classes * gt[keep].astype(int) + pred[keep],
                            minlength=num_classes ** 2).reshape(num_classes, num_classes)
    iu = np.diag(hist) / np.maximum(hist.sum(1) + hist.sum(0) - np.diag(hist), 1)
    return np.nanmean(iu), iu


def val(args, val_loader, model):
    """
    args:
      val_loader: loaded for validation dataset
      model: model
    return: mean IoU and IoU class
    """
    # evaluation mode
    model.eval()
    total_batches = len(val_loader)

    data_list = []
    for i, (input, label, size, name) in enumerate(val_loader):
        with torch.no_grad():
            input_var = input.to(args.device)
        start_time = time.time()
        output = model(input_var)
        time_taken = time.time() - start_time
        print("[%d/%d]  time: %.2f" % (i + 1, total_batches, time_taken))
        output = output.cpu().data[0].numpy()
        gt = np.asarray(label[0].numpy(), dtype=np.uint8)
        output = output.transpose(1, 2, 0)
        output = np.asarray(np.argmax(output, axis=2), dtype=np.uint8)
        data_list.append([gt.flatten(), output.flatten()])

    meanIoU, per_class_iu = get_iou(data_list, args.classes)
    return meanIoU, per_class_iu


def observe():
    from types import SimpleNamespace

    from corpus.oracle import hook_outputs

    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(8, 4, 1))
    built = hook_outputs(model)
    loader = [(torch.randn(1, 3, 8, 8), torch.randint(0, 4, (1, 8, 8)), (8, 8), "img%d" % i) for i in range(3)]
    args = SimpleNamespace(device="cpu", classes=4)
    val(args, loader, model)
    return {"built": built}
