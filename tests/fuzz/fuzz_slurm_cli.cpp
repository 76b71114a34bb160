// The Slurm command-line output parsers (slurm/sbatch/command_text.hpp,
// slurm/sbatch/accounting_text.hpp, slurm/sbatch/sacct_usage.hpp, slurm/sbatch/sbatch_backend.hpp)
// and the id helpers of slurm/records.hpp; the first byte picks the parser (accounting's share
// sacct's byte).
#include "fuzz_common.hpp"
#include "jobgen/slurm/records.hpp"
#include "jobgen/slurm/sbatch/accounting_text.hpp"
#include "jobgen/slurm/sbatch/command_text.hpp"
#include "jobgen/slurm/sbatch/sacct_usage.hpp"
#include "jobgen/slurm/sbatch/sbatch_backend.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace jobgen::slurm;
  if (size == 0) return 0;
  const std::string_view text = jobgen::fuzz::text(data + 1, size - 1);
  switch (data[0] % 8) {
    case 0:
      if (auto jobs = parse_squeue_fields(text)) {
        for (const auto& j : *jobs) (void)matches_id(j, "1_2");
      }
      break;
    case 1:
      (void)parse_sacct(text);
      (void)parse_sacctmgr_assoc(text);
      (void)parse_sacctmgr_qos(text);
      (void)parse_sshare(text);
      (void)parse_tres(text);
      (void)parse_sacct_usage(text);
      break;
    case 2:
      (void)parse_sbatch_parsable(text);
      break;
    case 3:
      (void)parse_test_only(text);
      break;
    case 4:
      (void)unknown_ids_in_scancel(text);
      (void)explain_slurm_error("sbatch", text);
      break;
    case 5:
      (void)parse_partitions(text);
      (void)parse_sinfo_nodes(text);
      (void)parse_scontrol_nodes(text);
      (void)parse_node_states(text);
      break;
    case 6:
      (void)is_job_id(text);
      (void)array_spec_contains(text, 7);
      break;
    default:
      (void)parse_slurm_timestamp(text);
      (void)classify_error_text(text);
      (void)parse_sacct_size_kib(text, 'K');
      (void)parse_sacct_duration(text);
      (void)tres_gpus(text);
  }
  return 0;
}
