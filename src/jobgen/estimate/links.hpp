// Interconnects: what the links between GPUs deliver to NCCL, with defaults by GPU class, named
// inter-node links, and the effective (bus) bandwidth collectives run at.
//
// Units: GB/s (10^9 bytes/s); "Gb/s" in link names are bits. Bus bandwidth is NCCL's busbw: a
// ring all-reduce of S bytes over k ranks takes 2(k-1)/k x S / busbw, an all-gather or a
// reduce-scatter of S bytes (the unsharded size) (k-1)/k x S / busbw.
//
// Defaults when the user or profile says nothing, by form factor:
//   intra-node  sxm, superchip, oam: NVLink/NVSwitch (xGMI): the catalog's per-GPU figure
//               (bidirectional, as datasheets print it) x 0.4 = measured all-reduce busbw
//               (A100 600 -> 240, H100 900 -> 360 GB/s); everything else PCIe by generation
//               (x16, P2P through the switch): pascal/volta/turing gen3 10, ampere/ada/cdna2
//               gen4 20, hopper/blackwell/cdna3 gen5 40 GB/s; GeForce cards without P2P half.
//   inter-node  sxm, superchip, oam (HGX/DGX-class nodes): InfiniBand with one NIC per GPU
//               (rail-optimised): EDR 100 Gb/s for pascal/volta, HDR 200 for ampere/cdna2, NDR
//               400 for hopper/blackwell/cdna3; nvl: NDR, one NIC per two GPUs; other
//               datacenter PCIe cards: one 100 Gb/s RoCE NIC per node; GeForce: 10 Gb/s
//               Ethernet.
// Achievable fraction of line rate for NCCL: InfiniBand 0.85, RoCE 0.80, TCP Ethernet 0.60
// (socket transport). A ring across nodes runs at min(intra busbw, NIC busbw x NICs used),
// where a job using G GPUs per node uses min(G, NICs) NICs.
#pragma once

#include <string>
#include <vector>

#include "jobgen/profile/catalog.hpp"
#include "jobgen/profile/profile.hpp"
#include "jobgen/util/error.hpp"

namespace jobgen::estimate {

// What `jobgen estimate` was told; empty strings mean the default for the GPU class.
struct LinkOptions {
  std::string intra;     // "", "pcie", "nvlink"
  std::string inter;     // "", "none", or one of inter_link_names()
  double inter_gbs = 0;  // line rate per node in GB/s; overrides the named link's rate
};

// "ib-edr", "ib-hdr", "ib-ndr", "ib-xdr", "roce-100g", "roce-200g", "roce-400g", "eth-10g",
// "eth-25g", "eth-100g".
const std::vector<std::string>& inter_link_names();

// The links of one rank, resolved.
struct Links {
  profile::IntraLink intra = profile::IntraLink::pcie;
  double intra_gbs = 0;  // NCCL bus bandwidth between GPUs of one node
  std::string intra_desc;
  bool intra_assumed = true;  // a default, not what the user or profile said
  profile::InterLink inter = profile::InterLink::none;
  double nic_gbs = 0;       // bus bandwidth one NIC delivers (line rate x efficiency)
  double nics_per_gpu = 0;  // 1 = one NIC per GPU (HGX); 0 = one NIC per node
  std::string inter_desc;
  bool inter_assumed = true;

  // Bus bandwidth of a node's NICs for a job with `gpus_per_node` GPUs per node; 0 = no link.
  double inter_gbs(int gpus_per_node) const;
};

// Defaults for the GPU class, with the user's choices applied. Errors: unknown names, nvlink on
// a GPU without NVLink, Exit::invalid_input with the valid names.
Expected<Links> resolve_links(const profile::GpuSpec& gpu, const LinkOptions& options);

// A cluster profile's interconnect: intra_bandwidth per GPU and inter_bandwidth per node are
// line rates (x0.8 and the kind's efficiency); nvlink without a figure is the catalog's.
Links profile_links(const profile::GpuSpec& gpu, const profile::Interconnect& link);

}  // namespace jobgen::estimate
