#include "jobgen/slurm/rest/api_version.hpp"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

#include "jobgen/util/bounded_json.hpp"

namespace jobgen::slurm {

namespace {

using enum ExitCodeFormat;

// clang-format off
//                         script  env    noval  tres   minmax mempt  killw  omode  reqnd  rqbool flags  state  exit        times  uts    nodes_since
constexpr std::array kDialects{
    RestDialect{"v0.0.38", 38, false, false, false, false, false, false, false, false, false, false, false, false, raw_int,    false, false, true},
    RestDialect{"v0.0.39", 39, false, true,  true,  true,  true,  true,  true,  true,  true,  true,  true,  false, raw_noval,  false, false, false},
    RestDialect{"v0.0.40", 40, false, true,  true,  true,  true,  true,  true,  true,  true,  true,  true,  true,  structured, true,  true,  false},
    RestDialect{"v0.0.41", 41, true,  true,  true,  true,  true,  true,  true,  true,  true,  true,  true,  true,  structured, true,  true,  false},
    RestDialect{"v0.0.42", 42, true,  true,  true,  true,  true,  true,  true,  true,  true,  true,  true,  true,  structured, true,  false, false},
    RestDialect{"v0.0.43", 43, true,  true,  true,  true,  true,  true,  true,  true,  true,  true,  true,  true,  structured, true,  false, false},
    // Slurm 25.11: every field jobgen sends or reads is as in v0.0.43 (tests/shared/test_rest_contract.cpp)
    RestDialect{"v0.0.44", 44, true,  true,  true,  true,  true,  true,  true,  true,  true,  true,  true,  true,  structured, true,  false, false},
};
// clang-format on

}  // namespace

std::span<const RestDialect> rest_dialects() {
  return kDialects;
}

std::string supported_versions_text() {
  std::string text;
  for (const auto& d : kDialects) text += (text.empty() ? "" : ", ") + std::string(d.version);
  return text;
}

Expected<const RestDialect*> find_dialect(std::string_view version) {
  std::string_view v = version;
  if (v.starts_with("v")) v.remove_prefix(1);
  if (v.starts_with("0.0.")) v.remove_prefix(4);
  for (const auto& d : kDialects)
    if (d.version.substr(5) == v) return &d;
  return invalid("slurmrestd API version '" + std::string(version) +
                 "' is not supported by jobgen; it speaks " + supported_versions_text() +
                 " (leave rest.api_version empty to use the newest one the server offers)");
}

std::vector<std::string> versions_in_openapi(std::string_view openapi_json) {
  // Only the names under "paths" are needed: everything else (megabytes of schemas) is dropped
  // while parsing.
  std::vector<std::string> paths;
  bool in_paths = false;
  const nlohmann::json::parser_callback_t names =
      [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        if (event != nlohmann::json::parse_event_t::key) return true;
        if (depth == 1) in_paths = parsed == "paths";
        if (depth == 2 && in_paths && parsed.is_string())
          paths.push_back(parsed.get<std::string>());
        return depth == 1 && in_paths;
      };
  std::vector<std::string> out;
  if (!util::parse_bounded(openapi_json, names).is_object()) return out;
  for (const auto& path : paths) {
    constexpr std::string_view prefix = "/slurm/v";
    if (!path.starts_with(prefix)) continue;
    const auto end = path.find('/', prefix.size());
    out.push_back(path.substr(prefix.size() - 1, end - (prefix.size() - 1)));
  }
  std::ranges::sort(out);
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

const RestDialect* choose_dialect(const std::vector<std::string>& offered) {
  const RestDialect* best = nullptr;
  for (const auto& v : offered) {
    auto d = find_dialect(v);
    if (d && (!best || (*d)->minor > best->minor)) best = *d;
  }
  return best;
}

}  // namespace jobgen::slurm
