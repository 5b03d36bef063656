#!/usr/bin/env python3
"""Make a small randomised KataGo "human SL" test net (SGF metadata encoder,
metaEncoderVersion 1) and export it to KataGo's .bin.gz format.

Run with a Python that has torch and can import KataGo's trainer package
(`katago`, from KataGo's `python/` folder):

    KATAGO_SRC=../KataGo python scripts/make_human_test_net.py \
        --config b6c96-fson-mish-meta --seed 20261126 \
        --out models/test-human-sl/b6c96-fson-mish-meta.bin.gz

What it does:
  1. torch.manual_seed(seed); builds `Model(modelconfigs.config_of_name[config], 19)`
     and calls `model.initialize()` exactly as KataGo's trainer does.
  2. Every parameter or buffer whose values are all the same after
     initialisation (norm gammas/betas, bias-only layers, the final trunk
     batchnorm's running mean/std; NOT the metadata encoder's constant
     `feature_mask` buffer) gets small random values from a second generator
     seeded with seed+1:
        - gamma (stored centred on 0, effective gamma = 1 + stored value), beta,
          bias-like params:  N(0, --const-std)            (default 0.1)
        - running_mean:      N(0, --const-std)
        - running_std:       1 + U(0, 2 * --const-std)    (stays positive)
     Parameters that already are random (conv/linear weights, linear biases)
     are left alone, except for a few output layers that are scaled up so the
     outputs are not near-uniform and depend clearly on the profile:
        metadata_encoder.linear_output_to_trunk.weight      x --meta-gain   (4)
        policy_head.conv2p.weight                            x --policy-gain (30)
        policy_head.linear_pass2.weight                      x --pass-gain   (3)
        value_head.linear_{valuehead,miscvaluehead,moremiscvaluehead}
          .weight and .bias                                  x --value-gain  (4)
  3. Saves a trainer-style checkpoint ({"model": state_dict, "config": config})
     into a temporary folder and runs KataGo's own
     `python/export_model_pytorch.py -checkpoint ...` on it, then gzips the
     resulting .bin (gzip mtime 0, so the output is byte-reproducible).
"""

import argparse
import gzip
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--katago-src", default=os.environ.get("KATAGO_SRC"),
                        help="KataGo source checkout (folder containing python/); default $KATAGO_SRC")
    parser.add_argument("--config", default="b6c96-fson-mish-meta", help="KataGo model config name (must be a -meta config)")
    parser.add_argument("--seed", type=int, default=20261126)
    parser.add_argument("--const-std", type=float, default=0.1,
                        help="std of the random values given to constant-initialised params")
    parser.add_argument("--meta-gain", type=float, default=4.0,
                        help="multiplier for metadata_encoder.linear_output_to_trunk.weight")
    parser.add_argument("--policy-gain", type=float, default=30.0,
                        help="multiplier for the policy head's board output layer (conv2p), so the policy is not near-uniform")
    parser.add_argument("--pass-gain", type=float, default=3.0,
                        help="multiplier for the policy head's pass output layer (linear_pass2)")
    parser.add_argument("--value-gain", type=float, default=4.0,
                        help="multiplier for the value head's output layers (linear_valuehead, linear_miscvaluehead, linear_moremiscvaluehead)")
    parser.add_argument("--model-name", default=None, help="name recorded in the net (default <config>-humantest-s<seed>)")
    parser.add_argument("--out", required=True, help="output .bin.gz path")
    parser.add_argument("--keep-checkpoint", default=None, help="also copy the checkpoint here")
    args = parser.parse_args()

    if args.katago_src is None:
        sys.exit("need --katago-src or KATAGO_SRC")
    pydir = os.path.join(os.path.abspath(args.katago_src), "python")
    if not os.path.isfile(os.path.join(pydir, "export_model_pytorch.py")):
        sys.exit(f"no export_model_pytorch.py in {pydir}")
    sys.path.insert(0, pydir)

    import torch
    from katago.train import modelconfigs
    from katago.train.model_pytorch import Model

    if args.config not in modelconfigs.config_of_name:
        sys.exit(f"unknown config {args.config}")
    config = modelconfigs.config_of_name[args.config]
    if "metadata_encoder" not in config:
        sys.exit(f"config {args.config} has no metadata encoder")

    torch.manual_seed(args.seed)
    model = Model(config, 19)
    model.initialize()
    model.to("cpu")

    gen = torch.Generator().manual_seed(args.seed + 1)
    changed = []
    with torch.no_grad():
        tensors = list(model.named_parameters()) + list(model.named_buffers())
        for name, t in sorted(tensors, key=lambda kv: kv[0]):
            if name.endswith("feature_mask"):
                continue
            if not t.is_floating_point() or t.numel() == 0:
                continue
            if t.numel() > 1 and float(t.max() - t.min()) != 0.0:
                continue
            if t.numel() == 1 and "weight" in name:
                continue
            if name.endswith("running_std") or name.endswith("renorm_running_std"):
                t.copy_(1.0 + 2.0 * args.const_std * torch.rand(t.shape, generator=gen))
            else:
                t.copy_(args.const_std * torch.randn(t.shape, generator=gen))
            changed.append(name)
        model.metadata_encoder.linear_output_to_trunk.weight.mul_(args.meta_gain)
        model.policy_head.conv2p.weight.mul_(args.policy_gain)
        model.policy_head.linear_pass2.weight.mul_(args.pass_gain)
        for lin in (model.value_head.linear_valuehead, model.value_head.linear_miscvaluehead, model.value_head.linear_moremiscvaluehead):
            lin.weight.mul_(args.value_gain)
            lin.bias.mul_(args.value_gain)

    print(f"randomised {len(changed)} constant-initialised tensors:", file=sys.stderr)
    for name in changed:
        print("  " + name, file=sys.stderr)
    print(f"scaled metadata_encoder.linear_output_to_trunk.weight by {args.meta_gain}, "
          f"policy head conv2p by {args.policy_gain}, linear_pass2 by {args.pass_gain}, value head output weights/biases by {args.value_gain}", file=sys.stderr)

    model_name = args.model_name or f"{args.config}-humantest-s{args.seed}"
    out = os.path.abspath(args.out)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = os.path.join(tmp, "checkpoint.ckpt")
        torch.save({"model": model.state_dict(), "config": config}, ckpt)
        if args.keep_checkpoint:
            shutil.copyfile(ckpt, args.keep_checkpoint)
        exportdir = os.path.join(tmp, "export")
        env = dict(os.environ)
        env["PYTHONPATH"] = pydir + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        subprocess.run(
            [sys.executable, os.path.join(pydir, "export_model_pytorch.py"),
             "-checkpoint", ckpt, "-export-dir", exportdir,
             "-model-name", model_name, "-filename-prefix", "model"],
            check=True, env=env, cwd=pydir, stdout=subprocess.DEVNULL,
        )
        with open(os.path.join(exportdir, "model.bin"), "rb") as f:
            data = f.read()
    with open(out, "wb") as f:
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0) as gz:
            gz.write(data)
    print(f"wrote {out} ({os.path.getsize(out)} bytes, model name {model_name})", file=sys.stderr)


if __name__ == "__main__":
    main()
