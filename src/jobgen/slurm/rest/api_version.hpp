// The slurmrestd API versions jobgen speaks and how they differ: ONE row per version in
// api_version.cpp (kDialects); the encoder and decoders read these flags, never a version string.
//
// Sources: ../shared/reference/slurm-notes.md and the OpenAPI specs of v0.0.38 (Slurm 22.05, the
// live test cluster) and v0.0.41-44. v0.0.44 (Slurm 25.11) has no recorded answers: the contract
// test checks that v0.0.43's recordings, on which the decoders are tested, are valid v0.0.44
// documents. v0.0.39 (23.02) and v0.0.40 (23.11) have no spec file here; their rows follow
// slurm-notes.md and are tested by hand-written expectations. v0.0.40-42 as Slurm 24.11.5 serves
// them were run live (`make test-slurm24`); its answers are in tests/data/rest/*-24.11.json.
// v0.0.42-44 as Slurm 26.05.5 serves them are run live too (`make test-slurm26`).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/util/error.hpp"

namespace jobgen::slurm {

enum class ExitCodeFormat {
  raw_int,     // v0.0.38: the raw wait status as a plain integer
  raw_noval,   // v0.0.39: the raw wait status inside {"set","infinite","number"}
  structured,  // v0.0.40+: {"status":[...], "return_code":{no-val}, "signal":{"id":{no-val}}}
};

struct RestDialect {
  std::string_view version;  // "v0.0.38"
  int minor;                 // 38 (for ordering)
  // Submission body.
  bool script_in_job;      // job.script (v0.0.41+) instead of the top-level "script"
  bool environment_array;  // ["K=V", ...] (v0.0.39+) instead of {"K": "V"}
  bool noval_numbers;      // time_limit, memory_* as {"set","infinite","number"} (v0.0.39+)
  bool tres_per_node;      // "tres_per_node":"gres/gpu:T:N" instead of "gres":"gpu:T:N"
  bool min_max_nodes;      // minimum_nodes/maximum_nodes instead of "nodes":[min,max]
  bool memory_per_tres;    // "memory_per_tres":"gres/gpu:MiB" instead of "memory_per_gpu"
  bool kill_warning;       // kill_warning_signal/_delay/_flags instead of "signal":"B:SIG@T"
  bool open_mode_array;    // ["APPEND"] instead of "append"
  bool required_nodes;     // the request can name nodes (required_nodes as a list)
  // "requeue": false (v0.0.39+) instead of v0.0.38's "no_requeue": true: 22.05 reads its
  // "requeue" key as sbatch's --requeue flag whatever the value, and takes "no_requeue", which is
  // not in its OpenAPI spec, as --no-requeue (both checked live: Requeue=1 and Requeue=0).
  bool requeue_bool;
  // flags: ["KILL_INVALID_DEPENDENCY"] (v0.0.39+) instead of v0.0.38's
  // "kill_on_invalid_dependency": true, for a job whose dependency can never be met to be
  // cancelled rather than wait forever (sbatch --kill-on-invalid-dep=yes).
  bool job_flags;
  // Responses.
  bool job_state_array;  // ["RUNNING", flags...] instead of "RUNNING"
  ExitCodeFormat exit_code;
  bool noval_times;  // submit/start/end times as no-val structs
  // Queries. How GET /jobs?update_time= takes its Unix time: "uts1795530294" (v0.0.40, v0.0.41:
  // Slurm 24.11 refuses a bare number there with HTTP 422, error 9202) or the bare number
  // (v0.0.38, v0.0.42 on 24.11; the others unchecked).
  bool update_time_uts;
  // GET /nodes?update_time= is sent: only where an unchanged table is told from a failure (22.05:
  // 304 or error 1900). On 24.11 (v0.0.40-42) the answer is HTTP 500 "Unable to query partitions"
  // (-1) whenever the PARTITIONS did not change, even when nodes did, so it is not asked.
  bool nodes_since;
};

// Every supported version, oldest first.
std::span<const RestDialect> rest_dialects();

// "v0.0.41", "0.0.41" or "41" -> its dialect; an error naming the supported ones otherwise.
Expected<const RestDialect*> find_dialect(std::string_view version);

// The versions a server offers, from the paths of its /openapi/v3 document
// ("/slurm/v0.0.41/jobs/" -> "v0.0.41"), sorted, without duplicates.
std::vector<std::string> versions_in_openapi(std::string_view openapi_json);

// The newest version in `offered` that jobgen supports; nullptr if none.
const RestDialect* choose_dialect(const std::vector<std::string>& offered);

// "v0.0.38, v0.0.39, ..." for messages.
std::string supported_versions_text();

}  // namespace jobgen::slurm
