#include "jobgen/slurm/gres.hpp"

#include <charconv>

#include "jobgen/util/strings.hpp"

namespace jobgen::slurm {

std::string_view strip_gres_prefix(std::string_view entry) {
  for (std::string_view prefix : {"gres:", "gres/"}) {
    if (entry.starts_with(prefix)) return entry.substr(prefix.size());
  }
  return entry;
}

namespace {

// One entry ("gpu", "gpu:N", "gpu:type", "gpu:type:N", "gpu=N"), or nullopt for other gres.
std::optional<GresRequest> gpu_entry(std::string_view item) {
  item = strip_gres_prefix(util::trim(item));
  if (!item.starts_with("gpu")) return std::nullopt;
  item.remove_prefix(3);
  GresRequest request;
  request.count = 1;
  if (item.empty()) return request;
  if (item[0] != ':' && item[0] != '=') return std::nullopt;  // "gpuXYZ" is another gres
  item.remove_prefix(1);
  // "type:N", "N", "type" (count 1); "(IDX:..)" suffixes are dropped.
  item = item.substr(0, item.find('('));
  const std::size_t colon = item.rfind(':');
  std::string_view count_text = colon == std::string_view::npos ? item : item.substr(colon + 1);
  int n = 0;
  const auto [end, ec] =
      std::from_chars(count_text.data(), count_text.data() + count_text.size(), n);
  if (ec == std::errc() && end == count_text.data() + count_text.size()) {
    request.count = n;
    request.type = colon == std::string_view::npos ? "" : std::string(item.substr(0, colon));
  } else {
    request.type = std::string(item);
  }
  return request;
}

}  // namespace

std::vector<GresRequest> parse_gpu_gres_list(std::string_view gres) {
  std::vector<GresRequest> out;
  for (std::string_view item : util::split_top(gres, ',')) {
    if (auto request = gpu_entry(item)) out.push_back(std::move(*request));
  }
  return out;
}

std::optional<GresRequest> parse_gpu_gres(std::string_view gres) {
  auto all = parse_gpu_gres_list(gres);
  if (all.empty()) return std::nullopt;
  return std::move(all.front());
}

}  // namespace jobgen::slurm
