#!/usr/bin/env python3
"""Training memory and throughput of small-to-large transformers on one GPU, measured for jobgen.

What it measures: for each configuration of a fixed grid (Llama-style decoders 125M-7B, GPT-2, BERT,
T5; amp-bf16 / pure bf16 / strict fp32 / TF32; gradient checkpointing; LoRA; a few deliberate OOMs),
one training run of random-weight models built from transformers config objects (no downloads, no
tokenizer: random token ids, labels = input ids): 2 warm-up steps, then up to 8 timed steps (or 5 s)
of forward + backward + torch.optim.AdamW step + zero_grad, CUDA-synchronised. Per configuration:
  - peak torch.cuda.max_memory_allocated() and max_memory_reserved() over the whole process
    (weights, gradients, optimizer states and activations; the counters are never reset);
  - device-level use after the last step: total - free from torch.cuda.mem_get_info() and
    nvidia-smi memory.used (CUDA context included; the caching allocator does not shrink, so this
    is the peak); fits (false on torch.cuda.OutOfMemoryError); tokens/s per GPU =
    micro_batch * seq * timed steps / timed seconds; s/step; parameter counts; versions.
Units: memory in GiB = 2^30 bytes; throughput in tokens per second (source tokens for T5).

Each configuration runs in a fresh subprocess (`--one JSON`, with sys.executable), so an OOM or a
crash cannot spoil the next one and every peak counter and CUDA context starts clean. A config
gets at most --timeout-s (45 s); none starts after --deadline-s (default 480 s from the start) and
none runs past it, so the whole run fits a 540 s limit. The grid is ordered most valuable first; if
every config so far failed and they cover 3 different models (no torch, no GPU) the rest are not
started. Configs not run are still recorded (status not-run). --skip-done FILE.jsonl (an earlier
results.jsonl) skips the configs it has as ok or oom and runs the rest, T5 first, then grid order;
the YAML of such a run merges FILE and the new results.

Needs one NVIDIA GPU with PyTorch, transformers, peft (LoRA rows) and nvidia-smi (optional). It is
never run by the tests. Run (writes results.jsonl, appended after each config, and
measured-h200.yaml into DIR):
    bash bench/gpu_measure.sh [DEADLINE_S]             # = python3 bench/gpu_measure.py --out "${OUT:-./out}"
    python3 bench/gpu_measure.py --out DIR --deadline-s 480 [--only SUBSTRING] [--timeout-s 45]
    python3 bench/gpu_measure.py --list                  # the grid with rough times; no GPU needed
    python3 bench/gpu_measure.py --to-yaml results.jsonl > measured-h200.yaml   # no torch needed
    python3 bench/gpu_measure.py --out DIR --skip-done run1/results.jsonl     # a second run: only the rest
    python3 bench/gpu_measure.py --to-yaml run1/results.jsonl DIR/results.jsonl > merged.yaml
(--to-yaml takes several files: a later record of a config replaces an earlier one, in its place,
except that a not-run record never replaces one of a run that happened.)
The YAML follows tests/data/measured/README.md (loader: tests/accuracy/measured.cpp); it is written
to DIR, not to tests/data/measured (review it, then copy it there by hand). Each fitting
run gives three rows: ID (fits, allocated, tokens/s), ID-reserved and ID-smi (memory only), so fit
and throughput are counted once (the schema has one memory figure per row). Kept in results.jsonl
but left out of the YAML: T5 runs whose target length differs from the source length (the schema
has one `seq` for encoder and decoder), runs that failed other than by OOM (errors, timeouts) and
runs not started. Written approximately: LoRA on q,v is `lora_targets: attention` (jobgen: q,k,v,o),
as the other measured files do; fused and foreach AdamW are both `adamw` (the row comment says
which); dropout is on/off, not its rate.
"""
import argparse
import contextlib
import datetime
import json
import os
import subprocess
import sys
import time

GIB = float(1 << 30)
RESULT_TAG = "@@RESULT "

# Architectures. family picks the transformers classes; the numbers are also what the YAML says.
MODELS = {
    "llama-125m": dict(family="llama", hidden=768, layers=12, heads=12, kv_heads=12, ffn=2048, vocab=32000, tied=False),
    "llama-350m": dict(family="llama", hidden=1024, layers=24, heads=16, kv_heads=16, ffn=2816, vocab=32000, tied=False),
    # Llama-3.2-1B / 3B shapes (GQA, 128k vocabulary, tied embeddings); 1b-v32k isolates the vocabulary.
    "llama-1b": dict(family="llama", hidden=2048, layers=16, heads=32, kv_heads=8, ffn=8192, vocab=128256, tied=True),
    "llama-1b-v32k": dict(family="llama", hidden=2048, layers=16, heads=32, kv_heads=8, ffn=8192, vocab=32000, tied=False),
    "llama-3b": dict(family="llama", hidden=3072, layers=28, heads=24, kv_heads=8, ffn=8192, vocab=128256, tied=True),
    "llama-7b": dict(family="llama", hidden=4096, layers=32, heads=32, kv_heads=32, ffn=11008, vocab=32000, tied=False),
    "gpt2-124m": dict(family="gpt2", hidden=768, layers=12, heads=12, kv_heads=12, ffn=3072, vocab=50257, tied=True, positions=1024),
    "gpt2-355m": dict(family="gpt2", hidden=1024, layers=24, heads=16, kv_heads=16, ffn=4096, vocab=50257, tied=True, positions=1024),
    "bert-base": dict(family="bert", hidden=768, layers=12, heads=12, kv_heads=12, ffn=3072, vocab=30522, tied=True, positions=512),
    "bert-large": dict(family="bert", hidden=1024, layers=24, heads=16, kv_heads=16, ffn=4096, vocab=30522, tied=True, positions=512),
    "t5-small": dict(family="t5", hidden=512, layers=6, heads=8, kv_heads=8, ffn=2048, vocab=32128, tied=True),
    "t5-base": dict(family="t5", hidden=768, layers=12, heads=12, kv_heads=12, ffn=3072, vocab=32128, tied=True),
}


def cfg(model, seq, mb, precision="bf16", ckpt=False, lora=False, attn="sdpa", fused=False, target=None):
    """One configuration. precision: bf16 (fp32 weights + autocast bf16), bf16-pure, fp32 (strict), tf32."""
    name = f"{model}-s{seq}" + (f"-t{target}" if target else "") + f"-mb{mb}-{precision}"
    name += "-ckpt" * ckpt + "-lora" * lora + ("-" + attn) * (attn != "sdpa") + "-fusedadam" * fused
    return dict(name=name, model=model, seq=seq, target_len=target, mb=mb, precision=precision,
                ckpt=ckpt, lora=lora, attn=attn, fused=fused)


GRID = [  # most valuable first: the tail may be cut by the deadline
    cfg("llama-1b", 2048, 4), cfg("llama-3b", 2048, 4), cfg("llama-3b", 2048, 4, ckpt=True),
    cfg("llama-125m", 512, 8), cfg("llama-350m", 2048, 8), cfg("llama-1b", 4096, 8, ckpt=True),
    cfg("llama-7b", 2048, 1, ckpt=True),  # full fine-tune with fp32 AdamW states: near the 140 GiB limit
    cfg("llama-3b", 2048, 4, "bf16-pure", lora=True), cfg("llama-1b", 2048, 4, "bf16-pure", lora=True),
    cfg("gpt2-124m", 1024, 8, "fp32"), cfg("gpt2-124m", 1024, 8, "tf32"), cfg("gpt2-124m", 1024, 8, "bf16"),
    cfg("llama-3b", 4096, 4),  # borderline without checkpointing
    cfg("llama-7b", 4096, 2),  # expected OOM
    cfg("bert-base", 128, 32, "fp32"), cfg("bert-base", 128, 32, "tf32"), cfg("bert-base", 128, 32, "bf16"),
    cfg("bert-large", 512, 32, "fp32"), cfg("bert-large", 512, 32, "tf32"), cfg("bert-large", 512, 32, "bf16"),
    cfg("t5-base", 1024, 8, target=128), cfg("t5-base", 1024, 8, target=1024),
    cfg("t5-small", 1024, 8, target=128), cfg("t5-small", 1024, 8, target=1024),
    cfg("gpt2-355m", 1024, 8, "fp32"), cfg("gpt2-355m", 1024, 8, "tf32"), cfg("gpt2-355m", 1024, 8, "bf16"),
    cfg("llama-1b", 2048, 4, "bf16-pure"), cfg("llama-3b", 2048, 4, "bf16-pure"),
    cfg("llama-3b", 2048, 4, "bf16-pure", ckpt=True, lora=True),
    cfg("llama-1b", 2048, 4, attn="eager"), cfg("llama-1b-v32k", 2048, 4), cfg("llama-1b", 512, 1),
    cfg("llama-125m", 4096, 1), cfg("llama-350m", 4096, 4, ckpt=True), cfg("llama-1b", 4096, 4),
    cfg("llama-3b", 4096, 8),  # expected OOM (logits alone ~60 GiB)
    cfg("llama-1b", 2048, 4, fused=True), cfg("gpt2-124m", 1024, 8, "bf16", attn="eager"),
    cfg("bert-base", 512, 32, "bf16"), cfg("bert-large", 128, 32, "bf16"),
    cfg("llama-3b", 2048, 8, "bf16-pure", lora=True), cfg("llama-125m", 2048, 8, ckpt=True),
]

WARMUP_STEPS, MAX_STEPS, MAX_TIMED_S = 2, 8, 5.0


def approx_params(m):
    h, f, v, L = m["hidden"], m["ffn"], m["vocab"], m["layers"]
    if m["family"] == "llama":
        hd = h // m["heads"]
        return L * (2 * h * h + 2 * h * m["kv_heads"] * hd + 3 * h * f) + v * h * (1 if m["tied"] else 2)
    if m["family"] == "t5":
        return L * (4 * h * h + 2 * h * f) + L * (8 * h * h + 2 * h * f) + v * h
    return L * (4 * h * h + 2 * h * f) + (v + m.get("positions", 0)) * h


def estimate_seconds(c):
    """Rough wall time of one config (process start + build + steps) for --list; not a measurement."""
    p = approx_params(MODELS[c["model"]])
    tokens = c["mb"] * (c["seq"] + (c["target_len"] or 0))
    rate = {"bf16": 350e12, "bf16-pure": 350e12, "tf32": 150e12, "fp32": 45e12}[c["precision"]]
    step = (4 if c["lora"] else 6) * p * tokens * (4 / 3 if c["ckpt"] else 1) / rate + p * 16 * 4 / 3e12
    return 7.0 + WARMUP_STEPS * step + min(MAX_STEPS * step, MAX_TIMED_S)


# ---------------------------------------------------------------- one configuration (child process)

def nvidia_smi(uuid=None):
    """(GPU-wide memory.used in GiB, driver version) from nvidia-smi, or (None, None) without it."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=uuid,memory.used,driver_version",
                              "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=15).stdout
    except (OSError, subprocess.SubprocessError):
        return None, None
    rows = [[x.strip() for x in line.split(",")] for line in out.strip().splitlines() if line.count(",") == 2]
    if uuid:
        rows = [r for r in rows if uuid in r[0]] or rows
    try:
        return (float(rows[0][1]) / 1024.0, rows[0][2]) if rows else (None, None)
    except ValueError:
        return None, rows[0][2]


def build_model(c, torch):
    import transformers as tf
    m = MODELS[c["model"]]
    fam = m["family"]
    if fam == "llama":
        config = tf.LlamaConfig(vocab_size=m["vocab"], hidden_size=m["hidden"], intermediate_size=m["ffn"],
                                num_hidden_layers=m["layers"], num_attention_heads=m["heads"],
                                num_key_value_heads=m["kv_heads"], max_position_embeddings=max(4096, c["seq"]),
                                tie_word_embeddings=m["tied"], use_cache=False)
        auto = tf.AutoModelForCausalLM
    elif fam == "gpt2":
        config = tf.GPT2Config(vocab_size=m["vocab"], n_embd=m["hidden"], n_layer=m["layers"], n_head=m["heads"],
                               n_positions=m["positions"], use_cache=False)
        auto = tf.AutoModelForCausalLM
    elif fam == "bert":
        config = tf.BertConfig(vocab_size=m["vocab"], hidden_size=m["hidden"], num_hidden_layers=m["layers"],
                               num_attention_heads=m["heads"], intermediate_size=m["ffn"],
                               max_position_embeddings=m["positions"])
        auto = tf.AutoModelForMaskedLM
    else:
        # transformers 5 no longer gives a config built from scratch decoder_start_token_id, and the T5
        # forward needs it (with pad_token_id) to shift the labels right into decoder_input_ids: set
        # the ids of T5's own configs (pad 0 = decoder start, eos 1).
        ids = dict(decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
        shape = dict(vocab_size=m["vocab"], d_model=m["hidden"], d_kv=m["hidden"] // m["heads"], d_ff=m["ffn"],
                     num_layers=m["layers"], num_decoder_layers=m["layers"], num_heads=m["heads"],
                     feed_forward_proj="relu", use_cache=False)
        try:
            config = tf.T5Config(**shape, **ids)
        except TypeError:  # a strict config class that refuses a field it does not declare
            config = tf.T5Config(**shape)
        for k, v in ids.items():  # set afterwards if the constructor refused or dropped one
            if getattr(config, k, None) is None:
                setattr(config, k, v)
        auto = tf.AutoModelForSeq2SeqLM
    dtype = torch.bfloat16 if c["precision"] == "bf16-pure" else torch.float32
    dtype_kw = "dtype" if int(tf.__version__.split(".")[0]) >= 5 else "torch_dtype"
    attn, fallback = c["attn"], None
    with torch.device("cuda"):
        try:
            model = auto.from_config(config, attn_implementation=attn, **{dtype_kw: dtype})
        except (ValueError, ImportError, NotImplementedError) as e:  # no SDPA for this architecture
            fallback = f"{attn} refused: {str(e)[:200]}"
            model = auto.from_config(config, attn_implementation="eager", **{dtype_kw: dtype})
    model.to(device="cuda", dtype=dtype)
    used = getattr(model.config, "_attn_implementation", None) or attn
    return model, used, fallback


def make_batch(c, vocab, torch):
    ids = torch.randint(0, vocab, (c["mb"], c["seq"]), device="cuda")
    if MODELS[c["model"]]["family"] == "t5":
        return dict(input_ids=ids, labels=torch.randint(0, vocab, (c["mb"], c["target_len"]), device="cuda"))
    return dict(input_ids=ids, labels=ids)


def run_one(c):
    """Runs one configuration in this process and returns its record (never raises on OOM)."""
    import torch
    import transformers
    rec = dict(name=c["name"], config=c, model_spec=MODELS[c["model"]], status="error",
               timestamp=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))
    props = torch.cuda.get_device_properties(0)
    rec.update(gpu_name=torch.cuda.get_device_name(0), gpu_total_gib=props.total_memory / GIB,
               torch_version=torch.__version__, cuda_version=torch.version.cuda,
               transformers_version=transformers.__version__, python=sys.version.split()[0],
               alloc_conf=os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""))
    uuid = str(getattr(props, "uuid", "") or "")
    # Legacy TF32 API only: newer torch raises when it is mixed with the fp32_precision one.
    if c["precision"] in ("fp32", "tf32"):
        torch.set_float32_matmul_precision("highest" if c["precision"] == "fp32" else "high")
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = c["precision"] == "tf32"
    try:
        rec.update(tf32_matmul=torch.backends.cuda.matmul.allow_tf32, tf32_cudnn=torch.backends.cudnn.allow_tf32)
    except RuntimeError as e:
        rec.update(tf32_matmul=None, tf32_error=str(e)[:200])
    torch.manual_seed(0)
    phase = "build"
    try:
        model, attn, fallback = build_model(c, torch)
        rec.update(attn_implementation=attn, attn_fallback=fallback,
                   weights_gib=torch.cuda.memory_allocated() / GIB)
        if c["ckpt"]:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        if c["lora"]:
            import peft
            targets = {"llama": ["q_proj", "v_proj"], "gpt2": ["c_attn"], "bert": ["query", "value"],
                       "t5": ["q", "v"]}[MODELS[c["model"]]["family"]]
            lcfg = peft.LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, target_modules=targets, bias="none")
            model = peft.get_peft_model(model, lcfg)
            rec.update(peft_version=peft.__version__, lora=dict(r=16, alpha=32, dropout=0.05, targets=targets))
        model.train()
        params = [p for p in model.parameters() if p.requires_grad]
        rec.update(params_total=sum(p.numel() for p in model.parameters()),
                   params_trainable=sum(p.numel() for p in params),
                   trainable_dtype=str(params[0].dtype).replace("torch.", ""),
                   optimizer="torch.optim.AdamW " + ("fused=True" if c["fused"] else "fused=False (foreach default)"))
        opt = torch.optim.AdamW(params, lr=1e-5, fused=c["fused"])
        batch = make_batch(c, MODELS[c["model"]]["vocab"], torch)

        def step():
            nonlocal phase
            phase = "forward"
            amp = (torch.autocast("cuda", dtype=torch.bfloat16) if c["precision"] == "bf16"
                   else contextlib.nullcontext())
            with amp:
                loss = model(**batch).loss
            phase = "backward"
            loss.backward()
            phase = "optimizer"
            opt.step()
            opt.zero_grad(set_to_none=True)
            return loss

        for i in range(WARMUP_STEPS):
            step()
            torch.cuda.synchronize()
            if i == 0:
                rec["after_first_step_allocated_gib"] = torch.cuda.memory_allocated() / GIB
        times = []
        while len(times) < MAX_STEPS and (len(times) < 2 or sum(times) < MAX_TIMED_S):
            t = time.perf_counter()
            loss = step()
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t)
        phase = "done"
        free, total = torch.cuda.mem_get_info()
        elapsed = sum(times)
        rec.update(status="ok", fits=True, timed_steps=len(times), timed_s=elapsed, s_per_step=elapsed / len(times),
                   step_times_s=[round(x, 4) for x in times], loss=float(loss),
                   tokens_per_s_gpu=c["mb"] * c["seq"] * len(times) / elapsed,
                   target_tokens_per_s_gpu=(c["mb"] * c["target_len"] * len(times) / elapsed
                                            if c["target_len"] else None),
                   device_used_gib=(total - free) / GIB)
        rec["nvidia_smi_used_gib"], rec["driver_version"] = nvidia_smi(uuid)
    except torch.cuda.OutOfMemoryError as e:
        rec.update(status="oom", fits=False, oom_phase=phase, error=str(e)[:600])
    except RuntimeError as e:
        if "out of memory" not in str(e):
            raise
        rec.update(status="oom", fits=False, oom_phase=phase, error=str(e)[:600])
    stats = torch.cuda.memory_stats()
    rec.update(max_allocated_gib=torch.cuda.max_memory_allocated() / GIB,
               max_reserved_gib=torch.cuda.max_memory_reserved() / GIB,
               alloc_retries=stats.get("num_alloc_retries"), num_ooms=stats.get("num_ooms"))
    return rec


def child_main(text):
    c = json.loads(text)
    try:
        rec = run_one(c)
    except Exception as e:  # reported to the parent as a record, with the traceback on stderr
        import traceback
        traceback.print_exc()
        rec = dict(name=c.get("name"), config=c, status="error", error=f"{type(e).__name__}: {str(e)[:600]}")
    print(RESULT_TAG + json.dumps(rec), flush=True)


# ---------------------------------------------------------------- the grid (parent process)

def text_of(out):
    if out is None:
        return ""
    return out.decode("utf-8", "replace") if isinstance(out, bytes) else out


def run_child(c, timeout):
    cmd = [sys.executable, os.path.abspath(__file__), "--one", json.dumps(c)]
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    t0 = time.time()
    rec, status = None, None
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        out, err, rc = p.stdout, p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        out, err, rc, status = text_of(e.stdout), text_of(e.stderr), None, "timeout"
    for line in out.splitlines():
        if line.startswith(RESULT_TAG):
            rec = json.loads(line[len(RESULT_TAG):])
    if rec is None:
        rec = dict(name=c["name"], config=c, model_spec=MODELS[c["model"]],
                   status=status or "error", error=f"no result (exit code {rc}, timeout {timeout:.0f} s)")
    rec.update(wall_s=round(time.time() - t0, 2), exit_code=rc)
    if rec["status"] not in ("ok", "oom"):
        lines = [x for x in (out + "\n" + err).splitlines() if x.strip() and not x.startswith(RESULT_TAG)]
        rec["output_tail"] = lines[-30:]
    return rec


def progress(start, msg):
    print(f"[{time.time() - start:6.1f}s] {msg}", flush=True)


def select_grid(args):
    """(number in GRID, config) to run: --only filters; --skip-done drops the configs that FILE has as ok or
    oom and puts T5 first (encoder-decoder with a shorter target: the priority of a second run)."""
    grid = [(i + 1, c) for i, c in enumerate(GRID) if not args.only or args.only in c["name"]]
    if args.skip_done:
        done = {r["name"] for r in read_jsonl(args.skip_done) if r["status"] in ("ok", "oom")}
        grid = [(n, c) for n, c in grid if c["name"] not in done]
        grid.sort(key=lambda nc: (MODELS[nc[1]["model"]]["family"] != "t5", nc[0]))
    return grid


def run_grid(args):
    start = time.time()
    numbered = select_grid(args)
    grid = [c for _, c in numbered]
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "results.jsonl")
    skipped = f", skipping {len(GRID) - len(grid)} done in {args.skip_done}" if args.skip_done else ""
    progress(start, f"{len(grid)} configs{skipped}, deadline {args.deadline_s:.0f} s, per-config timeout "
                    f"{args.timeout_s:.0f} s, results -> {path}")
    failed_models, any_ran = set(), False
    with open(path, "a") as f:
        for i, (n, c) in enumerate(numbered):
            where = f" (grid #{n})" if args.skip_done else ""
            left = args.deadline_s - (time.time() - start)
            why_not = (f"deadline: {left:.0f} s left" if left < args.min_start_s else
                       "aborted: every config so far failed, on 3 models (no torch or no GPU?)"
                       if len(failed_models) >= 3 and not any_ran else None)
            if why_not:
                rec = dict(name=c["name"], config=c, model_spec=MODELS[c["model"]], status="not-run", error=why_not)
                progress(start, f"#{i + 1}{where} {c['name']}: not run ({why_not})")
            else:
                progress(start, f"#{i + 1}/{len(grid)}{where} {c['name']} ...")
                rec = run_child(c, min(args.timeout_s, left))
                progress(start, f"#{i + 1}{where} {c['name']}: {summary(rec)}")
                any_ran = any_ran or rec["status"] in ("ok", "oom")
                if rec["status"] not in ("ok", "oom"):
                    failed_models.add(c["model"])
            f.write(json.dumps(rec) + "\n")
            f.flush()
    yaml_path = os.path.join(args.out, "measured-h200.yaml")
    with open(yaml_path, "w") as f:
        f.write(to_yaml(read_jsonl(*([args.skip_done] if args.skip_done else []), path)))
    progress(start, f"wrote {yaml_path}" + (f" (merged with {args.skip_done})" if args.skip_done else ""))


def summary(r):
    if r["status"] == "ok":
        smi = r.get("nvidia_smi_used_gib")
        return (f"ok {r['wall_s']:.1f}s, peak alloc {r['max_allocated_gib']:.2f} reserved {r['max_reserved_gib']:.2f} "
                f"device {r['device_used_gib']:.2f} smi {'-' if smi is None else f'{smi:.2f}'} GiB, "
                f"{r['tokens_per_s_gpu']:.0f} tok/s, {r['s_per_step']:.3f} s/step, attn {r.get('attn_implementation')}")
    if r["status"] == "oom":
        return f"OOM in {r.get('oom_phase')} ({r['wall_s']:.1f}s, peak alloc {r.get('max_allocated_gib', 0):.2f} GiB)"
    tail = (r.get("output_tail") or [r.get("error", "")])[-1]
    return f"{r['status'].upper()} ({r.get('wall_s', 0):.1f}s): {r.get('error', '')} | {tail[:200]}"


# ---------------------------------------------------------------- YAML (tests/data/measured schema)

GPU_IDS = [("H200 NVL", None), ("H200", "h200"), ("H100 NVL", "h100-nvl"), ("H100 PCIe", "h100-pcie"),
           ("H100", "h100-sxm"), ("A100-SXM4-80GB", "a100-80g-sxm"), ("A100 80GB PCIe", "a100-80g-pcie")]
PRECISION = {"bf16": "amp-bf16", "bf16-pure": "bf16", "fp32": "fp32", "tf32": "tf32"}
KIND = {"llama": "decoder", "gpt2": "decoder", "bert": "encoder", "t5": "encoder-decoder"}


def read_jsonl(*paths):
    """The records of one or more results.jsonl, one per config: a later record (a rerun, or a later file)
    replaces the earlier one, in its place, except that a not-run record never replaces a run's."""
    recs = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    old = recs.get(r["name"])
                    if r["status"] == "not-run" and old is not None and old["status"] != "not-run":
                        continue
                    recs[r["name"]] = r
    return list(recs.values())


def gpu_id(name):
    for marker, gid in GPU_IDS:
        if marker in (name or ""):
            return gid
    return None


def model_yaml(name, m):
    keys = [("kind", KIND[m["family"]]), ("layers", m["layers"])]
    if m["family"] == "t5":
        keys.append(("decoder_layers", m["layers"]))
    keys += [("hidden", m["hidden"]), ("heads", m["heads"]), ("kv_heads", m["kv_heads"]), ("ffn_hidden", m["ffn"]),
             ("vocab", m["vocab"]), ("tied_embeddings", m["tied"]), ("gated_ffn", m["family"] == "llama")]
    if m.get("positions"):
        keys.append(("positions", m["positions"]))
    keys.append(("dropout", m["family"] != "llama"))  # GPT-2, BERT and T5 configs train with dropout 0.1
    return f"  {name}: {{" + ", ".join(f"{k}: {fmt(v)}" for k, v in keys) + "}"


def fmt(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f"{v:.3f}".rstrip("0").rstrip(".")
    return str(v)


def why_not_in_yaml(r):
    c = r["config"]
    if r["status"] not in ("ok", "oom"):
        return f"{r['status']}: {r.get('error', '')[:120]}"
    if c.get("target_len") and c["target_len"] != c["seq"]:
        return f"T5 target {c['target_len']} != source {c['seq']} (one seq in the schema)"
    if not gpu_id(r.get("gpu_name")):
        return f"GPU '{r.get('gpu_name')}' has no catalog id here"
    return None


def row_yaml(r, kind, expect):
    c = r["config"]
    flash = r.get("attn_implementation", c["attn"]) in ("sdpa", "flash_attention_2", "flash_attention_3")
    keys = [("id", f"h200-{c['name']}" + ("" if kind == "allocated" else "-" + ("smi" if kind == "nvidia-smi" else kind))),
            ("model", c["model"]), ("gpu", gpu_id(r.get("gpu_name"))), ("gpus", 1),
            ("precision", PRECISION[c["precision"]]), ("optimizer", "adamw"), ("strategy", "single"),
            ("seq", c["seq"]), ("mb", c["mb"]), ("ckpt", c["ckpt"]), ("flash", flash),
            ("finetune", "lora" if c["lora"] else "full")]
    if c["lora"]:
        keys += [("rank", 16), ("lora_targets", "attention"), ("lora_dropout", 0.05),
                 ("base_dtype", "bf16" if c["precision"] == "bf16-pure" else "fp32")]
    keys += [("compile", False)]
    ex = ", ".join(f"{k}: {fmt(v)}" for k, v in expect)
    return "  - {" + ", ".join(f"{k}: {fmt(v)}" for k, v in keys) + f", expect: {{{ex}}}}}"


def row_comment(r):
    c = r["config"]
    s = f"  # {c['name']}: {r.get('params_total', 0) / 1e9:.3f}B params ({r.get('params_trainable', 0) / 1e9:.4f}B trainable), "
    s += f"attn {r.get('attn_implementation')}, {r.get('optimizer', 'AdamW')}"
    if r["status"] == "oom":
        return s + f"; OutOfMemoryError in {r.get('oom_phase')} (max allocated {r.get('max_allocated_gib', 0):.2f} GiB)"
    smi = r.get("nvidia_smi_used_gib")
    return s + (f"; {r['timed_steps']} steps {r['s_per_step']:.4f} s/step; weights {r.get('weights_gib', 0):.2f} GiB; "
                f"mem_get_info used {r['device_used_gib']:.2f} GiB, "
                + ("no nvidia-smi: the -smi row is mem_get_info" if smi is None else f"nvidia-smi {smi:.2f} GiB"))


def to_yaml(recs, kinds=("allocated", "reserved", "nvidia-smi")):
    done = [r for r in recs if r["status"] in ("ok", "oom")]
    env = done[0] if done else (recs[0] if recs else {})
    stamps = sorted(r["timestamp"] for r in done if r.get("timestamp"))
    when = (stamps[0] if stamps and stamps[0] == stamps[-1] else
            f"{stamps[0]} to {stamps[-1]}" if stamps else env.get("timestamp", "?"))
    left_out = [(r["name"], why_not_in_yaml(r)) for r in recs if why_not_in_yaml(r)]
    kept = [r for r in recs if not why_not_in_yaml(r)]
    smi_missing = any(r["status"] == "ok" and r.get("nvidia_smi_used_gib") is None for r in kept)
    lines = [
        f"# SOURCE: jobgen bench/gpu_measure.py (this repository), run {when} on one "
        f"'{env.get('gpu_name', '?')}' ({env.get('gpu_total_gib', 0):.2f} GiB total), torch {env.get('torch_version', '?')} "
        f"(CUDA {env.get('cuda_version', '?')}), transformers {env.get('transformers_version', '?')}, "
        f"peft {next((r['peft_version'] for r in recs if r.get('peft_version')), 'n/a')}, "
        f"driver {next((r['driver_version'] for r in recs if r.get('driver_version')), 'n/a')}.",
        "#   Each config ran in a fresh process: random-init model from a transformers config (no checkpoint), random",
        "#   token ids, labels = input ids, model.train() (dropout on where the config has it), use_cache off, torch",
        f"#   AdamW lr 1e-5 (foreach unless the row comment says fused), {WARMUP_STEPS} warm-up steps then up to "
        f"{MAX_STEPS} timed steps (or {MAX_TIMED_S:.0f} s).",
        "#   Memory = peak over the whole process (counters never reset: weights included), bytes / 2^30 = GiB. Row ID has fits,",
        "#   torch.cuda.max_memory_allocated() (allocated) and tokens/s; ID-reserved max_memory_reserved(); ID-smi the",
        "#   GPU-wide nvidia-smi memory.used after the last step (CUDA context included; the caching allocator never",
        "#   shrank, so this is the peak)" + (", or total - free of torch.cuda.mem_get_info() where nvidia-smi was"
                                            " missing (row comment)." if smi_missing else "."),
        "#   tokens_per_s_gpu = mb x seq x timed steps / timed seconds (CUDA-synchronised, warm-up excluded).",
        "#   precision: amp-bf16 = fp32 weights + torch.autocast(bfloat16) (HF Trainer --bf16); bf16 = model in bfloat16",
        "#   (bf16 AdamW states); fp32 = allow_tf32 off for matmul and cuDNN; tf32 = set_float32_matmul_precision('high').",
        "#   flash: true = attn_implementation sdpa (torch SDPA flash / memory-efficient kernels), false = eager.",
        "#   ckpt = model.gradient_checkpointing_enable(use_reentrant=False). LoRA: peft r 16, alpha 32, dropout 0.05 on",
        "#   q_proj,v_proj (written lora_targets: attention, which jobgen reads as q,k,v,o), frozen base in bf16,",
        "#   adapters in the dtype peft gives them (fp32 with autocast_adapter_dtype). fits: false = torch OutOfMemoryError.",
    ]
    for name, why in left_out:
        lines.append(f"#   Not in this file (kept in results.jsonl): {name}: {why}")
    lines.append("models:")
    used = []
    for r in kept:
        if r["config"]["model"] not in used:
            used.append(r["config"]["model"])
    lines += [model_yaml(n, next(r["model_spec"] for r in kept if r["config"]["model"] == n)) for n in used]
    lines.append("rows:" if kept else "rows: []")
    for r in kept:
        lines.append(row_comment(r))
        if r["status"] == "oom":
            lines.append(row_yaml(r, "allocated", [("fits", False)]))
            continue
        device = r.get("nvidia_smi_used_gib") or r["device_used_gib"]
        figures = {"allocated": r["max_allocated_gib"], "reserved": r["max_reserved_gib"], "nvidia-smi": device}
        for i, kind in enumerate(kinds):
            expect = [("fits", True)] if i == 0 else []
            expect += [("memory_gib", round(figures[kind], 3)), ("memory_kind", kind)]
            if i == 0:
                expect.append(("tokens_per_s_gpu", round(r["tokens_per_s_gpu"], 1)))
            lines.append(row_yaml(r, kind, expect))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--one", metavar="JSON", help="run one configuration in this process (internal)")
    ap.add_argument("--to-yaml", metavar="JSONL", nargs="+",
                    help="print the YAML of one or more results.jsonl (later records replace earlier) and exit")
    ap.add_argument("--list", action="store_true", help="print the grid with rough times and exit")
    ap.add_argument("--out", default=os.environ.get("OUT") or "./out", help="output directory (default $OUT or ./out)")
    ap.add_argument("--deadline-s", type=float, default=480, help="no config starts or runs past this (s from start)")
    ap.add_argument("--timeout-s", type=float, default=45, help="wall-clock limit of one config's process")
    ap.add_argument("--min-start-s", type=float, default=12, help="do not start a config with less time left")
    ap.add_argument("--only", help="run only configs whose name contains this")
    ap.add_argument("--skip-done", metavar="JSONL",
                    help="skip configs with an ok or oom record in this earlier results.jsonl; T5 first")
    args = ap.parse_args()
    if args.one:
        child_main(args.one)
    elif args.to_yaml:
        sys.stdout.write(to_yaml(read_jsonl(*args.to_yaml)))
    elif args.list:
        total, grid = 0.0, select_grid(args)
        for n, c in grid:
            est = estimate_seconds(c)
            total += est
            print(f"{n:3d} {c['name']:48s} ~{approx_params(MODELS[c['model']]) / 1e9:6.3f}B  ~{est:5.1f}s  cum {total:6.0f}s")
        print(f"{len(grid)} configs, ~{total:.0f} s estimated (the deadline cuts the tail)")
    else:
        run_grid(args)


if __name__ == "__main__":
    main()
