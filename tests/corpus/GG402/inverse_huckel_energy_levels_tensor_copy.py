# source: https://github.com/Bolaji125/inverse-huckel/blob/06c8ce55e5c3d8a6a731929b0323861ea56fbbbb/inverse_huckel/general_huckel_functionality.py
# label: GG402 35
# effect: warns "To copy construct from a tensor"
# note: the inverse-Hückel fit makes alpha and beta learnable; the energy-level plot unpacks torch.linalg.eigh's (eigenvalues, eigenvectors) tuple and copies the eigenvalues with torch.tensor(...) (the repository's earlier version, replaced by .clone().detach())
import numpy as np
import torch


class MolecularSystem:
    def __init__(self, coordinates, alpha, beta, cutoff_distance):
        self.coordinates = coordinates
        self.alpha = torch.tensor(alpha, requires_grad=True)
        self.beta = torch.tensor(beta, requires_grad=True)
        self.cutoff_distance = cutoff_distance

    def adjacency(self):
        n = len(self.coordinates)
        A = torch.zeros((n, n))
        for i in range(n):
            for j in range(i + 1, n):
                if np.linalg.norm(self.coordinates[i] - self.coordinates[j]) < self.cutoff_distance:
                    A[i, j] = A[j, i] = 1.0
        return A

    def construct_hamiltonian(self):
        A = self.adjacency()
        return self.beta * A + self.alpha * torch.eye(A.shape[0])

    def solve_eigenvalue_problem_pytorch(self):
        eigenvalues, eigenvectors = torch.linalg.eigh(self.construct_hamiltonian())
        return eigenvalues, eigenvectors

    def energy_levels_pytorch(self, energies, tolerance=1e-6):
        eigenvalues, _ = energies
        eigenvalues = torch.tensor(eigenvalues)
        levels, prev_energy, x_offset = [], None, 0
        for energy in eigenvalues.tolist():
            if prev_energy is not None and abs(energy - prev_energy) < tolerance:
                x_offset += 0.3
            else:
                x_offset = 0
            levels.append((energy, x_offset, 0.3 + x_offset))
            prev_energy = energy
        return levels


def observe():
    benzene = np.array([[1.3965, 0.0, 0.0], [0.69825, 1.2095694, 0.0], [-0.69825, 1.2095694, 0.0],
                        [-1.3965, 0.0, 0.0], [-0.69825, -1.2095694, 0.0], [0.69825, -1.2095694, 0.0]])
    system = MolecularSystem(benzene, alpha=-10.0, beta=-1.0, cutoff_distance=2.0)
    return {"levels": system.energy_levels_pytorch(system.solve_eigenvalue_problem_pytorch())}
