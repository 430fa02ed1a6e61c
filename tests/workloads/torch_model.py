"""torch_model.py: a small convolutional model run a fixed number of times with real PyTorch
(Debian's python3-torch, whose convolutions and reorders are oneDNN primitives).

With INTEL_LIBITTNOTIFY64 naming xtrace's collector, oneDNN reports every primitive execution
as an ITT task; with ONEDNN_VERBOSE=1 it also prints one "onednn_verbose,exec,..." line per
execution, which is how a test counts them independently of xtrace. Inference iterations
(no gradients) are followed by training steps (backward convolutions, an optimizer step), so
forward and backward primitives both run.

One intra-op thread by default: on a machine shared with other work, OpenMP workers waiting at
their barriers make each iteration tens of times slower and its time erratic (measured: 80
iterations per second with one thread, 1 with two, on a loaded 2-core VM).

usage: python3 torch_model.py [--iterations N] [--train-steps M] [--threads T]
"""
import argparse

import torch


def build_model():
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Conv2d(8, 8, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Flatten(), torch.nn.Linear(8 * 16 * 16, 10))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--train-steps", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    model = build_model()
    x = torch.randn(4, 3, 16, 16)
    target = torch.randint(0, 10, (4,))

    model.eval()
    with torch.no_grad():
        for _ in range(args.iterations):
            model(x)

    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(args.train_steps):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), target)
        loss.backward()
        optimizer.step()
    print("torch_model: %d iterations, %d training steps" % (args.iterations, args.train_steps),
          flush=True)


if __name__ == "__main__":
    main()
