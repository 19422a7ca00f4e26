"""A real, tiny training run for mfu's end-to-end test: a 2-layer transformer language model
trained on CPU for a few dozen steps with PyTorch, writing mfu's native log (through
emit_native_log.py) and a PyTorch profiler trace of a few steps.

    /usr/bin/python3 examples/train_tiny.py --out DIR [--steps 30]

writes DIR/run.jsonl and DIR/trace.json, and prints the numbers a test can check against
(steps, tokens per step, parameters). Debian's PyTorch 1.13 has no Kineto: its profiler writes
the older trace, a bare JSON array of CPU events with ProfilerStep#N spans.
"""
import argparse
import json
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from emit_native_log import NativeLog  # noqa: E402

LAYERS, HIDDEN, HEADS, FFN, VOCAB, SEQ, BATCH = 2, 64, 4, 256, 256, 64, 8


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        layer = nn.TransformerEncoderLayer(HIDDEN, HEADS, FFN, dropout=0.0, batch_first=True)
        self.blocks = nn.TransformerEncoder(layer, LAYERS)
        self.head = nn.Linear(HIDDEN, VOCAB, bias=False)
        self.register_buffer("mask", torch.triu(torch.full((SEQ, SEQ), float("-inf")), 1))

    def forward(self, tokens):
        return self.head(self.blocks(self.embed(tokens), mask=self.mask))


def batches(generator):
    """Synthetic data with structure to learn: each sequence counts up from a random start."""
    while True:
        start = torch.randint(0, VOCAB, (BATCH, 1), generator=generator)
        seq = (start + torch.arange(SEQ + 1)) % VOCAB
        yield seq[:, :-1], seq[:, 1:]


def train(out_dir, steps, profile_steps):
    torch.manual_seed(0)
    model = TinyLM()
    params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    data = batches(torch.Generator().manual_seed(1))
    log = NativeLog(os.path.join(out_dir, "run.jsonl"), gpus=1, gpu="cpu", dtype="fp32",
                    model="train_tiny", layers=LAYERS, hidden=HIDDEN, heads=HEADS, ffn=FFN,
                    vocab=VOCAB, seq_len=SEQ, params=params)
    trace_path = os.path.join(out_dir, "trace.json")
    schedule = torch.profiler.schedule(wait=2, warmup=1, active=profile_steps, repeat=1)
    profiler = torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU], schedule=schedule,
        on_trace_ready=lambda p: p.export_chrome_trace(trace_path))
    first_loss = last_loss = None
    with profiler:
        for step in range(1, steps + 1):
            with log.phase("data_s"):
                x, y = next(data)
            loss = nn.functional.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            log.step(step, tokens=BATCH * SEQ, loss=loss.item())
            profiler.step()
            first_loss = first_loss if first_loss is not None else loss.item()
            last_loss = loss.item()
    log.close()
    print(json.dumps({"steps": steps, "tokens_per_step": BATCH * SEQ, "params": params,
                      "profiled_steps": profile_steps, "first_loss": first_loss,
                      "last_loss": last_loss}))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--profile-steps", type=int, default=3)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    train(a.out, a.steps, a.profile_steps)
