#include "jobgen/view/settings_view.hpp"

#include <fmt/format.h>

#include <vector>

#include "jobgen/estimate/settings.hpp"
#include "jobgen/view/escape.hpp"

namespace jobgen::view {

namespace {

struct Row {
  std::string key, flag, values, job_default, receives, doc;
};

std::vector<Row> rows() {
  const estimate::TrainingSetup defaults;
  std::vector<Row> out;
  for (const auto& s : estimate::settings()) {
    Row r;
    r.key = s.section.empty() ? std::string(s.key)
                              : std::string(s.section) + "." + std::string(s.field);
    r.flag = std::string(s.flag.substr(0, s.flag.find(',')));
    r.values = estimate::setting_values(s);
    r.job_default =
        s.job_default.empty() ? estimate::setting_text(defaults, s) : std::string(s.job_default);
    switch (s.carrier.kind) {
      case estimate::Carrier::Kind::flag:
        r.receives = fmt::format("flags: {{{}: {}}}{}", s.key, s.carrier.example,
                                 s.carrier.refuse ? "" : " (else a warning)");
        break;
      case estimate::Carrier::Kind::placeholder:
        r.receives = fmt::format("{{{{{}}}}}", s.key);
        break;
      case estimate::Carrier::Kind::none:
        break;
    }
    r.doc = std::string(s.doc);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

std::string settings_text() {
  std::string out =
      "Training settings: the job spec's key (--set KEY=VALUE), `jobgen estimate`'s flag, the "
      "values, the job spec's default, how the job's command must receive it\n\n";
  for (const Row& r : rows()) {
    out += fmt::format("{:<26} {:<30} {}\n", r.key, r.flag.empty() ? "-" : r.flag, r.values);
    out += fmt::format("  default {}{}\n", r.job_default,
                       r.receives.empty() ? "" : "; the command receives it as " + r.receives);
    out += "  " + r.doc + "\n";
  }
  return out;
}

std::string settings_markdown() {
  std::string out =
      "| key | `jobgen estimate` | values | default | the command receives it as | meaning |\n"
      "|---|---|---|---|---|---|\n";
  for (const Row& r : rows()) {
    out += fmt::format(
        "| `{}` | {} | {} | {} | {} | {} |\n", r.key, r.flag.empty() ? "" : "`" + r.flag + "`",
        markdown_cell(r.values), markdown_cell(r.job_default),
        r.receives.empty() ? "" : "`" + markdown_cell(r.receives) + "`", markdown_cell(r.doc));
  }
  return out;
}

}  // namespace jobgen::view
