// The terminal report: one aligned table per node group, 100 columns wide at most.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "jobgen/util/redact.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"
#include "jobgen/util/text_table.hpp"
#include "jobgen/util/units.hpp"
#include "jobgen/view/plan_view.hpp"

namespace jobgen::view {

using namespace jobgen::plan;

namespace est = jobgen::estimate;

std::string training_summary(const PlanReport& r) {
  std::string s = fmt::format("{}, {}, {}", est::to_string(r.precision),
                              est::to_string(r.optimizer), est::to_string(r.strategy));
  if (r.offload != est::Offload::none) s += fmt::format(", offload {}", est::to_string(r.offload));
  s += r.finetune == est::Finetune::full
           ? ", full training"
           : fmt::format(", {} rank {}", est::to_string(r.finetune), r.lora_rank);
  if (r.lora_base == "fp32" && !r.lora_base_given)
    s += " on an fp32 base (what amp implies; finetune: {base_dtype: bf16} if it is loaded in "
         "bf16)";
  else if (!r.lora_base.empty())
    s += " on a " + r.lora_base + " base";
  s += fmt::format(", activation checkpointing {}", to_string(r.grad_checkpointing));
  s += r.flash_attention ? ", flash attention" : ", no flash attention";
  return s;
}

namespace {

constexpr size_t kWidth = 100;

// Greedy word wrap; continuation lines get `indent` spaces. A word longer than a line (a long
// path or name) is cut into pieces that fit.
std::string wrap(const std::string& text, size_t first_indent, size_t indent) {
  std::string out(first_indent, ' ');
  size_t col = first_indent;
  size_t pos = 0;
  bool line_start = true;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    end = std::min(end, pos + (kWidth - indent));
    const std::string word = text.substr(pos, end - pos);
    if (!line_start && col + 1 + word.size() > kWidth) {
      out += "\n" + std::string(indent, ' ');
      col = indent;
      line_start = true;
    }
    if (!line_start) {
      out += ' ';
      ++col;
    }
    out += word;
    col += word.size();
    line_start = false;
    pos = end < text.size() && text[end] == ' ' ? end + 1 : end;
  }
  return out + "\n";
}

// Columns are right-aligned except those listed as left-aligned; left-aligned text (labels,
// availability notes) is cut with "..." until the table fits kWidth; numbers are never cut.
std::string table(std::vector<std::vector<std::string>> rows, size_t indent,
                  const std::vector<bool>& left) {
  util::TableStyle style;
  style.indent = indent;
  for (const bool l : left) style.align.push_back(l ? util::Align::left : util::Align::right);
  style.rest = util::Align::right;
  style.max_width = kWidth;
  return util::format_table(std::move(rows), style);
}

std::string step_text(double s) {
  if (s < 1) return fmt::format("{:.0f}ms", s * 1000);
  return s < 100 ? fmt::format("{:.1f}s", s) : fmt::format("{:.0f}s", s);
}

std::string count_label(const PlanRow& row) {
  return row.nodes > 1 ? fmt::format("{}x{}", row.nodes, row.gpus_per_node)
                       : std::to_string(row.gpus_per_node);
}

// "#1", "#1, #3", "#2-#5": row ids, consecutive ones as a range.
std::string id_list(const std::vector<int>& ids) {
  std::string out;
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    out += (out.empty() ? "#" : ", #") + std::to_string(ids[i]);
    if (j > i) out += (j == i + 1 ? ", #" : "-#") + std::to_string(ids[j]);
    i = j + 1;
  }
  return out;
}

// The effective batch, with how far it is from a single-number target ("264 +3%").
std::string batch_text(const PlanReport& r, const PlanRow& row) {
  std::string text = std::to_string(row.effective_batch);
  if (r.target_batch && r.target_batch->min == r.target_batch->max &&
      row.effective_batch != r.target_batch->min && r.target_batch->min > 0) {
    const double off = 100.0 * (row.effective_batch - r.target_batch->min) / r.target_batch->min;
    text += fmt::format(" {:+.0f}%", off);
  }
  return text;
}

std::string lr_text(const std::optional<double>& lr) {
  return lr ? util::format_learning_rate(*lr) : "-";
}

std::string group_header(const PlanReport& r, const GroupInfo& g) {
  std::string unit = g.mig_profile.empty() ? "GPUs" : "MIG " + g.mig_profile + " slices";
  std::string s = fmt::format("{}: {}{}, {:.1f} GiB usable each, {} {} per node, {} node{}", g.name,
                              g.gpu.name, g.mig_profile.empty() ? "" : " (MIG)", g.capacity_gib,
                              g.gpus_per_node, unit, g.node_count, g.node_count == 1 ? "" : "s");
  if (g.max_nodes_per_job > 1) s += fmt::format(" (up to {} per job)", g.max_nodes_per_job);
  if (g.price_per_gpu_hour) {
    s += ", " + format_money(*g.price_per_gpu_hour, r.currency) + " per GPU-hour";
  }
  if (const auto* mig = g.gpu.find_mig(g.mig_profile)) {
    s += fmt::format("; GPU-h count a slice as {}/{} of a GPU", mig->compute_slices,
                     mig->compute_total);
  }
  if (!g.availability.empty()) s += "; availability: " + g.availability;
  return wrap(s, 0, 4);
}

// The last guard of the documented width: a line still longer (absurd numbers in a table) is
// continued on the next line, indented.
// A MIG group's gres counts are slices, not GPUs.
std::string group_line(const GroupQueue& g, bool mig) {
  const char* unit = mig ? "MIG slices" : "GPUs";
  std::string line =
      fmt::format("{}: {} of {} {} free now", g.group, g.free_gpus(), g.total_gpus(), unit);
  line += g.pending_jobs == 0 ? ", nothing pending"
                              : fmt::format(", {} job{} pending for {} {}", g.pending_jobs,
                                            g.pending_jobs == 1 ? "" : "s", g.pending_gpus, unit);
  if (g.own_pending_jobs) line += fmt::format(" ({} yours)", *g.own_pending_jobs);
  if (g.excluded_nodes > 0)
    line += fmt::format("; {} node{} down, drained, reserved or unknown to Slurm", g.excluded_nodes,
                        g.excluded_nodes == 1 ? "" : "s");
  return line;
}

// The "Queue" section (queue.hpp); "" when the plan did not look at the queue.
std::string queue_text(const PlanReport& r) {
  if (!r.queue) return "";
  const QueueSnapshot& q = *r.queue;
  if (!q.available) {
    return "\nQueue\n" + wrap("queue data unavailable: " + q.unavailable_reason +
                                  ". Start and finish times are unknown; the ranking is by run "
                                  "time only (--no-queue skips the query)",
                              2, 4);
  }
  std::string out = "\nQueue (" + q.source + ")\n";
  for (const GroupQueue& g : q.groups) {
    bool planned = false;
    bool mig = false;
    for (const GroupInfo& info : r.groups) {
      planned |= info.name == g.group;
      mig |= info.name == g.group && !info.mig_profile.empty();
    }
    if (planned) out += wrap(group_line(g, mig), 2, 4);
  }
  if (!r.finish_ranking.empty()) {
    const size_t shown = std::min<size_t>(r.finish_ranking.size(), 10);
    out += fmt::format("\nRanked by expected finish = start + run time ({} of {})\n", shown,
                       r.finish_ranking.size());
    std::vector<std::vector<std::string>> cells{{"#", "option", "start", "run", "finish"}};
    for (size_t i = 0; i < shown; ++i) {
      const PlanRow& row = *r.row(r.finish_ranking[i]);
      const StartEstimate start = row.start.value_or(StartEstimate{});
      cells.push_back(
          {std::to_string(row.id), row.label(),
           row.limit && row.limit->holds() ? row.limit->verdict + ": " + row.limit->reason
                                           : describe_start(start),
           util::format_duration(row.total_time_s),
           row.finish_in_s
               ? "~" + util::format_duration(*row.finish_in_s, util::DurationStyle::compound)
               : "-"});
    }
    out += table(cells, 2, {false, true, true, false, false});
  }
  if (!q.limits.empty()) {
    out += "\nLimits (sacctmgr, sshare)\n";
    // The options of the ranking above (its first 10).
    for (size_t i = 0; i < std::min<size_t>(r.finish_ranking.size(), 10); ++i) {
      const PlanRow& row = *r.row(r.finish_ranking[i]);
      if (row.limit)
        out += wrap("#" + std::to_string(row.id) + " " + describe_limit(*row.limit), 2, 4);
    }
  } else if (!q.limits_unavailable.empty()) {
    out += wrap("- limits not checked: " + q.limits_unavailable, 2, 4);
  }
  for (const auto& n : q.notes) out += wrap("- " + n, 2, 4);
  return out;
}

std::string enforce_width(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line = std::string_view(text).substr(start, end - start);
    bool first = true;
    while (line.size() > (first ? kWidth : kWidth - 4)) {
      const size_t take = first ? kWidth : kWidth - 4;
      out += (first ? "" : "    ") + std::string(line.substr(0, take)) + "\n";
      line.remove_prefix(take);
      first = false;
    }
    out += (first ? "" : "    ") + std::string(line) + "\n";
    start = end + 1;
  }
  return out;
}

// What is planned: the job, the model, the training setup, the batch and the profile.
std::string header_text(const PlanReport& r) {
  std::string out =
      wrap(fmt::format("Plan for {}{}", r.job_name, r.source.empty() ? "" : " (" + r.source + ")"),
           0, 4);
  std::string model = r.model_name;
  if (!r.model_description.empty()) model += " - " + r.model_description;
  if (r.model_params > 0 && r.model_description.empty()) {
    model += fmt::format(", {:.2f}B parameters", static_cast<double>(r.model_params) / 1e9);
  }
  out += wrap(fmt::format("model     {}; sequence {} tokens{}", model, r.seq_len,
                          r.target_len > 0 ? fmt::format(", target {} tokens", r.target_len) : ""),
              2, 12);
  out += wrap("training  " + training_summary(r), 2, 12);
  std::string batch = r.target_batch ? "target effective batch " + r.target_batch->to_string()
                                     : "no target batch (accumulation 1)";
  if (r.fixed_micro_batch) batch += fmt::format(", micro-batch fixed at {}", *r.fixed_micro_batch);
  out += wrap(fmt::format("batch     {}; length {}", batch, r.length), 2, 12);
  const std::string levels =
      r.empirical_memory
          ? "micro-batch c/r/a = largest whose measured footprint (empirical_memory) fits in "
            "90/100/100% of the VRAM: your overhead is the margin"
          : fmt::format(
                "micro-batch c/r/a = largest that fits in {:.0f}/{:.0f}% of usable memory / "
                "in all of it once the allocator has freed its cache",
                100 * est::kConservativeUse, 100 * est::kRecommendedUse);
  out += wrap(fmt::format("profile   {}{}; {}", r.profile,
                          r.target.empty() ? "" : ", target " + r.target, levels),
              2, 12);
  if (r.anchor) out += wrap("time      " + anchor_text(*r.anchor), 2, 12);
  return out;
}

// One option's cells in its group's table.
std::vector<std::string> row_cells(const PlanReport& r, const PlanRow& row, bool lr_varies,
                                   bool ckpt, bool epochs) {
  std::vector<std::string> c{std::to_string(row.id),
                             count_label(row),
                             std::to_string(row.micro_batch),
                             fmt::format("{}/{}/{}", row.max_micro.conservative,
                                         row.max_micro.recommended, row.max_micro.aggressive),
                             std::to_string(row.grad_accum),
                             batch_text(r, row)};
  if (lr_varies) c.push_back(lr_text(row.learning_rate));
  if (ckpt) c.push_back(row.grad_checkpointing ? "on" : "off");
  c.push_back(fmt::format("{:.1f}", row.memory.total));
  if (row.runnable) {
    c.push_back(step_text(row.step_time_s));
    c.push_back(util::format_duration(row.total_time_s));
    if (epochs) c.push_back(util::format_duration(row.epoch_time_s));
    c.push_back(fmt::format("{:.0f}%", 100 * row.scaling_efficiency));
    c.push_back(fmt::format("{:.1f}", row.gpu_hours));
    c.push_back(row.cost ? format_money(*row.cost, r.currency) : "-");
  } else {
    for (int i = 0; i < (epochs ? 5 : 4); ++i) c.emplace_back("-");
    c.emplace_back(row.fits ? "not runnable" : "no fit");
  }
  return c;
}

// One node group: its header, a table of its options and their notes, each note printed once
// and naming its options ("all" when every one).
std::string group_text(const PlanReport& r, const GroupInfo& g, bool lr_varies) {
  std::vector<std::string> head{"#", "GPUs", "micro", "max c/r/a", "accum", "batch"};
  if (lr_varies) head.emplace_back("LR");
  const bool epochs =
      std::ranges::any_of(r.rows, [](const PlanRow& row) { return row.steps_per_epoch > 0; });
  // Without an option that checkpoints, the column would say "off" on every line.
  const bool ckpt =
      std::ranges::any_of(r.rows, [](const PlanRow& row) { return row.grad_checkpointing; });
  if (ckpt) head.emplace_back("ckpt");
  for (const char* h : {"mem GiB", "step", "total"}) head.emplace_back(h);
  if (epochs) head.emplace_back("epoch");
  for (const char* h : {"scale", "GPU-h", "cost"}) head.emplace_back(h);
  std::vector<std::vector<std::string>> cells{head};
  std::vector<std::pair<std::string, std::vector<int>>> shared;
  const auto note = [&](const std::string& text, int id) {
    auto it = std::find_if(shared.begin(), shared.end(), [&](auto& n) { return n.first == text; });
    if (it == shared.end()) it = shared.insert(shared.end(), {text, {}});
    it->second.push_back(id);
  };
  std::size_t rows = 0;
  for (const PlanRow& row : r.rows) {
    if (row.group != g.name || row.mig_profile != g.mig_profile) continue;
    ++rows;
    cells.push_back(row_cells(r, row, lr_varies, ckpt, epochs));
    if (!row.layout().empty())
      note(fmt::format("layout {} (memory of the {})", row.layout(), row.memory.stage), row.id);
    if (!row.checkpointing_note.empty()) note(row.checkpointing_note, row.id);
    if (!row.calibration_note.empty()) note(row.calibration_note, row.id);
    for (const auto& w : row.warnings) note(w, row.id);
  }
  std::string out = "\n" + group_header(r, g) + table(cells, 2, {false, true});
  for (const auto& [text, ids] : shared) {
    out += wrap((ids.size() == rows && rows > 1 ? "all" : id_list(ids)) + ": " + text, 4, 8);
  }
  return out;
}

// Every runnable option by total time, when there is more than one group to compare.
std::string ranking_text(const PlanReport& r) {
  if (r.groups.size() <= 1 || r.ranking.size() <= 1) return "";
  const size_t shown = std::min<size_t>(r.ranking.size(), 10);
  std::string out =
      fmt::format("\nRanked by total time ({} of {} runnable options)\n", shown, r.ranking.size());
  std::vector<std::vector<std::string>> cells{{"#", "option", "total", "cost", "availability"}};
  for (size_t i = 0; i < shown; ++i) {
    const PlanRow& row = *r.row(r.ranking[i]);
    cells.push_back({std::to_string(row.id), row.label(), util::format_duration(row.total_time_s),
                     row.cost ? format_money(*row.cost, r.currency)
                              : fmt::format("{:.1f} GPU-h", row.gpu_hours),
                     row.availability});
  }
  return out + table(cells, 2, {false, true, false, false, true});
}

// The memory breakdown of the options `ids`.
std::string memory_text(const PlanReport& r, const std::vector<int>& ids) {
  // The calibration's column only when a finished run raised an estimate.
  const bool measured =
      std::ranges::any_of(ids, [&](int id) { return r.row(id)->memory.measured > 0; });
  std::vector<std::vector<std::string>> cells{
      {"#", "micro", "weights", "grads", "optimizer", "activations", "context", "slack"}};
  if (measured) cells[0].push_back("measured");
  cells[0].insert(cells[0].end(), {"total", "usable"});
  for (int id : ids) {
    const PlanRow& row = *r.row(id);
    const auto& m = row.memory;
    cells.push_back({std::to_string(id), std::to_string(row.micro_batch),
                     fmt::format("{:.2f}", m.weights), fmt::format("{:.2f}", m.gradients),
                     fmt::format("{:.2f}", m.optimizer), fmt::format("{:.2f}", m.activations),
                     fmt::format("{:.2f}", m.context), fmt::format("{:.2f}", m.slack)});
    if (measured) cells.back().push_back(fmt::format("{:.2f}", m.measured));
    cells.back().push_back(fmt::format("{:.2f}", m.total));
    cells.back().push_back(fmt::format("{:.1f}", row.capacity_gib));
  }
  return "\nMemory per GPU of the recommended options (GiB)\n" + table(cells, 2, {});
}

// The recommendations with their reasons, and the memory of the options they name.
std::string recommendation_text(const PlanReport& r) {
  std::string out = "\nRecommendation\n";
  if (r.finishes_first) out += wrap("finishes first  " + r.finishes_first->reason, 2, 18);
  const std::pair<const char*, const std::optional<Recommendation>*> recs[] = {
      {"fastest ", &r.fastest}, {"cheapest", &r.cheapest}, {"balanced", &r.balanced}};
  std::vector<int> ids;
  for (const auto& [name, rec] : recs) {
    if (!*rec) continue;
    out += wrap(std::string(name) + "  " + (*rec)->reason, 2, 12);
    if (std::find(ids.begin(), ids.end(), (*rec)->row) == ids.end()) ids.push_back((*rec)->row);
  }
  if (ids.empty()) return out + "  none: no option fits (see the warnings above)\n";
  return out + memory_text(r, ids);
}

}  // namespace

std::string render_text(const PlanReport& r) {
  std::string out = header_text(r);
  const bool lr_varies = std::any_of(r.rows.begin(), r.rows.end(), [&](const PlanRow& row) {
    return row.learning_rate && r.rows.front().learning_rate &&
           std::abs(*row.learning_rate - *r.rows.front().learning_rate) > 1e-15;
  });
  for (const GroupInfo& g : r.groups) out += group_text(r, g, lr_varies);
  if (!r.rows.empty() && r.rows.front().learning_rate && !lr_varies) {
    out += fmt::format("\nLearning rate {} for every option.\n",
                       lr_text(r.rows.front().learning_rate));
  }
  if (!r.rows.empty() &&
      std::ranges::none_of(r.rows, [](const PlanRow& row) { return row.grad_checkpointing; })) {
    out += "\nActivation checkpointing off for every option.\n";
  }
  out += ranking_text(r);
  out += queue_text(r);
  out += recommendation_text(r);
  if (!r.notes.empty()) {
    out += "\nNotes\n";
    for (const auto& n : r.notes) out += wrap("- " + n, 2, 4);
  }
  // Names and notes come from the profile and the job spec; the report goes to a terminal.
  return enforce_width(util::escape_controls(out));
}

}  // namespace jobgen::view
