// Users' launcher configs (spec/config_document.hpp): an accelerate YAML, or a DeepSpeed JSON when
// the input starts with '{'. A config that reads must take jobgen's settings and print as JSON
// (nlohmann's dump throws on text that is not UTF-8, which libFuzzer reports as a crash); one that
// does not read must say where.
#include <cstdlib>

#include "fuzz_common.hpp"
#include "jobgen/spec/config_document.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace jobgen;
  const std::string_view text = fuzz::text(data, size);
  const bool json = !text.empty() && text.front() == '{';
  auto doc = spec::ConfigDocument::read(text, "fuzz.cfg", json);
  if (!doc) {
    if (doc.error().where.file != "fuzz.cfg") std::abort();
    return 0;
  }
  doc->set({"mixed_precision"}, "bf16", "the plan trains in bf16");
  doc->set({"zero_optimization", "stage"}, 2, "the plan uses ZeRO-2");
  (void)doc->where({"zero_optimization", "stage"});
  (void)doc->json().dump(2);
  return 0;
}
