// `jobgen plan --json`: the PlanReport as JSON. Key names are a contract for scripts (and the
// job ledger); docs/jobspec.md lists them.
#include "jobgen/view/plan_view.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "jobgen/estimate/memory_json.hpp"

namespace jobgen::view {

using namespace jobgen::plan;

namespace est = jobgen::estimate;
using json = nlohmann::ordered_json;

namespace {

json optional_number(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

json row_json(const PlanRow& row) {
  json j;
  j["id"] = row.id;
  j["label"] = row.label();
  j["group"] = row.group;
  j["gpu"] = row.gpu;
  j["gpu_name"] = row.gpu_name;
  j["mig_profile"] = row.mig_profile.empty() ? json(nullptr) : json(row.mig_profile);
  j["gres"] = row.gres;
  j["partition"] = row.partition;
  j["partition_max_time_s"] =
      row.partition_max_time_s ? json(*row.partition_max_time_s) : json(nullptr);
  j["nodes"] = row.nodes;
  j["gpus_per_node"] = row.gpus_per_node;
  j["world_size"] = row.world_size();
  // Only for model-parallel rows, so that data-parallel plans read as before.
  if (row.tp * row.pp * row.cp > 1)
    j["parallel"] = {{"tp", row.tp},
                     {"pp", row.pp},
                     {"vpp", row.vpp},
                     {"cp", row.cp},
                     {"sp", row.sp},
                     {"dp", row.dp()},
                     {"worst_stage", row.memory.stage}};
  j["max_micro_batch"] = {{"conservative", row.max_micro.conservative},
                          {"recommended", row.max_micro.recommended},
                          {"aggressive", row.max_micro.aggressive}};
  j["micro_batch"] = row.micro_batch;
  j["grad_accum"] = row.grad_accum;
  j["effective_batch"] = row.effective_batch;
  j["learning_rate"] = optional_number(row.learning_rate);
  j["steps"] = row.steps;
  j["precision"] = est::to_string(row.precision);
  j["grad_checkpointing"] = row.grad_checkpointing;
  j["grad_checkpointing_note"] = row.checkpointing_note;
  j["calibration_note"] = row.calibration_note.empty() ? json(nullptr) : json(row.calibration_note);
  j["calibration_factor"] = row.calibration_factor;
  j["calibration_memory_factor"] = row.calibration_memory_factor;
  j["memory_gib"] = est::memory_breakdown_json(row.memory);
  j["capacity_gib"] = row.capacity_gib;
  j["fits"] = row.fits;
  j["runnable"] = row.runnable;
  j["step_time_s"] = row.step_time_s;
  j["total_time_s"] = row.total_time_s;
  j["steps_per_epoch"] = row.steps_per_epoch > 0 ? json(row.steps_per_epoch) : json(nullptr);
  j["epoch_time_s"] = row.steps_per_epoch > 0 ? json(row.epoch_time_s) : json(nullptr);
  j["scaling_efficiency"] = row.scaling_efficiency;
  j["samples_per_s"] = row.samples_per_s;
  j["tokens_per_s"] = row.tokens_per_s;
  j["gpu_hours"] = row.gpu_hours;
  j["cost"] = optional_number(row.cost);
  j["within_time_limit"] = row.within_time_limit;
  j["chain_jobs"] = row.chain_jobs;
  j["availability"] = row.availability;
  j["warnings"] = row.warnings;
  return j;
}

json recommendation_json(const std::optional<Recommendation>& rec) {
  if (!rec) return nullptr;
  return {{"option", rec->row}, {"reason", rec->reason}};
}

const char* basis_name(StartBasis b) {
  switch (b) {
    case StartBasis::slurm:
      return "slurm";
    case StartBasis::free_now:
      return "free_now";
    case StartBasis::time_limits:
      return "time_limits";
    case StartBasis::unknown:
      break;
  }
  return "unknown";
}

json start_json_impl(const PlanRow& row, int64_t now) {
  const StartEstimate s = row.start.value_or(StartEstimate{});
  return {{"basis", basis_name(s.basis)},
          {"in_s", s.known() ? json(s.in_s) : json(nullptr)},
          {"at", s.known() ? json(now + s.in_s) : json(nullptr)},
          {"text", describe_start(s)}};
}

void add_queue_json(const PlanReport& r, json& plan) {
  if (!r.queue) return;
  const QueueSnapshot& q = *r.queue;
  json groups = json::array();
  for (const GroupQueue& g : q.groups) {
    groups.push_back(
        {{"name", g.group},
         {"free_gpus", g.free_gpus()},
         {"total_gpus", g.total_gpus()},
         {"usable_nodes", g.nodes.size()},
         {"excluded_nodes", g.excluded_nodes},
         {"pending_jobs", g.pending_jobs},
         {"pending_gpus", g.pending_gpus},
         {"own_pending_jobs", g.own_pending_jobs ? json(*g.own_pending_jobs) : json(nullptr)}});
  }
  plan["queue"] = {{"available", q.available},
                   {"unavailable_reason", q.available ? json(nullptr) : json(q.unavailable_reason)},
                   {"source", q.source},
                   {"time", q.now},
                   {"groups", groups},
                   {"profile_drift", q.profile_drift},
                   {"notes", q.notes},
                   {"limits_unavailable",
                    q.limits_unavailable.empty() ? json(nullptr) : json(q.limits_unavailable)}};
  for (auto& option : plan["options"]) {
    const PlanRow* row = r.row(option["id"].get<int>());
    if (row == nullptr || !row->start) continue;
    option["start"] = start_json_impl(*row, q.now);
    option["finish_in_s"] = row->finish_in_s ? json(*row->finish_in_s) : json(nullptr);
    if (row->limit) {
      const LimitCheck& l = *row->limit;
      option["limits"] = {{"verdict", l.verdict},
                          {"account", l.account},
                          {"qos", l.qos},
                          {"reason", l.reason.empty() ? json(nullptr) : json(l.reason)},
                          {"detail", l.detail.empty() ? json(nullptr) : json(l.detail)},
                          {"fairshare", l.fairshare ? json(*l.fairshare) : json(nullptr)},
                          {"chosen", l.chosen},
                          {"unchecked", l.unchecked},
                          {"text", describe_limit(l)}};
    }
  }
  plan["finish_ranking"] = r.finish_ranking;
  plan["recommendations"]["finishes_first"] =
      r.finishes_first
          ? json{{"option", r.finishes_first->row}, {"reason", r.finishes_first->reason}}
          : json(nullptr);
}

}  // namespace

json start_json(const PlanRow& row, int64_t now) {
  return start_json_impl(row, now);
}

json plan_json(const PlanReport& r) {
  json job;
  job["name"] = r.job_name;
  job["source"] = r.source;
  job["model"] = r.model_name;
  job["model_params"] = r.model_params;
  job["seq_len"] = r.seq_len;
  job["target_len"] = r.target_len > 0 ? json(r.target_len) : json(nullptr);
  job["precision"] = est::to_string(r.precision);
  job["optimizer"] = est::to_string(r.optimizer);
  job["strategy"] = est::to_string(r.strategy);
  job["offload"] = est::to_string(r.offload);
  job["finetune"] = est::to_string(r.finetune);
  job["lora_rank"] = r.lora_rank > 0 ? json(r.lora_rank) : json(nullptr);
  job["lora_base"] = r.lora_base.empty() ? json(nullptr) : json(r.lora_base);
  job["grad_checkpointing"] = to_string(r.grad_checkpointing);
  job["flash_attention"] = r.flash_attention;
  job["target_batch"] = r.target_batch
                            ? json{{"min", r.target_batch->min}, {"max", r.target_batch->max}}
                            : json(nullptr);
  job["micro_batch"] = r.fixed_micro_batch ? json(*r.fixed_micro_batch) : json("auto");
  job["length"] = r.length;

  json groups = json::array();
  for (const GroupInfo& g : r.groups) {
    groups.push_back({{"name", g.name},
                      {"gpu", g.gpu.id},
                      {"gpu_name", g.gpu.name},
                      {"mig_profile", g.mig_profile.empty() ? json(nullptr) : json(g.mig_profile)},
                      {"capacity_gib", g.capacity_gib},
                      {"gpus_per_node", g.gpus_per_node},
                      {"node_count", g.node_count},
                      {"max_nodes_per_job", g.max_nodes_per_job},
                      {"price_per_gpu_hour", optional_number(g.price_per_gpu_hour)},
                      {"availability", g.availability}});
  }
  json options = json::array();
  for (const PlanRow& row : r.rows) options.push_back(row_json(row));

  json out{{"job", job},
           {"profile", r.profile},
           {"currency", r.currency},
           {"target", r.target.empty() ? json(nullptr) : json(r.target)},
           {"groups", groups},
           {"options", options},
           {"recommendations",
            {{"fastest", recommendation_json(r.fastest)},
             {"cheapest", recommendation_json(r.cheapest)},
             {"balanced", recommendation_json(r.balanced)}}},
           {"ranking", r.ranking},
           {"notes", r.notes}};
  out["anchor"] = r.anchor
                      ? json{{"measured_step_time_s", r.anchor->measured_step_s},
                             {"estimated_step_time_s", r.anchor->estimated_step_s},
                             {"factor", r.anchor->factor},
                             {"setting", r.anchor->setting},
                             {"steps", r.anchor->steps > 0 ? json(r.anchor->steps) : json(nullptr)},
                             {"source", r.anchor->source},
                             {"text", anchor_text(*r.anchor)}}
                      : json(nullptr);
  add_queue_json(r, out);
  return out;
}

std::string render_json(const PlanReport& report) {
  return plan_json(report).dump(2) + "\n";
}

}  // namespace jobgen::view
