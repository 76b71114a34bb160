#include "jobgen/cli/job_table.hpp"

#include <algorithm>
#include <cmath>

#include "jobgen/util/strings.hpp"

namespace jobgen::cli {

std::string pad(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

std::string fit(std::string text, int width) {
  if (width > 3 && static_cast<int>(text.size()) > width) {
    text.resize(static_cast<std::size_t>(width - 3));
    text += "...";
  }
  return text;
}

std::string progress_bar(int64_t elapsed, std::optional<int64_t> estimate, int width) {
  if (!estimate || *estimate <= 0) return "";
  const double fraction =
      std::clamp(static_cast<double>(elapsed) / static_cast<double>(*estimate), 0.0, 1.0);
  const int filled = static_cast<int>(std::lround(fraction * width));
  std::string bar = "[" + std::string(static_cast<std::size_t>(filled), '#') +
                    std::string(static_cast<std::size_t>(width - filled), '-') + "] ";
  const std::string percent = std::to_string(static_cast<int>(std::lround(fraction * 100))) + "%";
  return bar + std::string(4 - std::min<std::size_t>(4, percent.size()), ' ') + percent;
}

std::string last_line(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.remove_suffix(1);
  }
  const std::size_t nl = text.find_last_of("\n\r");
  return std::string(nl == std::string_view::npos ? text : text.substr(nl + 1));
}

std::string format_status_table(const std::vector<slurm::JobView>& views, int64_t now,
                                const slurm::GresNames& names) {
  std::size_t id_w = 6, name_w = 4;
  for (const auto& v : views) {
    id_w = std::max(id_w, std::min<std::size_t>(40, util::printable(v.info.id).size()));
    name_w = std::min<std::size_t>(24, std::max(name_w, util::printable(v.info.name).size()));
  }
  std::string out = pad("JOBID", id_w + 2) + pad("NAME", name_w + 2) + "STATE\n";
  for (const auto& v : views) {
    // Names, reasons and nodes come from the scheduler: never raw control characters.
    const std::string name = util::printable(v.info.name).substr(0, name_w);
    out += pad(util::printable(v.info.id, 40), id_w + 2) + pad(name, name_w + 2) +
           util::printable(slurm::describe(v.info, now, v.estimated_runtime_s, names)) + "\n";
  }
  return out;
}

nlohmann::json status_json(const std::vector<slurm::JobView>& views, int64_t now,
                           const slurm::GresNames& names) {
  auto optional = [](const auto& value) -> nlohmann::json {
    if (value) return *value;
    return nullptr;
  };
  nlohmann::json list = nlohmann::json::array();
  for (const auto& v : views) {
    const slurm::JobInfo& j = v.info;
    list.push_back({{"job_id", j.id},
                    {"name", j.name},
                    {"state", slurm::to_string(j.state)},
                    {"reason", j.reason},
                    {"explanation", slurm::explain_reason(j, names)},
                    {"description", slurm::describe(j, now, v.estimated_runtime_s, names)},
                    {"exit_code", optional(j.exit_code)},
                    {"signal", optional(j.signal)},
                    {"nodes", j.nodes},
                    {"partition", j.partition},
                    {"gres", j.gres},
                    {"elapsed_s", slurm::elapsed_seconds(j, now)},
                    {"time_limit_s", optional(j.time_limit_s)},
                    {"estimated_runtime_s", optional(v.estimated_runtime_s)},
                    {"submit_time", optional(j.submit_time)},
                    {"start_time", optional(j.start_time)},
                    {"end_time", optional(j.end_time)},
                    {"finished", slurm::is_settled(v)},
                    {"vanished", v.vanished},
                    {"unconfirmed", v.unconfirmed},
                    {"source", v.from_scheduler ? "scheduler" : "ledger"}});
  }
  return list;
}

}  // namespace jobgen::cli
