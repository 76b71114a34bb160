// Slurm's JSON records (slurm/records.hpp: slurmrestd answers and 22.05's squeue/sinfo --json
// alike) and the slurmrestd submission answer (slurm/rest/codec.hpp); the first byte picks the
// decoder.
#include "fuzz_common.hpp"
#include "jobgen/slurm/records.hpp"
#include "jobgen/slurm/rest/codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace jobgen::slurm;
  if (size == 0) return 0;
  const std::string_view body = jobgen::fuzz::text(data + 1, size - 1);
  switch (data[0] % 6) {
    case 0:
      if (auto list = decode_job_list(body, "fuzz", [](const JobInfo& j) {
            return matches_id(j, "1") || !tag_of(j).empty();
          })) {
        (void)classify_errors(list->messages.errors);
      }
      break;
    case 1:
      (void)decode_node_list(body, "fuzz");
      break;
    case 2:
      (void)decode_partition_list(body, "fuzz");
      break;
    case 3:
      (void)decode_submit(body);
      break;
    case 4:
      (void)format_slurm_errors(decode_messages(body).errors);
      break;
    default:
      (void)parse_node_gpus(body, body.substr(body.size() / 2));
      (void)normalise_gres(body);
  }
  return 0;
}
