#include "jobgen/app/profile_drift.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "jobgen/app/state_dir.hpp"
#include "jobgen/app/submission.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::app {

namespace {

using nlohmann::json;

constexpr std::size_t kShown = 3;

std::filesystem::path drift_path(const Context& ctx) {
  return state_dir(ctx.env).profile_drift();
}

// The remembered records, {} when there are none or the file is not ours to read.
json read_records(const Context& ctx) {
  const auto path = drift_path(ctx);
  if (!ctx.fs.is_file(path)) return json::object();
  auto text = ctx.fs.read_file(path);
  if (!text) return json::object();
  json doc = json::parse(*text, nullptr, false);
  return doc.is_object() ? doc : json::object();
}

// The profile's record is keyed by its real file: "ws.yaml", "./ws.yaml" and the absolute path
// (or a symlink to it) are one profile.
std::string profile_key(const profile::Profile& profile) {
  std::error_code ec;
  const auto real =
      std::filesystem::weakly_canonical(std::filesystem::absolute(profile.source), ec);
  return ec ? profile.source : real.string();
}

// The hash of the profile's text as it is now; "" when it cannot be read (then nothing matches).
std::string profile_hash(const Context& ctx, const profile::Profile& profile) {
  auto text = ctx.fs.read_file(profile.source);
  return text ? text_hash(*text) : "";
}

}  // namespace

namespace {

// Whether a check line is about one of `groups`: a pin leak of the group, or a node of it (the
// line's subject, "kind SUBJECT: ...").
bool about(const profile::Profile& profile, const std::string& line,
           const std::vector<std::string>& groups) {
  const auto colon = line.find(':');
  const auto space = line.find(' ');
  const std::string subject =
      space != std::string::npos && colon != std::string::npos && colon > space
          ? line.substr(space + 1, colon - space - 1)
          : "";
  for (const auto& name : groups) {
    if (line.find(" of group " + name + " ") != std::string::npos) return true;
    const profile::NodeGroup* g = profile.find_group(name);
    if (g && std::ranges::find(g->nodes, subject) != g->nodes.end()) return true;
  }
  return false;
}

}  // namespace

std::string drift_message(const profile::Profile& profile, std::vector<std::string> lines,
                          std::optional<int64_t> checked_at,
                          const std::vector<std::string>& groups) {
  // What concerns the groups at hand first: the rest may hide under "and N more".
  std::stable_partition(lines.begin(), lines.end(),
                        [&](const std::string& l) { return about(profile, l, groups); });
  std::string shown;
  for (std::size_t i = 0; i < lines.size() && i < kShown; ++i)
    shown += (i == 0 ? "" : "; ") + util::printable(lines[i], 200);
  if (lines.size() > kShown) shown += fmt::format("; and {} more", lines.size() - kShown);
  const std::string when =
      checked_at ? " (found by a check at " + util::format_utc(*checked_at) + ")" : "";
  return fmt::format(
      "profile '{}' disagrees with the cluster{}: {}. Plans count what the profile says; see "
      "'jobgen profile check {}' and update the profile",
      profile.name, when, shown, util::printable(profile.source, 200));
}

void remember_drift(const Context& ctx, const profile::Profile& profile,
                    const std::vector<std::string>& lines) {
  const std::string hash = profile_hash(ctx, profile);
  if (hash.empty()) return;
  json records = read_records(ctx);
  records[profile_key(profile)] = {
      {"hash", hash}, {"checked_at", util::unix_seconds(ctx.clock.now())}, {"differences", lines}};
  if (auto ok = ctx.fs.write_file(drift_path(ctx), records.dump(2) + "\n", 0600); !ok)
    ctx.report.warning(ok.error().message + " (the profile check result is not remembered)");
}

namespace {

struct KnownDrift {
  std::vector<std::string> lines;
  std::optional<int64_t> checked_at;
};

// The remembered check of this very profile text, when there is one.
std::optional<KnownDrift> known_drift(const Context& ctx, const profile::Profile& profile) {
  const json records = read_records(ctx);
  const auto it = records.find(profile_key(profile));
  if (it == records.end() || !it->is_object()) return std::nullopt;
  const json& r = *it;
  if (!r.contains("hash") || !r["hash"].is_string() ||
      r["hash"].get<std::string>() != profile_hash(ctx, profile))
    return std::nullopt;  // the profile changed since: the old differences say nothing about it
  KnownDrift known;
  if (r.contains("differences") && r["differences"].is_array())
    for (const auto& line : r["differences"])
      if (line.is_string()) known.lines.push_back(line.get<std::string>());
  if (r.contains("checked_at") && r["checked_at"].is_number_integer())
    known.checked_at = r["checked_at"].get<int64_t>();
  return known;
}

}  // namespace

void warn_known_drift(const Context& ctx, const profile::Profile& profile,
                      const std::vector<std::string>& groups) {
  const auto known = known_drift(ctx, profile);
  if (known && !known->lines.empty())
    ctx.report.warning(drift_message(profile, known->lines, known->checked_at, groups));
}

std::vector<std::string> known_pin_leaks(const Context& ctx, const profile::Profile& profile,
                                         const std::string& group) {
  std::vector<std::string> leaks;
  const auto known = known_drift(ctx, profile);
  if (!known) return leaks;
  // site::to_line of a pin_leak: "pin_leak NODE: profile untyped gpu jobs of group G kept on ..."
  const std::string of_group = " of group " + group + " kept on ";
  for (const auto& line : known->lines)
    if (line.starts_with("pin_leak ") && line.find(of_group) != std::string::npos)
      leaks.push_back(line);
  return leaks;
}

}  // namespace jobgen::app
