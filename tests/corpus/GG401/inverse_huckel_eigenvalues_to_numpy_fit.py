# source: https://github.com/Bolaji125/inverse-huckel/blob/06c8ce55e5c3d8a6a731929b0323861ea56fbbbb/inverse_huckel/general_huckel_functionality.py
# label: GG401 39
# effect: raises "Can't call numpy() on Tensor that requires grad"
# note: with alpha and beta made learnable (the repository's commented-out constructor), the energies unpacked from torch.linalg.eigh's tuple carry a graph; the report turns them to NumPy without detach
import numpy as np
import torch


class MolecularSystem:
    def __init__(self, coordinates, alpha, beta, cutoff_distance):
        self.coordinates = coordinates
        self.alpha = torch.tensor(alpha, requires_grad=True)
        self.beta = torch.tensor(beta, requires_grad=True)
        self.cutoff_distance = cutoff_distance

    def construct_hamiltonian(self):
        n = len(self.coordinates)
        A = torch.zeros((n, n))
        for i in range(n):
            for j in range(i + 1, n):
                if np.linalg.norm(self.coordinates[i] - self.coordinates[j]) < self.cutoff_distance:
                    A[i, j] = A[j, i] = 1.0
        return self.beta * A + self.alpha * torch.eye(n)

    def solve_eigenvalue_problem_pytorch(self):
        eigenvalues, eigenvectors = torch.linalg.eigh(self.construct_hamiltonian())
        return eigenvalues, eigenvectors


def fit_parameters(system, target_energies, steps=3, lr=0.05):
    optimizer = torch.optim.Adam([system.alpha, system.beta], lr=lr)
    history = []
    for step in range(steps):
        energies, wavefunctions = system.solve_eigenvalue_problem_pytorch()
        loss = torch.mean((energies - target_energies) ** 2)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append(np.round(energies.numpy(), 4))
    return history


def observe():
    benzene = np.array([[1.3965, 0.0, 0.0], [0.69825, 1.2095694, 0.0], [-0.69825, 1.2095694, 0.0],
                        [-1.3965, 0.0, 0.0], [-0.69825, -1.2095694, 0.0], [0.69825, -1.2095694, 0.0]])
    system = MolecularSystem(benzene, alpha=-10.0, beta=-1.0, cutoff_distance=2.0)
    fit_parameters(system, torch.tensor([-12.0, -11.0, -11.0, -9.0, -9.0, -8.0]))
    return {}
