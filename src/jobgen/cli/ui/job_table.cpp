#include "jobgen/cli/ui/job_table.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::cli {

std::string pad(std::string text, std::size_t width) {
  const std::size_t columns = util::display_width(text);
  if (columns < width) text.append(width - columns, ' ');
  return text;
}

std::string fit(std::string text, int width) {
  if (width > 3 && util::display_width(text) > static_cast<std::size_t>(width))
    return std::string(util::cut_to_width(text, static_cast<std::size_t>(width - 3))) + "...";
  return text;
}

std::string fraction_bar(double fraction, int width) {
  fraction = std::isfinite(fraction) ? std::clamp(fraction, 0.0, 1.0) : 0.0;
  const int filled = static_cast<int>(std::lround(fraction * width));
  std::string bar = "[" + std::string(static_cast<std::size_t>(filled), '#') +
                    std::string(static_cast<std::size_t>(width - filled), '-') + "] ";
  const std::string percent = std::to_string(static_cast<int>(std::lround(fraction * 100))) + "%";
  return bar + std::string(4 - std::min<std::size_t>(4, percent.size()), ' ') + percent;
}

std::string progress_bar(int64_t elapsed, std::optional<int64_t> estimate, int width) {
  if (!estimate || *estimate <= 0) return "";
  return fraction_bar(static_cast<double>(elapsed) / static_cast<double>(*estimate), width);
}

ShownProgress shown_progress(const slurm::JobView& view, const progress::Progress& progress) {
  ShownProgress shown;
  shown.step = progress.step;
  shown.total = progress.total;
  shown.steps_per_s = progress.steps_per_s;
  shown.step_time_s = progress.step_time_s();
  shown.planned_step_time_s = view.job.planned_step_time_s;
  if (progress.percent) shown.fraction = *progress.percent / 100;
  if (!shown.total && shown.step && view.job.planned_steps && *view.job.planned_steps > 0 &&
      *shown.step <= *view.job.planned_steps &&
      progress.format != progress::ProgressFormat::lightning) {
    shown.total = view.job.planned_steps;
    shown.total_from_plan = true;
    shown.fraction = static_cast<double>(*shown.step) / static_cast<double>(*shown.total);
  }
  const slurm::JobState state = view.info.state;
  if (state == slurm::JobState::completed) {
    // Done is done: the bar's last update may not have reached the log.
    shown.fraction = 1;
    if (shown.total) shown.step = shown.total;
    shown.eta_s = 0;
  } else if (state == slurm::JobState::running) {
    shown.eta_s = progress.eta_s;
    if (!shown.eta_s && shown.total && shown.step && shown.steps_per_s && *shown.steps_per_s > 0) {
      shown.eta_s = static_cast<int64_t>(
          std::lround(static_cast<double>(std::max<int64_t>(0, *shown.total - *shown.step)) /
                      *shown.steps_per_s));
    }
  }
  if (shown.step_time_s && shown.planned_step_time_s && *shown.planned_step_time_s > 0)
    shown.ratio = *shown.step_time_s / *shown.planned_step_time_s;
  if (progress.format == progress::ProgressFormat::lightning &&
      state != slurm::JobState::completed) {
    shown.epoch_fraction = std::exchange(shown.fraction, std::nullopt);
    shown.epoch_eta_s = std::exchange(shown.eta_s, std::nullopt);
  }
  return shown;
}

std::optional<int64_t> plan_estimate(const slurm::JobView& view,
                                     const progress::Progress& progress) {
  if (view.info.state == slurm::JobState::running && shown_progress(view, progress).eta_s)
    return std::nullopt;
  return view.job.estimated_runtime_s;
}

namespace {

// An epoch as the tools print it: "3" (Lightning's index), "0.45" (the Trainer's fraction).
std::string epoch_text(double epoch) {
  if (epoch == std::floor(epoch) && std::abs(epoch) < 1e9) return fmt::format("{:.0f}", epoch);
  return fmt::format("{:.2f}", epoch);
}

// Three significant digits: 6.40, 0.156, 12.3, 1234.
std::string number3(double v) {
  if (std::abs(v) >= 100) return fmt::format("{:.0f}", v);
  if (std::abs(v) >= 10) return fmt::format("{:.1f}", v);
  if (std::abs(v) >= 1) return fmt::format("{:.2f}", v);
  return fmt::format("{:#.3g}", v);
}

std::string steps_text(const ShownProgress& s) {
  std::string text = "step " + std::to_string(*s.step);
  if (s.total) text += (s.total_from_plan ? " of " : "/") + std::to_string(*s.total);
  if (s.total_from_plan) text += " planned";
  if (s.fraction) text += fmt::format(" ({:.0f}%)", *s.fraction * 100);
  if (s.epoch_fraction) text += fmt::format(" ({:.0f}% of the epoch)", *s.epoch_fraction * 100);
  return text;
}

}  // namespace

std::string describe_progress(const slurm::JobView& view, const progress::Progress& progress) {
  if (!progress.known()) return "";
  const ShownProgress s = shown_progress(view, progress);
  const slurm::JobState state = view.info.state;
  const bool running = state == slurm::JobState::running;
  std::vector<std::string> parts;
  if (state == slurm::JobState::completed) {
    parts.push_back(s.step ? "done: " + steps_text(s) : "done (100%)");
  } else if (s.step) {
    parts.push_back(slurm::is_finished(state) ? "stopped at " + steps_text(s) : steps_text(s));
  }
  if (progress.epoch) {
    std::string epoch = "epoch " + epoch_text(*progress.epoch);
    if (progress.epochs) epoch += "/" + std::to_string(*progress.epochs);
    parts.push_back(std::move(epoch));
  }
  if (running && s.steps_per_s) parts.push_back(number3(*s.steps_per_s) + " steps/s");
  if (running && s.eta_s)
    parts.push_back("about " + util::format_duration(static_cast<double>(*s.eta_s)) + " left");
  if (running && s.epoch_eta_s)
    parts.push_back("about " + util::format_duration(static_cast<double>(*s.epoch_eta_s)) +
                    " left in the epoch");
  if (progress.loss) parts.push_back("loss " + number3(*progress.loss));
  std::string text = util::join(parts, ", ");
  if (s.step_time_s) {
    text += "; " + number3(*s.step_time_s) + " s/step";
    if (s.planned_step_time_s && s.ratio)
      text += fmt::format(" vs {} planned ({:.2f}x)", number3(*s.planned_step_time_s), *s.ratio);
  }
  return text;
}

namespace {

const progress::Progress* progress_of(const slurm::JobView& v, const app::LogTails& tails) {
  const auto it = tails.find(v.info.id);
  return it == tails.end() ? nullptr : &it->second.progress;
}

nlohmann::json progress_json(const slurm::JobView& v, const progress::Progress* p) {
  // A COMPLETED job is at 100 % even when its log said nothing.
  if ((p == nullptr || !p->known()) && v.info.state != slurm::JobState::completed) return nullptr;
  const progress::Progress none;
  const progress::Progress& progress = p != nullptr ? *p : none;
  const ShownProgress s = shown_progress(v, progress);
  auto optional = [](const auto& value) -> nlohmann::json {
    if (value) return *value;
    return nullptr;
  };
  return {{"format", progress.known() ? jobgen::progress::to_string(progress.format) : "state"},
          {"step", optional(s.step)},
          {"total_steps", optional(s.total)},
          {"total_from",
           s.total ? nlohmann::json(s.total_from_plan ? "plan" : "log") : nlohmann::json(nullptr)},
          {"percent", s.fraction ? nlohmann::json(*s.fraction * 100) : nlohmann::json(nullptr)},
          {"steps_per_s", optional(s.steps_per_s)},
          {"step_time_s", optional(s.step_time_s)},
          {"eta_s", optional(s.eta_s)},
          {"epoch_percent",
           s.epoch_fraction ? nlohmann::json(*s.epoch_fraction * 100) : nlohmann::json(nullptr)},
          {"epoch_eta_s", optional(s.epoch_eta_s)},
          {"epoch", optional(progress.epoch)},
          {"epochs", optional(progress.epochs)},
          {"loss", optional(progress.loss)},
          {"peak_gpu_memory_gib", optional(progress.peak_gpu_memory_gib)}};
}

}  // namespace

std::string format_status_table(const std::vector<slurm::JobView>& views, int64_t now,
                                const slurm::GresNames& names, const app::LogTails& tails) {
  std::size_t id_w = 6, name_w = 4;
  for (const auto& v : views) {
    id_w = std::max(id_w, std::min<std::size_t>(40, util::printable(v.info.id).size()));
    name_w = std::min<std::size_t>(
        24, std::max(name_w, util::display_width(util::printable(v.info.name))));
  }
  std::string out = pad("JOBID", id_w + 2) + pad("NAME", name_w + 2) + "STATE\n";
  for (const auto& v : views) {
    // Names, reasons and nodes come from the scheduler: never raw control characters.
    const progress::Progress* p = progress_of(v, tails);
    const std::string name(util::cut_to_width(util::printable(v.info.name), name_w));
    out +=
        pad(util::printable(v.info.id, 40), id_w + 2) + pad(name, name_w + 2) +
        util::printable(slurm::describe(
            v.info, now, p != nullptr ? plan_estimate(v, *p) : v.job.estimated_runtime_s, names)) +
        "\n";
    if (p != nullptr && p->known()) {
      const ShownProgress s = shown_progress(v, *p);
      out += std::string(id_w + 2, ' ') +
             (s.fraction ? fraction_bar(*s.fraction, 20) + "  " : std::string()) +
             util::printable(describe_progress(v, *p)) + "\n";
    }
  }
  return out;
}

nlohmann::json status_json(const std::vector<slurm::JobView>& views, int64_t now,
                           const slurm::GresNames& names, const app::LogTails& tails) {
  auto optional = [](const auto& value) -> nlohmann::json {
    if (value) return *value;
    return nullptr;
  };
  nlohmann::json list = nlohmann::json::array();
  for (const auto& v : views) {
    const slurm::JobInfo& j = v.info;
    list.push_back({{"job_id", j.id},
                    {"name", j.name},
                    {"state", slurm::state_name(j)},
                    {"reason", j.reason},
                    {"explanation", slurm::explain_reason(j, names)},
                    {"description", slurm::describe(j, now, v.job.estimated_runtime_s, names)},
                    {"exit_code", optional(slurm::shell_exit_code(j))},
                    {"signal", optional(j.signal)},
                    {"nodes", j.nodes},
                    {"partition", j.partition},
                    {"gres", j.gres},
                    {"elapsed_s", slurm::elapsed_seconds(j, now)},
                    {"time_limit_s", optional(j.time_limit_s)},
                    {"estimated_runtime_s", optional(v.job.estimated_runtime_s)},
                    {"submit_time", optional(j.submit_time)},
                    {"start_time", optional(j.start_time)},
                    {"end_time", optional(j.end_time)},
                    {"finished", slurm::is_settled(v)},
                    {"vanished", v.vanished},
                    {"unconfirmed", v.unconfirmed},
                    {"source", v.from_scheduler ? "scheduler" : "ledger"}});
    const progress::Progress* p = progress_of(v, tails);
    nlohmann::json& job = list.back();
    job["progress"] = progress_json(v, p);
    job["planned_step_time_s"] = optional(v.job.planned_step_time_s);
    const auto ratio = p != nullptr ? shown_progress(v, *p).ratio : std::nullopt;
    job["step_time_ratio"] = optional(ratio);
  }
  return list;
}

}  // namespace jobgen::cli
