#!/usr/bin/env python3
"""Reference figures for `engine train`'s loss parity test, from KataGo's own trainer.

Run once by hand (needs torch and numpy; KataGo's `python/` directory is given
on the command line and nothing of it is copied here):

    python3 scripts/train_parity.py -katago-python /tmp/katago-python/python \
        -npz ../shared/vectors/npz/1F20939B3476347D.npz -out-dir tests/data/train

For each model config it
  1. builds KataGo's `Model` with a fixed seed, runs KataGo's `initialize()`, then
     perturbs every parameter with seeded noise (so that zero-initialised parts
     such as the fixup output convs and the norm betas are exercised too);
  2. writes every parameter, under KataGo's state_dict names, to
     `parity_<config>.safetensors` (the test loads these as starting weights);
     for the configs of `-formula-configs` (the transformers, whose weights
     would be megabytes) it instead sets every parameter from
     `formula_weights` below, a pure function of its name and shape that the
     Rust test computes too, and writes no weights;
  3. saves a KataGo-style checkpoint and exports it with KataGo's
     `export_model_pytorch.py` and records the MD5 of its `model.bin`;
  4. computes every loss term of KataGo's `Metrics` on the first rows of the npz
     with augmentation off (no symmetry, history kept), as train.py calls it with
     its default loss scales, plus the global gradient norm of `loss_sum`;
and writes the first rows themselves, as raw npz members, to
`parity_batch.safetensors`, and all figures to `parity.json`.

The `-meta-configs` (KataGo's `-meta` kinds: an SGF metadata encoder) read
one more input, `metadataInputNC` ([rows, 192] floats): self-play rows have
none, so the script makes them (`meta_rows`: seeded uniform values in [0, 1),
the board-area feature 86 included, which KataGo's encoder masks) and writes
them to `parity_meta.safetensors`. `-only CONFIGS` computes just those
configs and merges their figures into the existing `parity.json`, leaving
every other file and figure as it is.

For `-steps-config` (default b1c6nbt) it then runs KataGo's optimiser for
`STEPS` steps on that batch from the same starting weights, the way train.py's
loop does with lookahead and SWA on and no warm-up: torch's SGD (momentum 0.9)
over KataGo's parameter groups (`add_reg_dict`) with train.py's per-group
learning rate and weight decay (fixup + SGD branch of `get_weight_decay`),
torch's `clip_grad_norm_` at train.py's fixup cap, train.py's lookahead
(k = 6, alpha = 0.5) and torch's `AveragedModel` with train.py's `ema_avg`,
updated when the SWA period has passed and the lookahead is in sync. It
records each step's `loss_sum` and gradient norm, and digests of how far
every parameter moved (fast weights and SWA weights): the sum, the sum of
squares, and the dot product with `cos(0.37 i + 0.1)` over element index i.
"""
import math
import argparse
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np

DTYPES = {
    np.dtype("float32"): "F32",
    np.dtype("uint8"): "U8",
    np.dtype("int8"): "I8",
    np.dtype("int16"): "I16",
}


def write_safetensors(path, arrays):
    """Minimal safetensors writer (the format is an 8-byte header length, a JSON
    header and the raw little-endian bytes), so no extra package is needed."""
    header = {}
    blobs = []
    offset = 0
    for name, arr in arrays.items():
        arr = np.ascontiguousarray(arr)
        data = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
        header[name] = {
            "dtype": DTYPES[arr.dtype],
            "shape": list(arr.shape),
            "data_offsets": [offset, offset + len(data)],
        }
        blobs.append(data)
        offset += len(data)
    hbytes = json.dumps(header).encode("utf-8")
    hbytes += b" " * ((8 - len(hbytes) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hbytes)))
        f.write(hbytes)
        for b in blobs:
            f.write(b)


MASK64 = (1 << 64) - 1


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & MASK64
    return h


def formula_weights(name, shape):
    """Deterministic parameter values: element i of parameter `name` is
    base + amp * (2u - 1), u = splitmix64(fnv1a64(name) + i) / 2^64 in
    [0, 1) (53 bits), with (base, amp) by the parameter's role. Computed in
    float64 and rounded to float32 once, as the Rust side does."""
    import numpy as np
    n = int(np.prod(shape)) if len(shape) > 0 else 1
    if name.endswith("rope_freqs"):
        base, amp = 0.0, 0.5
    elif name.endswith(".beta") or name.endswith(".bias"):
        base, amp = 0.0, 0.1
    elif name.endswith(".gamma") and len(shape) == 4:
        base, amp = 0.0, 0.1
    elif len(shape) >= 2:
        fan_in = int(np.prod(shape[1:]))
        base, amp = 0.0, 1.0 / fan_in ** 0.5
    else:
        base, amp = 1.0, 0.2
    with np.errstate(over="ignore"):
        x = (np.uint64(fnv1a64(name.encode())) + np.arange(n, dtype=np.uint64))
        x = x + np.uint64(0x9E3779B97F4A7C15)
        z = x
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    u = (z >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))
    return (base + amp * (2.0 * u - 1.0)).astype(np.float32).reshape(shape)


# The optimiser run of `-steps-config` (see the module docs).
STEPS = 13
STEPS_LR_SCALE = 25.0  # large enough that clipping acts in the first steps
STEPS_SWA_SCALE = 8.0
LOOKAHEAD_K = 6
LOOKAHEAD_ALPHA = 0.5


def delta_digest(after, before):
    """Sum, sum of squares and a fixed projection of `after - before`."""
    d = (after.detach().double() - before.double()).flatten()
    w = torch_cos_weights(d.numel(), d)
    return [float(d.sum()), float((d * d).sum()), float((d * w).sum())]


def torch_cos_weights(n, like):
    import torch
    i = torch.arange(n, dtype=torch.float64)
    return torch.cos(0.37 * i + 0.1)


def optimizer_trajectory(model, batch, metrics_obj, compute_metrics):
    import torch
    from torch.optim.swa_utils import AveragedModel
    rows = batch["globalInputNC"].shape[0]
    swa_period = LOOKAHEAD_K * rows  # SWA after the 6th and 12th steps
    reg_dict = {}
    model.add_reg_dict(reg_dict)
    batch_scaling = rows / 256.0

    # train.py get_weight_decay, norm_kind fixup, SGD (no muon, no adamw).
    def weight_decay(group):
        if group in ("input", "normal", "normal_gamma", "output"):
            return 0.000001 * batch_scaling
        if group in ("normal_attn", "normal_gab", "gab_mlp", "tab_module"):
            return 0.000001 * 0.5 * batch_scaling
        if group in ("input_noreg", "noreg", "output_noreg"):
            return 0.00000001 * batch_scaling
        raise ValueError(group)

    # train.py's group_scale with its default head_lr_factor 0.5 and
    # noreg_lr_factor 1.0, and the lr with lookahead on and no warm-up.
    def lr(group):
        scale = 0.5 if group in ("output", "output_noreg") else 1.0
        return 0.00003 * STEPS_LR_SCALE * scale / LOOKAHEAD_ALPHA

    groups = [{"params": ps, "group_name": g} for g, ps in reg_dict.items() if len(ps) > 0]
    optimizer = torch.optim.SGD(groups, lr=1.0, momentum=0.9)
    for g in optimizer.param_groups:
        g["lr"] = lr(g["group_name"])
        g["weight_decay"] = weight_decay(g["group_name"])
    new_factor = 1.0 / STEPS_SWA_SCALE
    swa_model = AveragedModel(model, avg_fn=lambda avg, cur, n: avg + new_factor * (cur - avg))
    initial = {name: p.detach().clone() for name, p in model.named_parameters()}
    slow = {p: p.data.clone() for p in model.parameters()}
    gnorm_cap = 2500.0 * math.sqrt(rows / 256.0) / math.sqrt(STEPS_LR_SCALE)
    counter = 0
    swa_accum = 0
    loss_sums, gnorms, swa_steps = [], [], []
    for step in range(STEPS):
        optimizer.zero_grad(set_to_none=True)
        metrics = compute_metrics(model)
        metrics["loss_sum"].backward()
        gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), gnorm_cap)
        optimizer.step()
        loss_sums.append(float(metrics["loss_sum"].detach()))
        gnorms.append(float(gnorm))
        counter += 1
        in_between = True
        if counter >= LOOKAHEAD_K:
            with torch.no_grad():
                for p in model.parameters():
                    slow[p].add_(p.data.detach() - slow[p], alpha=LOOKAHEAD_ALPHA)
                    p.data.copy_(slow[p])
            counter = 0
            in_between = False
        swa_accum += rows
        if swa_accum >= swa_period and not in_between:
            swa_accum = 0
            swa_model.update_parameters(model)
            swa_steps.append(step + 1)
    swa_params = dict(swa_model.module.named_parameters())
    return {
        "steps": STEPS,
        "lr_scale": STEPS_LR_SCALE,
        "swa_scale": STEPS_SWA_SCALE,
        "swa_period_samples": swa_period,
        "gnorm_cap": gnorm_cap,
        "loss_sums": loss_sums,
        "gnorms": gnorms,
        "swa_update_steps": swa_steps,
        "fast_delta": {name: delta_digest(p, initial[name]) for name, p in model.named_parameters()},
        "swa_delta": {name: delta_digest(swa_params[name], initial[name]) for name in initial},
    }


def meta_rows(n, seed):
    """The parity batch's metadata inputs (see the module docs)."""
    rng = np.random.default_rng(seed + 1)
    return rng.random((n, 192), dtype=np.float32)


def metrics_on(metrics_obj, batch, kata_only_soft_policy=False):
    """KataGo's `Metrics` of a model on `batch`, as train.py calls it with its
    default loss scales (training mode); a model with a metadata encoder gets
    `metadataInputNC` as train.py gives it, and `kata_only_soft_policy` is
    train.py's `-meta-kata-only-soft-policy`."""
    def compute_metrics(model):
        meta = batch["metadataInputNC"] if model.get_has_metadata_encoder() else None
        outputs = model(batch["binaryInputNCHW"], batch["globalInputNC"], input_meta=meta)
        post = model.postprocess_output(outputs)
        return metrics_obj.metrics_dict_batchwise(
            model, post, None, batch,
            is_training=True,
            soft_policy_weight_scale=8.0,
            disable_optimistic_policy=False,
            meta_kata_only_soft_policy=kata_only_soft_policy,
            value_loss_scale=0.6,
            td_value_loss_scales=[0.6, 0.6, 0.6],
            seki_loss_scale=1.0,
            variance_time_loss_scale=1.0,
            main_loss_scale=None,
            intermediate_loss_scale=None,
        )
    return compute_metrics


def read_safetensors(path):
    """The arrays of a safetensors file (the counterpart of write_safetensors)."""
    with open(path, "rb") as f:
        (header_len,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(header_len))
        body = f.read()
    kinds = {v: k for k, v in DTYPES.items()}
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        a, b = meta["data_offsets"]
        dtype = kinds[meta["dtype"]].newbyteorder("<")
        out[name] = np.frombuffer(body[a:b], dtype=dtype).reshape(meta["shape"])
    return out


def steps_only(args, batch, raw):
    """`-steps-only`: the optimiser run from the committed starting weights."""
    import torch
    from katago.train import modelconfigs
    from katago.train.model_pytorch import Model
    from katago.train.metrics_pytorch import Metrics

    committed = read_safetensors(os.path.join(args.out_dir, "parity_batch.safetensors"))
    for k, v in raw.items():
        assert np.array_equal(committed[k], v), f"{k}: -npz rows differ from the committed batch"
    cfg_name = args.steps_config
    model = Model(modelconfigs.config_of_name[cfg_name], 19)
    weights = read_safetensors(os.path.join(args.out_dir, f"parity_{cfg_name}.safetensors"))
    with torch.no_grad():
        names = [name for name, _ in model.named_parameters()]
        assert sorted(names) == sorted(weights), "parameter names differ from the committed weights"
        for name, p in model.named_parameters():
            p.copy_(torch.from_numpy(weights[name].copy()))
    model.train()
    metrics_obj = Metrics(1, model)

    compute_metrics = metrics_on(metrics_obj, batch)

    path = os.path.join(args.out_dir, "parity.json")
    with open(path) as f:
        figures = json.load(f)
    figures["optimizer_steps"] = {"config": cfg_name} | optimizer_trajectory(
        model, batch, metrics_obj, compute_metrics)
    with open(path, "w") as f:
        json.dump(figures, f, indent=1, sort_keys=True)
    t = figures["optimizer_steps"]
    print(json.dumps({k: t[k] for k in ("loss_sums", "gnorms", "gnorm_cap", "swa_update_steps")}, indent=1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-katago-python", required=True)
    ap.add_argument("-npz", required=True)
    ap.add_argument("-out-dir", required=True)
    ap.add_argument("-configs", default="b1c6nbt,b2c16")
    ap.add_argument("-formula-configs", default="b7c96h6kv3qk32v16tflrs,b5c192h3nbttfrs-rnh,b2b10c96h3tfrs-rsnh,b2c16-silu,b1c6nbt-mish-rsnh")
    ap.add_argument("-meta-configs", default="b2c16-silu-meta")
    ap.add_argument("-only", default="",
                    help="compute only these configs (comma separated) and merge them into the "
                         "existing parity.json; nothing else is rewritten")
    ap.add_argument("-steps-config", default="b1c6nbt")
    ap.add_argument("-steps-only", action="store_true",
                    help="only the optimiser run, from the weights and batch already in -out-dir, "
                         "added to its parity.json (the other figures are left as they are)")
    ap.add_argument("-rows", type=int, default=16)
    ap.add_argument("-seed", type=int, default=12345)
    args = ap.parse_args()

    sys.path.insert(0, args.katago_python)
    import torch
    from katago.train import modelconfigs
    from katago.train.model_pytorch import Model
    from katago.train.metrics_pytorch import Metrics

    torch.set_num_threads(1)
    os.makedirs(args.out_dir, exist_ok=True)
    pos_len = 19
    n = args.rows

    npz = np.load(args.npz)
    raw = {k: npz[k][:n] for k in npz.files}
    only = [c for c in args.only.split(",") if c]
    if not args.steps_only and not only:
        write_safetensors(os.path.join(args.out_dir, "parity_batch.safetensors"), raw)
    meta = meta_rows(n, args.seed)
    if not args.steps_only:
        write_safetensors(os.path.join(args.out_dir, "parity_meta.safetensors"),
                          {"metadataInputNC": meta})

    # The batch as KataGo's data loader builds it (read_npz_training_data) with
    # randomize_symmetries=False and every history feature kept (the history
    # matrix is then the identity).
    bin_in = np.unpackbits(raw["binaryInputNCHWPacked"], axis=2)[:, :, : pos_len * pos_len]
    bin_in = bin_in.reshape(n, 22, pos_len, pos_len).astype(np.float32)
    batch = {
        "binaryInputNCHW": torch.from_numpy(bin_in),
        "globalInputNC": torch.from_numpy(raw["globalInputNC"].astype(np.float32)),
        "policyTargetsNCMove": torch.from_numpy(raw["policyTargetsNCMove"].astype(np.float32)),
        "globalTargetsNC": torch.from_numpy(raw["globalTargetsNC"].astype(np.float32)),
        "scoreDistrN": torch.from_numpy(raw["scoreDistrN"].astype(np.float32)),
        "valueTargetsNCHW": torch.from_numpy(raw["valueTargetsNCHW"].astype(np.float32)),
        "qValueTargetsNCMove": torch.from_numpy(raw["qValueTargetsNCMove"].astype(np.float32)),
        "metadataInputNC": torch.from_numpy(meta),
    }

    # The sequence layout, skipped masks and flex attention of KataGo's
    # plain transformer trunks change nothing on the board; SDPA with an
    # additive mask is the path that runs on any CPU.
    os.environ["KATAGO_FLEX_ATTENTION"] = "0"
    figures = {"rows": n, "npz": os.path.basename(args.npz), "seed": args.seed, "configs": {}}
    formula = [c for c in args.formula_configs.split(",") if c]
    if args.steps_only:
        steps_only(args, batch, raw)
        return
    every = [c for c in (args.configs + "," + args.meta_configs).split(",") if c] + formula
    if only:
        with open(os.path.join(args.out_dir, "parity.json")) as f:
            figures = json.load(f)
        committed = read_safetensors(os.path.join(args.out_dir, "parity_batch.safetensors"))
        for k, v in raw.items():
            assert np.array_equal(committed[k], v), f"{k}: -npz rows differ from the committed batch"
        every = only
    for cfg_name in every:
        config = modelconfigs.config_of_name[cfg_name]
        torch.manual_seed(args.seed)
        model = Model(config, pos_len)
        model.initialize()
        with torch.no_grad():
            for name, p in model.named_parameters():
                if cfg_name in formula:
                    p.copy_(torch.from_numpy(formula_weights(name, tuple(p.shape))))
                    continue
                std = float(p.std()) if p.numel() > 1 else 0.0
                scale = 0.3 * std if std > 0 else 0.05
                p.add_(torch.randn_like(p) * scale)
        model.train()

        if cfg_name not in formula:
            params = {name: p.detach().numpy().copy() for name, p in model.named_parameters()}
            write_safetensors(os.path.join(args.out_dir, f"parity_{cfg_name}.safetensors"), params)

        metrics_obj = Metrics(1, model)

        compute_metrics = metrics_on(metrics_obj, batch)

        metrics = compute_metrics(model)
        model.zero_grad()
        metrics["loss_sum"].backward()
        gnorm = torch.sqrt(sum(torch.sum(p.grad * p.grad) for p in model.parameters()))
        fig = {}
        for k, v in metrics.items():
            fig[k] = float(v.detach()) if isinstance(v, torch.Tensor) else float(v)
        fig["gnorm"] = float(gnorm)
        fig["num_params"] = int(sum(p.numel() for p in model.parameters()))
        fig["param_names"] = [name for name, _ in model.named_parameters()]
        figures["configs"][cfg_name] = fig
        if model.get_has_metadata_encoder():
            # train.py's -meta-kata-only-soft-policy on the same weights.
            metrics = metrics_on(metrics_obj, batch, kata_only_soft_policy=True)(model)
            model.zero_grad()
            metrics["loss_sum"].backward()
            gnorm = torch.sqrt(sum(torch.sum(p.grad * p.grad) for p in model.parameters()))
            fig["meta_kata_only_soft_policy"] = {
                k: float(v.detach()) if isinstance(v, torch.Tensor) else float(v)
                for k, v in metrics.items()
            } | {"gnorm": float(gnorm)}

        # Export with KataGo's exporter from a KataGo-style checkpoint.
        with tempfile.TemporaryDirectory() as tmp:
            ckpt = os.path.join(tmp, "checkpoint.ckpt")
            torch.save({"model": model.state_dict(), "config": config}, ckpt)
            exp_dir = os.path.join(tmp, "export")
            os.makedirs(exp_dir)
            subprocess.run(
                [sys.executable, os.path.join(args.katago_python, "export_model_pytorch.py"),
                 "-checkpoint", ckpt, "-export-dir", exp_dir,
                 "-model-name", f"parity-{cfg_name}", "-filename-prefix", "model"],
                check=True, cwd=args.katago_python,
            )
            with open(os.path.join(exp_dir, "model.bin"), "rb") as fin:
                data = fin.read()
            # Only the digest is kept: test networks are not committed.
            fig["katago_export_md5"] = hashlib.md5(data).hexdigest()

        if cfg_name == args.steps_config and not only:
            figures["optimizer_steps"] = {"config": cfg_name} | optimizer_trajectory(
                model, batch, metrics_obj, compute_metrics)

    # KataGo's transformer configs, for the test that the trainer's table
    # matches them.
    if only:
        with open(os.path.join(args.out_dir, "parity.json"), "w") as f:
            json.dump(figures, f, indent=1, sort_keys=True)
        print(json.dumps({c: {k: figures["configs"][c][k] for k in ("loss_sum", "gnorm", "num_params", "katago_export_md5")} for c in only}, indent=1))
        return
    figures["formula_configs"] = formula
    figures["transformer_configs"] = {
        name: {k: v for k, v in c.items() if k != "block_kind"}
        | {"block_kind": [kind for _, kind in c["block_kind"]]}
        for name, c in modelconfigs.base_config_of_name.items() if "tf" in name
    }
    with open(os.path.join(args.out_dir, "parity.json"), "w") as f:
        json.dump(figures, f, indent=1, sort_keys=True)
    print(json.dumps({c: {k: f["loss_sum"] if k == "loss_sum" else f[k] for k in ("loss_sum", "gnorm", "num_params", "katago_export_md5")} for c, f in figures["configs"].items()}, indent=1))


if __name__ == "__main__":
    main()
