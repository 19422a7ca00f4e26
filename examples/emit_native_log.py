# Paste into a PyTorch training loop to write mfu's native JSON Lines (one line per step).
import json, time, torch, torch.distributed as dist
log = open("run.jsonl", "a") if (not dist.is_initialized() or dist.get_rank() == 0) else None
if log: log.write(json.dumps({"type": "meta", "gpu": torch.cuda.get_device_name(), "dtype": "bf16",
                              "gpus": dist.get_world_size() if dist.is_initialized() else 1}) + "\n")
t0 = time.perf_counter()
# ... inside the loop, after optimizer.step() (tokens = global tokens of the step):
torch.cuda.synchronize(); t1 = time.perf_counter()
if log: log.write(json.dumps({"step": step, "time_s": t1 - t0, "tokens": tokens, "loss": loss.item()}) + "\n"); log.flush()
t0 = t1
