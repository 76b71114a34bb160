#include "jobgen/slurm/monitor.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "jobgen/slurm/job_files.hpp"
#include "jobgen/slurm/records.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::slurm {

namespace {

JobInfo from_marker(const Tracked& t, std::string id, int code) {
  JobInfo job;
  job.id = std::move(id);
  job.name = t.name;
  job.state = code == 0 ? JobState::completed : JobState::failed;
  job.exit_code = code;
  if (code != 0) job.reason = "NonZeroExitCode";
  return job;
}

// A job the scheduler's complete answer no longer lists: its exit marker(s), else what the ledger
// last recorded if that was final; otherwise its end is unknown.
std::vector<JobView> resolve_forgotten(const Tracked& t, const sys::FileSystem& fs, int64_t now) {
  const auto view = [&](JobInfo job) {
    JobView v;
    v.tracked_id = t.id;
    v.info = std::move(job);
    v.estimated_runtime_s = t.estimated_runtime_s;
    v.from_scheduler = false;
    v.tag = t.tag;
    v.cancel_requested = t.cancel_requested;
    return v;
  };
  if (t.id.empty()) {  // a submission whose job id never reached the ledger
    JobInfo job;
    job.name = t.name;
    job.id = "?";
    job.state = JobState::unknown;
    JobView v = view(std::move(job));
    if (now - t.submit_time < kIntentExpiryS) {
      v.unconfirmed = true;
      v.info.reason =
          "submission not confirmed: the scheduler lists no job tagged jobgen:" + t.tag +
          " (yet); jobgen was interrupted or timed out while submitting";
    } else {
      v.vanished = true;
      v.info.reason = "submission never confirmed: no job tagged jobgen:" + t.tag +
                      " appeared within a day (it was not created, or ended and was forgotten)";
    }
    return {v};
  }
  JobInfo probe;
  probe.id = t.id;
  probe.job_number = t.id;
  probe.name = t.name;
  probe.working_dir = t.work_dir;
  const auto log = resolve_log_path(t.stdout_path, probe);
  std::vector<JobView> found;
  if (t.array_size > 0) {
    const std::string prefix = std::string(kExitMarkerPrefix) + t.id + "_";
    for (const auto& file : fs.list_files(log.parent_path())) {
      const std::string name = file.filename().string();
      if (!name.starts_with(prefix) || name.ends_with(".tmp")) continue;
      const auto text = fs.read_file(file);
      const auto code = text ? parse_exit_marker(*text) : std::nullopt;
      if (code) found.push_back(view(from_marker(t, name.substr(kExitMarkerPrefix.size()), *code)));
    }
  } else if (const auto text = fs.read_file(exit_marker_path(log, t.id))) {
    if (const auto code = parse_exit_marker(*text))
      found.push_back(view(from_marker(t, t.id, *code)));
  }
  if (!found.empty()) return found;
  JobInfo job;
  job.id = t.id;
  job.name = t.name;
  job.state = parse_job_state(t.last_state);
  job.exit_code = t.exit_code;
  JobView v = view(std::move(job));
  if (!t.in_ledger) {
    v.info.state = JobState::unknown;  // an id the user typed that nobody knows
    v.info.reason = "no such job: neither the scheduler nor jobgen's ledger knows it";
  } else if (!is_finished(v.info.state)) {
    v.info.state = JobState::unknown;
    v.vanished = true;
    v.info.reason =
        "Slurm no longer lists this job, and neither an exit marker nor accounting says how it "
        "ended (killed before its exit trap ran, or the log directory is not visible here)";
  }
  return {v};
}

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

// What counts as a change for the backoff: state, reason, nodes, exit.
std::string signature(const std::vector<JobView>& views) {
  std::string s;
  for (const auto& v : views) {
    s += v.info.id + ' ' + to_string(v.info.state) + ' ' + v.info.reason + ' ' + v.info.nodes +
         ' ' + (v.info.exit_code ? std::to_string(*v.info.exit_code) : "-") + '\n';
  }
  return s;
}

}  // namespace

Expected<std::vector<JobView>> query_jobs(Backend& backend, const std::vector<Tracked>& tracked,
                                          const sys::FileSystem& fs, int64_t now) {
  JobQuery query;
  for (const auto& t : tracked) {
    if (!t.id.empty()) {
      query.ids.push_back(t.id);
    } else if (!t.tag.empty()) {
      query.tags.push_back(t.tag);
    }
  }
  auto jobs = backend.jobs(query);
  if (!jobs) return std::unexpected(jobs.error());
  std::vector<JobView> views;
  for (const auto& t : tracked) {
    bool any = false;
    for (const auto& job : *jobs) {
      const bool mine =
          t.id.empty() ? !t.tag.empty() && tag_of(job) == t.tag : matches_id(job, t.id);
      if (!mine) continue;
      JobView view;
      view.tracked_id = t.id;
      view.info = job;
      view.estimated_runtime_s = t.estimated_runtime_s;
      view.tag = t.tag;
      view.cancel_requested = t.cancel_requested;
      if (job.id.find("_[") != std::string::npos && t.id.find('_') != std::string::npos) {
        view.info.id = t.id;  // one task of a pending array: name it as asked
        view.info.array_task_id =
            util::parse_int(std::string_view(t.id).substr(t.id.find('_') + 1));
      }
      views.push_back(std::move(view));
      any = true;
    }
    if (!any) {
      for (auto& view : resolve_forgotten(t, fs, now)) views.push_back(std::move(view));
    }
  }
  return views;
}

bool is_settled(const JobView& v) {
  return is_finished(v.info.state) || v.vanished ||
         (!v.from_scheduler && !v.unconfirmed && v.info.state == JobState::unknown);
}

bool all_finished(const std::vector<JobView>& views) {
  return std::all_of(views.begin(), views.end(), is_settled);
}

Exit overall_exit(const std::vector<JobView>& views) {
  const bool failed = std::any_of(views.begin(), views.end(), [](const JobView& v) {
    if (v.vanished) return true;
    if (!is_finished(v.info.state)) return false;
    if (v.info.state == JobState::cancelled && v.cancel_requested) return false;
    return v.info.state != JobState::completed;
  });
  return failed ? Exit::jobs_failed : Exit::ok;
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

std::string format_status_table(const std::vector<JobView>& views, int64_t now,
                                const GresNames& names) {
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
           util::printable(describe(v.info, now, v.estimated_runtime_s, names)) + "\n";
  }
  return out;
}

nlohmann::json status_json(const std::vector<JobView>& views, int64_t now, const GresNames& names) {
  auto optional = [](const auto& value) -> nlohmann::json {
    if (value) return *value;
    return nullptr;
  };
  nlohmann::json list = nlohmann::json::array();
  for (const auto& v : views) {
    const JobInfo& j = v.info;
    list.push_back({{"job_id", j.id},
                    {"name", j.name},
                    {"state", to_string(j.state)},
                    {"reason", j.reason},
                    {"explanation", explain_reason(j, names)},
                    {"description", describe(j, now, v.estimated_runtime_s, names)},
                    {"exit_code", optional(j.exit_code)},
                    {"signal", optional(j.signal)},
                    {"nodes", j.nodes},
                    {"partition", j.partition},
                    {"gres", j.gres},
                    {"elapsed_s", elapsed_seconds(j, now)},
                    {"time_limit_s", optional(j.time_limit_s)},
                    {"estimated_runtime_s", optional(v.estimated_runtime_s)},
                    {"submit_time", optional(j.submit_time)},
                    {"start_time", optional(j.start_time)},
                    {"end_time", optional(j.end_time)},
                    {"finished", is_settled(v)},
                    {"vanished", v.vanished},
                    {"unconfirmed", v.unconfirmed},
                    {"source", v.from_scheduler ? "scheduler" : "ledger"}});
  }
  return list;
}

Expected<WatchResult> watch_jobs(const PollFn& poll, const LastLineFn& last_log_line,
                                 sys::Clock& clock, std::ostream& out,
                                 const WatchSettings& settings, const std::atomic<bool>& stop,
                                 const GresNames& names) {
  WatchResult result;
  std::vector<JobView> views;
  std::map<std::string, std::string> printed;  // non-terminal: last line printed per job
  std::string last_signature;
  int drawn_lines = 0;
  auto interval = settings.min_interval;

  auto draw = [&] {
    const int64_t now = util::unix_seconds(clock.now());
    if (!settings.terminal) {
      for (const auto& v : views) {
        const std::string line =
            util::printable(v.info.id) + " " +
            util::printable(describe(v.info, now, v.estimated_runtime_s, names));
        auto& previous = printed[v.info.id];
        // Running lines change every second (elapsed time); only a new state is news.
        const std::string key = to_string(v.info.state) + v.info.reason + v.info.nodes;
        if (previous == key) continue;
        previous = key;
        out << line << '\n';
      }
      out.flush();
      return;
    }
    std::string frame;
    if (drawn_lines > 0) frame += "\x1b[" + std::to_string(drawn_lines) + "F\x1b[J";
    int finished = 0;
    for (const auto& v : views) finished += is_settled(v) ? 1 : 0;
    frame += fit(std::to_string(finished) + "/" + std::to_string(views.size()) +
                     " jobs finished; next query in " + std::to_string(interval.count() / 1000) +
                     " s (Ctrl-C stops watching, "
                     "not the jobs)",
                 settings.width) +
             "\n";
    for (const auto& v : views) {
      // A completed job is done, whatever the estimate said.
      const int64_t elapsed = v.info.state == JobState::completed && v.estimated_runtime_s
                                  ? *v.estimated_runtime_s
                                  : elapsed_seconds(v.info, now);
      std::string line = pad(util::printable(v.info.id, 40), 10) + " " +
                         pad(progress_bar(elapsed, v.estimated_runtime_s, 16), 24) +
                         util::printable(describe(v.info, now, v.estimated_runtime_s, names));
      frame += fit(line, settings.width) + "\n";
      const std::string tail = last_log_line ? last_log_line(v) : "";
      if (!tail.empty())
        frame += fit("           | " + util::printable(tail), settings.width) + "\n";
    }
    drawn_lines = static_cast<int>(std::count(frame.begin(), frame.end(), '\n'));
    out << frame;
    out.flush();
  };

  for (;;) {
    if (stop.load()) {
      result.exit_code = kInterrupted;
      return result;
    }
    auto polled = poll();
    ++result.polls;
    if (!polled) {
      // A scheduler briefly unreachable, frozen or answering garbage (slurmrestd or slurmctld
      // restarting) must not end a watch, nor change what it knows of the jobs: say so and keep
      // polling with backoff. Bad credentials, bad input and other lasting failures end it.
      if (!polled.error().transient) return std::unexpected(polled.error());
      out << "jobgen: " << util::printable(polled.error().message)
          << "\n  (still watching; next try in "
          << std::min(interval * 2, settings.max_interval).count() / 1000 << " s)\n";
      out.flush();
      drawn_lines = 0;  // the table is redrawn below the message
      interval = std::min(interval * 2, settings.max_interval);
      last_signature.clear();  // the first answer after the outage counts as a change
    } else {
      views = std::move(*polled);
      const std::string sig = signature(views);
      if (result.polls > 1) {
        interval = sig == last_signature ? std::min(interval * 2, settings.max_interval)
                                         : settings.min_interval;
      }
      last_signature = sig;
      draw();
      if (all_finished(views)) {
        result.exit_code = static_cast<int>(overall_exit(views));
        return result;
      }
    }
    // Sleep until the next query in short steps: redraw the terminal, notice Ctrl-C.
    const auto next = clock.now() + interval;
    while (clock.now() < next) {
      if (stop.load()) {
        result.exit_code = kInterrupted;
        return result;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(next - clock.now());
      const auto step = settings.terminal ? std::min(left, settings.redraw)
                                          : std::min(left, std::chrono::milliseconds(500));
      clock.sleep_for(std::max(step, std::chrono::milliseconds(1)));
      if (settings.terminal && clock.now() < next) draw();
    }
  }
}

}  // namespace jobgen::slurm
