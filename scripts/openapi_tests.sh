#!/usr/bin/env bash
# CI: docs/serve-openapi.yaml checked against a running `engine serve` by
# schemathesis (PyPI), bounded in time (about 70 s on the 2-core
# machine, 150 s at most). Makes a virtualenv in target/openapi-venv
# (kept between runs), pip installs schemathesis and kubernetes-validate,
# starts `engine serve -stub-search` with a keys file on a free loopback
# port, and runs
#
#   schemathesis run docs/serve-openapi.yaml --url http://ADDR \
#     -H "Authorization: Bearer SECRET" --checks ...
#
# with the checks that fit a streaming API: not_a_server_error,
# status_code_conformance, content_type_conformance,
# response_headers_conformance (the documented headers, e.g. Retry-After,
# where a response has them: this run meets no quota, so no 429),
# response_schema_conformance (schemathesis parses JSON bodies only: the
# 400-503 `{"error": ...}` bodies are checked against their schema; a 200's
# NDJSON or SSE body is not one JSON document and is not parsed, which
# tests/serve.rs covers instead), ignored_auth (a request without the key
# must get 401), unsupported_method and allow_header_conformance (405 with
# the right Allow). Not used: positive_data_acceptance (a query can fit the
# schema and still be refused by engine analysis's own rules, e.g. a move
# off the board: the schema does not restate them, so schemathesis warns
# that most generated queries get 400), negative_data_rejection and
# missing_required_header (the server reads a body whatever its
# Content-Type), use_after_free (a DELETE of a running review cancels it
# and keeps it, readable as `cancelled`: only a finished one is forgotten)
# and object_level_authorization (one key here).
#
# The reviews (POST /v1/reviews, GET/DELETE /v1/reviews/{id}) are also run
# as schemathesis' stateful phase: the document's links take a 202's `id`
# to GET and DELETE, so a review's job object is checked against its
# schema (a generated id is a 404), and ensure_resource_availability
# checks that a review just created can be read. The reviews' visits are
# lowered (reviewFastVisits, reviewDeepVisits, reviewFullVisits) so that
# a review of a generated game ends within a second or so on the stub
# search; reviewMaxActivePerKey (4) still gives some 429s, with
# Retry-After. After the run the server's own counts of review requests by
# status are printed, and the run fails if no review was created (202) or
# read (200): the job's schema would then have gone unchecked.
#
#   scripts/openapi_tests.sh                 # build the light engine if missing
#   ENGINE=target/release/engine scripts/openapi_tests.sh
#   OPENAPI_MAX_EXAMPLES=200 scripts/openapi_tests.sh
#
# It first checks deploy/k8s/*.yaml, without a cluster: kubernetes-validate
# (PyPI, Kubernetes' resource schemas, strict) and scripts/k8s_check.py
# (against the engine), in the same virtualenv.
#
# Exits non-zero on any failed check (a 5xx included) or if the server dies.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
venv="$root/target/openapi-venv"
schemathesis_version="4.32.5"
max_examples="${OPENAPI_MAX_EXAMPLES:-300}"

# kubernetes-validate (PyPI) holds Kubernetes' own resource schemas, for
# deploy/k8s offline.
kubernetes_validate_version="1.37.0"
stamp="$venv/.installed-schemathesis-$schemathesis_version-kubernetes-validate-$kubernetes_validate_version"
if [ ! -f "$stamp" ]; then
  rm -rf "$venv"
  mkdir -p "$root/target"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    "schemathesis==$schemathesis_version" "kubernetes-validate==$kubernetes_validate_version"
  touch "$stamp"
fi

# The engine: $ENGINE, else the default build's (CI's `cargo test
# --release` made it), else the light build's (scripts/light_build.sh),
# else build the light engine here.
engine="${ENGINE:-}"
if [ -z "$engine" ]; then
  for candidate in target/release/engine target/light/release/engine; do
    if [ -x "$candidate" ]; then engine="$candidate"; break; fi
  done
fi
if [ -z "$engine" ]; then
  cargo build --release --no-default-features
  engine=target/release/engine
fi

# First the Kubernetes manifests (not tested on a cluster): validated
# against Kubernetes 1.37's resource schemas (strict: no unknown field),
# then their paths, ports and config checked against the engine. PyYAML
# came with schemathesis.
"$venv/bin/kubernetes-validate" --strict --quiet deploy/k8s/*.yaml
echo "openapi_tests: deploy/k8s/*.yaml valid for Kubernetes $kubernetes_validate_version (kubernetes-validate --strict)" >&2
"$venv/bin/python" scripts/k8s_check.py "$engine"

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

secret="openapi-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
digest="$(printf '%s' "$secret" | sha256sum | cut -d' ' -f1)"
# maxVisits bounds what a generated query can cost (the stub search does a
# visit a millisecond); no in-flight or per-minute quota, so the run is not
# refused for its own pace.
cat > "$work/keys.toml" <<EOF
[[key]]
name = "openapi"
sha256 = "$digest"
weight = 1
maxVisits = 200
EOF

"$engine" serve -stub-search -listen 127.0.0.1:0 -keys "$work/keys.toml" \
  -override-config "maxVisits=20,numAnalysisThreads=2,reviewFastVisits=2,reviewDeepVisits=10,reviewFullVisits=10,reviewMaxVisits=20" \
  2> "$work/server.log" &
server_pid=$!
addr=""
for _ in $(seq 1 300); do
  addr="$(sed -n 's/^engine serve: listening on http:\/\/\([^,]*\),.*/\1/p' "$work/server.log")"
  [ -n "$addr" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$addr" ] || { echo "openapi_tests: the server did not start" >&2; cat "$work/server.log" >&2; exit 1; }
echo "openapi_tests: engine serve ($engine) on $addr; schemathesis $schemathesis_version, up to $max_examples examples an operation" >&2

start=$(date +%s)
status=0
# --max-examples bounds the run (about 70 s here, the stateful phase of
# the reviews included); not --max-time, which
# makes schemathesis repeat fuzzing until the time is spent. timeout(1)
# stops a run that hangs; the request timeout bounds one request (a stub
# search of at most 200 visits per turn).
# From the scratch folder: schemathesis leaves a .schemathesis cache in its
# working directory.
(cd "$work" && timeout 150 "$venv/bin/schemathesis" --no-color run "$root/docs/serve-openapi.yaml" \
  --url "http://$addr" \
  -H "Authorization: Bearer $secret" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance,ignored_auth,unsupported_method,allow_header_conformance,ensure_resource_availability \
  --max-examples "$max_examples" \
  --request-timeout 30 \
  --workers 2 \
  --report-dir "$work/report") || status=$?
end=$(date +%s)
if ! kill -0 "$server_pid" 2>/dev/null; then
  echo "openapi_tests: FAIL: the server died during the run" >&2
  tail -50 "$work/server.log" >&2
  exit 1
fi
echo "openapi_tests: schemathesis exited $status after $((end - start)) s" >&2
# The reviews' requests by status, as the server counted them: the 202s
# and 200s show that the stateful phase reached real jobs.
review_counts="$("$venv/bin/python" - "http://$addr/metrics" <<'PY'
import re, sys, urllib.request
text = urllib.request.urlopen(sys.argv[1], timeout=10).read().decode()
counts = {}
for m in re.finditer(r'^engine_serve_requests_total\{key="openapi",endpoint="reviews",code="(\d+)"\} (\d+)', text, re.M):
    counts[m.group(1)] = counts.get(m.group(1), 0) + int(m.group(2))
print(" ".join(f"{code}:{n}" for code, n in sorted(counts.items())))
PY
)"
echo "openapi_tests: review requests by status: $review_counts" >&2
case " $review_counts" in
  *" 202:"*) ;;
  *) echo "openapi_tests: FAIL: no review was created (no 202)" >&2; status=1 ;;
esac
case " $review_counts" in
  *" 200:"*) ;;
  *) echo "openapi_tests: FAIL: no review was read (no 200)" >&2; status=1 ;;
esac
exit "$status"
