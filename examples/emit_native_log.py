"""Writes mfu's native JSON Lines from a training loop (one line per optimizer step).

Use it as a module (examples/train_tiny.py does) or paste its few lines into a loop:

    from emit_native_log import NativeLog
    log = NativeLog("run.jsonl", gpus=world_size, gpu=torch.cuda.get_device_name(),
                    dtype="bf16", layers=32, hidden=4096, heads=32, vocab=128256, seq_len=8192)
    for step in range(1, steps + 1):
        with log.phase("data_s"):
            batch = next(loader)
        loss = train_step(batch)
        torch.cuda.synchronize()          # on a GPU: time what the device did
        log.step(step, tokens=global_tokens_of_the_step, loss=loss.item())

Only rank 0 should write (pass path=None on the others). `mfu analyze run.jsonl` reads it.
"""
import contextlib
import json
import time


class NativeLog:
    """One {"type": "meta"} line, then one record per step with its wall time."""

    def __init__(self, path, **meta):
        self._out = open(path, "w") if path else None
        self._last = time.perf_counter()
        self._phases = {}
        if self._out:
            self._write({"type": "meta", **meta})

    def _write(self, obj):
        self._out.write(json.dumps(obj) + "\n")
        self._out.flush()

    @contextlib.contextmanager
    def phase(self, name):
        """Times a part of the step ("data_s", "forward_s", "optimizer_s", ...)."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self._phases[name] = self._phases.get(name, 0.0) + time.perf_counter() - t0

    def step(self, step, tokens, loss=None, **fields):
        """Ends a step: its time is the wall time since the previous step ended."""
        now = time.perf_counter()
        record = {"step": step, "time_s": now - self._last, "tokens": tokens, **fields}
        if loss is not None:
            record["loss"] = loss
        if self._phases:
            record["phases"] = self._phases
        self._phases = {}
        self._last = now
        if self._out:
            self._write(record)

    def event(self, kind, step, duration_s, detail=""):
        """A checkpoint, evaluation or restart the loop knows about."""
        if self._out:
            self._write({"type": "event", "kind": kind, "step": step,
                         "duration_s": duration_s, "detail": detail})
        self._last = time.perf_counter()  # the event's time is not the next step's

    def close(self):
        if self._out:
            self._out.close()
