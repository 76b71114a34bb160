// Slurm time strings. Expected seconds/strings were observed with libslurm 22.05.8
// (time_str2secs, secs2time_str) unless marked "jobgen rejects".
#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "jobgen/util/slurm_time.hpp"

using jobgen::util::format_duration;
using jobgen::util::format_slurm_time;
using jobgen::util::parse_slurm_time;

namespace {

std::optional<int64_t> secs(const std::string& text) {
  auto parsed = parse_slurm_time(text);
  REQUIRE_MESSAGE(parsed.has_value(), text);
  return *parsed;
}

void rejected(const std::string& text) {
  auto parsed = parse_slurm_time(text);
  CHECK_MESSAGE(!parsed.has_value(), text);
  if (!parsed) {
    CHECK(parsed.error().exit == jobgen::Exit::invalid_input);
    CHECK(parsed.error().message.find("D-HH:MM:SS") != std::string::npos);
  }
}

}  // namespace

TEST_CASE("slurm_time: every Slurm format, as time_str2secs") {
  CHECK(secs("30") == 1800);  // a bare number is minutes
  CHECK(secs("0") == 0);
  CHECK(secs("90") == 5400);
  CHECK(secs("61") == 3660);
  CHECK(secs("1:30") == 90);  // MM:SS
  CHECK(secs("1:00") == 60);
  CHECK(secs("1:2:3") == 3723);
  CHECK(secs("01:00:00") == 3600);
  CHECK(secs("00:00:59") == 59);
  CHECK(secs("25:00:00") == 90000);
  CHECK(secs("2-0") == 172800);  // D-HH
  CHECK(secs("2-00") == 172800);
  CHECK(secs("0-0") == 0);
  CHECK(secs("1-2:3") == 93780);  // D-HH:MM
  CHECK(secs("1-2:3:4") == 93784);
  CHECK(secs("1-0:0:1") == 86401);
  CHECK(secs("2-00:00:00") == 172800);
  // Fields beyond their usual range are added up, as Slurm does.
  CHECK(secs("1:90") == 150);
  CHECK(secs("1:60:00") == 7200);
  CHECK(secs("1-25") == 176400);
  CHECK(secs("1-24:00") == 172800);
  CHECK(secs("99999999") == int64_t{99999999} * 60);  // Slurm overflows an int here
}

TEST_CASE("slurm_time: UNLIMITED, INFINITE and -1 in any case are no limit") {
  for (const char* word : {"UNLIMITED", "unlimited", "Infinite", "infinite", "INFINITE", "-1"}) {
    CHECK_MESSAGE(secs(word) == std::nullopt, word);
  }
}

TEST_CASE("slurm_time: malformed times are invalid input") {
  for (const char* text : {"", "abc", "1:2:3:4", "1.5", " 5", "5x", "1-2-3", "1:", ":5",
                           "1-2:3:4:5", "unlimitedx", "1:-2"}) {
    rejected(text);
  }
  rejected("1-");          // jobgen rejects (Slurm: one day)
  rejected("-5");          // jobgen rejects (Slurm: -432000)
  rejected("1234567890");  // jobgen rejects: more than 9 digits
}

TEST_CASE("slurm_time: format as squeue/scontrol (secs2time_str)") {
  CHECK(format_slurm_time(0) == "00:00:00");
  CHECK(format_slurm_time(59) == "00:00:59");
  CHECK(format_slurm_time(60) == "00:01:00");
  CHECK(format_slurm_time(3599) == "00:59:59");
  CHECK(format_slurm_time(3600) == "01:00:00");
  CHECK(format_slurm_time(5400) == "01:30:00");
  CHECK(format_slurm_time(86399) == "23:59:59");
  CHECK(format_slurm_time(86400) == "1-00:00:00");
  CHECK(format_slurm_time(90061) == "1-01:01:01");
  CHECK(format_slurm_time(172800) == "2-00:00:00");
  CHECK(format_slurm_time(864000) == "10-00:00:00");
  CHECK(format_slurm_time(8640000) == "100-00:00:00");
  CHECK(format_slurm_time(4294967294) == "49710-06:28:14");
  CHECK(format_slurm_time(-1) == "INVALID");
  // Round trip through the parser.
  CHECK(secs(format_slurm_time(93784)) == 93784);
  CHECK(secs(format_slurm_time(3723)) == 3723);
}

TEST_CASE("slurm_time: human durations for reports") {
  CHECK(format_duration(0) == "0 s");
  CHECK(format_duration(0.4) == "0.4 s");  // a short run is not "0 s"
  CHECK(format_duration(0.96) == "1 s");
  CHECK(format_duration(45) == "45 s");
  CHECK(format_duration(59.4) == "59 s");
  CHECK(format_duration(60) == "1 min");
  CHECK(format_duration(12 * 60) == "12 min");
  CHECK(format_duration(59 * 60) == "59 min");
  CHECK(format_duration(3600) == "1.0 h");
  CHECK(format_duration(5.7 * 3600) == "5.7 h");
  CHECK(format_duration(47.9 * 3600) == "47.9 h");
  CHECK(format_duration(48 * 3600) == "2.0 days");
  CHECK(format_duration(2.1 * 86400) == "2.1 days");
  CHECK(format_duration(1.0 / 0.0) == "unlimited");
}
