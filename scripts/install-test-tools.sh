#!/usr/bin/env bash
# Install the pinned tools that chaintrace's live-node tests need, into .tools/
# (gitignored). Idempotent: re-running with the right version in place is a no-op.
#
#   .tools/bin/anvil  -> anvil 1.7.1 (from the npm package @foundry-rs/anvil-linux-amd64)
#   .tools/bin/cast   -> cast 1.7.1 (npm @foundry-rs/cast-linux-amd64): a real client of `serve`
#   .tools/bin/forge  -> forge 1.7.1 (npm @foundry-rs/forge-linux-amd64): builds the Foundry
#       project tests/contracts/forge-world (scripts/build-forge-world.sh) offline, with solc-js
#       behind .tools/js/solc
#   .tools/js/node_modules/ethers -> ethers 6.16.0 (npm): the ethers.js client of `serve`
#   .tools/js/node_modules/playwright-core -> playwright-core 1.65.1 (npm): drives the browser
#   .tools/js/node_modules/solc -> solc-js 0.8.30 (npm): compiles EDR's stack-trace suite at test
#       time (tests/live/edr_suite.rs, scripts/compile-edr-suite.js)
#   .tools/js/solc -> scripts/solc-standin.js beside it: solc-js 0.8.30 answering as a native
#       `solc` (--version, --standard-json), the compiler forge is given
#   .tools/js/node_modules/@openzeppelin/contracts -> OpenZeppelin Contracts 5.7.0 (npm): storage
#       layouts computed from their ASTs, an ERC4626 vault with AccessControl built from them
#   .tools/js/node_modules/@openzeppelin/contracts-upgradeable -> OpenZeppelin Contracts
#       Upgradeable 5.7.0 (npm; its peer is the @openzeppelin/contracts above): the ERC-7201
#       ledger behind an ERC1967Proxy in tests/contracts/forge-world
#   .tools/js/node_modules/@vscode/vsce -> vsce 4.1.0 (npm): packages editors/vscode in a test
#       (tests/offline/vscode_extension.rs), and its yauzl reads the package back
#   /usr/bin/chromium -> Debian's chromium (apt): the HTML report's browser test
#   /usr/bin/tmux -> Debian's tmux (apt): the terminal the debugger's tests drive
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

install_anvil() {
if anvil_ok; then
    log "anvil $ANVIL_VERSION already installed at $BIN/anvil"
    return 0
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
rm -rf "$TMP"
}

# A Foundry binary (cast, forge) from its npm package: install_foundry_bin NAME VERSION PKG SHA1
# puts .tools/NAME-VERSION/NAME in place, linked from .tools/bin/NAME, unless that version is
# there already. The tarball's sha1 is pinned besides npm's own integrity check.
install_foundry_bin() {
    local name="$1" version="$2" pkg="$3" sha1="$4"
    local dest="$TOOLS/$name-$version"
    if [ -x "$BIN/$name" ] && "$BIN/$name" --version 2>/dev/null | head -n1 | grep -q "Version: $version\b"; then
        log "$name $version already installed at $BIN/$name"
        return 0
    fi
    local tmp
    tmp="$(mktemp -d)"
    log "fetching $pkg@$version from the npm registry"
    ( cd "$tmp" && npm pack --silent "$pkg@$version" >/dev/null ) \
        || die "npm pack $pkg@$version failed"
    local tgz
    tgz="$(ls "$tmp"/*.tgz | head -n1)"
    [ "$(sha1sum "$tgz" | cut -d' ' -f1)" = "$sha1" ] || die "sha1 mismatch for $tgz"
    tar -xzf "$tgz" -C "$tmp" || die "could not extract $tgz"
    [ -f "$tmp/package/bin/$name" ] || die "package layout changed: package/bin/$name not found"
    mkdir -p "$dest" "$BIN"
    install -m 0755 "$tmp/package/bin/$name" "$dest/$name"
    ln -sfn "../$name-$version/$name" "$BIN/$name"
    rm -rf "$tmp"
    "$BIN/$name" --version | head -n1 | grep -q "Version: $version" \
        || die "installed $BIN/$name does not report $version"
    log "installed: $("$BIN/$name" --version | head -n1) at $BIN/$name"
}

# An npm package pinned to VERSION, installed into .tools/js (--save-exact, with the registry's
# integrity hashes recorded in package-lock.json) unless that version is already there. WHY
# names what needs it.
install_npm_js() {
    local pkg="$1" version="$2" why="$3" js="$TOOLS/js"
    if [ -f "$js/node_modules/$pkg/package.json" ] \
        && grep -q "\"version\": \"$version\"" "$js/node_modules/$pkg/package.json"; then
        log "$pkg $version already installed in $js"
        return 0
    fi
    command -v node >/dev/null 2>&1 || die "node is required for $why"
    mkdir -p "$js"
    log "installing $pkg@$version from the npm registry into $js"
    ( cd "$js" && npm install --silent --no-audit --no-fund --save-exact "$pkg@$version" >/dev/null ) \
        || die "npm install $pkg@$version failed"
    log "installed: $pkg $version in $js"
}

ETHERS_VERSION="6.16.0"
# playwright-core downloads no browser: the test drives Debian's chromium.
PLAYWRIGHT_VERSION="1.65.1"
SOLC_JS_VERSION="0.8.30"
# The VS Code extension packager: tests/offline/vscode_extension.rs packages editors/vscode.
VSCE_VERSION="4.1.0"
# OpenZeppelin's contracts as npm publishes them: tests/live/ast_layouts.rs lays out the whole
# tree and tests/live/oz_world.rs builds an ERC4626 vault with AccessControl from it.
OZ_VERSION="5.7.0"
# Their upgradeable twin, same version (its peer dependency pins @openzeppelin/contracts to it):
# tests/contracts/forge-world's Ledger, behind an ERC1967Proxy. Installed after the contracts.
OZ_UPGRADEABLE_VERSION="$OZ_VERSION"

# A Debian package pinned to VERSION, providing the executable BIN: installed with apt unless
# that version is already there; a mirror that no longer carries it (a security update replaced
# it) gets the archive's current one, and this says so.
install_deb() {
    local pkg="$1" version="$2" bin="$3" have
    have="$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || true)"
    if [ "$have" = "$version" ] && [ -x "$bin" ]; then
        log "$pkg $version already installed"
        return 0
    fi
    command -v apt-get >/dev/null 2>&1 || die "apt-get is required to install $pkg (Debian)"
    log "installing Debian's $pkg $version"
    apt-get update -qq >/dev/null || die "apt-get update failed"
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg=$version" >/dev/null 2>&1; then
        log "warning: $pkg $version is no longer in the archive; installing its current $pkg"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null \
            || die "apt-get install $pkg failed"
    fi
    [ -x "$bin" ] || die "$pkg installed but $bin is missing"
    log "installed: $(dpkg-query -W -f="$pkg \${Version}" "$pkg")"
}

# Debian 12's chromium, pinned to the version the browser test was written against.
CHROMIUM_VERSION="156.0.8078.114-1~deb12u1"
# Debian 12's tmux, pinned: the terminal the debugger's tests drive (send-keys, capture-pane).
TMUX_VERSION="3.3a-3"

# solc-js 0.7.6 behind a `solc` stand-in (`--version` and `--standard-json`, all chaintrace
# asks of a compiler): the compiler that rebuilds Uniswap v3's pool map in
# tests/live/uniswap_sources.rs, laid out there as Foundry's svm keeps compilers.
SOLC_OLD_VERSION="0.7.6"
install_solc_old() {
    local dir="$TOOLS/solc-$SOLC_OLD_VERSION"
    if [ -x "$dir/solc" ] && [ -f "$dir/node_modules/solc/package.json" ] \
        && grep -q "\"version\": \"$SOLC_OLD_VERSION\"" "$dir/node_modules/solc/package.json"; then
        log "solc-js $SOLC_OLD_VERSION already installed in $dir"
        return 0
    fi
    command -v node >/dev/null 2>&1 || die "node is required for the solc stand-in"
    mkdir -p "$dir"
    log "installing solc@$SOLC_OLD_VERSION (solc-js) from the npm registry into $dir"
    ( cd "$dir" && npm init -y >/dev/null 2>&1 \
        && npm install --silent --no-audit --no-fund --save-exact "solc@$SOLC_OLD_VERSION" >/dev/null ) \
        || die "npm install solc@$SOLC_OLD_VERSION failed"
    cp "$ROOT/scripts/solc-standin.js" "$dir/solc"
    chmod +x "$dir/solc"
    "$dir/solc" --version | grep -q "Version: $SOLC_OLD_VERSION+" \
        || die "the solc stand-in in $dir does not report $SOLC_OLD_VERSION"
    log "installed: solc-js $SOLC_OLD_VERSION stand-in at $dir/solc"
}

install_anvil
install_foundry_bin cast 1.7.1 @foundry-rs/cast-linux-amd64 e625e24080f1e8a3cbc1ed9dbba11c9aec05c121
install_foundry_bin forge 1.7.1 @foundry-rs/forge-linux-amd64 a8c467a9f366a7596bca1c40842ecbe99a8a0fce
install_solc_old
install_npm_js ethers "$ETHERS_VERSION" "the ethers.js client test"
install_npm_js playwright-core "$PLAYWRIGHT_VERSION" "the browser test"
install_npm_js solc "$SOLC_JS_VERSION" "solc-js (the EDR suite's compiler)"
# The stand-in finds solc-js in the node_modules beside it; copied each run (it is tiny), so an
# edited stand-in is never left stale.
install -m 0755 "$ROOT/scripts/solc-standin.js" "$TOOLS/js/solc"
"$TOOLS/js/solc" --version | grep -q "Version: $SOLC_JS_VERSION+" \
    || die "the solc stand-in at $TOOLS/js/solc does not report $SOLC_JS_VERSION"
install_npm_js @vscode/vsce "$VSCE_VERSION" "packaging the VS Code extension"
install_npm_js @openzeppelin/contracts "$OZ_VERSION" "OpenZeppelin's contracts"
install_npm_js @openzeppelin/contracts-upgradeable "$OZ_UPGRADEABLE_VERSION" \
    "OpenZeppelin's upgradeable contracts"
install_deb chromium "$CHROMIUM_VERSION" /usr/bin/chromium
install_deb tmux "$TMUX_VERSION" /usr/bin/tmux
