// The submission path shared by `jobgen submit` and the recovery of `jobgen watch`
// (app/recovery.hpp): prepared stages are checked against the profile, rendered, recorded in
// the ledger first (an intent carrying a random tag, confirmed with the id once the scheduler
// answered) and submitted, each stage waiting for the one before (afterok). Every submission is
// an attempt of a run (ledger.hpp): a new run unless `RunInfo` names the run it continues.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "jobgen/app/job_request.hpp"
#include "jobgen/app/session.hpp"
#include "jobgen/job/sbatch_options.hpp"
#include "jobgen/slurm/backend.hpp"

namespace jobgen::app {

// When the scheduler refused a request: whether the partition's nodes offer what the job asks
// for per node (--gres), and if not, what they offer ("... (profile 'x' disagrees with the
// cluster?)"); a partition the cluster lacks is named. "" when the partition has what was asked
// (the refusal is about something else) or the cluster listed no GPU nodes there.
std::string gres_mismatch_hint(const slurm::ClusterState& cluster, const job::SbatchOptions& sbatch,
                               const std::string& profile_name);

// How `jobgen submit` was asked to submit.
struct SubmitFlags {
  bool test_only = false;
  bool dry_run = false;
  bool json = false;
  bool quiet = false;   // announce nothing (recovery reports in its own words)
  std::string jobspec;  // as given (recorded absolute)
};

struct Prepared {
  std::string stage;
  plan::PlanRow row;
  render::RenderRequest request;
  nlohmann::ordered_json plan;
  std::optional<int64_t> estimate_s;
  std::string request_json;  // what rebuilds this stage (run_request.hpp)
};

// The run a submission belongs to; a new run (its id the first attempt's tag) when absent.
struct RunInfo {
  std::string run_id;
  int attempt = 1;
  int max_attempts = 0;  // 0: recovered only by `watch --recover`
};

// Plans, builds and checks every stage before submitting any: a chain is all or nothing.
// `opts` is the request the stages were built from (recorded with each for a later retry).
Expected<std::vector<Prepared>> prepare_stages(const Context& ctx, JobSession& s, JobRequest& job,
                                               const JobRequestOptions& opts, bool local);

// FNV-1a 64 of a text, in hex: identifies the job spec text a job was submitted from.
std::string text_hash(std::string_view text);

// Renders and submits (or prints, or tests) every prepared stage, each waiting for the one
// before; `after` is the job the first waits for. Returns (stage, job id) of every submitted stage.
using Submitted = std::vector<std::pair<std::string, std::string>>;
Expected<Submitted> submit_stages(const Context& ctx, const SubmitFlags& flags, JobSession& s,
                                  JobRequest& job, slurm::Backend& backend,
                                  std::optional<std::string> spec_text,
                                  std::vector<Prepared>& prepared, std::string after,
                                  std::optional<RunInfo> run = std::nullopt);

}  // namespace jobgen::app
