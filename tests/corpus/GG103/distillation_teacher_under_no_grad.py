# source: https://smarttldr.pages.dev/en/topic/python-knowledge-distillation/deep-dive
# label: lookalike GG103
# effect: graph_built
# note: the frozen teacher's logits are soft targets only, and the loop computes them inside `with torch.no_grad():`; the student's forward is back-propagated
import torch
import torch.nn as nn
import torch.nn.functional as F


class DistillationLoss(nn.Module):
    def __init__(self, temperature=4.0, alpha=0.7):
        super().__init__()
        self.temperature = temperature
        self.alpha = alpha

    def forward(self, student_logits, teacher_logits, labels):
        soft_student = F.log_softmax(student_logits / self.temperature, dim=1)
        soft_teacher = F.softmax(teacher_logits / self.temperature, dim=1)
        distill_loss = F.kl_div(soft_student, soft_teacher, reduction="batchmean") * (self.temperature ** 2)
        hard_loss = F.cross_entropy(student_logits, labels)
        return self.alpha * distill_loss + (1 - self.alpha) * hard_loss


def distill(teacher, student, train_loader, epochs=2, temperature=4.0, alpha=0.7, lr=0.001):
    teacher.eval()
    student.train()
    optimizer = torch.optim.Adam(student.parameters(), lr=lr)
    criterion = DistillationLoss(temperature, alpha)
    for epoch in range(epochs):
        total_loss = 0
        for inputs, labels in train_loader:
            with torch.no_grad():
                teacher_logits = teacher(inputs)
            student_logits = student(inputs)
            loss = criterion(student_logits, teacher_logits, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total_loss += loss.item()
        print(f"epoch {epoch}: loss {total_loss / len(train_loader):.4f}")
    return student


def observe():
    from corpus.oracle import hook_outputs

    teacher = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 3))
    student = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    built = hook_outputs(teacher)
    distill(teacher, student, [(torch.randn(4, 6), torch.randint(0, 3, (4,))) for _ in range(2)])
    return {"built": built}
