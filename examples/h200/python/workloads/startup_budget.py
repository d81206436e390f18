"""A serving engine's start, shaped as vLLM's (issue 28 §6): load the weights, run one
profiling forward at the largest batch, capture CUDA graphs for a few batch sizes, then
give the KV cache what a mem_get_info subtraction says is left. Prints JSON lines: each
phase's mem_get_info and PyTorch's figures, then what the subtractions estimated, for
startup_budget.sh to set beside `cumemtrace report --by category`."""
import json

import torch

dev = torch.device("cuda")
D, LAYERS, MAX_TOKENS, GRAPH_SIZES, UTILIZATION = 8192, 24, 16384, (1, 8, 32, 128), 0.9


def reading(label):
    free, total = torch.cuda.mem_get_info()
    rec = {"label": label, "free": free, "total": total, "allocated": torch.cuda.memory_allocated(),
           "reserved": torch.cuda.memory_reserved()}
    print(json.dumps(rec), flush=True)
    return rec


def load_weights():
    return [torch.nn.Linear(D, D, bias=False, device=dev, dtype=torch.bfloat16) for _ in range(LAYERS)]


def forward(model, x):
    for layer in model:
        x = torch.nn.functional.gelu(layer(x))
    return x


def profile_run(model):
    torch.cuda.reset_peak_memory_stats()
    x = torch.randn(MAX_TOKENS, D, device=dev, dtype=torch.bfloat16)
    y = forward(model, x)
    torch.cuda.synchronize()
    del x, y
    return torch.cuda.max_memory_allocated()


def capture_graphs(model):
    graphs, pool = [], None
    for n in GRAPH_SIZES:
        x = torch.randn(n, D, device=dev, dtype=torch.bfloat16)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            forward(model, x)  # warm-up outside the capture
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, pool=pool):
            y = forward(model, x)
        pool = g.pool()
        graphs.append((g, x, y))
    torch.cuda.synchronize()
    return graphs


def allocate_kv_cache(nbytes):
    return torch.empty(nbytes, dtype=torch.uint8, device=dev)


start = reading("start")
model = load_weights()
weights = reading("weights")
peak = profile_run(model)
profiled = reading("profiled")
graphs = capture_graphs(model)
captured = reading("graphs")
# As vLLM budgets the cache: utilization × total, less the profiling run's peak and the
# memory outside PyTorch's allocator then (used by the process, less PyTorch's reserve).
non_torch = (profiled["total"] - profiled["free"]) - profiled["reserved"]
budget = int(UTILIZATION * profiled["total"] - peak - non_torch)
kv = allocate_kv_cache(max(budget, 0))
torch.cuda.synchronize()
ready = reading("kv")
print(json.dumps({"label": "estimates", "profile_peak_allocated": peak, "non_torch_by_subtraction": non_torch,
                  "graphs_by_subtraction": profiled["free"] - captured["free"], "kv_budget": budget,
                  "weights_by_subtraction": start["free"] - weights["free"]}), flush=True)
