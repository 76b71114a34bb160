// Whether a training command asks for a precision itself, from the flags common trainers use:
// the Hugging Face Trainer (--bf16, --fp16, --tf32), accelerate (--mixed_precision bf16), timm
// (--amp, --amp-dtype bfloat16), Lightning (--precision bf16-mixed, trainer.precision=16-mixed),
// torchtune and others (--dtype bf16), fairseq (--fp16), NeMo/Megatron (--bf16, --fp8-format).
//
// Only a flag (a word that starts with '-') or a Hydra-style key=value word names a precision: a
// path or a model name that contains "fp16" names none. A boolean AMP flag (--amp, --use_amp)
// names both AMP precisions, the dtype being the script's default.
#pragma once

#include <string_view>

#include "jobgen/estimate/options.hpp"

namespace jobgen::plan {

bool command_names_precision(std::string_view command, estimate::Precision precision);

// The flag a hint suggests for a precision ("--bf16" for amp-bf16, "--fp16" for amp-fp16).
std::string_view precision_flag_example(estimate::Precision precision);

}  // namespace jobgen::plan
