// Cluster profile loader (profile/profile_loader.hpp) on arbitrary bytes; a profile that loads is
// also planned for a fixed job spec and its recommended row turned into a Slurm request, so that
// every number a profile can hold goes through the planner's and the request's arithmetic
// (UBSan reports any overflow).
#include "fuzz_common.hpp"
#include "jobgen/plan/planner.hpp"
#include "jobgen/profile/profile_summary.hpp"
#include "jobgen/render/request.hpp"

namespace {
const jobgen::spec::JobSpec& fixed_spec() {
  static const jobgen::spec::JobSpec s = jobgen::fuzz::must(
      jobgen::spec::parse_job_spec("name: f\nmodel: bert-base\nseq_len: 128\nsteps: 1000\n"
                                   "checkpoint: {resumable: true}\ncommand: train.py\n",
                                   "fuzz-spec.yaml"),
      "job spec");
  return s;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace jobgen;
  const auto load = profile::load_profile(fuzz::text(data, size), "fuzz.yaml", fuzz::catalog());
  if (!load.profile) return 0;
  const profile::Profile& prof = *load.profile;
  (void)profile::cluster_totals(prof);
  if (prof.node_groups.size() > 4) return 0;  // keep one input fast
  auto report = plan::make_plan(fixed_spec(), prof, fuzz::catalog(), {});
  if (!report || report->rows.empty()) return 0;
  const plan::PlanRow* row = report->row(report->balanced ? report->balanced->row : 1);
  if (row != nullptr) (void)render::build_render_input(prof, fixed_spec(), *row, {});
  return 0;
}
