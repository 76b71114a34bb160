// Tensor, pipeline, sequence and context parallelism as Megatron-LM (and NeMo, torchtitan) lay a
// run out: what one rank holds and the time its collectives add. Pure arithmetic.
//
// Layout (TrainingSetup::tp, pp, vpp, cp, sp): ranks are grouped tp innermost (the GPUs of a
// node), then cp, then dp, pp outermost; dp = world / (tp x pp x cp).
//
// One rank's shard of the model (stage_setup), as a model of its own:
//  - tensor parallel: every block's q/k/v/o and FFN matrices are split over tp (heads, kv_heads
//    and the FFN width / tp); the norms stay whole on every rank (replicated); the embedding and
//    the LM head are vocab-parallel (vocab / tp);
//  - pipeline: each stage holds L / pp blocks; the embedding lives on the first stage and the LM
//    head on the last (with tied embeddings, the last stage keeps its own copy of the embedding
//    as the head: both stages hold one); the worst stage is what the estimate reports;
//  - context parallel: each rank holds seq / cp tokens of every sample;
//  - ZeRO/FSDP shard what a rank holds over the dp ranks, not the world.
// Megatron's mixed precision (tp, pp or cp > 1 without FSDP): the module runs in half
// (Float16Module, no autocast copies), with an fp32 master copy in the optimizer and gradients
// accumulated in an fp32 contiguous buffer (main_grad) that is also the reduce bucket: 2 + 4 + 4
// + 8 B per parameter, the states and master / dp with the distributed optimizer (zero1).
//
// Activations (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
// Models", Table 2, bytes per layer: sbh(34 + 5as/h) without parallelism, sbh(10 + 24/t +
// 5as/(ht)) with tp, sbh(34/t + 5as/(ht)) with tp + sp): activations.hpp computes them item by
// item on the shard, so the heads- and FFN-wide tensors come out / tp; sequence parallelism
// divides the hidden-wide ones (norm inputs, the first Linears' inputs, dropout masks, the
// checkpointed block inputs) by tp as well. Selective recomputation under model parallelism is
// Megatron's: the attention scores/softmax/dropout (the 5as/h part) are recomputed, the rest kept.
// Pipeline, 1F1B (Narayanan et al. 2021, §2.2): stage i holds pp - i micro-batches in flight, so
// the first stage holds pp micro-batches of its L/pp layers (L layers' worth); the interleaved
// schedule multiplies that by 1 + (pp - 1) / (pp x vpp) (Korthikanti 2022, §4.2.3). The logits
// (last stage) are vocab-parallel: / tp.
#pragma once

#include <vector>

#include "jobgen/estimate/explain.hpp"
#include "jobgen/estimate/training.hpp"

namespace jobgen::estimate {

// Checks the layout: sizes >= 1, world divisible by tp x pp x cp, tp divides heads and kv_heads,
// tp within a node (unless tp_across_nodes), pp <= layers, vpp > 1 needs pp > 1 and layers
// divisible by pp x vpp, sp needs tp > 1, cp needs flash attention, the data-parallel strategy
// one that runs beside model parallelism. Each problem is tagged with the setting to change.
void parallel_problems(const TrainingSetup& setup, std::vector<SetupProblem>& out);

// Which pipeline stage a rank is: the only one (pp = 1), the first (embedding, the most
// micro-batches in flight) or the last (LM head, logits).
enum class Stage { only, first, last };
const char* to_string(Stage stage);

// The stages whose memory can be the peak: {only} for pp = 1, else {first, last}.
std::vector<Stage> stages(const TrainingSetup& setup);

// The setup one rank of `stage` sees: the model replaced by its shard (see above; params
// derived from the shard), seq_len / cp. The parallel sizes are kept: activations.cpp reads sp
// and tp from it.
TrainingSetup stage_setup(const TrainingSetup& setup, Stage stage);

// Micro-batches whose saved activations the stage holds at its peak (1F1B, see above).
double in_flight(const TrainingSetup& setup, Stage stage);

// A rank's data-parallel group as a setup of its own for comm.hpp: the largest stage's shard,
// world = dp laid out as the groups are (dp ranks per node = GPUs per node / (tp x cp)).
TrainingSetup dp_group_setup(const TrainingSetup& setup);

// Time model-parallelism adds per micro-batch on one rank, and the pipeline's bubble.
//  tp   per layer of the stage 2 all-reduces forward + 2 backward (+ 2 in a full recomputation)
//       of s/cp x b x h elements in the compute dtype (with sp: a reduce-scatter + all-gather
//       pair of the same volume) over the tp ranks' link (NVLink within a node; the NIC when tp
//       spans nodes); exposed in full: Megatron-LM issues them between the GEMMs that need
//       their result (Narayanan et al. 2021, §3.2), comm/GEMM overlap (TE's tp_comm_overlap)
//       is not assumed.
//  p2p  each stage sends s/cp x b x h activations forward and their gradient back, per
//       micro-batch and virtual stage (vpp of them per rank), on the critical path of 1F1B;
//       / tp with Megatron's scatter/gather (sp, or tp > 1: Narayanan 2021, §4.1).
//  cp   ring attention passes each rank's K/V chunk around the cp ranks, (cp - 1) steps per
//       layer forward and twice that in backward (K/V and their gradients); hidden behind the
//       attention compute of the same layer, the rest exposed.
//  bubble  (pp - 1) / (vpp x m) of the m = accumulation micro-batches' time (Narayanan 2021,
//       §2.2.1/§2.2.2), i.e. the step takes (m + (pp - 1) / vpp) micro-batch times.
struct ParallelTime {
  double tp_s = 0;    // per micro-batch, exposed
  double p2p_s = 0;   // per micro-batch, exposed
  double cp_s = 0;    // per micro-batch, exposed
  double bubble = 0;  // extra micro-batch times per step: (pp - 1) / vpp
  double tp_bus_gbs = 0;
};

// `attention_s`: the rank's attention compute of one micro-batch (hides cp's exchange).
ParallelTime parallel_time(const TrainingSetup& setup, int micro_batch, const Hardware& hw,
                           double attention_s, std::vector<Term>* explain = nullptr);

}  // namespace jobgen::estimate
