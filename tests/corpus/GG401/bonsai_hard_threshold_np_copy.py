# source: https://github.com/microsoft/EdgeML/issues/119
# label: GG401 64
# effect: raises "Can't call numpy() on Tensor that requires grad"
# note: the IHT routine hands Bonsai's parameters to NumPy (np.copy) as they are: they require grad, and the conversion raises in the middle of training (the fix: threshold their .data)
import numpy as np
import torch
import torch.nn as nn


def hardThreshold(A, s):
    '''
    Hard thresholding function on Tensor A with sparsity s
    '''
    A_ = A.ravel()
    if len(A_) > 0:
        th = np.percentile(np.abs(A_), (1 - s) * 100.0, method='higher')
        A_[np.abs(A_) < th] = 0.0
    A_ = A_.reshape(A.shape)
    return A_


class Bonsai(nn.Module):
    def __init__(self, numClasses, dataDimension, projectionDimension, treeDepth, sigma):
        super(Bonsai, self).__init__()
        self.numClasses = numClasses
        self.sigma = sigma
        self.internalNodes = 2 ** treeDepth - 1
        self.totalNodes = 2 * self.internalNodes + 1
        self.Z = nn.Parameter(torch.randn(projectionDimension, dataDimension))
        self.W = nn.Parameter(torch.randn(numClasses * self.totalNodes, projectionDimension))
        self.V = nn.Parameter(torch.randn(numClasses * self.totalNodes, projectionDimension))
        self.T = nn.Parameter(torch.randn(self.internalNodes, projectionDimension))

    def forward(self, X, sigmaI=1.0):
        XZ = torch.matmul(self.Z, X.t()).t()
        nodes = torch.sigmoid(sigmaI * torch.matmul(XZ, self.T.t()))  # branching decisions
        W = self.W.view(self.totalNodes, self.numClasses, -1)
        V = self.V.view(self.totalNodes, self.numClasses, -1)
        score = torch.einsum('bp,ncp->bnc', XZ, W) * torch.tanh(self.sigma * torch.einsum('bp,ncp->bnc', XZ, V))
        gate = torch.cat([torch.ones(X.shape[0], 1), nodes, 1 - nodes], 1)
        return (score * gate[:, :, None]).sum(1), XZ


class BonsaiTrainer:
    def __init__(self, bonsaiObj, lW, lT, lV, lZ, sW, sT, sV, sZ, learningRate, device=None):
        self.bonsaiObj = bonsaiObj
        self.lW, self.lV, self.lT, self.lZ = lW, lV, lT, lZ
        self.sW, self.sV, self.sT, self.sZ = sW, sV, sT, sZ
        self.device = device if device is not None else torch.device("cpu")
        self.learningRate = learningRate

    def optimizer(self):
        return torch.optim.Adam(self.bonsaiObj.parameters(), lr=self.learningRate)

    def runHardThrsd(self):
        '''
        Function to run the IHT routine on Bonsai Obj
        '''
        currW = self.bonsaiObj.W
        currV = self.bonsaiObj.V
        currZ = self.bonsaiObj.Z
        currT = self.bonsaiObj.T

        __thrsdW = hardThreshold(np.copy(currW.cpu()), self.sW)
        __thrsdV = hardThreshold(np.copy(currV.cpu()), self.sV)
        __thrsdZ = hardThreshold(np.copy(currZ.cpu()), self.sZ)
        __thrsdT = hardThreshold(np.copy(currT.cpu()), self.sT)

        self.bonsaiObj.W.data = torch.FloatTensor(__thrsdW).to(self.device)
        self.bonsaiObj.V.data = torch.FloatTensor(__thrsdV).to(self.device)
        self.bonsaiObj.Z.data = torch.FloatTensor(__thrsdZ).to(self.device)
        self.bonsaiObj.T.data = torch.FloatTensor(__thrsdT).to(self.device)

        self.__thrsdW = torch.FloatTensor(np.copy(__thrsdW)).to(self.device)
        self.__thrsdV = torch.FloatTensor(np.copy(__thrsdV)).to(self.device)
        self.__thrsdZ = torch.FloatTensor(np.copy(__thrsdZ)).to(self.device)
        self.__thrsdT = torch.FloatTensor(np.copy(__thrsdT)).to(self.device)


def observe():
    torch.manual_seed(0)
    bonsai = Bonsai(numClasses=3, dataDimension=6, projectionDimension=4, treeDepth=1, sigma=1.0)
    trainer = BonsaiTrainer(bonsai, 1e-3, 1e-3, 1e-3, 1e-4, 0.5, 0.5, 0.5, 0.5, learningRate=0.01)
    optimizer = trainer.optimizer()
    logits, _ = bonsai(torch.randn(5, 6))
    torch.nn.functional.cross_entropy(logits, torch.randint(0, 3, (5,))).backward()
    optimizer.step()
    trainer.runHardThrsd()
    return {"W": bonsai.W.detach().clone()}
