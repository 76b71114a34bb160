// slurmrestd documents <-> jobgen's data: the submission body for one SbatchOptions and the
// submission's answer. Pure functions (text in, structs out); every version difference comes from
// RestDialect. Job, node and partition records are read by records.hpp, shared with the CLI.
//
// Units: Slurm's REST times are Unix seconds, but time limits are MINUTES there and seconds
// here; memory is MiB on both sides. No-val structs with set=false or infinite=true read as
// "absent" (nullopt), as do Slurm's NO_VAL/INFINITE sentinels in plain integers.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/slurm/backend.hpp"
#include "jobgen/slurm/records.hpp"
#include "jobgen/slurm/rest/api_version.hpp"

namespace jobgen::slurm {

// What the body needs besides the options: the script, and the environment and working
// directory a REST submission must always carry (slurmrestd has no caller environment).
struct SubmitBody {
  std::string script;
  std::map<std::string, std::string> environment;  // merged under options.environment
  std::string working_dir;                         // used when options.working_dir is empty
  std::string comment;                             // the job comment (jobgen's submission tag)
};

// The JSON body of POST /slurm/vX/job/submit. Fails (invalid input) for a request this version
// cannot express, instead of silently dropping a field; where it can only come close (v0.0.38:
// "--signal=B:..." reaches the steps, not the batch shell) it appends a sentence to `notes`.
Expected<std::string> encode_submit(const RestDialect& dialect, const job::SbatchOptions& options,
                                    const SubmitBody& body,
                                    std::vector<std::string>* notes = nullptr);

struct RestSubmitted {
  std::string job_id;
  std::string user_message;  // job_submit_user_msg
  SlurmMessages messages;
};
Expected<RestSubmitted> decode_submit(std::string_view body);

}  // namespace jobgen::slurm
