#include "jobgen/slurm/limits.hpp"

#include <algorithm>
#include <functional>
#include <set>
#include <utility>

#include "jobgen/slurm/gres.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"
#include "jobgen/util/units.hpp"

namespace jobgen::slurm {

Expected<Tres> parse_tres(std::string_view text) {
  Tres out;
  for (std::string_view entry : util::split(util::trim(text), ',')) {
    entry = util::trim(entry);
    if (entry.empty()) continue;
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0)
      return fail("TRES entry '" + util::printable(entry, 80) + "' is not NAME=COUNT");
    const std::string name(entry.substr(0, eq));
    const std::string_view value = entry.substr(eq + 1);
    if (name == "mem") {
      auto mib = util::parse_memory_mib(value);
      if (!mib)
        return fail("TRES mem='" + util::printable(value, 40) + "': " + mib.error().message);
      out[name] = *mib;
      continue;
    }
    const auto count = util::parse_int(value);
    if (!count || *count < 0)
      return fail("TRES " + name + "='" + util::printable(value, 40) + "' is not a count");
    out[name] = *count;
  }
  return out;
}

std::string tres_reason(std::string_view owner, std::string_view kind, std::string_view name) {
  // Slurm's spelling differs per TRES: GRES without "Limit", CPU and node with it.
  std::string what, suffix;
  if (name == "gres/gpu") {
    what = "GRES";
  } else if (name == "cpu") {
    what = "Cpu";
    suffix = "Limit";
  } else if (name == "node") {
    what = "Node";
    suffix = "Limit";
  } else if (name == "mem") {
    what = kind == "Grp" ? "Mem" : "Memory";
    suffix = kind == "Grp" ? "Limit" : "";
  } else {
    return "";
  }
  if (kind == "Grp") return std::string(owner) + "Grp" + what + suffix;
  if (kind == "MaxPerJob") return std::string(owner) + "Max" + what + "PerJob" + suffix;
  if (kind == "MaxPerUser") return std::string(owner) + "Max" + what + "PerUser" + suffix;
  if (kind == "MaxPerAccount") return std::string(owner) + "Max" + what + "PerAccount";
  return "";
}

std::string to_string(LimitVerdict verdict) {
  switch (verdict) {
    case LimitVerdict::starts:
      return "starts";
    case LimitVerdict::pends:
      return "pends";
    case LimitVerdict::never:
      return "never";
    case LimitVerdict::unknown:
      break;
  }
  return "unknown";
}

std::vector<const Association*> user_associations(const AccountLimits& limits,
                                                  std::string_view user) {
  std::vector<const Association*> out;
  for (const auto& a : limits.associations)
    if (a.user == user) out.push_back(&a);
  return out;
}

std::vector<AccountQos> choices(const AccountLimits& limits, std::string_view user) {
  std::vector<AccountQos> out;
  std::set<std::pair<std::string_view, std::string_view>> seen;
  for (const Association* a : user_associations(limits, user)) {
    if (!a->partition.empty()) continue;  // partition associations: only with that partition
    std::vector<std::string_view> qos(a->qos.begin(), a->qos.end());
    std::ranges::stable_partition(qos, [&](std::string_view q) { return q == a->default_qos; });
    for (const auto q : qos) {
      if (!seen.emplace(a->account, q).second) continue;
      out.push_back(AccountQos{a->account, std::string(q)});
    }
  }
  return out;
}

LimitIndex::LimitIndex(const AccountLimits& all) : limits(all) {
  for (const auto& a : all.associations) {
    if (a.user.empty()) {
      account.try_emplace(a.account, &a);
      if (!a.parent.empty()) parent[a.account] = a.parent;
    } else {
      user_account[{a.user, a.account}].push_back(&a);
    }
  }
  for (const auto& q : all.qos) qos.try_emplace(q.name, &q);
  for (const auto& s : all.shares) share.try_emplace({s.account, s.user}, s.fairshare);
}

std::optional<double> fairshare_of(const LimitIndex& index, std::string_view account,
                                   std::string_view user) {
  const auto it = index.share.find({std::string(account), std::string(user)});
  return it == index.share.end() ? std::nullopt : it->second;
}

namespace {

// What the queue tells per running job.
bool tres_known(std::string_view name) {
  return name == "gres/gpu" || name == "node";
}

int64_t job_tres(const JobInfo& job, std::string_view name) {
  const int64_t nodes = std::max(1, job.num_nodes);
  if (name == "node") return nodes;
  int64_t gpus = 0;
  for (const auto& r : parse_gpu_gres_list(job.gres)) gpus += std::max(0, r.count);
  return gpus * nodes;
}

int64_t request_tres(const LimitRequest& r, std::string_view name) {
  if (name == "gres/gpu") return r.gpus;
  if (name == "node") return r.nodes;
  if (name == "cpu") return r.cpus;
  return 0;
}

bool request_knows(const LimitRequest& r, std::string_view name) {
  return name == "gres/gpu" || name == "node" || (name == "cpu" && r.cpus > 0);
}

std::string amount(int64_t n, std::string_view name) {
  std::string unit = name == "gres/gpu" ? "GPU"
                     : name == "cpu"    ? "CPU"
                     : name == "node"   ? "node"
                     : name == "mem"    ? "MiB of memory"
                                        : std::string(name);
  if (n != 1 && name != "mem") unit += "s";
  return std::to_string(n) + " " + unit;
}

std::string jobs_text(int64_t n) {
  return std::to_string(n) + (n == 1 ? " job" : " jobs");
}

struct Checker {
  const LimitRequest& req;
  const LimitIndex& index;
  std::vector<const JobInfo*> running;
  LimitResult result;

  bool in_subtree(std::string_view account, std::string_view top) const {
    std::string at(account);
    for (int depth = 0; depth < 64 && !at.empty(); ++depth) {
      if (at == top) return true;
      const auto it = index.parent.find(at);
      if (it == index.parent.end()) return false;
      at = it->second;
    }
    return false;
  }
  int64_t count(const std::function<bool(const JobInfo&)>& which) const {
    return std::ranges::count_if(running, [&](const JobInfo* j) { return which(*j); });
  }
  int64_t use(const std::function<bool(const JobInfo&)>& which, std::string_view name) const {
    int64_t sum = 0;
    for (const JobInfo* j : running)
      if (which(*j)) sum += job_tres(*j, name);
    return sum;
  }
  // Sets the result (the first limit hit wins) and returns true.
  bool hit(LimitVerdict v, std::string reason, std::string detail) {
    result.verdict = v;
    result.reason = std::move(reason);
    result.detail = std::move(detail);
    return true;
  }
  // An aggregate TRES limit over the jobs `which` selects.
  bool aggregate(const Tres& tres, std::string_view owner, std::string_view kind,
                 const std::string& who, std::string_view per,
                 const std::function<bool(const JobInfo&)>& which) {
    for (const auto& [name, cap] : tres) {
      const std::string reason = tres_reason(owner, kind, name);
      if (reason.empty() || !tres_known(name) || !request_knows(req, name)) {
        result.unchecked.push_back(who + " " + name + "=" + std::to_string(cap));
        continue;
      }
      const int64_t need = request_tres(req, name);
      const int64_t used = use(which, name);
      if (used + need <= cap) continue;
      const std::string d =
          fmt(who, cap, name, per) + ", " + (per == " per user" ? "you use " : "its jobs use ") +
          std::to_string(used) +
          (need > cap ? ", and this job alone asks for " + std::to_string(need) : "");
      return hit(need > cap ? LimitVerdict::never : LimitVerdict::pends, reason, d);
    }
    return false;
  }
  static std::string fmt(const std::string& who, int64_t cap, std::string_view name,
                         std::string_view per) {
    return who + " allows " + amount(cap, name) + std::string(per);
  }
  bool per_job(const Tres& tres, std::string_view owner, const std::string& who) {
    for (const auto& [name, cap] : tres) {
      const std::string reason = tres_reason(owner, "MaxPerJob", name);
      if (reason.empty() || !request_knows(req, name)) {
        result.unchecked.push_back(who + " per job " + name + "=" + std::to_string(cap));
        continue;
      }
      const int64_t need = request_tres(req, name);
      if (need > cap)
        return hit(LimitVerdict::never, reason,
                   fmt(who, cap, name, " per job") + ", this job asks for " + amount(need, name));
    }
    return false;
  }
};

// The user's association for the request, then its accounts up to root.
std::vector<const Association*> chain_of(const LimitIndex& index, const LimitRequest& req) {
  std::vector<const Association*> out;
  const auto mine = index.user_account.find({req.user, req.account});
  if (mine == index.user_account.end()) return out;
  const Association* user = nullptr;
  for (const Association* a : mine->second) {
    if (a->partition == req.partition) {
      user = a;
      break;
    }
    if (a->partition.empty() && user == nullptr) user = a;
  }
  if (user == nullptr) return out;
  out.push_back(user);
  std::string account = user->account;
  for (int depth = 0; depth < 64 && !account.empty(); ++depth) {
    const auto it = index.account.find(account);
    if (it == index.account.end()) break;
    out.push_back(it->second);
    account = it->second->parent;
  }
  return out;
}

}  // namespace

LimitResult check_limits(const LimitRequest& req, const AccountLimits& limits,
                         const std::vector<JobInfo>& queue) {
  return check_limits(req, LimitIndex(limits), queue);
}

LimitResult check_limits(const LimitRequest& req, const LimitIndex& index,
                         const std::vector<JobInfo>& queue) {
  Checker c{req, index, {}, {}};
  for (const auto& j : queue)
    if (j.state == JobState::running) c.running.push_back(&j);

  const std::vector<const Association*> chain = chain_of(index, req);
  if (chain.empty()) {
    c.hit(LimitVerdict::never, "InvalidAccount",
          "user " + req.user + " has no association with account `" + req.account + "`");
    return c.result;
  }
  if (std::ranges::find(chain.front()->qos, req.qos) == chain.front()->qos.end()) {
    c.hit(LimitVerdict::never, "InvalidQOS",
          "account `" + req.account + "` does not allow qos `" + req.qos + "` for " + req.user);
    return c.result;
  }
  const auto qit = index.qos.find(req.qos);
  const Qos* qos = qit == index.qos.end() ? nullptr : qit->second;
  const std::string qname = "qos `" + req.qos + "`";
  const auto in_qos = [&](const JobInfo& j) { return j.qos == req.qos; };
  const auto mine_in_qos = [&](const JobInfo& j) { return j.qos == req.qos && j.user == req.user; };
  const auto acct_in_qos = [&](const JobInfo& j) {
    return j.qos == req.qos && j.account == req.account;
  };
  const auto done = [&] {
    if (c.result.verdict == LimitVerdict::unknown) c.result.verdict = LimitVerdict::starts;
    return c.result;
  };

  // Job counts and wall time: the QOS, then the associations.
  if (qos != nullptr) {
    const Limits& l = qos->limits;
    if (l.max_wall_s && req.time_limit_s && *req.time_limit_s > *l.max_wall_s &&
        c.hit(LimitVerdict::never, "QOSMaxWallDurationPerJobLimit",
              qname + " allows " + util::format_slurm_time(*l.max_wall_s) +
                  " per job, this job asks for " + util::format_slurm_time(*req.time_limit_s)))
      return c.result;
    if (l.grp_jobs && c.count(in_qos) + 1 > *l.grp_jobs &&
        c.hit(LimitVerdict::pends, "QOSGrpJobsLimit",
              qname + " allows " + jobs_text(*l.grp_jobs) + " running in all, " +
                  std::to_string(c.count(in_qos)) + " run"))
      return c.result;
    if (l.max_jobs_per_user && c.count(mine_in_qos) + 1 > *l.max_jobs_per_user &&
        c.hit(LimitVerdict::pends, "QOSMaxJobsPerUserLimit",
              qname + " allows " + jobs_text(*l.max_jobs_per_user) + " running per user, you run " +
                  std::to_string(c.count(mine_in_qos))))
      return c.result;
    if (l.max_jobs_per_account && c.count(acct_in_qos) + 1 > *l.max_jobs_per_account &&
        c.hit(LimitVerdict::pends, "QOSMaxJobsPerAccount",
              qname + " allows " + jobs_text(*l.max_jobs_per_account) +
                  " running per account, account `" + req.account + "` runs " +
                  std::to_string(c.count(acct_in_qos))))
      return c.result;
  }
  std::optional<int64_t> max_wall, max_jobs;
  std::optional<Tres> max_tres;
  // An association of the chain: how messages name it, and the jobs that count against it (the
  // user's own in that account, or every job of the account's subtree).
  const auto who_of = [](const Association* a) {
    return a->user.empty() ? "account `" + a->account + "`"
                           : "your association with account `" + a->account + "`";
  };
  const auto jobs_of = [&](const Association* a) {
    return [&, a](const JobInfo& j) {
      return a->user.empty() ? c.in_subtree(j.account, a->account)
                             : j.user == req.user && j.account == a->account;
    };
  };
  for (const Association* a : chain) {
    const std::string who = who_of(a);
    const auto which = jobs_of(a);
    if (a->limits.grp_jobs && c.count(which) + 1 > *a->limits.grp_jobs &&
        c.hit(LimitVerdict::pends, "AssocGrpJobsLimit",
              who + " allows " + jobs_text(*a->limits.grp_jobs) + " running, its jobs run " +
                  std::to_string(c.count(which))))
      return c.result;
    if (!max_wall) max_wall = a->limits.max_wall_s;
    if (!max_jobs) max_jobs = a->limits.max_jobs;
    if (!max_tres && !a->limits.max_tres_per_job.empty()) max_tres = a->limits.max_tres_per_job;
  }
  if (max_wall && req.time_limit_s && *req.time_limit_s > *max_wall &&
      c.hit(LimitVerdict::never, "AssocMaxWallDurationPerJobLimit",
            "account `" + req.account + "` allows " + util::format_slurm_time(*max_wall) +
                " per job, this job asks for " + util::format_slurm_time(*req.time_limit_s)))
    return c.result;
  const auto mine_in_account = [&](const JobInfo& j) {
    return j.user == req.user && j.account == req.account;
  };
  if (max_jobs && c.count(mine_in_account) + 1 > *max_jobs &&
      c.hit(LimitVerdict::pends, "AssocMaxJobsLimit",
            "account `" + req.account + "` allows you " + jobs_text(*max_jobs) +
                " running, you run " + std::to_string(c.count(mine_in_account))))
    return c.result;

  // TRES: the QOS, then the associations.
  if (qos != nullptr) {
    const Limits& l = qos->limits;
    if (c.aggregate(l.grp_tres, "QOS", "Grp", qname, " in all", in_qos) ||
        c.per_job(l.max_tres_per_job, "QOS", qname) ||
        c.aggregate(l.max_tres_per_user, "QOS", "MaxPerUser", qname, " per user", mine_in_qos) ||
        c.aggregate(l.max_tres_per_account, "QOS", "MaxPerAccount", qname, " per account",
                    acct_in_qos))
      return c.result;
  }
  for (const Association* a : chain)
    if (c.aggregate(a->limits.grp_tres, "Assoc", "Grp", who_of(a), " in all", jobs_of(a)))
      return c.result;
  if (max_tres && c.per_job(*max_tres, "Assoc", "account `" + req.account + "`")) return c.result;
  return done();
}

}  // namespace jobgen::slurm
