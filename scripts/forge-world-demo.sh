#!/usr/bin/env bash
# Deploy tests/contracts/forge-world, as scripts/build-forge-world.sh built it in OUT_DIR, to the
# node at RPC_URL (an anvil with its default accounts) with the pinned forge and cast, and make
# one `zap`; then read back with `cast call` / `cast storage` that it moved what it should:
#
#   bash scripts/build-forge-world.sh /tmp/fw
#   .tools/bin/anvil --port 18545 &
#   bash scripts/forge-world-demo.sh http://127.0.0.1:18545 /tmp/fw
#
# The deployer is anvil's account 0, the user who zaps its account 1 (the `test … junk`
# mnemonic's first two keys). In order:
#   forge create Asset                          (1,000,000 AST minted to the deployer)
#   forge create Vault(asset)                   (the deployer is its admin)
#   forge create Ledger                         (the implementation; its initializers disabled)
#   forge create ERC1967Proxy(impl, initialize(deployer))   -> LEDGER, owned by the deployer
#   forge create Router(asset, vault, LEDGER)
#   LEDGER.setRouter(router)                    (deployer)
#   asset.transfer(user, 1000 AST)              (deployer)
#   asset.approve(router, 250 AST)              (user)
#   router.zap(100 AST)                         (user)
# The zap pulls 100 AST from the user (allowance 250 -> 150), approves and deposits it into the
# Vault for the user (100 shares: the Vault's first deposit) and credits the user 100 in the
# Ledger, behind its proxy: its ERC-7201 namespace chaintrace.ledger (credits[user], count) and
# ERC20Upgradeable's (a 100 LCR mint).
#
# stdout: KEY=VALUE lines (DEPLOYER, USER, ASSET, VAULT, LEDGER_IMPL, LEDGER, ROUTER, SHARES and
# the transactions' hashes: …_TX, ZAP_TX last); logs and failures go to stderr, and any check
# that fails exits non-zero.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FORGE="$ROOT/.tools/bin/forge"
CAST="$ROOT/.tools/bin/cast"

die() { echo "forge-world-demo: ERROR: $*" >&2; exit 1; }
log() { echo "forge-world-demo: $*" >&2; }

[ $# -eq 2 ] || die "usage: $0 RPC_URL OUT_DIR (OUT_DIR built by scripts/build-forge-world.sh)"
RPC="$1"
OUT="$(cd "$2" 2>/dev/null && pwd)" || die "no directory $2"
[ -f "$OUT/foundry.toml" ] && [ -f "$OUT/out/Router.sol/Router.json" ] \
    || die "$OUT is not built: run scripts/build-forge-world.sh $OUT"
[ -x "$FORGE" ] && [ -x "$CAST" ] || die "run scripts/install-test-tools.sh first"
"$CAST" chain-id --rpc-url "$RPC" >/dev/null 2>&1 || die "no node answers at $RPC"

DEPLOYER_KEY=0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80
USER_KEY=0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d
DEPLOYER="$("$CAST" wallet address "$DEPLOYER_KEY")"
USER="$("$CAST" wallet address "$USER_KEY")"
# Amounts in whole AST (18 decimals); wei() writes them out (bash's integers stop at ~9.2e18).
wei() { if [ "$1" = 0 ]; then echo 0; else echo "${1}000000000000000000"; fi; }
FUND=1000 ALLOW=250 ZAP=100

emit() { echo "$1=$2"; }

# forge create CONTRACT [ARGS…] → the deployed address (forge compiles nothing: OUT's cache is
# fresh).
create() {
    local id="$1"; shift
    local json addr
    local args=()
    [ $# -eq 0 ] || args=(--constructor-args "$@")
    json="$(cd "$OUT" && "$FORGE" create "$id" --offline --rpc-url "$RPC" \
        --private-key "$DEPLOYER_KEY" --broadcast --json "${args[@]}" 2>&1)" \
        || die "forge create $id failed: $json"
    addr="$(sed -n 's/.*"deployedTo": *"\(0x[0-9a-fA-F]\{40\}\)".*/\1/p' <<<"$json")"
    [ -n "$addr" ] || die "forge create $id: no address in: $json"
    echo "$addr"
}

# send KEY TO SIG [ARGS…] → the transaction hash, once mined with status 1.
send() {
    local key="$1" to="$2"; shift 2
    local json tx
    json="$("$CAST" send --rpc-url "$RPC" --private-key "$key" --json "$to" "$@" 2>&1)" \
        || die "cast send $to $* failed: $json"
    grep -q '"status":"0x1"' <<<"$json" || die "cast send $to $*: reverted: $json"
    tx="$(sed -n 's/.*"transactionHash":"\(0x[0-9a-f]\{64\}\)".*/\1/p' <<<"$json")"
    [ -n "$tx" ] || die "cast send $to $*: no transaction hash in: $json"
    echo "$tx"
}

# call TO SIG [ARGS…] → the first returned value, without cast's "[1e20]" gloss.
call() {
    local to="$1"; shift
    "$CAST" call --rpc-url "$RPC" "$to" "$@" | head -n1 | awk '{print $1}'
}

expect() { # what got want
    [ "$2" = "$3" ] || die "$1: got $2, want $3"
    log "ok: $1 = $2"
}

log "deploying forge-world from $OUT to $RPC"
ASSET="$(create src/Asset.sol:Asset)"
VAULT="$(create src/Vault.sol:Vault "$ASSET")"
LEDGER_IMPL="$(create src/Ledger.sol:Ledger)"
INIT="$("$CAST" calldata 'initialize(address)' "$DEPLOYER")"
LEDGER="$(create node_modules/@openzeppelin/contracts/proxy/ERC1967/ERC1967Proxy.sol:ERC1967Proxy \
    "$LEDGER_IMPL" "$INIT")"
ROUTER="$(create src/Router.sol:Router "$ASSET" "$VAULT" "$LEDGER")"
emit DEPLOYER "$DEPLOYER"
emit USER "$USER"
emit ASSET "$ASSET"
emit VAULT "$VAULT"
emit LEDGER_IMPL "$LEDGER_IMPL"
emit LEDGER "$LEDGER"
emit ROUTER "$ROUTER"

# (Each hash is assigned before it is printed: a failed $(send …) then stops the script.)
SET_ROUTER_TX="$(send "$DEPLOYER_KEY" "$LEDGER" 'setRouter(address)' "$ROUTER")"
emit SET_ROUTER_TX "$SET_ROUTER_TX"
FUND_TX="$(send "$DEPLOYER_KEY" "$ASSET" 'transfer(address,uint256)' "$USER" "$(wei $FUND)")"
emit FUND_TX "$FUND_TX"
APPROVE_TX="$(send "$USER_KEY" "$ASSET" 'approve(address,uint256)' "$ROUTER" "$(wei $ALLOW)")"
emit APPROVE_TX "$APPROVE_TX"
ZAP_TX="$(send "$USER_KEY" "$ROUTER" 'zap(uint256)' "$(wei $ZAP)")"

# What the zap changed, read back.
expect "asset.balanceOf(user)" "$(call "$ASSET" 'balanceOf(address)(uint256)' "$USER")" \
    "$(wei $(( FUND - ZAP )))"
expect "asset.balanceOf(vault)" "$(call "$ASSET" 'balanceOf(address)(uint256)' "$VAULT")" "$(wei $ZAP)"
expect "asset.balanceOf(router)" "$(call "$ASSET" 'balanceOf(address)(uint256)' "$ROUTER")" 0
expect "asset.allowance(user, router)" \
    "$(call "$ASSET" 'allowance(address,address)(uint256)' "$USER" "$ROUTER")" \
    "$(wei $(( ALLOW - ZAP )))"
expect "asset.allowance(router, vault)" \
    "$(call "$ASSET" 'allowance(address,address)(uint256)' "$ROUTER" "$VAULT")" 0
SHARES="$(call "$VAULT" 'balanceOf(address)(uint256)' "$USER")"
expect "vault.balanceOf(user)" "$SHARES" "$(wei $ZAP)"
expect "vault.totalSupply()" "$(call "$VAULT" 'totalSupply()(uint256)')" "$SHARES"
expect "vault.totalAssets()" "$(call "$VAULT" 'totalAssets()(uint256)')" "$(wei $ZAP)"
expect "ledger.credits(user)" "$(call "$LEDGER" 'credits(address)(uint256)' "$USER")" "$SHARES"
expect "ledger.count()" "$(call "$LEDGER" 'count()(uint64)')" 1
expect "ledger.balanceOf(user)" "$(call "$LEDGER" 'balanceOf(address)(uint256)' "$USER")" "$SHARES"
expect "ledger.owner()" "$(call "$LEDGER" 'owner()(address)')" "$DEPLOYER"
expect "ledger.router()" "$(call "$LEDGER" 'router()(address)')" "$ROUTER"
# The same, as the proxy's storage holds it: the implementation in ERC-1967's slot, and the
# chaintrace.ledger namespace's second slot packing count (uint64, low bytes) and router.
low() { tr 'A-F' 'a-f' <<<"${1#0x}"; }
expect "proxy storage[ERC-1967 implementation]" \
    "$("$CAST" storage --rpc-url "$RPC" "$LEDGER" 0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc)" \
    "0x000000000000000000000000$(low "$LEDGER_IMPL")"
expect "proxy storage[chaintrace.ledger + 1] (router, count)" \
    "$("$CAST" storage --rpc-url "$RPC" "$LEDGER" 0x662746c8c838cb7a4d7d7350ebf98ce393408630f5321ac420b05972f637a301)" \
    "0x00000000$(low "$ROUTER")0000000000000001"

emit SHARES "$SHARES"
emit ZAP_TX "$ZAP_TX"
log "ok: one zap moved 100 AST from $USER into the vault and credited the ledger behind its proxy"
