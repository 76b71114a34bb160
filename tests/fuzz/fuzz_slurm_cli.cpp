// The Slurm command-line output parsers (slurm/cli_parse.hpp), read-only use of their public
// functions; the first byte picks the parser.
#include "fuzz_common.hpp"
#include "jobgen/slurm/cli_parse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace jobgen::slurm;
  if (size == 0) return 0;
  const std::string_view text = jobgen::fuzz::text(data + 1, size - 1);
  switch (data[0] % 7) {
    case 0:
      if (auto jobs = parse_squeue_json(text)) {
        for (const auto& j : *jobs) (void)matches_id(j, "1_2");
      }
      break;
    case 1:
      (void)parse_squeue_format(text);
      break;
    case 2:
      (void)parse_sbatch_parsable(text);
      break;
    case 3:
      (void)parse_test_only(text);
      break;
    case 4:
      (void)parse_sinfo_json(text);
      break;
    case 5:
      (void)parse_partitions(text);
      break;
    default:
      // KNOWN BUG, reported for slurm/cli_parse.cpp (off limits to this fuzz target's author):
      // array_spec_contains throws std::out_of_range when a ':' comes before a '-' in an item
      // ("1:2-3"); reproducer: tests/fuzz/known/slurm_cli-array-colon. Until it is fixed there,
      // such specs are not fed to it (remove this guard with the fix).
      if (text.find(':') == std::string_view::npos) (void)array_spec_contains(text, 7);
      (void)parse_slurm_timestamp(text);
  }
  return 0;
}
