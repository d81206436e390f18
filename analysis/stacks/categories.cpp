#include "stacks/categories.h"

#include <utility>

namespace cumemtrace {
namespace {

struct DefaultCategoryRule {
  const char* category;
  const char* regex;
};

// Libraries first: their own cudaMalloc (or PyTorch's workspace for them) is theirs
// whatever Python phase called them (cuBLAS's workspace comes into being in the first
// forward's matrix product). Then the PyTorch phases, the most specific first: autotune
// and CUDA-graph capture run forwards, optimizers and backward passes run no module's
// forward but may rebuild parameters; a forward is the least specific frame of all.
// Python functions end the text, so "$" anchors them.
constexpr DefaultCategoryRule kDefaultCategoryRules[] = {
    {"nccl", "^libnccl"},
    {"cublaslt_workspace", "^libcublasLt|^libtorch_cuda[^:]*:at::cuda::getCUDABlasLtWorkspace"},
    {"cublas_workspace", "^libcublas|^libtorch_cuda[^:]*:at::cuda::.*getNewWorkspace"},
    {"cudnn_workspace", "^libcudnn"},
    {"cufft_workspace", "^libcufft"},
    {"autotune", "/torch/_inductor/(select_algorithm|autotune_process)\\.py:|/triton/runtime/autotuner\\.py:"},
    {"cuda_graph_pool", "/torch/cuda/graphs\\.py:|:at::cuda::CUDAGraph::capture_begin"},
    {"compiled_graphs", "/torch/_inductor/|torchinductor_"},
    {"optimizer", "/torch/optim/"},
    // The whole backward pass: AccumulateGrad mostly steals the tensor the op's backward
    // function made, so a parameter's gradient is allocated under that function, as the
    // activations' gradients are; no frame tells the two apart.
    {"gradients",
     ":torch::autograd::(AccumulateGrad|Engine)::|:torch::autograd::generated::|"
     "/torch/autograd/__init__\\.py:(backward|grad)$|/torch/autograd/graph\\.py:_engine_run_backward$|"
     "/torch/_tensor\\.py:backward$"},
    {"weights",
     "/torch/nn/modules/module\\.py:(_apply|convert|to|cuda|load_state_dict|_load_from_state_dict|register_parameter)$|"
     "/torch/nn/parameter\\.py:|/torch/nn/modules/[a-z_]*\\.py:(__init__|reset_parameters)$|/torch/serialization\\.py:|"
     "/safetensors/"},
    {"activations", "/torch/nn/modules/module\\.py:(_call_impl|_wrapped_call_impl)$|:forward$"},
};

bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

}  // namespace

CategoryRules::CategoryRules() {
  for (const auto& d : kDefaultCategoryRules)
    rules_.push_back({d.category, d.regex, 0, std::make_shared<const FramePattern>(d.regex)});
}

void CategoryRules::add_user_rules(std::string_view text) {
  std::vector<CategoryRule> added;
  size_t line = 0;
  while (!text.empty()) {
    ++line;
    const size_t nl = text.find('\n');
    std::string_view l = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    while (!l.empty() && blank(l.front())) l.remove_prefix(1);
    while (!l.empty() && blank(l.back())) l.remove_suffix(1);
    if (l.empty() || l.front() == '#') continue;
    const std::string where = "line " + std::to_string(line) + ": ";
    size_t n = 0;
    while (n < l.size() && word_char(l[n])) ++n;
    if (n == 0 || (n < l.size() && !blank(l[n])))
      throw CategoryRulesError(where +
                               "a category is one word of letters, digits, '_', '.' or '-', then blanks, then a regex");
    std::string category(l.substr(0, n));
    std::string_view rest = l.substr(n);
    while (!rest.empty() && blank(rest.front())) rest.remove_prefix(1);
    if (rest.empty()) throw CategoryRulesError(where + "category '" + category + "' has no regex");
    try {
      auto pattern = std::make_shared<const FramePattern>(std::string(rest));
      added.push_back({std::move(category), std::string(rest), line, std::move(pattern)});
    } catch (const std::invalid_argument& e) {
      throw CategoryRulesError(where + "not a regular expression: " + e.what());
    }
  }
  user_ += added.size();
  rules_.insert(rules_.begin(), std::make_move_iterator(added.begin()), std::make_move_iterator(added.end()));
}

std::string frame_text(const Frame& f) { return (f.python ? f.file : f.module) + ":" + f.function; }

int CategoryRules::first_rule(std::string_view frame_text) const {
  for (size_t r = 0; r < rules_.size(); ++r)
    if (rules_[r].pattern->search(frame_text)) return int(r);
  return -1;
}

int CategoryRules::match(const std::vector<Frame>& frames) const {
  int best = -1;
  for (const auto& f : frames)
    if (const int r = first_rule(frame_text(f)); r >= 0 && (best < 0 || r < best)) best = r;
  return best;
}

}  // namespace cumemtrace
