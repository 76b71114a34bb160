// Reading measured runs and predicting them (see measured.hpp).
#include "measured.hpp"

#include "jobgen/model/architecture_yaml.hpp"
#include "jobgen/util/build_config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace jobgen::accuracy {

namespace est = jobgen::estimate;

namespace {

constexpr double kGiBPerMiB = 1.0 / 1024.0;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string stem(const std::string& path) {
  return std::filesystem::path(path).stem().string();
}

bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

// Facts a source states once in its SOURCE comment rather than per row (the shared file has no
// memory_kind, lora_targets or chunked_loss keys). Keyed by a phrase of the SOURCE comment.
struct SourceFacts {
  const char* phrase;
  std::optional<MemoryKind> memory_kind;
  std::optional<est::LoraTargets> lora_targets;
  bool chunked_loss = false;
};

const SourceFacts* facts_for(const std::string& source) {
  static const SourceFacts facts[] = {
      // finetune/lora.py prints torch.cuda.max_memory_allocated(); LoRA on query+value only;
      // lm_head chunked + chunked cross-entropy.
      {"Lightning-AI/litgpt", MemoryKind::allocated, est::LoraTargets::attention, true},
      // torchtitan logs max_reserved; PR #165 gives 'GiB peak reserved'.
      {"pytorch/torchtitan", MemoryKind::reserved, std::nullopt, false},
      // 'Peak Memory (GiB)' are peak reserved; LoRA on q,k,v,up,down,gate.
      {"AnswerDotAI/fsdp_qlora", MemoryKind::reserved, est::LoraTargets::all_linear, false},
  };
  for (const SourceFacts& f : facts)
    if (contains(source, f.phrase)) return &f;
  return nullptr;
}

// The shared file writes no gated_ffn: a SwiGLU model is recognisable by its FFN width, which
// such models choose near 8h/3 (times a multiplier, 2.5h-3.75h), where GELU/ReLU models use 4h.
bool looks_gated(const model::Architecture& a) {
  const double ratio = double(a.effective_ffn()) / a.hidden;
  return ratio > 2.4 && ratio < 3.8;
}

Expected<model::Architecture> parse_model(const YAML::Node& node, const std::string& name,
                                          const std::string& path) {
  auto a = model::parse_architecture(node, path);
  if (!a) return a;
  a->name = name;
  if (!node["gated_ffn"]) a->gated_ffn = looks_gated(*a);
  a->params = 0;
  a->params = derive_params(*a);
  return a;
}

// Line numbers (0-based) of '# SOURCE:' comments and their text up to the end of that line.
std::vector<std::pair<int, std::string>> source_comments(const std::string& text) {
  std::vector<std::pair<int, std::string>> out;
  std::istringstream in(text);
  std::string line;
  for (int n = 0; std::getline(in, line); ++n) {
    const auto at = line.find("# SOURCE:");
    if (at != std::string::npos) out.emplace_back(n, line.substr(at + 9));
  }
  return out;
}

template <class T>
Expected<T> as(const YAML::Node& n, const std::string& key, const std::string& path) {
  try {
    return n.as<T>();
  } catch (const YAML::Exception&) {
    return invalid("'" + key + "' has the wrong type",
                   SourceLoc{path, n.Mark().line + 1, n.Mark().column + 1});
  }
}

Expected<MemoryKind> parse_kind(const std::string& text) {
  if (text == "allocated") return MemoryKind::allocated;
  if (text == "reserved") return MemoryKind::reserved;
  if (text == "nvidia-smi") return MemoryKind::device;
  return invalid("memory_kind must be allocated, reserved or nvidia-smi, got '" + text + "'");
}

#define TRY_ASSIGN(target, expr)                     \
  do {                                               \
    auto tmp_ = (expr);                              \
    if (!tmp_) return std::unexpected(tmp_.error()); \
    target = *tmp_;                                  \
  } while (false)

// `deepspeed: {...}`: the ZeRO settings the source's DeepSpeed config sets (element counts, and
// overlap_comm as a bool); the others keep DeepSpeed's defaults (estimate/deepspeed.hpp).
Expected<void> read_deepspeed(const YAML::Node& n, est::DeepSpeedSettings& ds,
                              const std::string& path) {
  if (!n.IsMap())
    return invalid("deepspeed: expected a mapping", SourceLoc{path, n.Mark().line + 1, 1});
  for (const auto& kv : n) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node& v = kv.second;
    double* count = key == "reduce_bucket_size"            ? &ds.reduce_bucket_size
                    : key == "allgather_bucket_size"       ? &ds.allgather_bucket_size
                    : key == "stage3_prefetch_bucket_size" ? &ds.stage3_prefetch_bucket_size
                    : key == "stage3_max_live_parameters"  ? &ds.stage3_max_live_parameters
                    : key == "stage3_max_reuse_distance"   ? &ds.stage3_max_reuse_distance
                    : key == "stage3_param_persistence_threshold"
                        ? &ds.stage3_param_persistence_threshold
                        : nullptr;
    if (count != nullptr) {
      TRY_ASSIGN(*count, as<double>(v, key, path));
    } else if (key == "overlap_comm") {
      bool overlap = false;
      TRY_ASSIGN(overlap, as<bool>(v, key, path));
      ds.overlap_comm = overlap;
    } else {
      return invalid("unknown deepspeed key '" + key + "'", SourceLoc{path, v.Mark().line + 1, 1});
    }
  }
  return {};
}

Expected<void> read_expect(const YAML::Node& e, MeasuredRow& r, const std::string& path) {
  for (const auto& kv : e) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node& v = kv.second;
    if (key == "fits") {
      TRY_ASSIGN(r.fits, as<bool>(v, key, path));
    } else if (key == "memory_gib") {
      TRY_ASSIGN(r.memory_gib, as<double>(v, key, path));
    } else if (key == "tokens_per_s_gpu") {
      TRY_ASSIGN(r.tokens_per_s_gpu, as<double>(v, key, path));
    } else if (key == "memory_kind") {
      std::string kind;
      TRY_ASSIGN(kind, as<std::string>(v, key, path));
      TRY_ASSIGN(r.memory_kind, parse_kind(kind));
    } else {
      return invalid("unknown expect key '" + key + "'", SourceLoc{path, v.Mark().line + 1, 1});
    }
  }
  return {};
}

Expected<MeasuredRow> read_row(const YAML::Node& n,
                               const std::map<std::string, model::Architecture>& models,
                               const std::string& path, const std::string& source) {
  MeasuredRow r;
  r.file = std::filesystem::path(path).filename().string();
  r.source = source;
  est::TrainingSetup& s = r.setup;
  s.flash_attention = false;
  const SourceFacts* facts = facts_for(source);
  if (facts) {
    if (facts->memory_kind) r.memory_kind = *facts->memory_kind;
    if (facts->lora_targets) s.lora_targets = *facts->lora_targets;
    s.chunked_loss = facts->chunked_loss;
  }
  for (const auto& kv : n) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node& v = kv.second;
    const SourceLoc where{path, v.Mark().line + 1, v.Mark().column + 1};
    if (key == "id") {
      TRY_ASSIGN(r.id, as<std::string>(v, key, path));
    } else if (key == "model") {
      const std::string m = v.as<std::string>();
      const auto it = models.find(m);
      if (it == models.end()) return invalid("row uses unknown model '" + m + "'", where);
      s.model = it->second;
    } else if (key == "gpu") {
      TRY_ASSIGN(r.gpu, as<std::string>(v, key, path));
    } else if (key == "gpus") {
      TRY_ASSIGN(s.gpus_per_node, as<int>(v, key, path));
    } else if (key == "nodes") {
      TRY_ASSIGN(s.nodes, as<int>(v, key, path));
    } else if (key == "precision") {
      TRY_ASSIGN(s.precision, est::parse<est::Precision>(v.as<std::string>()));
    } else if (key == "optimizer") {
      TRY_ASSIGN(s.optimizer, est::parse<est::Optimizer>(v.as<std::string>()));
    } else if (key == "strategy") {
      TRY_ASSIGN(s.strategy, est::parse<est::Strategy>(v.as<std::string>()));
    } else if (key == "seq") {
      TRY_ASSIGN(s.seq_len, as<int>(v, key, path));
    } else if (key == "target") {
      TRY_ASSIGN(s.target_len, as<int>(v, key, path));
    } else if (key == "mb") {
      TRY_ASSIGN(r.micro_batch, as<int>(v, key, path));
    } else if (key == "link") {
      TRY_ASSIGN(r.link, as<std::string>(v, key, path));
    } else if (key == "accum") {
      TRY_ASSIGN(r.accumulation, as<int>(v, key, path));
    } else if (key == "ckpt") {
      TRY_ASSIGN(s.grad_checkpointing, as<bool>(v, key, path));
    } else if (key == "flash") {
      TRY_ASSIGN(s.flash_attention, as<bool>(v, key, path));
    } else if (key == "finetune") {
      TRY_ASSIGN(s.finetune, est::parse<est::Finetune>(v.as<std::string>()));
    } else if (key == "rank") {
      TRY_ASSIGN(s.lora_rank, as<int>(v, key, path));
    } else if (key == "lora_targets") {
      TRY_ASSIGN(s.lora_targets, est::parse<est::LoraTargets>(v.as<std::string>()));
    } else if (key == "lora_dropout") {
      TRY_ASSIGN(s.lora_dropout, as<double>(v, key, path));
    } else if (key == "lora_dropout_position") {
      std::string at;
      TRY_ASSIGN(at, as<std::string>(v, key, path));
      TRY_ASSIGN(s.lora_dropout_at, estimate::parse<estimate::LoraDropoutAt>(at));
    } else if (key == "model_loading") {
      TRY_ASSIGN(s.model_loading, est::parse<est::ModelLoading>(v.as<std::string>()));
    } else if (key == "fsdp_version") {
      TRY_ASSIGN(s.fsdp_version, est::parse<est::FsdpVersion>(v.as<std::string>()));
    } else if (key == "base_dtype") {
      TRY_ASSIGN(s.base_dtype, est::parse<est::BaseDtype>(v.as<std::string>()));
    } else if (key == "offload") {
      TRY_ASSIGN(s.offload, est::parse<est::Offload>(v.as<std::string>()));
    } else if (key == "recompute") {
      TRY_ASSIGN(s.recompute, est::parse<est::Recompute>(v.as<std::string>()));
    } else if (key == "compile") {
      TRY_ASSIGN(s.compile, as<bool>(v, key, path));
    } else if (key == "chunked_loss") {
      TRY_ASSIGN(s.chunked_loss, as<bool>(v, key, path));
    } else if (key == "grad_reduce_in_fp32") {
      TRY_ASSIGN(s.grad_reduce_in_fp32, as<bool>(v, key, path));
    } else if (key == "fp8_params") {
      TRY_ASSIGN(s.fp8_params, as<bool>(v, key, path));
    } else if (key == "bf16_optimizer_states") {
      TRY_ASSIGN(s.bf16_optimizer_states, as<bool>(v, key, path));
    } else if (key == "precision_aware_optimizer") {
      TRY_ASSIGN(s.precision_aware_optimizer, as<bool>(v, key, path));
    } else if (key == "transformer_engine") {
      bool te = false;
      TRY_ASSIGN(te, as<bool>(v, key, path));
      s.transformer_engine = te;
    } else if (key == "optimizer_in_backward") {
      TRY_ASSIGN(s.optimizer_in_backward, as<bool>(v, key, path));
    } else if (key == "tp") {
      TRY_ASSIGN(s.tp, as<int>(v, key, path));
    } else if (key == "pp") {
      TRY_ASSIGN(s.pp, as<int>(v, key, path));
    } else if (key == "vpp") {
      TRY_ASSIGN(s.vpp, as<int>(v, key, path));
    } else if (key == "cp") {
      TRY_ASSIGN(s.cp, as<int>(v, key, path));
    } else if (key == "sp") {
      TRY_ASSIGN(s.sp, as<bool>(v, key, path));
    } else if (key == "ep") {
      TRY_ASSIGN(s.ep, as<int>(v, key, path));
    } else if (key == "etp") {
      TRY_ASSIGN(s.etp, as<int>(v, key, path));
    } else if (key == "moe_a2a_overlap") {
      TRY_ASSIGN(s.moe_a2a_overlap, as<bool>(v, key, path));
    } else if (key == "capacity_factor") {
      TRY_ASSIGN(s.capacity_factor, as<double>(v, key, path));
    } else if (key == "deepspeed") {
      if (auto ok = read_deepspeed(v, s.deepspeed, path); !ok) return std::unexpected(ok.error());
    } else if (key == "expect") {
      if (auto ok = read_expect(v, r, path); !ok) return std::unexpected(ok.error());
    } else {
      return invalid("unknown row key '" + key + "'", where);
    }
  }
  if (catalog().find(r.gpu) == nullptr)
    return invalid("row " + r.id + ": GPU '" + r.gpu + "' is not in the catalog",
                   SourceLoc{path, n.Mark().line + 1, 1});
  if (auto ok = est::validate(s); !ok) {
    Error e = ok.error();
    e.message = "row " + r.id + ": " + e.message;
    return std::unexpected(e);
  }
  return r;
}

// "A: github pytorch/torchtune README.md, version ..." -> its first 60 characters.
std::string trim_source(const std::string& comment) {
  std::string s = comment;
  while (!s.empty() && s.front() == ' ') s.erase(0, 1);
  if (s.size() > 60) s = s.substr(0, 60);
  return s;
}

}  // namespace

const profile::Catalog& catalog() {
  static const profile::Catalog c = [] {
    auto parsed = profile::parse_catalog(read_text(jobgen::build::source_dir() + "/data/gpus.yaml"),
                                         "data/gpus.yaml");
    if (!parsed) throw std::runtime_error(format_error(parsed.error()));
    return *parsed;
  }();
  return c;
}

Expected<std::vector<MeasuredRow>> load_yaml(const std::string& path) {
  const std::string text = read_text(path);
  if (text.empty()) return fail("cannot read " + path, Exit::not_found);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return invalid("YAML: " + e.msg, SourceLoc{path, e.mark.line + 1, e.mark.column + 1});
  }
  std::map<std::string, model::Architecture> models;
  for (const auto& kv : root["models"]) {
    const std::string name = kv.first.as<std::string>();
    auto a = parse_model(kv.second, name, path);
    if (!a) return std::unexpected(a.error());
    models.emplace(name, *a);
  }
  const auto sources = source_comments(text);
  std::vector<MeasuredRow> rows;
  for (const auto& n : root["rows"]) {
    // The source of a row is the last SOURCE comment above it in files that hold several
    // sources; a file with one source is named by its stem.
    std::string source = stem(path);
    if (sources.size() > 1)
      for (const auto& [line, what] : sources)
        if (line < n.Mark().line) source = trim_source(what);
    auto row = read_row(n, models, path, source);
    if (!row) return std::unexpected(row.error());
    rows.push_back(std::move(*row));
  }
  return rows;
}

namespace {

struct MdSection {
  std::string title;
  std::vector<std::map<std::string, std::string>> rows;
};

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t");
  const auto e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line.substr(1));
  std::string cell;
  while (std::getline(in, cell, '|')) out.push_back(trim(cell));
  if (!out.empty() && out.back().empty()) out.pop_back();
  return out;
}

std::vector<MdSection> md_tables(const std::string& text) {
  std::vector<MdSection> sections;
  std::vector<std::string> header;
  std::istringstream in(text);
  std::string line;
  int table_line = 0;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) {
      sections.push_back({line.substr(3), {}});
      table_line = 0;
      continue;
    }
    if (sections.empty() || line.empty() || line[0] != '|') {
      table_line = 0;
      continue;
    }
    if (table_line == 0) header = cells(line);
    if (table_line >= 2) {
      const auto values = cells(line);
      std::map<std::string, std::string> row;
      for (size_t i = 0; i < header.size() && i < values.size(); ++i) row[header[i]] = values[i];
      sections.back().rows.push_back(row);
    }
    ++table_line;
  }
  return sections;
}

// "14,949" -> 14949, "18.9 GiB" -> 18.9, "46.44%" -> 46.44.
double number(std::string text) {
  text.erase(std::remove(text.begin(), text.end(), ','), text.end());
  return std::stod(text);
}

}  // namespace

// The three tables of measured-public.md, with the configuration facts each section states.
Expected<std::vector<MeasuredRow>> load_public_md(const std::string& path) {
  const std::string text = read_text(path);
  if (text.empty()) return fail("cannot read " + path, Exit::not_found);
  std::vector<MeasuredRow> rows;
  const std::string file = std::filesystem::path(path).filename().string();
  for (const MdSection& sec : md_tables(text)) {
    for (const auto& cell : sec.rows) {
      MeasuredRow r;
      r.file = file;
      est::TrainingSetup& s = r.setup;
      if (contains(sec.title, "BERT-large")) {
        // HF docs: AutoModelForSequenceClassification (pooled 2-label head), seq 512, eager,
        // one V100 16 GB; nvidia-smi MiB incl. a CUDA context the doc measured as 1,343 MiB.
        r.source = "HF transformers perf_train_gpu_one (BERT-large, V100)";
        r.gpu = "v100";
        s.model = *model::find_preset("bert-large");
        s.model.token_logits = false;
        s.model.head_outputs = 2;
        s.model.params = 0;
        s.model.params = derive_params(s.model);
        s.seq_len = 512;
        const std::string p = cell.at("precision");
        s.precision = contains(p, "fp16") ? est::Precision::amp_fp16 : est::Precision::fp32;
        const std::string o = cell.at("optimizer");
        s.optimizer = contains(o, "8-bit")       ? est::Optimizer::adam8bit
                      : contains(o, "Adafactor") ? est::Optimizer::adafactor
                                                 : est::Optimizer::adamw;
        r.micro_batch = int(number(cell.at("micro-batch")));
        r.accumulation = int(number(cell.at("grad accum")));
        s.grad_checkpointing = cell.at("checkpointing") == "yes";
        r.fits = true;
        r.memory_gib = number(cell.at("memory MB")) * kGiBPerMiB;
        r.memory_kind = MemoryKind::device;
        r.context_gib = 1343 * kGiBPerMiB;
        r.tokens_per_s_gpu = number(cell.at("samples/s")) * 512;
      } else if (contains(sec.title, "Llama 3.1 8B")) {
        // torchtune README: bf16, packed 2048, micro-batch 2, SDPA, chunked CE, activation
        // checkpointing, torch.compile; full: PagedAdamW8bit with optimizer-in-backward; LoRA
        // rank 8 on q,v,output + MLP; peak memory = reserved.
        r.source = "pytorch/torchtune README (Llama 3.1 8B)";
        const std::string gpu = cell.at("GPU");
        r.gpu = contains(gpu, "4090") ? "rtx4090" : "rtx-a6000";
        s.model = *model::find_preset("llama-3.1-8b");
        s.seq_len = 2048;
        s.precision = est::Precision::bf16;
        s.flash_attention = true;
        s.chunked_loss = true;
        s.grad_checkpointing = true;
        s.compile = true;
        const std::string method = cell.at("method");
        if (contains(method, "full")) {
          s.optimizer = est::Optimizer::adam8bit;
          s.offload = est::Offload::optimizer;
          s.optimizer_in_backward = true;
        } else {
          s.finetune = contains(method, "QLoRA") ? est::Finetune::qlora : est::Finetune::lora;
          s.lora_rank = 8;
        }
        r.micro_batch = 2;
        r.fits = true;
        r.memory_gib = number(cell.at("peak memory"));
        r.memory_kind = MemoryKind::reserved;
        r.tokens_per_s_gpu = number(cell.at("tokens/s"));
      } else if (contains(sec.title, "MPT-7B")) {
        r.source = "mosaicml/llm-foundry benchmarking README (MPT-7B)";
        const std::string gpus = cell.at("GPUs");
        r.gpu = contains(gpus, "H100") ? "h100-sxm" : "a100-80g-sxm";
        s.model = *model::find_preset("mpt-7b");
        s.seq_len = 2048;
        s.precision = est::Precision::amp_bf16;
        s.strategy = est::Strategy::fsdp_full_shard;
        s.gpus_per_node = 8;
        s.flash_attention = true;
        s.chunked_loss = true;  // llm-foundry's default fused cross-entropy
        r.micro_batch = int(number(cell.at("micro-batch")));
        s.grad_checkpointing = cell.at("checkpointing") == "yes";
        r.fits = true;
        r.tokens_per_s_gpu = number(cell.at("tokens/s per GPU"));
      } else {
        continue;
      }
      r.id = stem(path) + "-" + std::to_string(rows.size() + 1);
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

Expected<std::vector<MeasuredRow>> load_file(const std::string& path) {
  return path.ends_with(".md") ? load_public_md(path) : load_yaml(path);
}

Prediction predict(const MeasuredRow& row) {
  const profile::GpuSpec& gpu = *catalog().find(row.gpu);
  est::LinkOptions links;
  links.intra = row.link;
  const est::Hardware hw = *est::hardware_for(gpu, nullptr, links);
  Prediction p;
  p.est = est::estimate(row.setup, hw, row.micro_batch, row.accumulation);
  const est::MemoryBreakdown& m = p.est.memory;
  switch (row.memory_kind) {
    case MemoryKind::allocated:
      p.memory_gib = m.allocated();
      break;
    case MemoryKind::reserved:
      p.memory_gib = m.reserved();
      break;
    case MemoryKind::device:
      p.memory_gib = row.context_gib ? m.reserved() + *row.context_gib : m.total;
      break;
  }
  p.fits = p.est.fits;
  p.tokens_per_s_gpu = p.est.throughput.tokens_per_s / row.setup.world_size();
  return p;
}

Split split_of(const MeasuredRow& row) {
  // Calibration: the shared files, and the files from projects the shared file also draws on
  // (llm-foundry, litgpt, torchtune, DeepSpeed tutorials).
  static const char* const calibration[] = {
      "measured-calibration.yaml",   "measured-public.md",  "mosaicml-llm-foundry-benchmarks.yaml",
      "litgpt-config-hub-a10g.yaml", "torchtune-docs.yaml", "deepspeed-zero-offload-tutorial.yaml"};
  for (const char* f : calibration)
    if (row.file == f) return Split::calibration;
  return Split::held_back;
}

const char* to_string(Split split) {
  return split == Split::calibration ? "calibration" : "held-back";
}

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

Summary summarize(const std::vector<const MeasuredRow*>& rows) {
  Summary s;
  std::vector<double> mem_err, thr_log;
  for (const MeasuredRow* r : rows) {
    ++s.rows;
    const Prediction p = predict(*r);
    if (r->fits) {
      ++s.fit_rows;
      if (p.fits == *r->fits) ++s.fit_right;
      if (*r->fits && !p.fits) ++s.fit_as_oom;
      if (!*r->fits && p.fits) ++s.oom_as_fit;
    }
    if (r->memory_gib) {
      ++s.mem_rows;
      const double e = (p.memory_gib - *r->memory_gib) / *r->memory_gib;
      mem_err.push_back(e);
      if (std::abs(e) <= 0.10) ++s.mem_within10;
      if (std::abs(e) <= 0.20) ++s.mem_within20;
      if (std::abs(e) <= 0.50) ++s.mem_within50;
    }
    if (r->tokens_per_s_gpu) {
      ++s.thr_rows;
      const double ratio = p.tokens_per_s_gpu / *r->tokens_per_s_gpu;
      thr_log.push_back(std::log(ratio));
      if (ratio <= kThroughputFactor && ratio >= 1 / kThroughputFactor) ++s.thr_within;
      if (ratio <= 2 && ratio >= 0.5) ++s.thr_within2;
    }
  }
  s.mem_median = median(mem_err);
  s.thr_median = std::exp(median(thr_log)) - 1;
  return s;
}

std::string memory_class(const MeasuredRow& row) {
  switch (row.memory_kind) {
    case MemoryKind::allocated:
      return "memory: allocated";
    case MemoryKind::reserved:
      return "memory: reserved";
    case MemoryKind::device:
      return "memory: nvidia-smi";
  }
  return "memory: ?";
}

std::string throughput_class(const MeasuredRow& row) {
  if (row.setup.nodes > 1) return "throughput: several nodes";
  return row.setup.world_size() > 1 ? "throughput: one node" : "throughput: one GPU";
}

std::string fit_class(const MeasuredRow& row) {
  return "fit: " + std::string(est::to_string(row.setup.finetune));
}

std::vector<std::pair<std::string, std::vector<const MeasuredRow*>>> by_class(
    const std::vector<const MeasuredRow*>& rows) {
  std::map<std::string, std::vector<const MeasuredRow*>> groups;
  for (const MeasuredRow* r : rows) {
    if (r->memory_gib) groups[memory_class(*r)].push_back(r);
    if (r->tokens_per_s_gpu) groups[throughput_class(*r)].push_back(r);
    if (r->fits) groups[fit_class(*r)].push_back(r);
  }
  return {groups.begin(), groups.end()};
}

std::vector<std::string> run_kinds(const MeasuredRow& row) {
  const est::TrainingSetup& s = row.setup;
  std::vector<std::string> kinds;
  if (s.model.kind == model::Kind::encoder_decoder) kinds.emplace_back("run: encoder-decoder");
  if (s.model_parallel()) kinds.emplace_back("run: tp/pp/cp");
  if (s.model.is_moe()) kinds.emplace_back("run: moe");
  if (s.precision == est::Precision::fp8) kinds.emplace_back("run: fp8");
  if (est::is_deepspeed(s.strategy)) kinds.emplace_back("run: deepspeed");
  return kinds;
}

std::vector<std::pair<std::string, std::vector<const MeasuredRow*>>> by_run_kind(
    const std::vector<const MeasuredRow*>& rows) {
  std::map<std::string, std::vector<const MeasuredRow*>> groups;
  for (const MeasuredRow* r : rows)
    for (const std::string& kind : run_kinds(*r)) groups[kind].push_back(r);
  return {groups.begin(), groups.end()};
}

bool below_target_kind(const MeasuredRow& row) {
  const est::TrainingSetup& s = row.setup;
  return s.model_parallel() || s.model.is_moe() || s.precision == est::Precision::fp8;
}

std::vector<const MeasuredRow*> established(const std::vector<const MeasuredRow*>& rows) {
  std::vector<const MeasuredRow*> out;
  for (const MeasuredRow* r : rows)
    if (!below_target_kind(*r)) out.push_back(r);
  return out;
}

}  // namespace jobgen::accuracy
