#!/usr/bin/env bash
# Install the pinned tools that chaintrace's live-node tests need, into .tools/
# (gitignored). Idempotent: re-running with the right version in place is a no-op.
#
#   .tools/bin/anvil  -> anvil 1.7.1 (from the npm package @foundry-rs/anvil-linux-amd64)
#
# The npm package is a plain tarball: package/package.json + package/bin/anvil
# (a static-ish linux x86_64 binary). We fetch it with `npm pack` (which checks
# the registry's integrity hash) and additionally pin its sha1 here.
set -euo pipefail

ANVIL_VERSION="1.7.1"
ANVIL_PKG="@foundry-rs/anvil-linux-amd64"
ANVIL_TGZ_SHA1="04f584149ae6c5a93dd6943a06f0a91d90aed0d8"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
BIN="$TOOLS/bin"
DEST="$TOOLS/anvil-$ANVIL_VERSION"

die() { echo "install-test-tools: ERROR: $*" >&2; exit 1; }
log() { echo "install-test-tools: $*" >&2; }

anvil_ok() {
    [ -x "$BIN/anvil" ] || return 1
    "$BIN/anvil" --version 2>/dev/null | head -n1 | grep -q "Version: $ANVIL_VERSION\b"
}

if anvil_ok; then
    log "anvil $ANVIL_VERSION already installed at $BIN/anvil"
    exit 0
fi

case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) ;;
    *) die "only linux x86_64 is supported (package $ANVIL_PKG); got $(uname -s)-$(uname -m)" ;;
esac

command -v npm >/dev/null 2>&1 || die "npm is required (apt-get install -y npm)"
command -v tar >/dev/null 2>&1 || die "tar is required"
command -v sha1sum >/dev/null 2>&1 || die "sha1sum is required"

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

log "fetching $ANVIL_PKG@$ANVIL_VERSION from the npm registry"
( cd "$TMP" && npm pack --silent "$ANVIL_PKG@$ANVIL_VERSION" >"$TMP/pack.out" ) \
    || die "npm pack $ANVIL_PKG@$ANVIL_VERSION failed"
TGZ="$TMP/$(tail -n1 "$TMP/pack.out")"
[ -f "$TGZ" ] || TGZ="$(ls "$TMP"/*.tgz 2>/dev/null | head -n1)"
[ -f "$TGZ" ] || die "npm pack produced no tarball"

GOT_SHA1="$(sha1sum "$TGZ" | cut -d' ' -f1)"
[ "$GOT_SHA1" = "$ANVIL_TGZ_SHA1" ] \
    || die "sha1 mismatch for $TGZ: got $GOT_SHA1, want $ANVIL_TGZ_SHA1"

mkdir -p "$TMP/x"
tar -xzf "$TGZ" -C "$TMP/x" || die "could not extract $TGZ"
[ -f "$TMP/x/package/bin/anvil" ] || die "package layout changed: package/bin/anvil not found"

rm -rf "$DEST"
mkdir -p "$DEST" "$BIN"
cp "$TMP/x/package/bin/anvil" "$DEST/anvil"
chmod 0755 "$DEST/anvil"
ln -sfn "../anvil-$ANVIL_VERSION/anvil" "$BIN/anvil"

anvil_ok || die "installed $BIN/anvil but 'anvil --version' does not report $ANVIL_VERSION: $("$BIN/anvil" --version 2>&1 | head -n3)"
log "installed: $("$BIN/anvil" --version | head -n1) at $BIN/anvil"
