// Issue 16: hostile and extreme input. Each fix at its cause, as a unit: checked arithmetic, the
// file semantics of read_file/write_file, limits of profiles, job specs and requests, and the
// quoting-aware template check. tests/hostile/ runs the same cases through the binary.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "jobgen/plan/planner.hpp"
#include "jobgen/profile/profile_loader.hpp"
#include "jobgen/render/command_line.hpp"
#include "jobgen/render/renderer.hpp"
#include "jobgen/render/request.hpp"
#include "jobgen/spec/jobspec.hpp"
#include "jobgen/util/checked.hpp"
#include "jobgen/util/redact.hpp"
#include "jobgen/util/strings.hpp"
#include "jobgen/util/text_table.hpp"
#include "jobgen/util/units.hpp"
#include "jobgen/view/plan_view.hpp"
#include "profile_test_data.hpp"
#include "render_fixtures.hpp"

using namespace jobgen;
namespace fs = std::filesystem;

namespace {

// A fresh directory per test, removed afterwards.
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    std::string tmpl = (fs::temp_directory_path() / "jobgen-test.XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path)) out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }
};

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

const std::string kProfile = R"(cluster: t
partitions:
  - {name: gpu, max_time: MAXTIME, default: true}
node_groups:
  - name: l40s
    nodes: n[1-2]
    cpus: CPUS
    memory: 512G
    gpu: l40s
    gpus_per_node: 6
    mfu: 0.35
)";

profile::ProfileLoad load_profile_with(const std::string& max_time, const std::string& cpus) {
  std::string text = kProfile;
  text.replace(text.find("MAXTIME"), 7, max_time);
  text.replace(text.find("CPUS"), 4, cpus);
  return profile::load_profile(text, "p.yaml", test::real_catalog());
}

Error only_problem(const std::string& spec_text) {
  auto spec = spec::parse_job_spec(spec_text, "s.yaml");
  REQUIRE_FALSE(spec.has_value());
  return spec.error();
}

const std::string kSpec =
    "name: t\nmodel: bert-base\nseq_len: 128\nsteps: 1000\ncommand: train.py\n";

}  // namespace

TEST_CASE("checked arithmetic returns nullopt instead of overflowing") {
  CHECK(util::checked_mul(INT64_MAX / 2, 2) == INT64_MAX - 1);
  CHECK_FALSE(util::checked_mul(INT64_MAX / 2 + 1, 2).has_value());
  CHECK_FALSE(util::checked_add(INT64_MAX, 1).has_value());
  CHECK(util::checked_ceil_div(7, 2) == 4);
  CHECK_FALSE(util::checked_ceil_div(7, 0).has_value());
  CHECK_FALSE(util::to_int64(std::nan("")).has_value());
  CHECK_FALSE(util::to_int64(1e300).has_value());
  CHECK_FALSE(util::to_int64(9223372036854775808.0).has_value());
  CHECK(util::to_int64(-3.7) == -3);
  CHECK_FALSE(util::to_int(int64_t{1} << 40).has_value());
}

TEST_CASE("one learning-rate format, URLs lose their credentials") {
  CHECK(util::format_learning_rate(2e-5) == "2e-5");
  CHECK(util::format_learning_rate(0.0002) == "2e-4");
  CHECK(util::format_learning_rate(0.000212132) == "2.12e-4");
  CHECK(util::format_learning_rate(0.1) == "1e-1");
  CHECK(util::redact_url("http://alice:s3cret@h:6820/x?y") == "http://***@h:6820/***");
  CHECK(util::redact_url("http://h:6820/t/s3cret") == "http://h:6820/***");
  CHECK(util::redact_url("http://h:6820/") == "http://h:6820/");
  CHECK(util::redact_url("https://h:1/a@b") == "https://h:1/***");
  CHECK(util::redact_url("unix:/run/s.sock") == "unix:/run/s.sock");
  CHECK(util::redact_urls_in("GET http://h:1/t/s3cret failed: timed out (at 'https://u:p@h/x')") ==
        "GET http://h:1/*** failed: timed out (at 'https://***@h/***')");
  CHECK(util::redact_urls_in("no url here") == "no url here");
  CHECK(util::redact_urls_in("GET http://h:1/x/y: too long.") == "GET http://h:1/***: too long.");
}

TEST_CASE("read_file: only regular files, at most 16 MiB, never blocking") {
  ScratchDir dir;
  sys::RealFileSystem rfs;
  auto e = rfs.read_file(dir.path);
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().exit == Exit::invalid_input);
  CHECK(e.error().where.file == dir.path.string());
  CHECK(e.error().message.find("a directory") != std::string::npos);

  const fs::path fifo = dir.path / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  e = rfs.read_file(fifo);  // would block forever with an ifstream
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().message.find("a FIFO") != std::string::npos);

  e = rfs.read_file("/dev/zero");
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().message.find("character device") != std::string::npos);

  const fs::path big = dir.path / "big.yaml";
  write_text(big, "x");
  fs::resize_file(big, sys::kMaxInputFileBytes + 1);
  e = rfs.read_file(big);
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().message.find("larger than 16 MiB") != std::string::npos);

  e = rfs.read_file(dir.path / "missing");
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().exit == Exit::not_found);
}

TEST_CASE("read_tail: the last bytes of a regular file of any size, never a FIFO or device") {
  ScratchDir dir;
  sys::RealFileSystem rfs;
  const fs::path log = dir.path / "train.log";
  write_text(log, "first line\nsecond line\n");
  auto tail = rfs.read_tail(log, 1024);
  REQUIRE(tail);
  CHECK(tail->whole);
  CHECK(tail->text == "first line\nsecond line\n");
  tail = rfs.read_tail(log, 12);
  REQUIRE(tail);
  CHECK_FALSE(tail->whole);
  CHECK(tail->text == "second line\n");
  // Far larger than read_file takes: only the tail is read.
  const fs::path big = dir.path / "big.log";
  write_text(big, "x");
  fs::resize_file(big, sys::kMaxInputFileBytes * 4);
  {
    std::ofstream out(big, std::ios::binary | std::ios::app);
    out << "step 7/9\n";
  }
  tail = rfs.read_tail(big, 64);
  REQUIRE(tail);
  CHECK(tail->text.size() == 64);
  CHECK(tail->text.ends_with("step 7/9\n"));

  const fs::path fifo = dir.path / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto refused = rfs.read_tail(fifo, 1024);  // would block forever with an ifstream
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message.find("a FIFO") != std::string::npos);
  CHECK_FALSE(rfs.read_tail("/dev/zero", 1024).has_value());
  CHECK_FALSE(rfs.read_tail(dir.path, 1024).has_value());
  CHECK(rfs.read_tail(dir.path / "missing", 1024).error().exit == Exit::not_found);
}

TEST_CASE("write_file: new files get exactly the mode asked for, whatever the umask") {
  ScratchDir dir;
  sys::RealFileSystem rfs;
  const mode_t old = ::umask(0);
  REQUIRE(rfs.write_file(dir.path / "a.sh", "x", 0700));
  ::umask(077);
  REQUIRE(rfs.write_file(dir.path / "sub/b.sh", "x", 0750));
  ::umask(old);
  CHECK(mode_of(dir.path / "a.sh") == 0700);
  CHECK(mode_of(dir.path / "sub/b.sh") == 0750);
}

TEST_CASE("write_file: an existing file keeps its mode, hard links stay linked") {
  ScratchDir dir;
  sys::RealFileSystem rfs;
  write_text(dir.path / "mine.sh", "old");
  fs::permissions(dir.path / "mine.sh", fs::perms::owner_read | fs::perms::owner_write);
  REQUIRE(rfs.write_file(dir.path / "mine.sh", "new", 0755));
  CHECK(mode_of(dir.path / "mine.sh") == 0600);
  CHECK(test::read_text(dir.path / "mine.sh") == "new");

  fs::create_hard_link(dir.path / "mine.sh", dir.path / "other.sh");
  REQUIRE(rfs.write_file(dir.path / "mine.sh", "newer", 0755));
  CHECK(fs::hard_link_count(dir.path / "other.sh") == 2);
  CHECK(test::read_text(dir.path / "other.sh") == "newer");
  CHECK(dir.names() == std::vector<std::string>{"mine.sh", "other.sh"});
}

TEST_CASE("write_file: a symlink is followed and kept") {
  ScratchDir dir;
  sys::RealFileSystem rfs;
  write_text(dir.path / "target.sh", "old");
  fs::create_symlink("target.sh", dir.path / "link.sh");
  REQUIRE(rfs.write_file(dir.path / "link.sh", "new", 0700));
  CHECK(fs::is_symlink(dir.path / "link.sh"));
  CHECK(test::read_text(dir.path / "target.sh") == "new");

  fs::create_symlink("missing.sh", dir.path / "dangling.sh");
  auto e = rfs.write_file(dir.path / "dangling.sh", "x", 0700);
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().exit == Exit::invalid_input);
  CHECK_FALSE(fs::exists(dir.path / "missing.sh"));

  // A link to a device is written through: the link stays, the device stays a device.
  fs::create_symlink("/dev/null", dir.path / "null.sh");
  REQUIRE(rfs.write_file(dir.path / "null.sh", "x", 0700));
  CHECK(fs::is_symlink(dir.path / "null.sh"));
  CHECK(fs::is_character_file("/dev/null"));
}

TEST_CASE("write_file: a directory is refused and no temporary file is left") {
  ScratchDir dir;
  sys::RealFileSystem rfs;
  fs::create_directory(dir.path / "out.sh");
  auto e = rfs.write_file(dir.path / "out.sh", "x", 0700);
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().exit == Exit::invalid_input);
  CHECK(e.error().message.find("a directory") != std::string::npos);
  CHECK(dir.names() == std::vector<std::string>{"out.sh"});
  CHECK(fs::is_empty(dir.path / "out.sh"));
}

TEST_CASE("write_file: a FIFO is written through, or refused when nobody reads it") {
  ScratchDir dir;
  sys::RealFileSystem rfs;
  const fs::path fifo = dir.path / "fifo.sh";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto e = rfs.write_file(fifo, "script", 0700);  // no reader: an error, not a hang
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().message.find("no process is reading") != std::string::npos);

  std::string got;
  std::thread reader([&] { got = test::read_text(fifo); });
  Expected<void> ok = fail("not written");
  for (int i = 0; i < 200 && !ok; ++i) {  // until the reader has opened its end
    ok = rfs.write_file(fifo, "script", 0700);
    if (!ok) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  reader.join();
  CHECK(ok.has_value());
  CHECK(got == "script");
  CHECK(fs::is_fifo(fifo));
}

TEST_CASE("profiles: a zero or unexpressible max_time and out-of-range numbers at line:col") {
  for (const char* zero : {"0", "00:00:00", "0-0"}) {
    CAPTURE(zero);
    const auto load = load_profile_with(zero, "64");
    REQUIRE(load.problems.size() == 1);
    CHECK(load.problems[0].message.find("is zero") != std::string::npos);
    CHECK(load.problems[0].where.line == 3);
  }
  auto load = load_profile_with("999999999-00:00:00", "64");
  REQUIRE(load.problems.size() == 1);
  CHECK(load.problems[0].message.find("longer than Slurm can express") != std::string::npos);

  load = load_profile_with("1-00:00:00", "9223372036854775807");
  REQUIRE(load.problems.size() == 1);
  CHECK(load.problems[0].message.find("between 1 and 65,535") != std::string::npos);
  CHECK(load.problems[0].where.line == 7);
  load = load_profile_with("1-00:00:00", "99999999999999999999");
  REQUIRE(load.problems.size() == 1);
  CHECK(load.problems[0].message.find("out of range") != std::string::npos);
}

TEST_CASE("profiles: defaults that overflow the fit check, credentials in the REST URL") {
  std::string text = kProfile;
  text.replace(text.find("MAXTIME"), 7, "1-00:00:00");
  text.replace(text.find("CPUS"), 4, "64");
  auto load = profile::load_profile(text + "defaults: {cpus_per_gpu: 65535}\n", "p.yaml",
                                    test::real_catalog());
  REQUIRE(load.problems.size() == 1);
  CHECK(load.problems[0].message.find("is more than the 64 CPUs") != std::string::npos);
  load = profile::load_profile(text + "backend: rest\nrest: {url: 'http://al:s3cret@h:1'}\n",
                               "p.yaml", test::real_catalog());
  REQUIRE(load.problems.size() == 1);
  CHECK(load.problems[0].message.find("http://***@h:1") != std::string::npos);
  CHECK(load.problems[0].message.find("s3cret") == std::string::npos);
}

TEST_CASE("job specs: out-of-range numbers say so, at their line:col") {
  auto e = only_problem("name: t\nmodel: bert-base\nseq_len: 2147483648\nsteps: 10\n");
  CHECK(e.message.find("must be between 1 and 16,777,216, but it is 2,147,483,648") !=
        std::string::npos);
  CHECK(e.message.find("has no 'seq_len'") == std::string::npos);
  CHECK(e.where.line == 3);
  CHECK(e.where.col == 10);
  e = only_problem(kSpec + "learning_rate: nan\n");
  CHECK(e.message.find("finite") != std::string::npos);
  e = only_problem("name: t\nmodel: bert-base\nseq_len: 8\nsteps: 9223372036854775807\n");
  CHECK(e.message.find("between 1 and 1,000,000,000,000") != std::string::npos);
}

TEST_CASE("job specs: env names checked at load, many keys stay fast") {
  auto e = only_problem(kSpec + "env: {\"1BAD\": x}\n");
  CHECK(e.message.find("'1BAD' is not a shell identifier") != std::string::npos);
  CHECK(e.where.line == 6);
  std::string many = kSpec + "env:\n";
  for (int i = 0; i < 200000; ++i) many += "  K" + std::to_string(i) + ": v\n";
  const auto start = std::chrono::steady_clock::now();
  e = only_problem(many);
  // Refused before yaml-cpp builds 400,000 nodes (about 200 MB), where the bound was crossed.
  CHECK(e.message.find("YAML values") != std::string::npos);
  CHECK(e.where.line > 6);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  std::string thousand = kSpec + "env:\n";
  for (int i = 0; i < 1000; ++i) thousand += "  K" + std::to_string(i) + ": v\n";
  CHECK(spec::parse_job_spec(thousand, "s.yaml").has_value());
}

TEST_CASE("job specs: stages are bounded, copied once, and may not collide once sanitized") {
  auto e = only_problem(kSpec + "stages:\n  - name: \"a b\"\n  - name: a_b\n");
  CHECK(e.message.find("would both be written as 'a_b'") != std::string::npos);
  CHECK(e.where.line == 8);
  std::string many = kSpec + "stages:\n";
  for (int i = 0; i < 2000; ++i) many += "  - name: s" + std::to_string(i) + "\n";
  e = only_problem(many);
  CHECK(e.message.find("has 2000 stages; the limit is 100") != std::string::npos);
  std::string hundred = kSpec + "stages:\n";
  for (int i = 0; i < 100; ++i) hundred += "  - name: s" + std::to_string(i) + "\n";
  auto spec = spec::parse_job_spec(hundred, "s.yaml");
  REQUIRE(spec.has_value());
  CHECK(spec->stages.size() == 100);
  CHECK(spec->stages.back().stages.empty());
}

TEST_CASE("time limits and chains beyond what Slurm can take are refused") {
  CHECK_FALSE(render::padded_time_limit_s(1e300).has_value());
  CHECK_FALSE(render::padded_time_limit_s(std::numeric_limits<double>::infinity()).has_value());
  CHECK(render::padded_time_limit_s(0) == 900);

  auto prof =
      profile::parse_profile(test::read_text(test::source_path("cluster-profiles/markov.yaml")),
                             "markov.yaml", test::real_catalog());
  REQUIRE(prof.has_value());
  auto spec = spec::parse_job_spec(
      "name: t\nmodel: bert-base\nseq_len: 128\nsteps: 1000000000000\n"
      "checkpoint: {resumable: true}\ncommand: train.py --bs {{micro_batch}} --ga {{grad_accum}}\n",
      "s.yaml");
  REQUIRE(spec.has_value());
  plan::PlanOptions options;
  options.target = "l40s";
  auto report = plan::make_plan(*spec, *prof, test::real_catalog(), options);
  REQUIRE(report.has_value());
  const plan::PlanRow& row = report->rows.front();
  auto req = render::build_render_input(*prof, *spec, row, {});
  REQUIRE_FALSE(req.has_value());
  CHECK(req.error().exit == Exit::invalid_input);
  CHECK(req.error().where.file == "s.yaml");

  plan::PlanRow week = row;  // 20 years on a 2-day partition: more than 1000 links
  week.total_time_s = 20 * 365 * 86400.0;
  req = render::build_render_input(*prof, *spec, week, {});
  REQUIRE_FALSE(req.has_value());
  CHECK(req.error().message.find("more than the 1000 jobgen submits") != std::string::npos);
}

TEST_CASE("sweeps: the task count saturates, MaxArraySize is a parameter") {
  std::vector<render::SweepParam> six;
  for (const char* k : {"a", "b", "c", "d", "e", "f"}) {
    render::SweepParam p{k, {}};
    for (int i = 0; i < 40; ++i) p.values.push_back(std::to_string(i));
    six.push_back(p);
  }
  CHECK(render::sweep_task_count(six) == INT32_MAX);
  auto ok = render::check_sweep_size(six, render::kDefaultMaxArraySize);
  REQUIRE_FALSE(ok.has_value());
  CHECK(ok.error().message.find("4096000000 array tasks") != std::string::npos);

  std::vector<render::SweepParam> two{{"a", {"1", "2"}}, {"b", {}}};
  for (int i = 0; i < 501; ++i) two[1].values.push_back(std::to_string(i));
  CHECK_FALSE(render::check_sweep_size(two, 1001).has_value());  // 1002 tasks
  CHECK(render::check_sweep_size(two, 1002).has_value());
  two[1].values.pop_back();
  CHECK(render::check_sweep_size(two, 1001).has_value());  // 1000 tasks
}

TEST_CASE("placeholders of any length are scanned without recursion") {
  const std::string name(50000, 'a');
  CHECK(render::placeholders_used({"--x={{" + name + "}}"}) == std::vector<std::string>{name});
  CHECK(render::placeholders_used({"{{{x}}", "{{ y }}z{{", "{{1x}}"}) ==
        std::vector<std::string>{"x", "y"});
  auto q = render::quote_command({"--lr={{learning_rate}}"}, {{"learning_rate", "1e-4"}},
                                 {"learning_rate"});
  REQUIRE(q.has_value());
  q = render::quote_command({"{{nope}}"}, {{"learning_rate", "1e-4"}}, {"learning_rate"});
  REQUIRE_FALSE(q.has_value());
  const auto& m = q.error().message;
  CHECK(m.find("learning_rate") == m.rfind("learning_rate"));  // listed once
}

TEST_CASE("template check: values inside quotes, backticks or here-documents are refused") {
  const auto set = test::bundled_templates();
  const auto check = [&](const std::string& text) {
    return render::validate_template(render::Template{text, "t.mustache"}, set);
  };
  auto e = check("#!/bin/bash\necho \"{{log_dir}}\"\n");
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().where.line == 2);
  CHECK(e.error().where.col == 7);
  CHECK(e.error().message.find("inside double quotes opened at t.mustache:2:6") !=
        std::string::npos);
  CHECK_FALSE(check("echo '{{stage}}'\n").has_value());
  CHECK_FALSE(check("echo `echo {{log_dir}}`\n").has_value());
  CHECK_FALSE(check("echo \"$(echo {{log_dir}})\"\n").has_value());
  CHECK_FALSE(check("cat <<EOF\n{{log_dir}}\nEOF\n").has_value());
  CHECK_FALSE(check("echo ${{log_dir}}\n").has_value());
  CHECK_FALSE(check("{{#multi_gpu}}\"{{/multi_gpu}}{{log_dir}}\n").has_value());
  // Allowed: words outside quotes, comments, after a here-document, a here-string, plain values
  // inside quotes.
  CHECK(check("echo {{log_dir}} \"$X\" # it's {{stage}}\n").has_value());
  CHECK(check("cat <<'EOF'\n$x\nEOF\necho {{log_dir}}\n").has_value());
  CHECK(check("read -r x <<<\"$y\"\necho {{log_dir}}\n").has_value());
  CHECK(check("echo \"{{nodes}} x {{gpus_per_node}}\" '{{job_name}}'\n").has_value());
  CHECK(check("echo $(( {{nodes}} + 1 )) {{log_dir}}\n").has_value());
}

TEST_CASE("template check: nesting, nested lists and size are bounded") {
  const auto set = test::bundled_templates();
  const auto check = [&](const std::string& text) {
    return render::validate_template(render::Template{text, "t.mustache"}, set);
  };
  std::string deep;
  for (int i = 0; i < 20000; ++i) deep += "{{#multi_node}}";
  auto e = check(deep);
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().message.find("nest more than 16 deep") != std::string::npos);
  e = check("{{#sbatch}}{{#sbatch}}{{{directive}}}{{/sbatch}}{{/sbatch}}");
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().message.find("opened inside list 'sbatch'") != std::string::npos);
  std::string tags;
  for (int i = 0; i < 6000; ++i) tags += "{{nodes}} ";
  CHECK_FALSE(check(tags).has_value());
  CHECK(check("{{#" + std::string(100000, 'a') + "}}").error().message.find("unknown") !=
        std::string::npos);
}

TEST_CASE("plan text stays within 100 columns with long notes and names") {
  std::string text = test::read_text(test::source_path("cluster-profiles/markov.yaml"));
  const std::string from = "availability: widely available";
  text.replace(text.find(from), from.size(),
               "availability: " + std::string(150, 'x') + " and a very long note");
  auto prof = profile::parse_profile(text, "markov.yaml", test::real_catalog());
  REQUIRE_MESSAGE(prof.has_value(), prof.error().message);
  auto spec = spec::parse_job_spec("name: " + std::string(300, 'n') +
                                       "\nmodel: bert-base\nseq_len: 128\nsteps: 1000\n"
                                       "learning_rate: 2e-5\ncommand: train.py\n",
                                   "s.yaml");
  REQUIRE(spec.has_value());
  auto report = plan::make_plan(*spec, *prof, test::real_catalog(), {});
  REQUIRE(report.has_value());
  const std::string out = view::render_text(*report);
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    CAPTURE(line);
    CHECK(line.size() <= 100);
  }
  CHECK(out.find("2e-5") != std::string::npos);
}

TEST_CASE("profiles: a problem about an absent key is reported, not thrown (found by fuzzing)") {
  const std::string text = R"(cluster: t
partitions:
  - {name: gpu, max_time: 1-00:00:00, default: true}
node_groups:
  - name: mig
    nodes: m1
    cpus: 64
    memory: 512G
    gpu: h100-nvl
    gpus_per_node: 2
    mig:
      slices:
        - {prodile: 3g.47gb, per_gpu: 2}
)";
  const auto load = profile::load_profile(text, "p.yaml", test::real_catalog());
  CHECK_FALSE(load.profile.has_value());
  REQUIRE(load.problems.size() >= 2);
  for (const auto& p : load.problems) CHECK(p.where.file == "p.yaml");
}

TEST_CASE("escape_controls keeps terminals safe from input text") {
  CHECK(util::escape_controls("a\x1b[2Jb\n\tc") == "a\\x1b[2Jb\n\tc");
  CHECK(util::escape_controls("\x7f\x07") == "\\x7f\\x07");
  CHECK(util::escape_controls("\xc2\x9b"
                              "31m") == "\\xc2\\x9b31m");  // C1 CSI
  CHECK(util::escape_controls("日本語 ĉ") == "日本語 ĉ");
}

TEST_CASE("printable: one line, no reordering controls, never half a character") {
  CHECK(util::printable("line1\nfake 99999 COMPLETED") == "line1\\x0afake 99999 COMPLETED");
  // U+202E (right-to-left override) and U+2066 (left-to-right isolate) are shown, not obeyed.
  CHECK(util::printable("run\xe2\x80\xaetxt.exe") == "run\\xe2\\x80\\xaetxt.exe");
  CHECK(util::escape_controls("a\xe2\x81\xa6z") == "a\\xe2\\x81\\xa6z");
  CHECK(util::printable("a\xe2\x80\x94z") == "a\xe2\x80\x94z");  // an em dash is text
  // Cut at 4 bytes inside the second three-byte character: it is kept whole.
  CHECK(util::printable("日本語", 4) == "日本...");
  CHECK(util::printable(std::string(100, 'x'), 10) == std::string(10, 'x') + "...");
  // Stray continuation bytes past the cut are no character: the text stays bounded.
  CHECK(util::printable("ab" + std::string(100000, '\x80'), 4).size() <= 4 + 3 + 3);
}

TEST_CASE("display width: CJK takes two columns, combining marks none, tables align by it") {
  CHECK(util::display_width("abc") == 3);
  CHECK(util::display_width("日本") == 4);
  CHECK(util::display_width("Lüfter") == 6);
  CHECK(util::display_width("e\xcc\x81") == 1);  // e + combining acute
  CHECK(util::display_width("\xff") == 1);       // not UTF-8: a byte, a column
  CHECK(util::cut_to_width("日本語", 5) == "日本");
  CHECK(util::cut_to_width("ab日", 3) == "ab");
  const std::string table = util::format_table({{"訓練ジョブ", "1"}, {"train", "22"}});
  const auto first = table.substr(0, table.find('\n'));
  const auto second = table.substr(table.find('\n') + 1);
  // The second column starts at the same terminal column on both rows.
  CHECK(util::display_width(first.substr(0, first.size() - 1)) == 12);
  CHECK(util::display_width(second.substr(0, second.find("22"))) == 12);
  util::TableStyle narrow;
  narrow.max_width = 12;
  const std::string cut = util::format_table({{"日本語のとても長い名前", "7"}}, narrow);
  CHECK(util::utf8_error_at(cut) == std::string::npos);  // never half a character
  CHECK(util::display_width(cut.substr(0, cut.find('\n'))) <= 12);
}
