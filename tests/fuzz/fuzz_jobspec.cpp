// Job spec parser (plan/jobspec.hpp) on arbitrary bytes; a spec that parses is planned on the
// bundled markov profile and its recommended row rendered with the bundled templates: the whole
// path from text to script, under ASan and UBSan.
#include "fuzz_common.hpp"
#include "jobgen/plan/planner.hpp"
#include "jobgen/render/renderer.hpp"
#include "jobgen/render/request.hpp"
#include "jobgen/view/plan_view.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace jobgen;
  auto spec = spec::parse_job_spec(fuzz::text(data, size), "fuzz.yaml");
  if (!spec || !spec->model_file.empty()) return 0;
  plan::PlanOptions options;
  options.target = "l40s";
  auto report = plan::make_plan(*spec, fuzz::markov(), fuzz::catalog(), options);
  if (!report) return 0;
  (void)view::render_text(*report);
  const plan::PlanRow* row = report->row(report->balanced ? report->balanced->row : 1);
  if (row == nullptr) return 0;
  auto req = render::build_render_input(fuzz::markov(), *spec, *row, {});
  if (req) (void)render::render_script(fuzz::bundled_templates(), req->input);
  return 0;
}
