// Inline SVG charts for the HTML report, generated here (no script, no font, no external file):
// strings in, markup out; every label is HTML-escaped. Each mark (a bar, a point) carries the
// class "mark" and its series' class, so a test counts them: `svg#ID .mark`.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jobgen::view {

// One group of the bar chart: a planned bar and a used bar (either may be absent: no mark).
struct BarGroup {
  std::string label;
  std::optional<double> planned;
  std::optional<double> used;
};
// Horizontal bars, one group per row: planned (class "planned") above used (class "used"),
// scaled to the largest value; `format` writes a value's label.
std::string bar_chart(std::string_view id, std::string_view title,
                      const std::vector<BarGroup>& groups,
                      const std::function<std::string(double)>& format);

// A line over time with a point (class "point") per sample: x in seconds, y in 0-100 %.
// At most kMaxPoints points: longer series are thinned evenly (first and last kept).
inline constexpr std::size_t kMaxPoints = 400;
struct Point {
  double x = 0;
  double y = 0;
};
std::string percent_line_chart(std::string_view id, std::string_view title,
                               const std::vector<Point>& points);
// The points percent_line_chart draws.
std::vector<Point> thin_points(const std::vector<Point>& points);

}  // namespace jobgen::view
