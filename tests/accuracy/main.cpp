// jobgen_accuracy: the estimator against every measured public run, per data file and per split
// (calibration / held back, see measured.hpp). What bench/accuracy.sh runs and docs/accuracy.md
// shows.
//
//   jobgen_accuracy [--rows] [--tsv FILE] [PATH...]
//
// PATHs are YAML/Markdown files or directories of them; none = tests/data/measured and, when it
// exists, ../shared/reference/{measured-calibration.yaml,measured-public.md}. --rows prints every
// row; --tsv writes one line per row (predicted and measured memory and throughput) for plots.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "jobgen/util/build_config.hpp"
#include "measured.hpp"

using namespace jobgen;
using namespace jobgen::accuracy;

namespace {

std::string pct(int part, int whole) {
  return whole == 0 ? "-" : fmt::format("{:.0f}% ({}/{})", 100.0 * part / whole, part, whole);
}

void print_header() {
  fmt::print(
      "| {:<40} | {:<11} | {:>4} | {:>14} | {:>10} | {:>13} | {:>13} | {:>7} | {:>13} | {:>7} |\n",
      "data file", "split", "rows", "fit/OOM right", "OOM as fit", "mem within 10%",
      "mem within 20%", "mem med", "thr in x1.35", "thr med");
  fmt::print("|{:-<42}|{:-<13}|{:-<6}|{:-<16}|{:-<12}|{:-<15}|{:-<15}|{:-<9}|{:-<15}|{:-<9}|\n", "",
             "", "", "", "", "", "", "", "", "");
}

void print_summary(const std::string& name, const std::string& split, const Summary& s) {
  fmt::print(
      "| {:<40} | {:<11} | {:>4} | {:>14} | {:>10} | {:>13} | {:>13} | {:>7} | {:>13} | {:>7} |\n",
      name, split, s.rows, pct(s.fit_right, s.fit_rows),
      s.fit_rows ? std::to_string(s.oom_as_fit) : "-", pct(s.mem_within10, s.mem_rows),
      pct(s.mem_within20, s.mem_rows),
      s.mem_rows ? fmt::format("{:+.1f}%", 100 * s.mem_median) : "-", pct(s.thr_within, s.thr_rows),
      s.thr_rows ? fmt::format("{:+.0f}%", 100 * s.thr_median) : "-");
}

const char* kind_name(MemoryKind k) {
  switch (k) {
    case MemoryKind::allocated:
      return "alloc";
    case MemoryKind::reserved:
      return "reserved";
    case MemoryKind::device:
      return "smi";
  }
  return "?";
}

void print_row(const MeasuredRow& r) {
  const Prediction p = predict(r);
  std::string mem = "", thr = "", fit = "";
  if (r.memory_gib)
    mem = fmt::format("{:6.2f} vs {:6.2f} {:+5.0f}% {:<8}", p.memory_gib, *r.memory_gib,
                      100 * (p.memory_gib / *r.memory_gib - 1), kind_name(r.memory_kind));
  if (r.fits)
    fit = fmt::format("{}{}", p.fits ? "fit" : "OOM",
                      p.fits == *r.fits ? "" : (*r.fits ? " (ran!)" : " (OOM!)"));
  if (r.tokens_per_s_gpu)
    thr = fmt::format("{:8.0f} vs {:8.0f} x{:.2f}", p.tokens_per_s_gpu, *r.tokens_per_s_gpu,
                      p.tokens_per_s_gpu / *r.tokens_per_s_gpu);
  fmt::print("  {:<48} {:<38} {:<14} {:<32} mfu {:.2f} total {:.1f}/{:.1f}\n", r.id, mem, fit, thr,
             p.est.throughput.mfu, p.est.memory.total, p.est.capacity_gib);
}

std::vector<std::string> expand(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    if (std::filesystem::is_directory(p)) {
      std::vector<std::string> in_dir;
      for (const auto& e : std::filesystem::directory_iterator(p))
        if (e.path().extension() == ".yaml") in_dir.push_back(e.path().string());
      std::sort(in_dir.begin(), in_dir.end());
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else {
      files.push_back(p);
    }
  }
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  bool rows_flag = false;
  std::string tsv;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rows") {
      rows_flag = true;
    } else if (a == "--tsv" && i + 1 < argc) {
      tsv = argv[++i];
    } else if (a == "-h" || a == "--help") {
      std::puts("usage: jobgen_accuracy [--rows] [--tsv FILE] [PATH...]");
      return 0;
    } else {
      paths.push_back(a);
    }
  }
  if (paths.empty()) {
    const std::string shared = jobgen::build::source_dir() + "/../shared/reference/";
    for (const char* f : {"measured-calibration.yaml", "measured-public.md"})
      if (std::filesystem::exists(shared + f)) paths.push_back(shared + f);
    paths.push_back(jobgen::build::source_dir() + "/tests/data/measured");
  }
  std::vector<MeasuredRow> all;
  for (const std::string& f : expand(paths)) {
    auto rows = load_file(f);
    if (!rows) {
      std::fprintf(stderr, "jobgen_accuracy: %s\n", format_error(rows.error()).c_str());
      return 2;
    }
    all.insert(all.end(), rows->begin(), rows->end());
  }
  std::map<std::string, std::vector<const MeasuredRow*>> by_file;
  std::vector<std::string> order;
  std::map<Split, std::vector<const MeasuredRow*>> by_split;
  for (const MeasuredRow& r : all) {
    if (!by_file.contains(r.file)) order.push_back(r.file);
    by_file[r.file].push_back(&r);
    by_split[split_of(r)].push_back(&r);
  }
  print_header();
  for (const Split split : {Split::calibration, Split::held_back})
    for (const std::string& f : order)
      if (split_of(*by_file[f].front()) == split)
        print_summary(f, to_string(split), summarize(by_file[f]));
  for (const Split split : {Split::calibration, Split::held_back})
    print_summary(fmt::format("ALL {}", to_string(split)), to_string(split),
                  summarize(by_split[split]));
  std::vector<const MeasuredRow*> every;
  for (const MeasuredRow& r : all) every.push_back(&r);
  print_summary("ALL", "both", summarize(every));
  fmt::print("\nBy class (both splits):\n");
  print_header();
  for (const auto& [name, rows] : by_class(every)) print_summary(name, "both", summarize(rows));
  fmt::print("\nBy kind of run (both splits; a row may be of several kinds):\n");
  print_header();
  for (const auto& [name, rows] : by_run_kind(every)) print_summary(name, "both", summarize(rows));

  if (rows_flag) {
    for (const std::string& f : order) {
      fmt::print("\n{} ({})\n", f, to_string(split_of(*by_file[f].front())));
      for (const MeasuredRow* r : by_file[f]) print_row(*r);
    }
  }
  if (!tsv.empty()) {
    std::ofstream out(tsv);
    out << "# split\tfile\tid\tmem_measured\tmem_predicted\tthr_measured\tthr_predicted\n";
    for (const MeasuredRow& r : all) {
      const Prediction p = predict(r);
      out << to_string(split_of(r)) << '\t' << r.file << '\t' << r.id << '\t'
          << (r.memory_gib ? fmt::format("{:.3f}", *r.memory_gib) : "-") << '\t'
          << (r.memory_gib ? fmt::format("{:.3f}", p.memory_gib) : "-") << '\t'
          << (r.tokens_per_s_gpu ? fmt::format("{:.1f}", *r.tokens_per_s_gpu) : "-") << '\t'
          << (r.tokens_per_s_gpu ? fmt::format("{:.1f}", p.tokens_per_s_gpu) : "-") << '\n';
    }
  }
  return 0;
}
