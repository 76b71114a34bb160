// Slurm's errors[] and warnings[], as slurmrestd (and 22.05's squeue/sinfo --json) report them,
// read into structs; what each error number means (jobgen's explanation); and what a failure says
// about its cause (refused credentials, an unreachable controller), for honest exit codes.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace jobgen::slurm {

// One entry of Slurm's errors[] ("error_number", or "errno"/"error_code" in some 22.05 answers).
struct SlurmError {
  int number = 0;
  std::string error;        // short form ("Requested node configuration is not available")
  std::string description;  // long form, may be empty
  std::string source;       // the Slurm function that failed ("slurm_load_jobs")
};

struct SlurmMessages {
  std::vector<SlurmError> errors;
  std::vector<std::string> warnings;
};

// errors[] and warnings[] of any answer; empty when the body is not a JSON object.
SlurmMessages decode_messages(std::string_view body);

// The error's number; when Slurm sent 0 (22.05 does for some rejections), the number its text
// stands for, else 0.
int slurm_error_number(const SlurmError& error);

// jobgen's own explanation of a Slurm error number ("" when it has none).
std::string explain_slurm_error(int number);

// "Slurm error 2014 (Requested node configuration is not available: ...): <explanation>" for
// every error, one per line.
std::string format_slurm_errors(const std::vector<SlurmError>& errors);

// What Slurm's errors say about the cause, for exit codes (Exit::auth vs Exit::failure):
// refused credentials (5005 "Zero Bytes were transmitted or received" after an auth failure,
// 1007 "Protocol authentication error"), the controller unreachable (1800, 5004 timeouts,
// connection refused), or neither / only Slurm's unspecified -1 (ambiguous).
enum class SlurmFault { none, auth, unreachable, ambiguous };
SlurmFault classify_errors(const std::vector<SlurmError>& errors);
SlurmFault classify_error_text(std::string_view text);  // the CLI commands' stderr

// The same from a parsed document (records.hpp decodes the document once).
SlurmMessages messages_of(const nlohmann::json& doc);

}  // namespace jobgen::slurm
