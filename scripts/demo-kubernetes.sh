#!/usr/bin/env bash
# The demo with a real Kubernetes API server: kube-apiserver (built from the Go module proxy, cached)
# writes objects into etcd 3.5; the runner then migrates the data dir to 3.7 and becomes the etcd on
# the same client URL; the same API server reconnects. Objects (kind, name, uid, resourceVersion) are
# listed before and after and compared. Needs curl, openssl, jq.
#   bash scripts/demo-kubernetes.sh [FROM [TO]]      (default 3.5.35 -> 3.7.3)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/java-home.sh
for tool in curl openssl jq; do
  command -v $tool >/dev/null || { echo "$tool is needed (apt-get install $tool)" >&2; exit 1; }
done
FROM=${1:-3.5.35}
TO=${2:-3.7.3}
BIN_DIR=${ETCD_BIN_DIR:-$PWD/.etcd-bin}
WORK=$PWD/.demo-kubernetes

. scripts/build-runner.sh
runner/target/etcd-migrate provision --bin-dir "$BIN_DIR" >&2
APISERVER=$(bash scripts/build-kubernetes.sh kube-apiserver)

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# a free loopback port below the ephemeral range (nothing answers on it)
free_port() {
  local p
  while :; do
    p=$((15000 + RANDOM % 15000))
    (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo $p; return; }
  done
}
CLIENT=http://127.0.0.1:$(free_port)
PEER=http://127.0.0.1:$(free_port)
API_PORT=$(free_port)

rm -rf "$WORK"; mkdir -p "$WORK/apiserver"; install -d -m 700 "$WORK/data"
openssl genrsa -out "$WORK/apiserver/sa.key" 2048 2>/dev/null
openssl rsa -in "$WORK/apiserver/sa.key" -pubout -out "$WORK/apiserver/sa.pub" 2>/dev/null
TOKEN=$(openssl rand -hex 16)
echo "$TOKEN,demo-admin,demo-admin,system:masters" >"$WORK/apiserver/tokens.csv"
chmod 600 "$WORK/apiserver/"*

echo "== etcd $FROM on $CLIENT"
"$BIN_DIR/etcd-$FROM" --name demo --data-dir "$WORK/data" --listen-client-urls "$CLIENT" --advertise-client-urls "$CLIENT" \
  --listen-peer-urls "$PEER" --initial-advertise-peer-urls "$PEER" --initial-cluster "demo=$PEER" >"$WORK/etcd-$FROM.log" 2>&1 &
etcd_pid=$!; pids+=($etcd_pid)

echo "== kube-apiserver $("$APISERVER" --version | cut -d' ' -f2) on https://127.0.0.1:$API_PORT (log: $WORK/apiserver.log)"
"$APISERVER" --etcd-servers="$CLIENT" --bind-address=127.0.0.1 --secure-port="$API_PORT" --advertise-address=192.0.2.10 \
  --cert-dir="$WORK/apiserver/certs" --authorization-mode=RBAC --token-auth-file="$WORK/apiserver/tokens.csv" \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local --service-account-key-file="$WORK/apiserver/sa.pub" \
  --service-account-signing-key-file="$WORK/apiserver/sa.key" --service-cluster-ip-range=10.96.0.0/12 >"$WORK/apiserver.log" 2>&1 &
pids+=($!)

# the API server's self-signed certificate names 192.0.2.10, not 127.0.0.1: it is a local demo, so -k
api() { curl -sk -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
await_ready() {
  local end=$((SECONDS + $1))
  until [ "$(api -o /dev/null -w '%{http_code}' "https://127.0.0.1:$API_PORT/readyz")" = 200 ]; do
    [ $SECONDS -lt $end ] || { echo "kube-apiserver not ready after $1 s; see $WORK/apiserver.log" >&2; exit 1; }
    sleep 0.5 # poll interval of a deadline-bound wait
  done
}
await_ready 180
A=https://127.0.0.1:$API_PORT

echo "== writing objects through the API server"
api -X POST "$A/api/v1/namespaces" -d '{"metadata":{"name":"demo"}}' >/dev/null
api -X POST "$A/apis/apiextensions.k8s.io/v1/customresourcedefinitions" -d '{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","singular":"widget","kind":"Widget"},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}' >/dev/null
for i in 1 2 3; do
  api -X POST "$A/api/v1/namespaces/demo/configmaps" -d "{\"metadata\":{\"name\":\"settings-$i\"},\"data\":{\"replicas\":\"$i\"}}" >/dev/null
done
api -X POST "$A/api/v1/namespaces/demo/secrets" -d '{"metadata":{"name":"db-password"},"type":"Opaque","stringData":{"password":"demo-only"}}' >/dev/null
api -X POST "$A/apis/coordination.k8s.io/v1/namespaces/demo/leases" -d '{"metadata":{"name":"leader"},"spec":{"holderIdentity":"node-1","leaseDurationSeconds":15}}' >/dev/null
api -X POST "$A/api/v1/namespaces/demo/events" -d '{"metadata":{"name":"settings-1.demo"},"type":"Normal","reason":"Configured","message":"demo","involvedObject":{"kind":"ConfigMap","namespace":"demo","name":"settings-1"}}' >/dev/null
end=$((SECONDS + 60))
until [ "$(api -o /dev/null -w '%{http_code}' "$A/apis/example.com/v1/namespaces/demo/widgets")" = 200 ]; do
  [ $SECONDS -lt $end ] || { echo "CRD not established" >&2; exit 1; }
  sleep 0.2 # poll interval of a deadline-bound wait
done
for w in small large; do
  api -X POST "$A/apis/example.com/v1/namespaces/demo/widgets" -d "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"$w\"},\"spec\":{\"size\":\"$w\"}}" >/dev/null
done
# the resourceVersion before the next two changes: a list there must show settings-3 and the old settings-2
OLD_RV=$(api "$A/api/v1/namespaces/demo/configmaps" | jq -r .metadata.resourceVersion)
curl -sfk -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/merge-patch+json' -X PATCH \
  "$A/api/v1/namespaces/demo/configmaps/settings-2" -d '{"data":{"replicas":"20"}}' >/dev/null
api -X DELETE "$A/api/v1/namespaces/demo/configmaps/settings-3" >/dev/null

COLLECTIONS="api/v1/namespaces/demo/configmaps api/v1/namespaces/demo/secrets api/v1/namespaces/demo/events
apis/coordination.k8s.io/v1/namespaces/demo/leases apis/example.com/v1/namespaces/demo/widgets api/v1/namespaces/demo"
snapshot() {
  for c in $COLLECTIONS; do
    api "$A/$c" | jq -r '(.kind | sub("List$"; "")) as $kind | if .items then .items[] else . end
      | [$kind, .metadata.name, .metadata.uid, .metadata.resourceVersion] | @tsv'
  done | sort
}
snapshot >"$WORK/before.tsv"
echo "== before (name, uid, resourceVersion), served by etcd $FROM:"
column -t "$WORK/before.tsv" | sed 's/^/   /'

echo "== stopping etcd $FROM (the API server keeps running), migrating to $TO; the runner then becomes the etcd on $CLIENT"
kill "$etcd_pid"; wait "$etcd_pid" 2>/dev/null || true
echo -n "$FROM/etcd3" >"$WORK/data/version.txt"
runner/target/etcd-migrate migrate --data-dir "$WORK/data" --bin-dir "$BIN_DIR" --target-version "$TO" --target-storage etcd3 \
  --name demo --port "$(free_port)" --peer-port "$(free_port)" \
  -- --name demo --listen-client-urls "$CLIENT" --advertise-client-urls "$CLIENT" --listen-peer-urls "$PEER" >"$WORK/runner.log" 2>&1 &
pids+=($!) # the runner's pid: it becomes etcd $TO (exec), so cleanup stops that etcd
await_ready 600
grep '\[etcd-migrate\]' "$WORK/runner.log" | sed 's/^/   /'
snapshot >"$WORK/after.tsv"
echo "== after, served by the runner's etcd $TO through the same API server:"
column -t "$WORK/after.tsv" | sed 's/^/   /'
echo "== list of configmaps at the old resourceVersion $OLD_RV (resourceVersionMatch=Exact):"
api "$A/api/v1/namespaces/demo/configmaps?resourceVersion=$OLD_RV&resourceVersionMatch=Exact" \
  | jq -r '.items[] | "   \(.metadata.name) rv \(.metadata.resourceVersion)"'
api -X POST "$A/api/v1/namespaces/demo/configmaps" -d '{"metadata":{"name":"after-migration"},"data":{"ok":"yes"}}' \
  | jq -r '"== new write: configmap \(.metadata.name) rv \(.metadata.resourceVersion)"'
if diff -u "$WORK/before.tsv" "$WORK/after.tsv"; then
  echo "== objects intact: $(wc -l <"$WORK/before.tsv") objects with the same uid and resourceVersion ($FROM -> $TO)"
else
  echo "== objects differ (above)"; exit 1
fi
