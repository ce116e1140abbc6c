"""PyTorch's time_sequence_prediction example, shrunk: two LSTMCells in float64 learn sine waves with
LBFGS (strong Wolfe line search), then predict 20 steps into the future."""
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


class Sequence(nn.Module):
    def __init__(self, hidden=21):
        super().__init__()
        self.hidden = hidden
        self.lstm1 = nn.LSTMCell(1, hidden)
        self.lstm2 = nn.LSTMCell(hidden, hidden)
        self.linear = nn.Linear(hidden, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t, c_t, h_t2, c_t2 = (torch.zeros(input.size(0), self.hidden, dtype=torch.double) for _ in range(4))
        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for _ in range(future):  # feed the prediction back in
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        return torch.cat(outputs, dim=1)


if __name__ == "__main__":
    np.random.seed(2)
    torch.manual_seed(0)
    T, L, N = 20, 100, 12
    x = np.empty((N, L), "int64")
    x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
    data = np.sin(x / 1.0 / T).astype("float64")
    input, target = torch.from_numpy(data[3:, :-1]), torch.from_numpy(data[3:, 1:])
    test_input, test_target = torch.from_numpy(data[:3, :-1]), torch.from_numpy(data[:3, 1:])
    seq = Sequence()
    seq.double()
    init = sys.argv[1] if len(sys.argv) > 1 else None  # share initial weights between runs
    if init and os.path.exists(init):
        seq.load_state_dict(torch.load(init))
    elif init:
        torch.save(seq.state_dict(), init)
    criterion = nn.MSELoss()
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8, line_search_fn="strong_wolfe")
    for i in range(3):
        def closure():
            optimizer.zero_grad()
            loss = criterion(seq(input), target)
            loss.backward()
            return loss
        train_loss = optimizer.step(closure)
        with torch.no_grad():
            pred = seq(test_input, future=20)
            test_loss = criterion(pred[:, :-20], test_target)
        print(f"step {i} train {train_loss.item():.8f} test {test_loss.item():.8f}")
    y = pred.detach().numpy()
    ok = y.shape == (3, 119) and y.dtype == np.float64 and test_loss.item() < 0.01 and train_loss.item() < 0.01
    print("RESULT", "ok" if ok else "bad", f"{train_loss.item():.10e} {test_loss.item():.10e}")
