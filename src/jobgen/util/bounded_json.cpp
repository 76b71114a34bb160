#include "jobgen/util/bounded_json.hpp"

#include <algorithm>
#include <vector>

namespace jobgen::util {

namespace {

using nlohmann::json;
using Event = json::parse_event_t;

struct TooBig {
  std::string why;
};

// Follows which values nlohmann keeps and how many of them are held. It keeps a container's
// children only while the container, the key they stand under and the callback agree; it calls
// the callback at the end of kept containers only, so the open containers are matched by depth.
class Counter {
 public:
  bool on(int depth, Event event, json& parsed, const json::parser_callback_t& inner) {
    const bool wanted = !inner || inner(depth, event, parsed);
    const auto level = static_cast<std::size_t>(depth);
    switch (event) {
      case Event::key:
        close_below(level);
        key_kept_ = wanted;
        break;
      case Event::object_start:
      case Event::array_start:
        close_below(level);
        if (depth >= kMaxJsonDepth)
          throw TooBig{"it is nested deeper than " + std::to_string(kMaxJsonDepth) + " levels"};
        open_.push_back({level, member_kept() && wanted, event == Event::object_start, 0});
        break;
      case Event::object_end:
      case Event::array_end: {
        close_below(level + 1);
        if (open_.empty()) break;
        const Open closed = open_.back();
        open_.pop_back();
        if (closed.kept && wanted) add(closed.held + 1);
        break;
      }
      case Event::value:
        close_below(level);
        if (member_kept() && wanted) add(1);
        break;
    }
    return wanted;
  }

 private:
  struct Open {
    std::size_t level;  // nlohmann's depth at its start
    bool kept;
    bool object;
    std::size_t held;  // values kept inside it so far
  };
  // Containers nlohmann dropped end without a callback: forget those at `level` or deeper. They
  // hold nothing (a dropped container keeps no children).
  void close_below(std::size_t level) {
    while (!open_.empty() && open_.back().level >= level) open_.pop_back();
  }
  // Whether a value starting now, in the innermost open container, is kept.
  bool member_kept() const {
    if (open_.empty()) return true;
    return open_.back().kept && (!open_.back().object || key_kept_);
  }
  void add(std::size_t n) {
    if (open_.empty()) return;  // the document itself
    open_.back().held += n;
    std::size_t live = 0;
    for (const auto& o : open_) live += o.held;
    if (live > kMaxJsonValues)
      throw TooBig{"it holds more than " + std::to_string(kMaxJsonValues) + " values"};
  }
  std::vector<Open> open_;
  bool key_kept_ = true;
};

}  // namespace

namespace {
// Line and column (1-based) of the byte at `offset` of `text`.
SourceLoc location_of(std::string_view text, std::size_t offset, const std::string& source) {
  offset = std::min(offset, text.size());
  int line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') ++line, line_start = i + 1;
  }
  return SourceLoc{source, line, static_cast<int>(offset - line_start) + 1};
}
}  // namespace

Expected<json> parse_json_file(std::string_view text, const std::string& source) {
  Counter counter;
  const json::parser_callback_t bounded = [&](int depth, Event event, json& parsed) {
    return counter.on(depth, event, parsed, nullptr);
  };
  try {
    return json::parse(text, bounded, true, true);
  } catch (const TooBig& e) {
    return invalid("this JSON file is too large to be a config: " + e.why, SourceLoc{source, 1, 1});
  } catch (const json::parse_error& e) {
    // nlohmann's byte is 1-based and points just past the offending character.
    const std::size_t at = e.byte > 0 ? e.byte - 1 : 0;
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ...".
    if (const auto colon = what.find(": ", what.find("parse error")); colon != std::string::npos)
      what = what.substr(colon + 2);
    return invalid("not valid JSON: " + what, location_of(text, at, source));
  } catch (const json::exception& e) {
    // A number past a double's range ("number overflow parsing '1e400'", out_of_range.406): no
    // byte offset comes with it, so the quoted number is looked up in the text.
    std::string what = e.what();
    if (const auto bracket = what.find("] "); bracket != std::string::npos)
      what = what.substr(bracket + 2);
    std::size_t at = 0;
    if (const auto open = what.find('\''); open != std::string::npos) {
      const auto close = what.find('\'', open + 1);
      if (close != std::string::npos) {
        const auto found = text.find(what.substr(open + 1, close - open - 1));
        if (found != std::string_view::npos) at = found;
      }
    }
    return invalid("not valid JSON: " + what + " (a number must fit a double, below about 1.8e308)",
                   location_of(text, at, source));
  }
}

json parse_bounded(std::string_view body, const json::parser_callback_t& callback,
                   std::string* why) {
  Counter counter;
  const json::parser_callback_t bounded = [&](int depth, Event event, json& parsed) {
    return counter.on(depth, event, parsed, callback);
  };
  try {
    return json::parse(body, bounded, false);
  } catch (const TooBig& e) {
    if (why) *why = e.why;
    return json(json::value_t::discarded);
  }
}

}  // namespace jobgen::util
