// Queue-aware planning: free-GPU counting, pending demand, start estimates, the ranking by
// expected finish, and the number of scheduler requests per plan (a recording fake).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include <unistd.h>

#include "jobgen/app/queue_data.hpp"
#include "jobgen/cli/app.hpp"
#include "jobgen/plan/planner.hpp"
#include "jobgen/plan/queue.hpp"
#include "jobgen/profile/profile_loader.hpp"
#include "jobgen/slurm/sbatch/command_text.hpp"
#include "jobgen/slurm/sbatch/sbatch_backend.hpp"
#include "jobgen/util/build_config.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"
#include "jobgen/view/plan_view.hpp"
#include "recording_runner.hpp"
#include "test_system.hpp"

using namespace jobgen;

namespace {

std::string read(const std::string& relative) {
  std::ifstream in(std::filesystem::path(jobgen::build::source_dir()) / relative);
  REQUIRE_MESSAGE(in.good(), relative);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Two typed groups, one MIG group, one untyped group; partitions "gpu" and "other".
profile::Profile cluster() {
  profile::Profile p;
  p.name = "test";
  auto group = [](std::string name, std::vector<std::string> nodes, std::string part) {
    profile::NodeGroup g;
    g.name = std::move(name);
    g.nodes = std::move(nodes);
    g.partitions = {std::move(part)};
    return g;
  };
  auto a = group("a", {"a1", "a2", "a3", "a4", "a5", "a6"}, "gpu");
  a.gres_type = "gpua";
  auto b = group("b", {"b1"}, "gpu");
  b.gres_type = "gpub";
  auto mig = group("mig", {"m1"}, "gpu");
  profile::MigLayout layout;
  layout.slices = {profile::MigSlice{"1g.12gb", 7, 7, "mig_1g", std::nullopt, {}}};
  mig.mig = layout;
  auto any = group("any", {"u1"}, "other");
  p.node_groups = {a, b, mig, any};
  return p;
}

slurm::NodeInfo node(std::string name, std::vector<std::string> states,
                     std::vector<slurm::GresCount> gpus) {
  slurm::NodeInfo n;
  n.name = std::move(name);
  n.states = std::move(states);
  n.gpus = std::move(gpus);
  return n;
}

slurm::JobInfo pending(std::string gres, std::string partition, int nodes = 1,
                       std::string user = "alice") {
  slurm::JobInfo j;
  j.state = slurm::JobState::pending;
  j.gres = std::move(gres);
  j.partition = std::move(partition);
  j.num_nodes = nodes;
  j.user = std::move(user);
  return j;
}

const plan::GroupQueue& find(const std::vector<plan::GroupQueue>& qs, const std::string& name) {
  for (const auto& q : qs)
    if (q.group == name) return q;
  FAIL("no group " << name);
  throw 0;
}

}  // namespace

TEST_CASE("free GPUs: partially allocated nodes by free gres, drained, down, reserved excluded") {
  const std::vector<slurm::NodeInfo> nodes{
      node("a1", {"IDLE"}, {{"gpua", 4, 0}}),
      node("a2", {"MIXED"}, {{"gpua", 4, 3}}),
      node("a3", {"IDLE", "DRAIN"}, {{"gpua", 4, 0}}),
      node("a4", {"DOWN", "NOT_RESPONDING"}, {{"gpua", 4, 0}}),
      node("a5", {"IDLE", "RESERVED"}, {{"gpua", 4, 0}}),
      // a6 is not known to Slurm at all
      node("b1", {"ALLOCATED"}, {{"gpub", 2, 2}}),
      node("m1", {"MIXED"}, {{"mig_1g", 14, 5}}),
      node("u1", {"IDLE"}, {{"x", 2, 1}, {"y", 2, 0}}),
  };
  const auto qs = app::group_queues(cluster(), nodes, {}, "");
  const auto& a = find(qs, "a");
  CHECK(a.nodes.size() == 2);
  CHECK(a.excluded_nodes == 4);
  CHECK(a.free_gpus() == 5);  // 4 + 1
  CHECK(a.total_gpus() == 8);
  CHECK(a.nodes[1].free.at("gpua") == 1);
  CHECK(find(qs, "b").free_gpus() == 0);
  CHECK(find(qs, "b").total_gpus() == 2);
  const auto& mig = find(qs, "mig");
  CHECK(mig.free_gpus() == 9);  // slices, not GPUs
  CHECK(mig.nodes[0].free.at("mig_1g") == 9);
  CHECK(find(qs, "any").free_gpus() == 3);  // an untyped group counts every type
  CHECK_FALSE(find(qs, "a").own_pending_jobs.has_value());

  CHECK(app::node_usable(node("x", {"IDLE", "COMPLETING"}, {})));
  CHECK_FALSE(app::node_usable(node("x", {"IDLE", "MAINTENANCE"}, {})));
  CHECK_FALSE(app::node_usable(node("x", {"IDLE", "POWERED_DOWN"}, {})));
  CHECK_FALSE(app::node_usable(node("x", {}, {})));  // no state: not evidence of "free"
}

TEST_CASE("pending demand per group by gres type and partition, and the user's own") {
  auto running = pending("gpu:gpua:4", "gpu");
  running.state = slurm::JobState::running;
  // Pending, but not in line until someone acts: not demand.
  auto held = pending("gpu:gpua:4", "gpu"), admin_held = held, orphan = held;
  held.reason = "JobHeldUser";
  admin_held.reason = "JobHeldAdmin";
  orphan.reason = "DependencyNeverSatisfied";
  const std::vector<slurm::JobInfo> jobs{
      held,
      admin_held,
      orphan,
      pending("gpu:gpua:4", "gpu", 2, "bob"),    // 8 GPUs for a
      pending("gpu:gpua:1", "gpu", 1, "alice"),  // 1 for a, alice's
      pending("gpu:gpua:4", "other", 1, "bob"),  // a is not in "other"
      pending("gpu:mig_1g:1", "gpu,other", 1),   // a MIG slice, in one of its partitions
      pending("gpu:2", "gpu", 1, "bob"),         // untyped: any group of "gpu"
      pending("", "gpu", 1, "bob"),              // no GPUs: not demand
      running,                                   // running: not pending demand
  };
  const auto qs = app::group_queues(cluster(), {}, jobs, "alice");
  const auto& a = find(qs, "a");
  CHECK(a.pending_jobs == 3);
  CHECK(a.pending_gpus == 8 + 1 + 2);
  CHECK(a.own_pending_jobs == 1);
  CHECK(find(qs, "b").pending_jobs == 1);  // the untyped one
  CHECK(find(qs, "b").pending_gpus == 2);
  CHECK(find(qs, "mig").pending_gpus == 1 + 2);
  CHECK(find(qs, "mig").own_pending_jobs == 1);
  CHECK(find(qs, "any").pending_jobs == 0);  // partition "other": only the typed a/mig jobs
  CHECK(find(qs, "a").excluded_nodes == 6);  // no node list: nothing is free
}

TEST_CASE("sbatch --test-only: the start time") {
  auto answer = slurm::parse_test_only(
      "sbatch: Job 123 to start at 2026-11-23T10:00:00 using 4 processors on nodes n1 in "
      "partition p\n");
  REQUIRE(answer);
  CHECK(answer->start_time == slurm::parse_slurm_timestamp("2026-11-23T10:00:00").value());
  CHECK(answer->nodes == "n1");
  CHECK(answer->partition == "p");
}

namespace {

plan::PlanRow row(int id, std::string group, double total_s, int gpus = 4, int nodes = 1) {
  plan::PlanRow r;
  r.id = id;
  r.group = std::move(group);
  r.gres = "gpu:gpu" + r.group + ":" + std::to_string(gpus);
  r.gpus_per_node = gpus;
  r.nodes = nodes;
  r.total_time_s = total_s;
  r.runnable = r.fits = true;
  return r;
}

plan::QueueSnapshot snapshot(int64_t now) {
  plan::QueueSnapshot q;
  q.available = true;
  q.now = now;
  plan::GroupQueue busy{"busy", {{"b1", {{"gpubusy", 0}}, {{"gpubusy", 8}}}}, 0, 3, 24, 0, {}, {},
                        false};
  plan::GroupQueue free{
      "free",
      {{"f1", {{"gpufree", 4}}, {{"gpufree", 4}}}, {"f2", {{"gpufree", 2}}, {{"gpufree", 4}}}},
      0,
      0,
      0,
      0,
      {},
      {},
      false};
  q.groups = {busy, free};
  return q;
}

}  // namespace

TEST_CASE("start estimates: Slurm's, free now, unknown") {
  const int64_t now = 1'800'000'000;
  plan::QueueSnapshot q = snapshot(now);
  q.slurm_start[1] = now + 2 * 3600 + 10 * 60;
  q.slurm_start[2] = now + 20;  // within the slack: now
  const auto in_2h10 = plan::estimate_start(row(1, "busy", 3600), q);
  CHECK(in_2h10.basis == plan::StartBasis::slurm);
  CHECK(in_2h10.in_s == 7800);
  CHECK(plan::describe_start(in_2h10) == "starts in ~2 h 10 m (Slurm's backfill estimate)");
  CHECK(plan::estimate_start(row(2, "free", 3600), q).in_s == 0);
  // No Slurm estimate: free now only when enough GPUs are free on enough nodes.
  CHECK(plan::estimate_start(row(3, "free", 3600, 4), q).basis == plan::StartBasis::free_now);
  CHECK(plan::estimate_start(row(4, "free", 3600, 2, 2), q).basis == plan::StartBasis::free_now);
  CHECK_FALSE(plan::estimate_start(row(5, "free", 3600, 4, 2), q).known());  // one 4-GPU node
  CHECK_FALSE(plan::estimate_start(row(6, "busy", 3600, 1), q).known());     // jobs pending
  // No queue data: unknown, never "now".
  plan::QueueSnapshot none;
  none.unavailable_reason = "timed out";
  CHECK_FALSE(plan::estimate_start(row(3, "free", 3600), none).known());
  CHECK(plan::describe_start({}) == "start unknown");
  CHECK(util::format_duration(59, util::DurationStyle::compound) == "59 s");
  CHECK(util::format_duration(90, util::DurationStyle::compound) == "2 m");
  CHECK(util::format_duration(3 * 86400 + 4 * 3600, util::DurationStyle::compound) == "3 d 4 h");
}

TEST_CASE("start estimates from time limits: running jobs end, the jobs ahead go first") {
  const int64_t now = 1'800'000'000;
  const int64_t h = 3600;
  // Two 4-GPU nodes: n1 held whole until +1 h, n2 half until +2 h (2 free).
  plan::GroupQueue g;
  g.group = "busy";
  g.nodes = {{"n1", {{"gpubusy", 0}}, {{"gpubusy", 4}}},
             {"n2", {{"gpubusy", 2}}, {{"gpubusy", 4}}}};
  g.holds = {{"n1", "gpubusy", 4, now + h}, {"n2", "gpubusy", 2, now + 2 * h}};
  g.holds_complete = true;
  CHECK(plan::start_by_time_limits(g, "gpubusy", 1, 2, now) == 0);      // n2's free pair
  CHECK(plan::start_by_time_limits(g, "gpubusy", 1, 4, now) == h);      // n1 comes back
  CHECK(plan::start_by_time_limits(g, "gpubusy", 2, 4, now) == 2 * h);  // both
  CHECK_FALSE(plan::start_by_time_limits(g, "gpubusy", 3, 4, now));     // more than it has
  CHECK_FALSE(plan::start_by_time_limits(g, "gpubusy", 1, 8, now));
  // A job ahead for a whole node, 30 min: it takes n1 at +1 h, a 4-GPU row waits for n2 at +2 h
  // or n1 again at +1.5 h.
  g.waiters = {{"gpubusy", 1, 4, h / 2}};
  g.pending_jobs = 1;
  CHECK(plan::start_by_time_limits(g, "gpubusy", 1, 4, now) == h + h / 2);
  // One that cannot ever fit here is Slurm's business elsewhere: skipped.
  g.waiters.insert(g.waiters.begin(), plan::Waiter{"gpubusy", 1, 16, h});
  CHECK(plan::start_by_time_limits(g, "gpubusy", 1, 4, now) == h + h / 2);
  // A job ahead without a time limit keeps n1 for good: then only n2, at +2 h.
  g.waiters = {{"gpubusy", 1, 4, std::nullopt}};
  CHECK(plan::start_by_time_limits(g, "gpubusy", 1, 4, now) == 2 * h);
  // A running job past its limit (still running: OverTimeLimit) is due now.
  g.waiters.clear();
  g.pending_jobs = 0;
  g.holds[0].until = now - 60;
  CHECK(plan::start_by_time_limits(g, "gpubusy", 1, 4, now) == 0);
  // A hold without an end: never back.
  g.holds[0].until.reset();
  g.holds[1].until.reset();
  CHECK_FALSE(plan::start_by_time_limits(g, "gpubusy", 1, 4, now));

  // Through estimate_start, only when every used GPU is accounted for.
  g.holds = {{"n1", "gpubusy", 4, now + h}, {"n2", "gpubusy", 2, now + 2 * h}};
  g.waiters = {{"gpubusy", 1, 4, h / 2}};
  g.pending_jobs = 1;
  plan::QueueSnapshot q;
  q.available = true;
  q.now = now;
  q.groups = {g};
  const auto start = plan::estimate_start(row(1, "busy", h, 4), q);
  CHECK(start.basis == plan::StartBasis::time_limits);
  CHECK(start.in_s == h + h / 2);
  CHECK(plan::describe_start(start) == "starts in ~1 h 30 m (if jobs ahead run to their limits)");
  q.groups[0].holds_complete = false;
  CHECK_FALSE(plan::estimate_start(row(1, "busy", h, 4), q).known());
  // Slurm's own estimate, where there is one, comes first.
  q.groups[0].holds_complete = true;
  q.slurm_start[1] = now + 5 * h;
  CHECK(plan::estimate_start(row(1, "busy", h, 4), q).basis == plan::StartBasis::slurm);
}

TEST_CASE("group_queues: running jobs' holds and the jobs ahead, from squeue/REST records") {
  const int64_t now = 1'800'000'000;
  std::vector<slurm::NodeInfo> nodes{
      node("a1", {"ALLOCATED"}, {{"gpua", 4, 4}}), node("a2", {"MIXED"}, {{"gpua", 4, 2}}),
      node("a3", {"IDLE"}, {{"gpua", 4, 0}}),      node("a4", {"IDLE"}, {{"gpua", 4, 0}}),
      node("a5", {"IDLE"}, {{"gpua", 4, 0}}),      node("a6", {"IDLE"}, {{"gpua", 4, 0}}),
      node("m1", {"MIXED"}, {{"mig_1g", 14, 1}}),
  };
  slurm::JobInfo wide;  // 2 GPUs on each of a1 and a2, until Slurm's end time
  wide.state = slurm::JobState::running;
  wide.nodes = "a[1-2]";
  wide.gres = "gpu:gpua:2";
  wide.partition = "gpu";
  wide.end_time = now + 3000;
  slurm::JobInfo rest = wide;  // the other 2 of a1: untyped, so the group's only type; no end
  rest.nodes = "a1";           // time reported: start + limit
  rest.gres = "gpu:2";
  rest.end_time.reset();
  rest.start_time = now - 600;
  rest.time_limit_s = 3600;
  slurm::JobInfo older = pending("gpu:gpua:4", "gpu"), newer = pending("gpu:gpua:1", "gpu", 2);
  older.submit_time = now - 100;
  older.time_limit_s = 7200;
  newer.submit_time = now - 50;
  const std::vector<slurm::JobInfo> jobs{wide, rest, newer, older};
  auto qs = app::group_queues(cluster(), nodes, jobs, "");
  const auto& a = find(qs, "a");
  CHECK(a.holds_complete);
  REQUIRE(a.holds.size() == 3);
  CHECK(a.holds[0].node == "a1");
  CHECK(a.holds[0].until == now + 3000);
  CHECK(a.holds[2].until == now + 3000);  // start + limit
  CHECK(a.holds[2].type == "gpua");
  REQUIRE(a.waiters.size() == 2);
  CHECK(a.waiters[0].limit_s == 7200);  // oldest first
  CHECK(a.waiters[1].nodes == 2);
  CHECK_FALSE(a.waiters[1].limit_s);  // no limit given: held for good
  // m1 has a used slice no listed job accounts for (a job this listing missed): no replay.
  CHECK_FALSE(find(qs, "mig").holds_complete);
  nodes.back().gpus[0].used = 0;
  CHECK(find(app::group_queues(cluster(), nodes, jobs, ""), "mig").holds_complete);
  // And through the replay: the 4-GPU job ahead takes a3 now, the 2-node one a GPU of a2 and of
  // a4; a5 and a6 stay whole, and a1 comes back at +50 min (both its jobs end then).
  plan::QueueSnapshot q;
  q.available = true;
  q.now = now;
  q.groups = qs;
  plan::PlanRow r = row(1, "a", 3600, 4, 1);  // gres gpu:gpua:4
  CHECK(plan::estimate_start(r, q).basis == plan::StartBasis::time_limits);
  CHECK(plan::estimate_start(r, q).in_s == 0);
  r.nodes = 2;  // a5 and a6
  CHECK(plan::estimate_start(r, q).in_s == 0);
  r.nodes = 3;  // and a1
  CHECK(plan::estimate_start(r, q).in_s == 3000);
  r.nodes = 4;  // a2 and a4 keep a GPU each for good, a3 comes back at +2 h
  CHECK(plan::estimate_start(r, q).in_s == 7200);
}

TEST_CASE("a pending array counts each task, as squeue -r and REST list it alike") {
  const int64_t now = 1'800'000'000;
  std::vector<slurm::NodeInfo> nodes;
  for (const char* n : {"a1", "a2", "a3", "a4", "a5", "a6"})
    nodes.push_back(node(n, {"IDLE"}, {{"gpua", 4, 0}}));
  // REST: one record for three tasks (0, 2, 4), each 4 GPUs for an hour.
  slurm::JobInfo record = pending("gpu:gpua:4", "gpu");
  record.id = "20_[0-5:2%2]";
  record.array_job_id = 20;
  record.submit_time = now - 60;
  record.time_limit_s = 3600;
  // squeue -r: the same three tasks one by one.
  std::vector<slurm::JobInfo> tasks;
  for (int t : {0, 2, 4}) {
    slurm::JobInfo task = record;
    task.id = "20_" + std::to_string(t);
    task.array_task_id = t;
    tasks.push_back(task);
  }
  plan::PlanRow r = row(1, "a", 3600, 4, 1);  // gres gpu:gpua:4
  r.nodes = 4;  // three nodes are left beside the tasks: the fourth comes back after an hour
  for (const auto& jobs : {std::vector<slurm::JobInfo>{record}, tasks}) {
    const auto qs = app::group_queues(cluster(), nodes, jobs, "alice");
    const auto& a = find(qs, "a");
    CHECK(a.pending_jobs == 3);
    CHECK(a.pending_gpus == 12);
    CHECK(a.own_pending_jobs == 3);
    REQUIRE(a.holds_complete);
    plan::QueueSnapshot q;
    q.available = true;
    q.now = now;
    q.groups = qs;
    const auto start = plan::estimate_start(r, q);
    CHECK(start.basis == plan::StartBasis::time_limits);
    CHECK(start.in_s == 3600);
  }
  // Past kMaxReplayedJobs tasks ahead, the start is not replayed.
  record.id = "20_[0-100000]";
  CHECK(find(app::group_queues(cluster(), nodes, {record}, ""), "a").pending_jobs == 100'001);
  CHECK_FALSE(find(app::group_queues(cluster(), nodes, {record}, ""), "a").holds_complete);
}

TEST_CASE("ranking by expected finish: the free group first, the busy one still fastest to run") {
  const int64_t now = 1'800'000'000;
  plan::PlanReport report;
  report.rows = {row(1, "busy", 3600), row(2, "free", 3 * 3600), row(3, "free", 2 * 3600, 4, 2)};
  report.ranking = {1, 3, 2};
  report.fastest = plan::Recommendation{1, "fastest"};
  CHECK(plan::top_candidates(report) == std::vector<int>{1, 3});
  plan::QueueSnapshot q = snapshot(now);
  q.slurm_start[1] = now + 5 * 3600;  // behind the queue
  plan::apply_queue(report, q);
  // #3 needs two 4-GPU nodes (only one is free): unknown, so after every known finish.
  CHECK(report.finish_ranking == std::vector<int>{2, 1, 3});
  REQUIRE(report.finishes_first);
  CHECK(report.finishes_first->row == 2);
  CHECK(report.finishes_first->reason.find("starts now") != std::string::npos);
  CHECK(report.finishes_first->reason.find("fastest to run: #1") != std::string::npos);
  CHECK(report.finishes_first->reason.find("starts in ~5 h 0 m (Slurm's backfill estimate)") !=
        std::string::npos);
  CHECK(report.rows[0].finish_in_s == doctest::Approx(6 * 3600));

  // Without queue data nothing finishes "first".
  plan::QueueSnapshot none;
  none.unavailable_reason = "unreachable";
  plan::apply_queue(report, none);
  CHECK_FALSE(report.finishes_first);
  CHECK(report.finish_ranking == std::vector<int>{1, 3, 2});  // run time order
  REQUIRE(report.queue);
  CHECK_FALSE(report.queue->available);
}

TEST_CASE("fetch_queue: 2 + groups scheduler requests, failures are 'unavailable'") {
  auto catalog = profile::parse_catalog(read("data/gpus.yaml"), "gpus.yaml");
  REQUIRE(catalog);
  auto markov = profile::parse_profile(read("cluster-profiles/markov.yaml"), "markov", *catalog);
  REQUIRE(markov);
  auto spec = spec::parse_job_spec(
      "name: small\nmodel: bert-base\nseq_len: 128\neffective_batch: 256\nsteps: 2000\n",
      "spec.yaml");
  REQUIRE(spec);
  auto report = plan::make_plan(*spec, *markov, *catalog, {});
  REQUIRE(report);
  const auto groups = plan::top_candidates(*report).size();
  REQUIRE(groups == markov->node_groups.size());

  // The recording: 4 of classt25's GPUs and 2 of classt21's in use, the rest idle.
  const std::string sinfo_idle = read("tests/data/slurm-cli/sinfo-nodes-22.05.txt");
  // The same nodes with every GPU in use: each record's GresUsed (field 8) set to its Gres.
  std::string sinfo_busy;
  for (const auto record : util::split(sinfo_idle, '\x1e')) {
    auto fields = util::split(record, '\x1f');
    if (fields.size() < 12) continue;  // the newline after the last record
    fields[7] = fields[6];
    for (std::size_t i = 0; i < fields.size(); ++i)
      sinfo_busy += std::string(fields[i]) + (i + 1 < fields.size() ? "\x1f" : "\x1e");
  }
  const std::string squeue = read("tests/data/slurm-cli/squeue-fields-22.05.txt");
  const std::string* sinfo = &sinfo_busy;
  test::RecordingCommandRunner runner;
  runner.responder = [&](const sys::Command& c) -> Expected<sys::CommandResult> {
    if (c.argv[0] == "sinfo") return sys::CommandResult{0, *sinfo, ""};
    if (c.argv[0] == "squeue") return sys::CommandResult{0, squeue, ""};
    if (c.argv[0] == "sbatch")
      return sys::CommandResult{0, "",
                                "sbatch: Job 9 to start at 2027-01-15T08:00:00 using 4 processors "
                                "on nodes classt21 in partition markov_gpu\n"};
    return fail("unexpected " + c.argv[0]);
  };
  // Every GPU busy: Slurm is asked once per group, and never more.
  slurm::SbatchBackend backend(runner, {});
  auto q = app::fetch_queue(backend, *markov, *spec, *report, "root", 1'800'000'000);
  REQUIRE(q.available);
  for (const auto& [id, why] : q.slurm_not_asked) MESSAGE("#" << id << ": " << why);
  CHECK(runner.commands.size() == 2 + groups);
  CHECK(runner.argv_of(0).starts_with("sinfo -h -a -N -S 'N,#P' -O"));
  CHECK(runner.argv_of(1).starts_with("squeue -h -r -O"));
  for (std::size_t i = 2; i < runner.commands.size(); ++i) {
    CHECK(runner.commands[i].argv[0] == "sbatch");
    CHECK(runner.argv_of(i).find("--test-only") != std::string::npos);
  }
  CHECK(q.slurm_start.size() == groups);

  // The recording as it was (idle GPUs): only groups with jobs pending need Slurm's estimate.
  runner.commands.clear();
  sinfo = &sinfo_idle;
  q = app::fetch_queue(backend, *markov, *spec, *report, "root", 1'800'000'000);
  REQUIRE(q.available);
  CHECK(runner.commands.size() == 2 + q.slurm_start.size());
  CHECK(q.slurm_start.size() < groups);
  for (int id : plan::top_candidates(*report)) {
    if (!q.slurm_start.contains(id))
      CHECK(plan::estimate_start(*report->row(id), q).basis == plan::StartBasis::free_now);
  }
  // The recording: classt25 (rtx4090) has 4 GPUs in use by a running job, two 4090 jobs pending.
  const plan::GroupQueue* rtx4090 = q.group("rtx4090");
  REQUIRE(rtx4090 != nullptr);
  CHECK(rtx4090->pending_jobs == 2);
  CHECK(rtx4090->pending_gpus == 8);
  CHECK(rtx4090->own_pending_jobs == 2);

  // sinfo fails: unavailable with Slurm's words, and nothing else is asked.
  test::RecordingCommandRunner down;
  down.answer(1, "", "sinfo: error: Unable to contact slurm controller (connect failure)\n");
  slurm::SbatchBackend unreachable(down, {});
  const auto none = app::fetch_queue(unreachable, *markov, *spec, *report, "root", 0);
  CHECK_FALSE(none.available);
  CHECK(none.unavailable_reason.find("slurm controller") != std::string::npos);
  CHECK(down.commands.size() == 1);

  // An empty node list is not an empty cluster.
  test::RecordingCommandRunner empty;
  empty.answer(0, "");
  slurm::SbatchBackend nothing(empty, {});
  CHECK_FALSE(app::fetch_queue(nothing, *markov, *spec, *report, "root", 0).available);
}

namespace {

struct Run {
  int code = 0;
  std::string out, err;
};

Run run_plan(test::RecordingCommandRunner& runner, std::vector<std::string> args) {
  const auto state =
      std::filesystem::temp_directory_path() / ("jobgen-queue-test-" + std::to_string(::getpid()));
  ::setenv("XDG_STATE_HOME", state.c_str(), 1);
  std::ostringstream out, err;
  sys::RealEnvironment env;
  sys::RealFileSystem fs;
  test::FakeClock clock{1'800'000'000};
  cli::Context ctx{out, err, test::system_of(env, fs, clock, &runner), false};
  args.insert(
      args.begin(),
      {"plan",
       (std::filesystem::path(jobgen::build::source_dir()) / "examples/jobgen.yaml").string(),
       "--profile", "markov", "--stage", "sft"});
  const int code = cli::run(args, ctx);
  ::unsetenv("XDG_STATE_HOME");
  std::filesystem::remove_all(state);
  return {code, out.str(), err.str()};
}

}  // namespace

TEST_CASE("jobgen plan without a reachable cluster: the plan, and 'queue data unavailable'") {
  test::RecordingCommandRunner down;
  down.responder = [](const sys::Command& c) -> Expected<sys::CommandResult> {
    return sys::CommandResult{
        1, "", c.argv[0] + ": error: Unable to contact slurm controller (connect failure)\n"};
  };
  const Run text = run_plan(down, {"--target", "l40s"});
  CHECK(text.code == 0);
  // Each scheduler command gets the backend's budget (a busy slurmctld answers slowly), and
  // $JOBGEN_SLURM_TIMEOUT sets it.
  REQUIRE_FALSE(down.commands.empty());
  for (const auto& c : down.commands) CHECK(c.timeout == slurm::kSlurmCommandTimeout);
  {
    test::RecordingCommandRunner slow = down;
    slow.commands.clear();
    ::setenv("JOBGEN_SLURM_TIMEOUT", "90", 1);
    CHECK(run_plan(slow, {"--target", "l40s"}).code == 0);
    ::setenv("JOBGEN_SLURM_TIMEOUT", "soon", 1);
    const Run bad = run_plan(slow, {"--target", "l40s"});
    ::unsetenv("JOBGEN_SLURM_TIMEOUT");
    REQUIRE_FALSE(slow.commands.empty());
    for (const auto& c : slow.commands) CHECK(c.timeout == std::chrono::seconds(90));
    // A bad value is said; the plan is still made, without queue data.
    CHECK(bad.code == 0);
    CHECK(bad.out.find("JOBGEN_SLURM_TIMEOUT='soon' is not a whole number") != std::string::npos);
  }
  CHECK(text.out.find("queue data unavailable") != std::string::npos);
  CHECK(text.out.find("Recommendation") != std::string::npos);
  CHECK(text.out.find("finishes first") == std::string::npos);

  const Run json = run_plan(down, {"--target", "l40s", "--json"});
  REQUIRE(json.code == 0);
  const auto j = nlohmann::json::parse(json.out);
  CHECK(j.at("queue").at("available") == false);
  CHECK(j.at("queue").at("unavailable_reason").get<std::string>().find("slurm controller") !=
        std::string::npos);
  CHECK(j.at("options").at(0).at("start").at("basis") == "unknown");
  CHECK(j.at("recommendations").at("finishes_first").is_null());

  // --offline and --no-queue never ask.
  test::RecordingCommandRunner never;
  const Run offline = run_plan(never, {"--target", "l40s", "--offline"});
  CHECK(offline.code == 0);
  CHECK(never.commands.empty());
  CHECK(offline.out.find("Queue") == std::string::npos);
  CHECK(run_plan(never, {"--target", "l40s", "--no-queue", "--json"}).out.find("\"queue\"") ==
        std::string::npos);
  CHECK(never.commands.empty());
  CHECK(run_plan(never, {"--queue", "--offline"}).code == 2);
}

TEST_CASE("queue lines count a MIG group's slices as slices") {
  const int64_t now = 1'800'000'000;
  plan::PlanReport report;
  report.rows = {row(1, "busy", 3600), row(2, "free", 3 * 3600)};
  report.ranking = {1, 2};
  plan::GroupInfo busy;
  busy.name = "busy";
  plan::GroupInfo free;
  free.name = "free";
  free.mig_profile = "1g.12gb";
  report.groups = {busy, free};
  plan::apply_queue(report, snapshot(now));
  const std::string text = view::render_text(report);
  CHECK_MESSAGE(
      text.find("busy: 0 of 8 GPUs free now, 3 jobs pending for 24 GPUs") != std::string::npos,
      text);
  CHECK(text.find("free: 6 of 8 MIG slices free now, nothing pending") != std::string::npos);
}
