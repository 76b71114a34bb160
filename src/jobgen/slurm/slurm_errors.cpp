#include "jobgen/slurm/slurm_errors.hpp"

#include <nlohmann/json.hpp>

#include "jobgen/slurm/backend.hpp"
#include "jobgen/util/bounded_json.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::slurm {

namespace {

using nlohmann::json;

std::string str(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

SlurmMessages messages_of(const nlohmann::json& doc) {
  SlurmMessages out;
  if (const auto it = doc.find("errors"); it != doc.end() && it->is_array()) {
    for (const auto& e : *it) {
      if (!e.is_object()) continue;
      SlurmError err;
      for (const char* key : {"error_number", "errno", "error_code"}) {
        if (const auto n = e.find(key); n != e.end() && n->is_number_integer()) {
          const auto value = n->get<int64_t>();
          if (value >= -1 && value < 100000) err.number = static_cast<int>(value);
          if (err.number != 0) break;
        }
      }
      err.error = str(e, "error");
      err.description = str(e, "description");
      err.source = str(e, "source");
      out.errors.push_back(std::move(err));
    }
  }
  if (const auto it = doc.find("warnings"); it != doc.end() && it->is_array()) {
    for (const auto& w : *it) {
      if (w.is_string()) out.warnings.push_back(w.get<std::string>());
      if (w.is_object()) {
        std::string text = str(w, "description");
        if (auto src = str(w, "source"); !src.empty()) text += " (" + src + ")";
        out.warnings.push_back(text);
      }
    }
  }
  return out;
}

SlurmMessages decode_messages(std::string_view body) {
  // Only errors[] and warnings[] are built: the records beside them (a whole queue) are skipped.
  std::string key;
  const json::parser_callback_t keep_messages = [&](int depth, json::parse_event_t event,
                                                    json& parsed) {
    if (depth != 1) return true;
    if (event == json::parse_event_t::key) {
      key = parsed.get<std::string>();
      return true;
    }
    if (event == json::parse_event_t::object_end || event == json::parse_event_t::array_end)
      return true;
    return key == "errors" || key == "warnings";
  };
  const json doc = util::parse_bounded(body, keep_messages);
  if (!doc.is_object()) return {};
  return messages_of(doc);
}

int slurm_error_number(const SlurmError& e) {
  if (e.number != 0) return e.number;
  // 22.05 reports some rejections with error_number 0 and only Slurm's text for the number.
  static constexpr std::pair<std::string_view, int> kTexts[] = {
      {"Invalid partition name specified", 2000},
      {"Requested node configuration is not available", 2014},
      {"Invalid generic resource (gres) specification", 2072},
      {"Requested time limit is invalid (missing or exceeds some limit)", 2051},
      {"Invalid account or account/partition combination specified", 2045},
      {"Invalid qos specification", 2066},
      {"Unable to contact slurm controller (connect failure)", 1800},
      {"Invalid job id specified", 2017},
      {"Zero Bytes were transmitted or received", 5005},
      {"Socket timed out on send/recv operation", 5004},
      {"Protocol authentication error", 1007},
  };
  for (const auto& [text, number] : kTexts)
    if (e.error == text || e.description == text) return number;
  return 0;
}

std::string explain_slurm_error(int number) {
  switch (number) {
    case 1007:
      return "slurmctld refused the credentials slurmrestd passed on (munge or JWT keys differ "
             "between slurmrestd and slurmctld?); ask the admin";
    case 1800:
      return "slurmrestd cannot reach slurmctld: the controller is down or restarting; try again "
             "in a minute";
    case 1900:
      return "nothing changed since the last query";
    case 5004:
      return "slurmctld did not answer in time (overloaded, frozen or restarting); try again";
    case 5005:
      return "slurmctld closed the connection: with a JWT this means it refused the token";
    case 2000:
      return "this cluster has no such partition: is the profile the one for this cluster? "
             "(--profile NAME or JOBGEN_PROFILE)";
    case 2014:
      return "the request exceeds every node of the partition: no single node has that many GPUs, "
             "CPUs or that much memory; ask for less per node (or more nodes), see "
             "`jobgen profile show`";
    case 2017:
      return "Slurm does not know this job (it never existed, or ended long enough ago to be "
             "purged)";
    case 2045:
      return "the account does not exist or you may not use it; check `sacctmgr show assoc "
             "user=$USER` or the profile's accounts";
    case 2051:
      return "the time limit is invalid or longer than the partition allows; ask for less time";
    case 2066:
      return "the QoS does not exist or is not allowed for your account/partition; check the "
             "profile's qos list";
    case 2072:
      return "the gres type does not exist on this cluster (see the gres types in `jobgen profile "
             "show`; Slurm's names are site-made, e.g. gpul40s)";
    case 2127:
      return "the submission carried no environment; this is a jobgen bug, please report it";
    default:
      return "";
  }
}

std::string format_slurm_errors(const std::vector<SlurmError>& errors) {
  std::string out;
  for (const auto& e : errors) {
    if (!out.empty()) out += "\n";
    const int number = slurm_error_number(e);
    out += number != 0 ? "Slurm error " + std::to_string(number) : std::string("Slurm");
    std::string text = e.error;
    if (!e.description.empty() && e.description != e.error)
      text += (text.empty() ? "" : ": ") + e.description;
    if (!text.empty()) out += " (" + text + ")";
    if (auto why = explain_slurm_error(number); !why.empty()) out += ": " + why;
  }
  return out;
}

SlurmFault classify_errors(const std::vector<SlurmError>& errors) {
  if (errors.empty()) return SlurmFault::none;
  SlurmFault fault = SlurmFault::ambiguous;
  for (const auto& e : errors) {
    switch (slurm_error_number(e)) {
      case 1007:
      case 5005:
        return SlurmFault::auth;
      case 1800:
      case 5004:
        fault = SlurmFault::unreachable;
        break;
      default:
        if (const auto text = classify_error_text(e.error + " " + e.description);
            text != SlurmFault::ambiguous)
          fault = text;
        break;
    }
  }
  return fault;
}

SlurmFault classify_error_text(std::string_view text) {
  const auto has = [&](std::string_view needle) {
    return text.find(needle) != std::string_view::npos;
  };
  if (has("Zero Bytes were transmitted or received") || has("Protocol authentication error") ||
      has("Invalid authentication credential") || has("Authentication failure"))
    return SlurmFault::auth;
  if (has("Unable to contact slurm controller") || has("Socket timed out") ||
      has("Connection refused") || has("Could not establish a configuration source") ||
      has("Communication connection failure"))
    return SlurmFault::unreachable;
  return SlurmFault::ambiguous;
}

}  // namespace jobgen::slurm

namespace jobgen::slurm {

Error unknown_jobs_error(const std::vector<std::string>& unknown) {
  return Error{"no such job: " + util::join(unknown, ", ") +
                   " (the scheduler does not know it: it never existed, or ended long enough ago "
                   "to be forgotten)",
               {},
               Exit::not_found};
}

}  // namespace jobgen::slurm
