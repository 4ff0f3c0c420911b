# source: https://github.com/nitrain/nitrain/pull/32
# label: GG103 36
# effect: graph_built
# note: evaluation relies on Variable(..., volatile=True), which has done nothing since torch 0.4 (it only warns): every batch's forward builds a graph
import torch
from torch.autograd import Variable


class ModuleTrainer:
    def __init__(self, model):
        self.model = model
        self._loss_fn = None
        self._optimizer = None

    def compile(self, loss, optimizer):
        self._loss_fn = loss
        self._optimizer = optimizer

    def fit(self, inputs, targets, nb_epoch=1, batch_size=4):
        self.model.train()
        for _ in range(nb_epoch):
            for i in range(0, inputs.size(0), batch_size):
                input_batch = Variable(inputs[i:i + batch_size])
                target_batch = Variable(targets[i:i + batch_size])
                self._optimizer.zero_grad()
                loss = self._loss_fn(self.model(input_batch), target_batch)
                loss.backward()
                self._optimizer.step()

    def evaluate(self, inputs, targets, batch_size=4):
        self.model.eval()
        total_loss, nb_batches = 0.0, 0
        for i in range(0, inputs.size(0), batch_size):
            input_batch = Variable(inputs[i:i + batch_size], volatile=True)
            target_batch = Variable(targets[i:i + batch_size], volatile=True)
            output_batch = self.model(input_batch)
            loss = self._loss_fn(output_batch, target_batch)
            total_loss += float(loss.data)
            nb_batches += 1
        return total_loss / nb_batches


def observe():
    from corpus.oracle import hook_outputs

    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    trainer = ModuleTrainer(model)
    trainer.compile(torch.nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1))
    trainer.fit(torch.randn(8, 6), torch.randint(0, 3, (8,)))
    built = hook_outputs(model)
    trainer.evaluate(torch.randn(8, 6), torch.randint(0, 3, (8,)))
    return {"built": built}
