// Accounting limits in queue-aware planning (app/queue_data.hpp add_limits, plan/queue.hpp
// apply_queue): when they are asked, which account and QOS an option gets, and what a held option
// does to the ranking. The backend is a fake that answers canned limits and counts the queries.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "jobgen/app/queue_data.hpp"
#include "jobgen/plan/planner.hpp"
#include "jobgen/plan/queue.hpp"
#include "jobgen/slurm/limits.hpp"

using namespace jobgen;

namespace {

class LimitsBackend final : public slurm::Backend {
 public:
  Expected<slurm::AccountLimits> answer = slurm::AccountLimits{};
  int asked = 0;
  std::string name() const override { return "cli"; }
  Expected<slurm::SubmitResult> submit(const slurm::SubmitRequest&) override {
    return fail("not here");
  }
  Expected<std::vector<slurm::JobInfo>> jobs(const slurm::JobQuery&) override {
    return fail("not here");
  }
  Expected<slurm::CancelResult> cancel(const std::vector<std::string>&) override {
    return fail("not here");
  }
  Expected<slurm::ClusterState> cluster() override { return fail("not here"); }
  Expected<slurm::AccountLimits> limits(const std::string&) override {
    ++asked;
    return answer;
  }
};

// alice in ml and vision, QOS normal (default) and high; normal allows 2 GPUs per user.
slurm::AccountLimits two_accounts() {
  slurm::AccountLimits l;
  l.associations.push_back({"c", "root", "", "", "", {"normal"}, "", {}});
  l.associations.push_back({"c", "ml", "", "", "root", {"normal"}, "", {}});
  l.associations.push_back({"c", "vision", "", "", "root", {"normal"}, "", {}});
  l.associations.push_back({"c", "ml", "alice", "", "", {"high", "normal"}, "normal", {}});
  l.associations.push_back({"c", "vision", "alice", "", "", {"normal"}, "normal", {}});
  l.qos.push_back({"normal", 0, {}});
  l.qos.back().limits.max_tres_per_user["gres/gpu"] = 2;
  l.qos.push_back({"high", 10, {}});
  l.qos.back().limits.max_tres_per_job["gres/gpu"] = 1;
  l.shares.push_back({"ml", "alice", 0.2});
  l.shares.push_back({"vision", "alice", 0.9});
  return l;
}

slurm::JobInfo running_gpus(std::string account, std::string qos, int gpus) {
  slurm::JobInfo j;
  j.user = "alice";
  j.account = std::move(account);
  j.qos = std::move(qos);
  j.gres = "gpu:l40s:" + std::to_string(gpus);
  j.num_nodes = 1;
  j.state = slurm::JobState::running;
  return j;
}

plan::PlanReport report_with(int gpus_first, int gpus_second) {
  plan::PlanReport r;
  for (int id : {1, 2}) {
    plan::PlanRow row;
    row.id = id;
    row.group = "l40s";
    row.gres = "gpu:l40s:" + std::to_string(id == 1 ? gpus_first : gpus_second);
    row.gpus_per_node = id == 1 ? gpus_first : gpus_second;
    row.partition = "gpu";
    row.total_time_s = 600;
    row.runnable = row.fits = true;
    r.rows.push_back(row);
    r.ranking.push_back(id);
  }
  return r;
}

}  // namespace

TEST_CASE("add_limits: asked only when the queue shows accounting, and only for a known user") {
  LimitsBackend backend;
  backend.answer = two_accounts();
  const plan::PlanReport report = report_with(1, 2);
  plan::QueueSnapshot snap;
  slurm::JobInfo no_accounting = running_gpus("", "", 1);
  app::add_limits(snap, backend, report, {no_accounting}, {"alice", "", ""});
  CHECK(backend.asked == 0);
  CHECK(snap.limits.empty());
  CHECK(snap.limits_unavailable.empty());  // a cluster without accounting has nothing to say

  app::add_limits(snap, backend, report, {running_gpus("ml", "normal", 2)}, {"", "", ""});
  CHECK(backend.asked == 0);
  CHECK(snap.limits_unavailable.find("$USER") != std::string::npos);

  backend.answer = fail("accounting limits unavailable: sacctmgr: no database");
  snap = {};
  app::add_limits(snap, backend, report, {running_gpus("ml", "normal", 2)}, {"alice", "", ""});
  CHECK(backend.asked == 1);
  CHECK(snap.limits.empty());
  CHECK(snap.limits_unavailable == "accounting limits unavailable: sacctmgr: no database");
}

TEST_CASE("add_limits: the default account unless a limit holds the job there") {
  LimitsBackend backend;
  backend.answer = two_accounts();
  backend.answer->default_account = "ml";
  backend.answer->qos.front().limits.max_tres_per_user.clear();  // nothing holds anyone
  const plan::PlanReport report = report_with(1, 2);
  plan::QueueSnapshot snap;
  app::add_limits(snap, backend, report, {running_gpus("ml", "normal", 2)}, {"alice", "", ""});
  // vision has the higher fair-share, but the job starts in ml, the account it is charged to
  // without -A: jobgen keeps it there, with the association's default QOS.
  CHECK(snap.limits.at(1).account == "ml");
  CHECK(snap.limits.at(1).qos == "normal");
  CHECK_FALSE(snap.limits.at(1).chosen);
}

TEST_CASE("add_limits: the pair that starts, ties by fair-share -- --account/--qos narrow it") {
  LimitsBackend backend;
  backend.answer = two_accounts();
  backend.answer->default_account = "physics";  // neither ml nor vision is alice's own
  const plan::PlanReport report = report_with(1, 2);
  const std::vector<slurm::JobInfo> queue{running_gpus("ml", "normal", 2)};
  plan::QueueSnapshot snap;
  app::add_limits(snap, backend, report, queue, {"alice", "", ""});
  CHECK(backend.asked == 1);
  REQUIRE(snap.limits.size() == 2);
  // 1 GPU: normal pends (alice uses 2 of 2) in both accounts; high (ml only) starts.
  const plan::LimitCheck& one = snap.limits.at(1);
  CHECK(one.verdict == "starts");
  CHECK(one.account == "ml");
  CHECK(one.qos == "high");
  CHECK(one.chosen);
  // 2 GPUs: over high's 1 per job (never), normal pends everywhere: the pending pair with the
  // higher fair-share (vision 0.9) wins.
  const plan::LimitCheck& two = snap.limits.at(2);
  CHECK(two.verdict == "pends");
  CHECK(two.reason == "QOSMaxGRESPerUser");
  CHECK(two.account == "vision");
  CHECK(two.fairshare == doctest::Approx(0.9));

  snap = {};
  app::add_limits(snap, backend, report, queue, {"alice", "ml", "normal"});
  CHECK(snap.limits.at(1).verdict == "pends");
  CHECK_FALSE(snap.limits.at(1).chosen);
}

TEST_CASE("apply_queue: an option a limit holds has no known start and does not finish first") {
  plan::PlanReport report = report_with(1, 2);
  plan::QueueSnapshot snap;
  snap.available = true;
  snap.groups.push_back({"l40s", {{"n1", {{"l40s", 4}}, {{"l40s", 4}}}}, 0, 0, 0, 0, {}, {}, true});
  snap.limits[1] = {"pends",
                    "ml",
                    "normal",
                    "QOSMaxGRESPerUser",
                    "qos `normal` allows 2 GPUs per user, you use 2",
                    {},
                    {},
                    false};
  snap.limits[2] = {"starts", "ml", "high", "", "", {}, {}, true};
  plan::apply_queue(report, snap);
  CHECK_FALSE(report.row(1)->start->known());
  CHECK(report.row(2)->start->known());
  REQUIRE(report.finishes_first);
  CHECK(report.finishes_first->row == 2);
  CHECK(report.finish_ranking == std::vector<int>{2, 1});
  CHECK(plan::describe_limit(*report.row(1)->limit) ==
        "pends: QOSMaxGRESPerUser (qos `normal` allows 2 GPUs per user, you use 2; account `ml`, "
        "qos `normal`)");
  CHECK(plan::describe_limit(*report.row(2)->limit) ==
        "starts as far as limits go (account `ml`, qos `high`)");
}
