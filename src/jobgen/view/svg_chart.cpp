#include "jobgen/view/svg_chart.hpp"

#include "jobgen/util/strings.hpp"
#include "jobgen/view/escape.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace jobgen::view {

namespace {

constexpr int kWidth = 720;
constexpr int kLabelWidth = 180;
// About as many columns of the 11 px label font as kLabelWidth holds (a CJK character is two): a
// longer label is cut, whole in its tooltip, rather than drawn over the bars.
constexpr std::size_t kLabelColumns = 26;
constexpr int kBarHeight = 12;
constexpr int kGroupHeight = 34;
constexpr int kTop = 28;

}  // namespace

std::string bar_chart(std::string_view id, std::string_view title,
                      const std::vector<BarGroup>& groups,
                      const std::function<std::string(double)>& format) {
  double largest = 0;
  for (const auto& g : groups)
    largest = std::max({largest, g.planned.value_or(0), g.used.value_or(0)});
  if (largest <= 0) largest = 1;
  const int height = kTop + static_cast<int>(groups.size()) * kGroupHeight + 24;
  const double span = kWidth - kLabelWidth - 90;
  std::string svg = fmt::format(
      "<svg id=\"{0}\" class=\"chart\" role=\"img\" aria-label=\"{1}\" "
      "xmlns=\"http://www.w3.org/2000/svg\" width=\"{2}\" height=\"{3}\" viewBox=\"0 0 {2} {3}\">"
      "\n<text x=\"0\" y=\"16\" class=\"title\">{1}</text>\n",
      html_escape(id), html_escape(title), kWidth, height);
  int y = kTop;
  for (const auto& g : groups) {
    const bool cut = util::display_width(g.label) > kLabelColumns;
    const std::string shown =
        cut ? html_escape(std::string(util::cut_to_width(g.label, kLabelColumns - 1))) +
                  "\u2026<title>" + html_escape(g.label) + "</title>"
            : html_escape(g.label);
    svg += fmt::format("<text x=\"0\" y=\"{}\" class=\"label\">{}</text>\n", y + 16, shown);
    const auto bar = [&](const std::optional<double>& value, const char* series, int offset) {
      if (!value) return;
      const double w = std::max(1.0, span * *value / largest);
      svg += fmt::format(
          "<rect class=\"mark {0}\" x=\"{1}\" y=\"{2}\" width=\"{3:.1f}\" height=\"{4}\">"
          "<title>{0}: {5}</title></rect>"
          "<text x=\"{6:.1f}\" y=\"{7}\" class=\"value\">{5}</text>\n",
          series, kLabelWidth, y + offset, w, kBarHeight, html_escape(format(*value)),
          kLabelWidth + w + 4, y + offset + 10);
    };
    bar(g.planned, "planned", 2);
    bar(g.used, "used", 2 + kBarHeight + 2);
    y += kGroupHeight;
  }
  svg += fmt::format(
      "<rect class=\"key planned\" x=\"{0}\" y=\"{1}\" width=\"10\" height=\"10\"/>"
      "<text x=\"{2}\" y=\"{3}\" class=\"label\">planned</text>"
      "<rect class=\"key used\" x=\"{4}\" y=\"{1}\" width=\"10\" height=\"10\"/>"
      "<text x=\"{5}\" y=\"{3}\" class=\"label\">used</text>\n</svg>\n",
      kLabelWidth, y + 4, kLabelWidth + 14, y + 13, kLabelWidth + 90, kLabelWidth + 104);
  return svg;
}

std::vector<Point> thin_points(const std::vector<Point>& points) {
  if (points.size() <= kMaxPoints) return points;
  std::vector<Point> out;
  out.reserve(kMaxPoints);
  const double step = static_cast<double>(points.size() - 1) / static_cast<double>(kMaxPoints - 1);
  for (std::size_t i = 0; i < kMaxPoints; ++i)
    out.push_back(points[static_cast<std::size_t>(std::lround(static_cast<double>(i) * step))]);
  return out;
}

std::string percent_line_chart(std::string_view id, std::string_view title,
                               const std::vector<Point>& all) {
  const auto points = thin_points(all);
  constexpr int height = 240, left = 40, top = 28, plot_h = 180;
  constexpr double plot_w = kWidth - left - 20;
  double last = 0;
  for (const auto& p : points) last = std::max(last, p.x);
  if (last <= 0) last = 1;
  std::string svg = fmt::format(
      "<svg id=\"{0}\" class=\"chart\" role=\"img\" aria-label=\"{1}\" "
      "xmlns=\"http://www.w3.org/2000/svg\" width=\"{2}\" height=\"{3}\" viewBox=\"0 0 {2} {3}\">"
      "\n<text x=\"0\" y=\"16\" class=\"title\">{1}</text>\n",
      html_escape(id), html_escape(title), kWidth, height);
  for (const int pct : {0, 50, 100}) {
    const double y = top + plot_h * (1 - pct / 100.0);
    svg += fmt::format(
        "<line class=\"grid\" x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\"/>"
        "<text x=\"0\" y=\"{3:.1f}\" class=\"label\">{4}%</text>\n",
        left, y, left + plot_w, y + 4, pct);
  }
  std::string line, marks;
  for (const auto& p : points) {
    const double x = left + plot_w * p.x / last;
    const double y = top + plot_h * (1 - std::clamp(p.y, 0.0, 100.0) / 100.0);
    line += fmt::format("{:.1f},{:.1f} ", x, y);
    marks += fmt::format(
        "<circle class=\"mark point\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2\"><title>{:.0f} s: "
        "{:.0f}%</title></circle>\n",
        x, y, p.x, p.y);
  }
  if (!line.empty()) line.pop_back();
  svg += fmt::format("<polyline class=\"line\" points=\"{}\"/>\n{}", line, marks);
  svg += fmt::format(
      "<text x=\"{}\" y=\"{}\" class=\"label\">time since the first sample: {:.0f} s"
      "</text>\n</svg>\n",
      left, height - 8, last);
  return svg;
}

}  // namespace jobgen::view
