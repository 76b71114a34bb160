// Training progress from recorded log tails: tqdm, Hugging Face Trainer, Lightning and step lines,
// and what must not be taken for progress (other bars, garbage, partial and huge lines).
#include <doctest/doctest.h>

#include <string>

#include "jobgen/progress/log_progress.hpp"

using namespace jobgen::progress;

TEST_CASE("progress: tqdm bar, the last carriage-return update wins") {
  const std::string log =
      "Loading data...\n"
      "  0%|          | 0/1000 [00:00<?, ?it/s]\r"
      "  1%|          | 10/1000 [00:01<02:30,  6.58it/s]\r"
      " 45%|\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x8c     | 450/1000 "
      "[01:10<01:25,  6.40it/s]";
  const Progress p = parse_progress(log);
  CHECK(p.format == ProgressFormat::tqdm);
  CHECK(p.step == 450);
  CHECK(p.total == 1000);
  CHECK(p.percent.value_or(0) == doctest::Approx(45));
  CHECK(p.steps_per_s.value_or(0) == doctest::Approx(6.4));
  CHECK(p.elapsed_s == 70);
  CHECK(p.eta_s == 85);
  CHECK(p.step_time_s().value_or(0) == doctest::Approx(1 / 6.4));
  CHECK(to_string(p.format) == "tqdm");
}

TEST_CASE("progress: tqdm slow steps (s/it), hour intervals, unknown rate and unknown total") {
  Progress p = parse_progress(" 12%|\xe2\x96\x8f        | 12/100 [00:30<03:40,  2.50s/it]\n");
  CHECK(p.step == 12);
  CHECK(p.steps_per_s.value_or(0) == doctest::Approx(0.4));
  CHECK(p.eta_s == 220);
  p = parse_progress(" 50%|#####     | 5000/10000 [1:02:03<1:02:03,  1.34it/s]");
  CHECK(p.elapsed_s == 3723);
  CHECK(p.eta_s == 3723);
  p = parse_progress("  0%|          | 0/200 [00:00<?, ?it/s]");
  CHECK(p.step == 0);
  CHECK(p.total == 200);
  CHECK_FALSE(p.steps_per_s);
  CHECK_FALSE(p.eta_s);
  p = parse_progress("train: 450it [01:10,  6.40it/s]");
  CHECK(p.step == 450);
  CHECK_FALSE(p.total);
  CHECK_FALSE(p.percent);
  CHECK(p.steps_per_s.value_or(0) == doctest::Approx(6.4));
  p = parse_progress(" 10%|#         | 100/1000 [00:10<01:30,  1.20kit/s]");
  CHECK(p.steps_per_s.value_or(0) == doctest::Approx(1200));
  // 17 digits of hours is not a time (it overflowed the seconds; fuzz_log_progress found it).
  p = parse_progress(" 45%|####5     | 450/1000 [11111111111111111:01:10<01:25, 6.40it/s]");
  CHECK(p.step == 450);
  CHECK_FALSE(p.elapsed_s);
  CHECK(p.eta_s == 85);
}

TEST_CASE("progress: bars that count other things are not steps") {
  const Progress p = parse_progress(
      "Map: 100%|##########| 10000/10000 [00:01<00:00, 9120.51 examples/s]\n"
      "Downloading: 100%|##########| 1.20G/1.20G [00:10<00:00, 120MB/s]\n");
  CHECK_FALSE(p.known());
  CHECK(p.format == ProgressFormat::none);
}

TEST_CASE("progress: Hugging Face Trainer: bar for steps, dicts for loss and epoch") {
  const std::string log =
      " 40%|####      | 400/1000 [04:36<06:54,  1.45it/s]\r"
      "{'loss': 2.3012, 'grad_norm': 1.234, 'learning_rate': 4.5e-05, 'epoch': 0.45}\n"
      " 45%|####5     | 450/1000 [05:10<06:20,  1.45it/s]\r"
      " 45%|####5     | 451/1000 [05:11<06:19,  1.45it/s]";
  const Progress p = parse_progress(log);
  CHECK(p.format == ProgressFormat::hf_trainer);
  CHECK(p.step == 451);
  CHECK(p.total == 1000);
  CHECK(p.loss.value_or(0) == doctest::Approx(2.3012));
  CHECK(p.epoch.value_or(0) == doctest::Approx(0.45));
}

TEST_CASE("progress: Hugging Face dict alone still gives the epoch, eval_loss is not the loss") {
  const Progress p = parse_progress(
      "{'eval_loss': 1.9, 'eval_runtime': 3.2, 'epoch': 1.0}\n"
      "{\"loss\": 1.5, \"learning_rate\": 2e-05, \"epoch\": 1.2}\n");
  CHECK(p.format == ProgressFormat::hf_trainer);
  CHECK_FALSE(p.step);
  CHECK(p.epoch.value_or(0) == doctest::Approx(1.2));
  CHECK(p.loss.value_or(0) == doctest::Approx(1.5));
  const Progress eval_only = parse_progress("{'eval_loss': 1.9, 'epoch': 1.0}\n");
  CHECK_FALSE(eval_only.loss);
}

TEST_CASE("progress: the Trainer's evaluation bar inside the training bar") {
  const std::string log =
      " 45%|####5     | 450/1000 [05:10<06:20,  1.45it/s]\n"
      "\r  0%|          | 0/50 [00:00<?, ?it/s]\x1b[A"
      "\r 40%|####      | 20/50 [00:02<00:03,  9.80it/s]\x1b[A";
  const Progress p = parse_progress(log);
  CHECK(p.step == 450);
  CHECK(p.total == 1000);
  CHECK(p.steps_per_s.value_or(0) == doctest::Approx(1.45));
}

TEST_CASE("progress: finished training, then the final evaluation and the closing dict") {
  const std::string log =
      "100%|##########| 1000/1000 [11:30<00:00,  1.45it/s]\n"
      "100%|##########| 50/50 [00:05<00:00,  9.80it/s]\n"
      "{'train_runtime': 690.12, 'train_samples_per_second': 46.37, "
      "'train_steps_per_second': 1.449, 'train_loss': 1.87, 'epoch': 1.0}\n";
  const Progress p = parse_progress(log);
  CHECK(p.step == 1000);
  CHECK(p.total == 1000);
  CHECK(p.percent.value_or(0) == doctest::Approx(100));
  CHECK(p.steps_per_s.value_or(0) == doctest::Approx(1.449));  // the run's average
  CHECK(p.loss.value_or(0) == doctest::Approx(1.87));
}

TEST_CASE("progress: a script's preprocessing bar, then its training bar") {
  const Progress p = parse_progress(
      "tokenize: 100%|##########| 20000/20000 [00:04<00:00, 4800.00it/s]\n"
      "train:   3%|3         | 30/1000 [00:10<05:20,  3.00it/s]");
  CHECK(p.step == 30);
  CHECK(p.total == 1000);
}

TEST_CASE("progress: Lightning training bar, validation bars interleaved are passed over") {
  const std::string log =
      "Epoch 3/10:  45%|####5     | 450/1000 [01:10<01:25, 6.40it/s, v_num=0, train_loss=0.5]\n"
      "Validation: |          | 0/? [00:00<?, ?it/s]\x1b[A\n"
      "Validation DataLoader 0:  40%|####      | 20/50 [00:01<00:01, 15.00it/s]\x1b[A\n";
  const Progress p = parse_progress(log);
  CHECK(p.format == ProgressFormat::lightning);
  CHECK(p.step == 450);
  CHECK(p.total == 1000);
  CHECK(p.epoch.value_or(-1) == doctest::Approx(3));
  CHECK(p.epochs == 10);
  CHECK(p.loss.value_or(0) == doctest::Approx(0.5));
  CHECK(p.steps_per_s.value_or(0) == doctest::Approx(6.4));
}

TEST_CASE("progress: Lightning's bar restarts every epoch") {
  const std::string log =
      "Epoch 2: 100%|##########| 1000/1000 [02:36<00:00, 6.40it/s, v_num=0, loss=0.61]\n"
      "Epoch 3:   5%|5         | 50/1000 [00:07<02:28, 6.40it/s, v_num=0, loss=0.58]";
  const Progress p = parse_progress(log);
  CHECK(p.format == ProgressFormat::lightning);
  CHECK(p.step == 50);
  CHECK(p.epoch.value_or(-1) == doctest::Approx(3));
  CHECK_FALSE(p.epochs);
  CHECK(p.loss.value_or(0) == doctest::Approx(0.58));
}

TEST_CASE("progress: only a validation bar: better than nothing") {
  const Progress p =
      parse_progress("Validation DataLoader 0:  40%|####      | 20/50 [00:01<00:01, 15.00it/s]");
  CHECK(p.step == 20);
}

TEST_CASE("progress: step and iteration lines") {
  Progress p = parse_progress("[2024-05-01 10:00:00] step 450/1000 loss=2.31 lr=3e-4 6.4 it/s\n");
  CHECK(p.format == ProgressFormat::step_line);
  CHECK(p.step == 450);
  CHECK(p.total == 1000);
  CHECK(p.loss.value_or(0) == doctest::Approx(2.31));
  CHECK(p.steps_per_s.value_or(0) == doctest::Approx(6.4));
  p = parse_progress("Step 30 of 120, loss: 0.9\n");
  CHECK(p.step == 30);
  CHECK(p.total == 120);
  CHECK(p.percent.value_or(0) == doctest::Approx(25));
  p = parse_progress("iter 500 | loss 2.1 | 0.31s/it\n");
  CHECK(p.step == 500);
  CHECK_FALSE(p.total);
  CHECK(p.step_time_s().value_or(0) == doctest::Approx(0.31));
  p = parse_progress(" iteration      450/    1000 | consumed samples: 7200 | lm loss: 2.0\n");
  CHECK(p.step == 450);
  CHECK(p.total == 1000);
  // Words that merely contain the keywords are not step counts.
  p = parse_progress("footstep 3\niterator 4\nsteps 5 done\nglobal_step 7\n");
  CHECK_FALSE(p.known());
}

TEST_CASE("progress: the newest of a bar and a step line wins") {
  Progress p = parse_progress(" 10%|#         | 100/1000 [00:10<01:30, 10.0it/s]\nstep 200/1000\n");
  CHECK(p.step == 200);
  p = parse_progress("step 200/1000\n 30%|###       | 300/1000 [00:30<01:10, 10.0it/s]\n");
  CHECK(p.step == 300);
  CHECK(p.format == ProgressFormat::tqdm);
}

TEST_CASE("progress: the jobgen line: peak GPU memory and step time") {
  const Progress p = parse_progress(
      " 100%|##########| 100/100 [00:50<00:00,  2.00it/s]\n"
      "jobgen: peak_gpu_memory_gib=37.25 step_time_s=0.52\n");
  CHECK(p.peak_gpu_memory_gib.value_or(0) == doctest::Approx(37.25));
  CHECK(p.measured_step_time_s.value_or(0) == doctest::Approx(0.52));
  CHECK(p.step_time_s().value_or(0) == doctest::Approx(0.52));
  CHECK_FALSE(parse_progress("jobgen: peak_gpu_memory_gib=-3\n").peak_gpu_memory_gib);
}

TEST_CASE("progress: nothing, garbage, partial and huge lines") {
  CHECK_FALSE(parse_progress("").known());
  CHECK_FALSE(parse_progress("Starting training\nloading checkpoint\n").known());
  std::string garbage;
  for (int i = 0; i < 4096; ++i) garbage += static_cast<char>((i * 131 + 7) % 256);
  CHECK_FALSE(parse_progress(garbage).known());
  // The update being written has no ']' yet: the one before it counts.
  Progress p =
      parse_progress(" 44%|####4     | 440/1000 [01:09<01:27,  6.40it/s]\r 45%|####5     | 450/10");
  CHECK(p.step == 440);
  // A tail cut at an arbitrary byte: its first (partial) line is not read.
  p = parse_progress("0/1000 [01:09<01:27,  6.40it/s]\nhello\n", true);
  CHECK_FALSE(p.known());
  // A line longer than kMaxProgressLine is skipped, the earlier bar still counts.
  p = parse_progress(" 10%|#         | 100/1000 [00:10<01:30, 10.0it/s]\n" +
                     std::string(kMaxProgressLine + 1, 'x') + " step 5/6\n");
  CHECK(p.step == 100);
  // Numbers out of range are not steps.
  p = parse_progress(" 10%|#         | 99999999999999999999999/1000 [00:10<01:30, 10.0it/s]\n");
  CHECK_FALSE(p.step);
  p = parse_progress("{'loss': nan, 'epoch': inf}\n");
  CHECK_FALSE(p.loss);
  CHECK_FALSE(p.epoch);
  // Only the last kMaxProgressBytes are read.
  p = parse_progress("step 7/9\n" + std::string(kMaxProgressBytes, '\n'));
  CHECK_FALSE(p.known());
}

TEST_CASE("progress: stderr's bar merged with stdout's dicts") {
  const Progress err = parse_progress(" 45%|####5     | 450/1000 [05:10<06:20,  1.45it/s]");
  const Progress out =
      parse_progress("{'loss': 2.3, 'epoch': 0.45}\njobgen: peak_gpu_memory_gib=9\n");
  const Progress merged = merge_progress(err, out);
  CHECK(merged.step == 450);
  CHECK(merged.format == ProgressFormat::hf_trainer);
  CHECK(merged.loss.value_or(0) == doctest::Approx(2.3));
  CHECK(merged.peak_gpu_memory_gib.value_or(0) == doctest::Approx(9));
  CHECK(merge_progress(out, err).step == 450);
}

TEST_CASE("progress: last_line keeps the last carriage-return part") {
  CHECK(last_line("a\nb\n\n") == "b");
  CHECK(last_line("epoch 1\r 10%\r 20%\n") == " 20%");
}
