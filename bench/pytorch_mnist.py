"""pytorch_mnist.py MODEL SECONDS - PyTorch's training speed on the trainer's MNIST models.

Called by bench/bench_train.c (make bench) when Debian's python3-torch is installed: one
thread (torch.set_num_threads(1)), the same layers, micro-batch and update as
build/mnist-train's defaults (mlp: micro-batch 32, 16 micro-batches per momentum-SGD
update; cnn: micro-batch 64, 4 per update), images already in memory as float tensors.
Prints "samples_per_second N" after timing whole updates for about SECONDS seconds.
"""
import sys
import time

import torch
import torch.nn as nn

torch.set_num_threads(1)
torch.manual_seed(1)


def model_of(name):
    if name == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                             nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10)), 32, 16
    if name == "cnn":
        return nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Flatten(), nn.Dropout(0.5), nn.Linear(1600, 10)), 64, 4
    raise SystemExit("usage: pytorch_mnist.py mlp|cnn SECONDS")


def main():
    name, seconds = sys.argv[1], float(sys.argv[2])
    net, batch, accumulate = model_of(name)
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    n = batch * accumulate * 8
    x = torch.rand(n, 1, 28, 28)
    y = torch.randint(0, 10, (n,))
    net.train()

    def update(k):
        opt.zero_grad()
        for m in range(accumulate):
            i = ((k * accumulate + m) * batch) % n
            loss = loss_fn(net(x[i:i + batch]), y[i:i + batch]) / accumulate
            loss.backward()
        opt.step()

    for k in range(2):  # warm-up
        update(k)
    done, t0 = 0, time.perf_counter()
    while True:
        update(done)
        done += 1
        t = time.perf_counter() - t0
        if t >= seconds:
            break
    print("samples_per_second %.1f" % (done * batch * accumulate / t))


main()
