# source: https://github.com/facebookresearch/dino/blob/main/main_dino.py
# label: lookalike GG104
# effect: graph_grows
# note: DINOLoss.forward updates self.center from the teacher output through update_center(), decorated @torch.no_grad()
import torch
import torch.nn.functional as F
from torch import nn


class DINOLoss(nn.Module):
    def __init__(self, out_dim, ncrops, teacher_temp=0.04, student_temp=0.1, center_momentum=0.9):
        super().__init__()
        self.student_temp = student_temp
        self.teacher_temp = teacher_temp
        self.center_momentum = center_momentum
        self.ncrops = ncrops
        self.register_buffer("center", torch.zeros(1, out_dim))

    def forward(self, student_output, teacher_output):
        student_out = (student_output / self.student_temp).chunk(self.ncrops)
        teacher_out = F.softmax((teacher_output - self.center) / self.teacher_temp, dim=-1)
        teacher_out = teacher_out.detach().chunk(2)
        total_loss, n_loss_terms = 0, 0
        for iq, q in enumerate(teacher_out):
            for v in range(len(student_out)):
                if v == iq:
                    continue
                loss = torch.sum(-q * F.log_softmax(student_out[v], dim=-1), dim=-1)
                total_loss += loss.mean()
                n_loss_terms += 1
        total_loss /= n_loss_terms
        self.update_center(teacher_output)
        return total_loss

    @torch.no_grad()
    def update_center(self, teacher_output):
        batch_center = torch.sum(teacher_output, dim=0, keepdim=True) / len(teacher_output)
        self.center = self.center * self.center_momentum + batch_center * (1 - self.center_momentum)


def observe():
    from corpus.oracle import graph_size

    student, teacher = nn.Linear(6, 5), nn.Linear(6, 5)
    dino_loss = DINOLoss(out_dim=5, ncrops=4)
    opt = torch.optim.SGD(student.parameters(), lr=0.1)
    sizes = []
    for _ in range(3):
        crops = torch.randn(4 * 3, 6)
        loss = dino_loss(student(crops), teacher(crops[:2 * 3]))
        opt.zero_grad()
        loss.backward()
        opt.step()
        sizes.append(graph_size(dino_loss.center))
    return {"sizes": sizes}
