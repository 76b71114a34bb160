// How `status` and `watch` show jobs: the status table (one line per job view), its JSON form,
// the progress bar and the last line of a log. Everything shown from the scheduler (names,
// reasons, nodes, log lines) goes through util::printable: never a raw control character.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/slurm/job_state.hpp"
#include "jobgen/slurm/monitor.hpp"

namespace jobgen::cli {

// "JOBID  NAME  STATE" and one line per view; `now` in Unix seconds.
std::string format_status_table(const std::vector<slurm::JobView>& views, int64_t now,
                                const slurm::GresNames& names = {});
// The same as an array of objects (documented keys: README "status --json").
nlohmann::json status_json(const std::vector<slurm::JobView>& views, int64_t now,
                           const slurm::GresNames& names = {});

// "[#######-------]  45%" for elapsed / estimate; empty without an estimate.
std::string progress_bar(int64_t elapsed, std::optional<int64_t> estimate, int width = 20);

// The last non-empty line of a log's tail (carriage-return progress lines keep their last part).
std::string last_line(std::string_view text);

// `text` padded with spaces to `width`, or cut to `width` with "..." at the end.
std::string pad(std::string text, std::size_t width);
std::string fit(std::string text, int width);

}  // namespace jobgen::cli
