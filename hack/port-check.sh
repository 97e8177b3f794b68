#!/bin/sh
# port-check: kopf-gen port on Kopf's 17 examples (read from a Kopf checkout,
# never committed): decorators translated, outputs that build, vet and
# verify, body statements translated. Usage: hack/port-check.sh [KOPF_GIT_DIR] [TAG]
set -u
KOPF=${1:-/work/.mirror/nolar+kopf/repo}
TAG=${2:-1.44.6}
PY=${PYTHON:-python3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
(cd "$ROOT/cmd/kopf-gen" && go build -o "$WORK/kopf-gen" .) || exit 1
git -C "$KOPF" show "$TAG:examples/crd.yaml" > "$WORK/crd.yaml" || exit 1
ok=0; total=0
for ex in $(git -C "$KOPF" ls-tree --name-only "$TAG:examples/" | grep -- -); do
	total=$((total+1))
	mkdir -p "$WORK/src/$ex"
	git -C "$KOPF" show "$TAG:examples/$ex/example.py" > "$WORK/src/$ex/example.py"
	out="$WORK/out/$ex"
	if ! "$WORK/kopf-gen" port --python "$PY" --out "$out" --module "example.com/$ex" --crd "$WORK/crd.yaml" \
		--kopf-replace "$ROOT" "$WORK/src/$ex/example.py" > "$WORK/$ex.log" 2>&1; then
		echo "$ex: port FAILED"; tail -5 "$WORK/$ex.log"; continue
	fi
	line=$(grep '^ported:' "$WORK/$ex.log")
	if (cd "$out" && go build ./... && go vet ./... && "$WORK/kopf-gen" verify --manifests=config --kustomize --chart=dist/chart --deepcopy --clients=pkg/generated) > "$WORK/$ex.build" 2>&1; then
		ok=$((ok+1)); echo "$ex: builds, vets, verifies; $line"
	else
		echo "$ex: BUILD FAILED; $line"; head -10 "$WORK/$ex.build"
	fi
	grep '^ported:' "$WORK/$ex.log" >> "$WORK/all"
done
awk -v ok=$ok -v total=$total '{d+=$2; D+=$4; s+=$8; S+=$10} END {printf "TOTAL: %d of %d examples build and verify; decorators %d of %d (%d%%); statements %d of %d (%d%%)\n", ok, total, d, D, d*100/D, s, S, s*100/S}' "$WORK/all"
