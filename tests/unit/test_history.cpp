// Right-sizing the time limit from the history of the same kind of run (plan/history.hpp).
#include <doctest/doctest.h>

#include "jobgen/plan/history.hpp"

using namespace jobgen;
using namespace jobgen::plan;

namespace {

PlanRow l40s_row() {
  PlanRow row;
  row.gpu = "l40s";
  row.gpu_name = "L40S";
  row.nodes = 1;
  row.gpus_per_node = 4;
  row.micro_batch = 16;
  row.grad_accum = 2;
  row.steps = 1000;
  row.precision = estimate::Precision::amp_bf16;
  return row;
}

std::string plan_json(int micro_batch, int64_t steps, const std::string& gpu = "l40s") {
  return R"({"options": [{"id": 1, "gpu": "a100-80g", "nodes": 1, "gpus_per_node": 4},
                         {"id": 2, "gpu": ")" +
         gpu + R"(", "mig_profile": "", "nodes": 1, "gpus_per_node": 4, "micro_batch": )" +
         std::to_string(micro_batch) +
         R"(, "grad_accum": 2, "grad_checkpointing": false, "precision": "amp-bf16",
                          "chain_jobs": 1, "steps": )" +
         std::to_string(steps) + "}]}";
}

PastJob past(const std::string& state, int64_t elapsed_s, int micro_batch = 16,
             int64_t steps = 1000) {
  return {"1",           plan_json(micro_batch, steps), 2, state,
          1'800'000'000, 1'800'000'000 + elapsed_s,     1};
}

}  // namespace

TEST_CASE("history: the longest completed run of the same kind, +20%, in whole 5 minutes") {
  const auto p =
      propose_time_limit({past("COMPLETED", 3 * 3600), past("COMPLETED", 2 * 3600)}, l40s_row());
  REQUIRE(p);
  CHECK(p->completed == 2);
  CHECK(p->longest_s == 3 * 3600);
  CHECK(p->limit_s == 3 * 3600 + 40 * 60);  // 3:36:00 up to whole 5 minutes
  CHECK(p->source == "2 completed runs of this job on L40S x4, the longest 03:00:00 (+20%)");
  // Rounded up: 1:00:01 x1.2 = 1:12:01 -> 1:15:00; never under 10 minutes.
  CHECK(propose_time_limit({past("COMPLETED", 3601)}, l40s_row())->limit_s == 75 * 60);
  CHECK(propose_time_limit({past("COMPLETED", 30)}, l40s_row())->limit_s == 10 * 60);
}

TEST_CASE("history: a run that started before it was submitted is no history") {
  PastJob garbage = past("COMPLETED", int64_t{36} * 365 * 86400);
  garbage.start_time = 600'000'000;  // 1989: 36 "years" before its end
  garbage.end_time = *garbage.start_time + int64_t{36} * 365 * 86400;
  garbage.submit_time = 1'799'999'000;
  PastJob real = past("COMPLETED", 3600);
  real.submit_time = 1'799'999'900;  // 100 s before its start
  const auto p = propose_time_limit({garbage, real}, l40s_row());
  REQUIRE(p);
  CHECK(p->completed == 1);
  CHECK(p->longest_s == 3600);
  CHECK_FALSE(propose_time_limit({garbage}, l40s_row()));
}

TEST_CASE("history: steps scale the time -- a timed-out run raises it") {
  // Half the steps then: twice the time now.
  const auto scaled = propose_time_limit({past("COMPLETED", 3600, 16, 500)}, l40s_row());
  REQUIRE(scaled);
  CHECK(scaled->longest_s == 7200);
  // A run of the same kind that hit its limit at 3 h needed more: at least 4.5 h.
  const auto raised =
      propose_time_limit({past("COMPLETED", 2 * 3600), past("TIMEOUT", 3 * 3600)}, l40s_row());
  REQUIRE(raised);
  CHECK(raised->limit_s == 4 * 3600 + 30 * 60);
  CHECK(raised->timed_out == 1);
  CHECK(raised->source.ends_with("; 1 run hit the time limit: at least x1.5 of 03:00:00"));
}

TEST_CASE("history: only runs of the same kind that ran their whole course count") {
  const auto row = l40s_row();
  // Another micro-batch, another GPU, a failed or cancelled run, a later attempt (resumed from a
  // checkpoint), a timed-out run alone, no start time: no proposal.
  CHECK_FALSE(propose_time_limit({past("COMPLETED", 3600, 8)}, row));
  auto other_gpu = past("COMPLETED", 3600);
  other_gpu.plan_json = plan_json(16, 1000, "h100");
  CHECK_FALSE(propose_time_limit({other_gpu}, row));
  CHECK_FALSE(propose_time_limit({past("FAILED", 3600), past("CANCELLED", 3600)}, row));
  auto retry = past("COMPLETED", 3600);
  retry.attempt = 2;
  CHECK_FALSE(propose_time_limit({retry}, row));
  CHECK_FALSE(propose_time_limit({past("TIMEOUT", 3600)}, row));
  auto unstarted = past("COMPLETED", 3600);
  unstarted.start_time.reset();
  CHECK_FALSE(propose_time_limit({unstarted}, row));
  auto other_row = past("COMPLETED", 3600);
  other_row.plan_row = 1;  // the run used the A100 option of its plan
  CHECK_FALSE(propose_time_limit({other_row}, row));
  auto garbled = past("COMPLETED", 3600);
  garbled.plan_json = "{";
  CHECK_FALSE(propose_time_limit({garbled}, row));
  // A chain of jobs: no single job's time is the run's.
  auto chained = row;
  chained.chain_jobs = 3;
  CHECK_FALSE(propose_time_limit({past("COMPLETED", 3600)}, chained));
}

TEST_CASE("history: a plan of another version, with nulls and missing keys, is another kind") {
  auto nulls = past("COMPLETED", 3600);
  nulls.plan_json = R"({"options": [{"id": 2, "gpu": "l40s", "mig_profile": null, "nodes": 1,
      "gpus_per_node": 4, "micro_batch": 16, "grad_accum": 2, "precision": "amp-bf16",
      "steps": 1000}]})";
  CHECK_FALSE(propose_time_limit({nulls}, l40s_row()));
  nulls.plan_json = R"({"options": [{"id": 2, "gpu": null}]})";
  CHECK_FALSE(propose_time_limit({nulls}, l40s_row()));
}

TEST_CASE("history: --mem and --cpus-per-task from what accounting says the runs used") {
  // torchrun: one task per node whose MaxRSS covers its workers; 2 nodes x 32 CPUs.
  PastUsage a{9 * 1024 * 1024, 1, 2, 64, 3600.0 * 6, 3600};  // 9 GiB, 6 cores busy on average
  PastUsage b{11 * 1024 * 1024 + 1, 1, 2, 64, 3600.0 * 10, 3600};
  const auto p = propose_usage({a, b});
  CHECK(p.runs == 2);
  CHECK(p.peak_rss_per_node_mib.value_or(0) == 11 * 1024 + 1);
  CHECK(p.mem_per_node_mib.value_or(0) == 14 * 1024);  // 11 GiB x1.25 = 13.75 -> 14 GiB
  CHECK(p.cores_used_per_node.value_or(0) == doctest::Approx(5.0));
  CHECK(p.cpu_efficiency.value_or(0) == doctest::Approx(10.0 / 64));
  CHECK(p.cpus_per_task.value_or(0) == 7);  // 5 cores x1.25 = 6.25 -> 7
  // srun with 4 tasks per node: MaxRSS is one task's peak, the node holds four.
  PastUsage tasks{2 * 1024 * 1024, 4, 1, 16, 3600.0 * 15, 3600};
  const auto t = propose_usage({tasks});
  CHECK(t.mem_per_node_mib.value_or(0) == 10 * 1024);  // 8 GiB x1.25
  CHECK_FALSE(t.cpus_per_task);                        // 15 of 16 CPUs busy: nothing to give back
  // No accounting figures: nothing proposed; a tiny job still asks 1 GiB.
  const auto none = propose_usage({PastUsage{}});
  CHECK_FALSE(none.mem_per_node_mib);
  CHECK_FALSE(none.cpus_per_task);
  CHECK(propose_usage({PastUsage{100, 1, 1, 4, 1.0, 100}}).mem_per_node_mib == 1024);
}

TEST_CASE("history: the completed runs of a kind, for the accounting query") {
  auto retry = past("COMPLETED", 3600);
  retry.attempt = 2;
  auto mine = past("COMPLETED", 3600);
  mine.job_id = "41";
  const auto runs = completed_of_kind(
      {mine, past("COMPLETED", 3600, 8), past("TIMEOUT", 3600), retry}, l40s_row());
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].job_id == "41");
}
