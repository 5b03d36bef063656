#!/usr/bin/env python3
"""Checks deploy/k8s/*.yaml against engine serve, without a cluster.

The manifests are NOT tested on Kubernetes. This checks what can be checked
here: every file parses as YAML; the Deployment's probes use the paths the
server serves (/readyz, /healthz) on the named port its -listen gives; its
-config and -keys paths are the ConfigMap's and the Secret's mounted files;
terminationGracePeriodSeconds is above the ConfigMap's drainSeconds; the
Service and the HorizontalPodAutoscaler point at the Deployment; and the
server itself starts from the ConfigMap's serve.toml and the Secret's
keys.toml (with the project's small net for /models/net.bin.gz, on a free
loopback port instead of 0.0.0.0:8080) without a config key warning, answers the probes' paths with 200, and exits 0 on
SIGTERM.

Usage: scripts/k8s_check.py ENGINE   (needs PyYAML; scripts/openapi_tests.sh
runs it with its virtualenv, where schemathesis brought PyYAML)
"""

import glob
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.request

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The project's first shipped net (tests/common/engine_cli.rs's FIRST_NET).
NET = "models/training-run/engine-9x9-b4c32-gen60.bin.gz"


def fail(message):
    print(f"k8s_check: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def check(cond, message):
    if not cond:
        fail(message)


def load():
    docs = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "deploy/k8s/*.yaml"))):
        with open(path) as f:
            for doc in yaml.safe_load_all(f):
                if doc is None:
                    continue
                check(doc.get("kind") not in docs, f"two {doc.get('kind')} in deploy/k8s")
                docs[doc["kind"]] = doc
    for kind in ["ConfigMap", "Secret", "Deployment", "Service", "HorizontalPodAutoscaler"]:
        check(kind in docs, f"no {kind} in deploy/k8s")
    return docs


def flag(args, name):
    check(name in args, f"the container's args have no {name}")
    return args[args.index(name) + 1]


def mounted_file(pod, container, path, volume_kind, volume_name):
    """The key of the ConfigMap or Secret `volume_name` that `path` is."""
    directory, key = os.path.split(path)
    mounts = [m for m in container["volumeMounts"] if m["mountPath"] == directory]
    check(len(mounts) == 1, f"{directory} is not mounted")
    volume = next(v for v in pod["volumes"] if v["name"] == mounts[0]["name"])
    check(volume_kind in volume, f"{directory} is not a {volume_kind} volume")
    name = volume[volume_kind].get("name") or volume[volume_kind].get("secretName")
    check(name == volume_name, f"{directory} mounts {name}, not {volume_name}")
    return key


def static_checks(docs):
    deploy = docs["Deployment"]
    pod = deploy["spec"]["template"]["spec"]
    labels = deploy["spec"]["template"]["metadata"]["labels"]
    check(
        deploy["spec"]["selector"]["matchLabels"].items() <= labels.items(),
        "the Deployment's selector does not match its pods",
    )
    (container,) = pod["containers"]
    args = container["args"]
    check(args[0] == "serve", "the container does not run engine serve")
    port = int(flag(args, "-listen").rsplit(":", 1)[1])
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    check(ports.get("http") == port, f"containerPort http is not -listen's {port}")
    probes = {
        "readinessProbe": "/readyz",
        "livenessProbe": "/healthz",
        "startupProbe": "/healthz",
    }
    for probe, path in probes.items():
        get = container[probe]["httpGet"]
        check(get["path"] == path, f"{probe} asks {get['path']}, not {path}")
        check(get["port"] in ("http", port), f"{probe} asks port {get['port']}")
    for part in ("requests", "limits"):
        check(
            {"cpu", "memory"} <= container["resources"][part].keys(),
            f"resources.{part} lacks cpu or memory",
        )
    cm = docs["ConfigMap"]
    secret = docs["Secret"]
    config_key = mounted_file(pod, container, flag(args, "-config"), "configMap", cm["metadata"]["name"])
    keys_key = mounted_file(pod, container, flag(args, "-keys"), "secret", secret["metadata"]["name"])
    check(config_key in cm["data"], f"the ConfigMap has no {config_key}")
    check(keys_key in secret["stringData"], f"the Secret has no {keys_key}")
    serve_toml = cm["data"][config_key]
    drain = tomllib.loads(serve_toml)["serve"]["drainSeconds"]
    grace = pod["terminationGracePeriodSeconds"]
    check(grace > drain, f"terminationGracePeriodSeconds {grace} <= drainSeconds {drain}")
    service = docs["Service"]
    check(service["spec"]["selector"].items() <= labels.items(), "the Service selects no pod")
    for p in service["spec"]["ports"]:
        check(p["targetPort"] in ("http", port), f"the Service targets port {p['targetPort']}")
    target = docs["HorizontalPodAutoscaler"]["spec"]["scaleTargetRef"]
    check(
        (target["kind"], target["name"]) == ("Deployment", deploy["metadata"]["name"]),
        "the HorizontalPodAutoscaler scales something else",
    )
    return args, serve_toml, secret["stringData"][keys_key], drain, list(probes.values())


def run_server(engine, args, serve_toml, keys_toml, drain, paths):
    with tempfile.TemporaryDirectory() as work:
        config = os.path.join(work, "serve.toml")
        keys = os.path.join(work, "keys.toml")
        with open(config, "w") as f:
            f.write(serve_toml)
        with open(keys, "w") as f:
            f.write(keys_toml)
        # The Deployment's flags, with the project's small net for the
        # image's (so the config is read as with a net, unknown keys
        # warned about) and a free loopback port for 0.0.0.0:8080.
        args = list(args)
        args[args.index("-model") + 1] = os.path.join(ROOT, NET)
        args[args.index("-config") + 1] = config
        args[args.index("-keys") + 1] = keys
        args[args.index("-listen") + 1] = "127.0.0.1:0"
        server = subprocess.Popen(
            [engine, *args], stderr=subprocess.PIPE, text=True
        )
        try:
            lines = []
            for line in server.stderr:
                lines.append(line.rstrip())
                m = re.match(r"engine serve: listening on http://([^,]+),", line)
                if m:
                    break
            else:
                fail(f"engine serve did not start:\n" + "\n".join(lines))
            addr = m.group(1)
            check("keys on" in lines[-1], f"keys are not on: {lines[-1]}")
            warned = [l for l in lines if "config key" in l]
            check(not warned, f"the ConfigMap's serve.toml draws warnings: {warned}")
            for path in paths + ["/metrics"]:
                with urllib.request.urlopen(f"http://{addr}{path}", timeout=10) as r:
                    check(r.status == 200, f"{path}: {r.status}")
            server.send_signal(signal.SIGTERM)
            code = server.wait(timeout=drain + 10)
            check(code == 0, f"engine serve exited {code} on SIGTERM")
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
    print(f"k8s_check: deploy/k8s is consistent with engine serve (probes {paths} answered on {addr})")


def main():
    if len(sys.argv) != 2:
        fail("usage: scripts/k8s_check.py ENGINE")
    docs = load()
    run_server(sys.argv[1], *static_checks(docs))


if __name__ == "__main__":
    main()
