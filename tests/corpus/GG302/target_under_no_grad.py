# source: https://deepinout.com/pytorch/pytorch-questions/75_pytorch_runtime_error_element_0_of_tensors_does_not_require_grad_and_does_not_have_a_grad_fn.html
# label: lookalike GG302
# effect: raises "element 0 of tensors does not require grad"
# note: only the teacher's target is computed under no_grad; the student's forward keeps its graph
import torch
import torch.nn.functional as F


def distill_step(student, teacher, x, optimizer):
    student.train()
    with torch.no_grad():
        target = teacher(x).softmax(-1)
    loss = F.kl_div(student(x).log_softmax(-1), target, reduction="batchmean")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def observe():
    student, teacher = torch.nn.Linear(4, 3), torch.nn.Linear(4, 3)
    distill_step(student, teacher, torch.randn(2, 4), torch.optim.SGD(student.parameters(), lr=0.1))
    return {}
