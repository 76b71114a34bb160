// Interconnect defaults and named links (see links.hpp).
#include "jobgen/estimate/links.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace jobgen::estimate {

namespace {

constexpr double kNvlinkBusFraction = 0.4;   // bidirectional datasheet figure -> all-reduce busbw
constexpr double kGivenIntraFraction = 0.8;  // a profile's per-GPU line rate -> busbw
constexpr double kIbEfficiency = 0.85;
constexpr double kRoceEfficiency = 0.80;
constexpr double kTcpEfficiency = 0.60;

struct NamedLink {
  const char* name;
  const char* label;
  profile::InterLink kind;
  double gbit;  // per NIC
  double efficiency;
};

constexpr NamedLink kNamed[] = {
    {"ib-edr", "InfiniBand EDR", profile::InterLink::infiniband, 100, kIbEfficiency},
    {"ib-hdr", "InfiniBand HDR", profile::InterLink::infiniband, 200, kIbEfficiency},
    {"ib-ndr", "InfiniBand NDR", profile::InterLink::infiniband, 400, kIbEfficiency},
    {"ib-xdr", "InfiniBand XDR", profile::InterLink::infiniband, 800, kIbEfficiency},
    {"roce-100g", "RoCE", profile::InterLink::ethernet, 100, kRoceEfficiency},
    {"roce-200g", "RoCE", profile::InterLink::ethernet, 200, kRoceEfficiency},
    {"roce-400g", "RoCE", profile::InterLink::ethernet, 400, kRoceEfficiency},
    {"eth-10g", "Ethernet (TCP)", profile::InterLink::ethernet, 10, kTcpEfficiency},
    {"eth-25g", "Ethernet (TCP)", profile::InterLink::ethernet, 25, kTcpEfficiency},
    {"eth-100g", "Ethernet (TCP)", profile::InterLink::ethernet, 100, kTcpEfficiency},
};

const NamedLink* find_named(const std::string& name) {
  for (const NamedLink& l : kNamed)
    if (name == l.name) return &l;
  return nullptr;
}

// HGX/DGX-class boards: NVSwitch inside, one NIC per GPU outside.
bool hgx_class(const profile::GpuSpec& gpu) {
  return gpu.form_factor == "sxm" || gpu.form_factor == "superchip" || gpu.form_factor == "oam";
}

double pcie_busbw(const profile::GpuSpec& gpu, int* generation) {
  const std::string& a = gpu.architecture;
  int gen = 4;
  if (a == "pascal" || a == "volta" || a == "turing") gen = 3;
  if (a == "hopper" || a == "blackwell" || a == "cdna3") gen = 5;
  *generation = gen;
  double bw = gen == 3 ? 10 : gen == 4 ? 20 : 40;
  if (gpu.form_factor == "geforce") bw *= 0.5;  // no P2P: bounced through host memory
  return bw;
}

// The inter-node link a node of this class usually has.
const NamedLink& default_inter(const profile::GpuSpec& gpu, double* nics_per_gpu) {
  const std::string& a = gpu.architecture;
  *nics_per_gpu = 0;
  if (hgx_class(gpu) || gpu.form_factor == "nvl") {
    *nics_per_gpu = gpu.form_factor == "nvl" ? 0.5 : 1.0;
    if (a == "pascal" || a == "volta") return *find_named("ib-edr");
    if (a == "ampere" || a == "cdna2") return *find_named("ib-hdr");
    return *find_named("ib-ndr");
  }
  if (gpu.form_factor == "geforce") return *find_named("eth-10g");
  return *find_named("roce-100g");
}

std::string nic_text(double nics_per_gpu) {
  if (nics_per_gpu >= 1) return "one NIC per GPU";
  if (nics_per_gpu > 0) return "one NIC per two GPUs";
  return "one NIC per node";
}

}  // namespace

const std::vector<std::string>& inter_link_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const NamedLink& l : kNamed) v.emplace_back(l.name);
    return v;
  }();
  return names;
}

double Links::inter_gbs(int gpus_per_node) const {
  if (inter == profile::InterLink::none) return 0;
  const double nics = std::max(1.0, std::floor(nics_per_gpu * std::max(1, gpus_per_node)));
  return nic_gbs * nics;
}

Expected<Links> resolve_links(const profile::GpuSpec& gpu, const LinkOptions& o) {
  Links l;
  int gen = 4;
  const double pcie = pcie_busbw(gpu, &gen);
  const bool nvlink = o.intra == "nvlink" || (o.intra.empty() && hgx_class(gpu));
  if (!o.intra.empty() && o.intra != "pcie" && o.intra != "nvlink")
    return invalid("--link must be pcie or nvlink, got '" + o.intra + "'");
  if (nvlink && gpu.nvlink_gbs <= 0) return invalid(gpu.name + " has no NVLink; use --link pcie");
  l.intra_assumed = o.intra.empty();
  if (nvlink) {
    l.intra = profile::IntraLink::nvlink;
    l.intra_gbs = gpu.nvlink_gbs * kNvlinkBusFraction;
    l.intra_desc =
        fmt::format("NVLink {:.0f} GB/s (datasheet, both directions) x {} = {:.0f} GB/s bus",
                    gpu.nvlink_gbs, kNvlinkBusFraction, l.intra_gbs);
  } else {
    l.intra_gbs = pcie;
    l.intra_desc = fmt::format("PCIe gen{} x16{}: {:.0f} GB/s bus", gen,
                               gpu.form_factor == "geforce" ? " without P2P (GeForce)" : "", pcie);
  }
  if (o.inter == "none") {
    l.inter_assumed = false;
    l.inter_desc = "none";
    return l;
  }
  const NamedLink* named = nullptr;
  if (!o.inter.empty()) {
    named = find_named(o.inter);
    if (named == nullptr) {
      std::string msg = "unknown inter-node link '" + o.inter + "'";
      const std::string near = closest_match(o.inter, inter_link_names());
      if (!near.empty()) msg += "; did you mean '" + near + "'?";
      msg += " Valid: none";
      for (const std::string& n : inter_link_names()) msg += ", " + n;
      return invalid(msg);
    }
  }
  double nics_per_gpu = 0;
  const NamedLink& dflt = default_inter(gpu, &nics_per_gpu);
  const NamedLink& link = named ? *named : dflt;
  // A named InfiniBand link on an HGX-class node is one per GPU; anything else one per node.
  if (named) nics_per_gpu = link.kind == profile::InterLink::infiniband ? nics_per_gpu : 0;
  l.inter = link.kind;
  l.inter_assumed = o.inter.empty() && o.inter_gbs <= 0;
  if (o.inter_gbs > 0) {
    l.nic_gbs = o.inter_gbs * link.efficiency;
    l.nics_per_gpu = 0;
    l.inter_desc = fmt::format("{:.1f} GB/s per node ({}) x {} = {:.1f} GB/s bus", o.inter_gbs,
                               link.label, link.efficiency, l.nic_gbs);
    return l;
  }
  l.nic_gbs = link.gbit / 8 * link.efficiency;
  l.nics_per_gpu = nics_per_gpu;
  l.inter_desc = fmt::format("{} {:.0f} Gb/s, {}: {:.1f} GB/s bus per NIC{}", link.label, link.gbit,
                             nic_text(nics_per_gpu), l.nic_gbs,
                             l.inter_assumed ? " (default for " + gpu.form_factor + " GPUs)" : "");
  return l;
}

Links profile_links(const profile::GpuSpec& gpu, const profile::Interconnect& link) {
  Links l;
  l.intra_assumed = false;
  l.inter_assumed = false;
  int gen = 4;
  const double pcie = pcie_busbw(gpu, &gen);
  l.intra = link.intra;
  // The profile loader fills an NVLink group's bandwidth from the catalog: that figure is the
  // bidirectional datasheet one, not a line rate.
  const bool catalog_nvlink = link.intra == profile::IntraLink::nvlink &&
                              (link.intra_gbs <= 0 || link.intra_gbs == gpu.nvlink_gbs);
  if (catalog_nvlink && gpu.nvlink_gbs > 0) {
    l.intra_gbs = gpu.nvlink_gbs * kNvlinkBusFraction;
    l.intra_desc = fmt::format("NVLink {:.0f} GB/s x {} = {:.0f} GB/s bus (profile)",
                               gpu.nvlink_gbs, kNvlinkBusFraction, l.intra_gbs);
  } else if (link.intra_gbs > 0) {
    l.intra_gbs = link.intra_gbs * kGivenIntraFraction;
    l.intra_desc = fmt::format("{:.0f} GB/s per GPU x {} = {:.0f} GB/s bus (profile)",
                               link.intra_gbs, kGivenIntraFraction, l.intra_gbs);
  } else {
    l.intra_gbs = pcie;
    l.intra_desc = fmt::format("PCIe gen{} x16: {:.0f} GB/s bus (profile)", gen, pcie);
  }
  l.inter = link.inter;
  if (link.inter == profile::InterLink::none) {
    l.inter_desc = "none (profile)";
    return l;
  }
  const bool ib = link.inter == profile::InterLink::infiniband;
  const double efficiency = ib ? kIbEfficiency : kTcpEfficiency;
  // A multi-node profile group always gives inter_bandwidth; without it, the class default.
  const double gbs = link.inter_gbs > 0 ? link.inter_gbs : (ib ? 25.0 : 1.25);
  l.nic_gbs = gbs * efficiency;
  l.inter_desc = fmt::format("{} {:.2f} GB/s per node x {} = {:.2f} GB/s bus (profile)",
                             ib ? "InfiniBand" : "Ethernet", gbs, efficiency, l.nic_gbs);
  return l;
}

}  // namespace jobgen::estimate
