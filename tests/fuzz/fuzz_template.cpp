// Template checker (render/template_set.hpp) on arbitrary bytes as the torchrun.sbatch template;
// a template that passes the check is rendered with hostile values: the checker's promise is
// that whatever it accepts renders in bounded time and memory.
#include "fuzz_common.hpp"
#include "jobgen/render/renderer.hpp"

namespace {
jobgen::render::RenderInput hostile_input() {
  using namespace jobgen::render;
  RenderInput in;
  in.launcher = Launcher::torchrun;
  in.nodes = 2;
  in.gpus_per_node = 4;
  in.sbatch.job_name = "fuzz$(x)";
  in.sbatch.partition = "gpu";
  in.sbatch.nodes = 2;
  in.sbatch.gres = "gpu:4";
  in.sbatch.time_limit_s = 3600;
  in.sbatch.signal = "B:USR1@90";
  in.command_text = "train.py --lr {{learning_rate}} '$(touch x)'";
  in.placeholders = {{"learning_rate", "1e-4"}};
  in.environment = {{"A", "$(touch x)"}, {"B", "`x`'\"\n"}};
  in.plan_summary = {"line one", "'quoted' $(line)"};
  in.log_dir = "logs/$(touch x)";
  in.checkpoint_dir = "/ck/$USER";
  in.stage = "st'age";
  in.generated_by = {"jobgen", "render"};
  return in;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace jobgen;
  static render::TemplateSet set = fuzz::bundled_templates();
  static const render::RenderInput in = hostile_input();
  set.templates["torchrun.sbatch"] = render::Template{std::string(fuzz::text(data, size)), "fuzz"};
  if (!render::validate_template(set.templates["torchrun.sbatch"], set)) return 0;
  (void)render::render_script(set, in);
  return 0;
}
