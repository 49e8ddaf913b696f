//! Where it failed, on optimized production code: Uniswap v3 core at its v1.0.0 tag, built as
//! Uniswap builds it (solc 0.7.6, optimizer 800 runs, `bytecodeHash: none`; solc's own
//! standard-JSON output committed, see `scripts/build-srcmap-contracts.sh`), deployed on the
//! pinned anvil and driven through Uniswap's own test callers (`TestUniswapV3Callee`,
//! `TestUniswapV3SwapPay`), as its own test suite drives the pool.
//!
//! solc 0.7.6 reports, for the pool (which the factory of the same build creates with `new`), a
//! source map of its assembly optimized a second time, not of its bytecode: read as it is, every
//! `require` lands on the next one. chaintrace sees that the map does not fit the code and
//! rebuilds it with a solc of the build's version — here solc-js 0.7.6 behind a `solc` stand-in
//! (scripts/install-test-tools.sh), laid out where Foundry's svm keeps compilers. Without a
//! compiler it says so and shows no pool line at all.
//!
//! The expected location of every revert is the `require` holding the reason printed, found in
//! the `.sol` text by the test; the expected Solidity stack is the functions that really ran,
//! each at its call expression, also found in the text — never taken from chaintrace's output.

use crate::state_changes::{change_of, read_back, word};
use crate::{anvil, run};
use std::path::{Path, PathBuf};

use alloy_primitives::{Address, U256};
use anvil::{calldata, hex0x, w_addr, w_u, with_ctor_args, Anvil, Word};
use serde_json::{json, Value};

const DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/contracts/uniswap-v3-core"
);
const POOL: &str = "contracts/UniswapV3Pool.sol";
const CALLEE: &str = "contracts/test/TestUniswapV3Callee.sol";
const SWAP_PAY: &str = "contracts/test/TestUniswapV3SwapPay.sol";
/// TickMath.MIN_SQRT_RATIO.
const MIN_SQRT_RATIO: u128 = 4_295_128_739;
/// 1.0 as a Q64.96 square root price.
const PRICE_ONE: u128 = 1 << 96;

fn output() -> Value {
    let text = std::fs::read_to_string(Path::new(DIR).join("solc-output.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn creation(out: &Value, file: &str, name: &str) -> String {
    out["contracts"][file][name]["evm"]["bytecode"]["object"]
        .as_str()
        .unwrap_or_else(|| panic!("{file}:{name} in the solc output"))
        .to_string()
}

fn text(file: &str) -> String {
    std::fs::read_to_string(Path::new(DIR).join(file)).unwrap()
}

/// `file:line:column` (columns from 1) of byte `offset` of `file`.
fn position(file: &str, offset: usize) -> String {
    let t = text(file);
    let line = t[..offset].matches('\n').count() + 1;
    let start = t[..offset].rfind('\n').map_or(0, |i| i + 1);
    format!("{file}:{line}:{}", t[start..offset].chars().count() + 1)
}

/// Byte offset of the `n`th (from 0) occurrence of `needle` in `file`, after `after` if given.
fn find(file: &str, needle: &str, n: usize, after: Option<&str>) -> usize {
    let t = text(file);
    let from = after.map_or(0, |a| {
        t.find(a).unwrap_or_else(|| panic!("{a:?} in {file}"))
    });
    let mut at = from;
    for _ in 0..=n {
        let i = t[at..]
            .find(needle)
            .unwrap_or_else(|| panic!("{needle:?} ({n}) not in {file}"));
        at += i + needle.len();
    }
    at - needle.len()
}

/// The `require(` statement holding the `n`th `'reason'` of the pool: where a revert with that
/// reason must be located.
fn require_of(reason: &str, n: usize) -> String {
    let t = text(POOL);
    let r = find(POOL, &format!("'{reason}'"), n, None);
    let stmt = t[..r]
        .rfind("require(")
        .expect("a require before the reason");
    position(POOL, stmt)
}

/// The call expression `needle` inside function `function` (its declaration text).
fn call_in(file: &str, function: &str, needle: &str) -> String {
    position(file, find(file, needle, 0, Some(function)))
}

fn w_i(v: i128) -> Word {
    let x = if v < 0 {
        U256::ZERO.wrapping_sub(U256::from(v.unsigned_abs()))
    } else {
        U256::from(v as u128)
    };
    x.to_be_bytes()
}

/// A home directory with solc 0.7.6 where Foundry's svm keeps it (`with_solc`), or none.
fn home(with_solc: bool) -> PathBuf {
    // One directory per call: tests run in parallel in one process.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "chaintrace-uniswap-home-{}-{n}-{with_solc}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    if with_solc {
        let stand_in = Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/solc-0.7.6/solc");
        assert!(
            stand_in.is_file(),
            "{} is missing: run scripts/install-test-tools.sh",
            stand_in.display()
        );
        let svm = dir.join(".svm/0.7.6");
        std::fs::create_dir_all(&svm).unwrap();
        std::os::unix::fs::symlink(&stand_in, svm.join("solc-0.7.6")).unwrap();
    }
    dir
}

struct Uni {
    anvil: Anvil,
    home: PathBuf,
    me: Address,
    pool: Address,
    callee: Address,
    swap_pay: Address,
    tokens: [Address; 2],
}

fn send(anvil: &Anvil, to: Address, data: Vec<u8>) -> Value {
    let (h, r) = anvil.send_and_wait(json!({
        "to": to, "data": hex0x(&data), "gas": "0x989680",
    }));
    assert_eq!(r["status"], "0x1", "setup transaction {h:?} failed: {r}");
    r
}

fn word_address(hex: &str) -> Address {
    let h = hex.trim_start_matches("0x");
    h[h.len() - 40..].parse().unwrap()
}

/// Two tokens, the factory, a 0.3% pool at price 1 with liquidity around it, and the callers.
fn uniswap() -> Uni {
    let anvil = Anvil::start();
    let out = output();
    let me = anvil.sender();
    let supply = w_u(10u128.pow(30));
    let erc20 = creation(&out, "contracts/test/TestERC20.sol", "TestERC20");
    let a = anvil.deploy(&with_ctor_args(&erc20, &[supply]));
    let b = anvil.deploy(&with_ctor_args(&erc20, &[supply]));
    let factory = anvil.deploy(&creation(
        &out,
        "contracts/UniswapV3Factory.sol",
        "UniswapV3Factory",
    ));
    let create = calldata(
        "createPool(address,address,uint24)",
        &[w_addr(a), w_addr(b), w_u(3000)],
    );
    send(&anvil, factory, create);
    let pool = word_address(&anvil.call(
        factory,
        &calldata(
            "getPool(address,address,uint24)",
            &[w_addr(a), w_addr(b), w_u(3000)],
        ),
    ));
    assert_ne!(pool, Address::ZERO, "the factory made the pool");
    send(
        &anvil,
        pool,
        calldata("initialize(uint160)", &[w_u(PRICE_ONE)]),
    );
    let callee = anvil.deploy(&creation(&out, CALLEE, "TestUniswapV3Callee"));
    let swap_pay = anvil.deploy(&creation(&out, SWAP_PAY, "TestUniswapV3SwapPay"));
    for token in [a, b] {
        for spender in [callee, swap_pay] {
            send(
                &anvil,
                token,
                calldata(
                    "approve(address,uint256)",
                    &[w_addr(spender), w_u(u128::MAX)],
                ),
            );
        }
    }
    // Liquidity between ticks -600 and 600, so that swaps and flash loans move tokens.
    send(
        &anvil,
        callee,
        calldata(
            "mint(address,address,int24,int24,uint128)",
            &[
                w_addr(pool),
                w_addr(me),
                w_i(-600),
                w_i(600),
                w_u(10u128.pow(18)),
            ],
        ),
    );
    Uni {
        anvil,
        home: home(true),
        me,
        pool,
        callee,
        swap_pay,
        tokens: [a, b],
    }
}

impl Uni {
    fn fail(&self, to: Address, data: Vec<u8>) -> String {
        let (h, r) = self.anvil.send_and_wait(json!({
            "to": to, "data": hex0x(&data), "gas": "0x989680",
        }));
        assert_eq!(r["status"], "0x0", "expected a failure, got {r}");
        format!("{h:?}")
    }

    fn tree(&self, hash: &str) -> String {
        self.run_in(hash, &self.home).stdout
    }

    /// `tx HASH --abi <solc output>` with `home` as HOME (where a solc may be found).
    fn run_in(&self, hash: &str, home: &Path) -> run::Run {
        let abi = format!("{DIR}/solc-output.json");
        let cache = home.join(".cache");
        let r = run::cmd(&["tx", hash, "--rpc-url", self.anvil.url(), "--abi", &abi])
            .no_cache()
            .env("HOME", home.to_str().unwrap())
            .env("XDG_CACHE_HOME", cache.to_str().unwrap())
            .env_remove("CHAINTRACE_SOLC")
            .run();
        assert_eq!(r.code, 3, "chaintrace: {}", r.stderr);
        r
    }

    fn mint(&self, lower: i128, upper: i128) -> Vec<u8> {
        calldata(
            "mint(address,address,int24,int24,uint128)",
            &[
                w_addr(self.pool),
                w_addr(self.me),
                w_i(lower),
                w_i(upper),
                w_u(1000),
            ],
        )
    }
}

/// The `Solidity stack trace:` lines after the tree.
fn stack(tree: &str) -> Vec<String> {
    tree.lines()
        .skip_while(|l| *l != "Solidity stack trace:")
        .skip(1)
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// The first tree line of a frame into the pool (`→ UniswapV3Pool…` or the top frame).
fn pool_frame(tree: &str) -> &str {
    tree.lines()
        .find(|l| l.contains("UniswapV3Pool") && l.contains(" at "))
        .unwrap_or_else(|| panic!("no located pool frame in\n{tree}"))
}

/// A number as the stack trace prints an argument: with a short form beside it from 1,000,000 on
/// (`-8873400 [-8.8734e6]`), as cast prints amounts.
fn num(v: i128) -> String {
    let digits = v.unsigned_abs().to_string();
    if v.unsigned_abs() < 1_000_000 {
        return v.to_string();
    }
    let sign = if v < 0 { "-" } else { "" };
    let mantissa = digits.trim_end_matches('0');
    let short = match mantissa.len() {
        1 => mantissa.to_string(),
        _ => format!("{}.{}", &mantissa[..1], &mantissa[1..mantissa.len().min(5)]),
    };
    format!("{v} [{sign}{short}e{}]", digits.len() - 1)
}

/// The callee's frame at the call into the pool (`IUniswapV3Pool(pool).<what>(`), with its
/// arguments (`args`: already formatted, from the transaction's own inputs).
fn callee_at(function: &str, what: &str, args: &str) -> String {
    format!(
        "at TestUniswapV3Callee.{function}({args}) ({})",
        call_in(
            CALLEE,
            &format!("function {function}("),
            &format!("IUniswapV3Pool(pool).{what}(")
        )
    )
}

#[test]
fn optimized_uniswap_reverts_are_placed_at_their_require() {
    let u = uniswap();
    let mut failures = Vec::new();
    let mut check = |what: &str, tree: &str, at: &str, want_stack: Vec<String>| {
        let frame = pool_frame(tree);
        if !frame.ends_with(&format!(" at {at}")) {
            failures.push(format!(
                "{what}: the pool frame is placed wrong, want {at}:\n{tree}"
            ));
        }
        let got = stack(tree);
        if got != want_stack {
            failures.push(format!(
                "{what}: Solidity stack\n  got  {got:#?}\n  want {want_stack:#?}\n{tree}"
            ));
        }
    };

    // checkTicks' three requires share one revert tail.
    let modify = call_in(
        POOL,
        "function _modifyPosition(",
        "checkTicks(params.tickLower",
    );
    let mint_call = call_in(POOL, "function mint(", "_modifyPosition(");
    for (reason, lower, upper) in [("TLU", 60, 0), ("TLM", -887_340, 0), ("TUM", 0, 887_340)] {
        let tree = u.tree(&u.fail(u.callee, u.mint(lower, upper)));
        let at = require_of(reason, 0);
        let (lower, upper) = (num(lower), num(upper));
        // Value types are read; a struct in memory and the pool's external mint (its `bytes
        // calldata` makes the dispatcher's layout uncertain) are named only.
        check(
            reason,
            &tree,
            &at,
            vec![
                format!(
                    "at UniswapV3Pool.checkTicks(tickLower: {lower}, tickUpper: {upper}) ({at})"
                ),
                format!("at UniswapV3Pool._modifyPosition(params) ({modify})"),
                format!(
                    "at UniswapV3Pool.mint(recipient, tickLower, tickUpper, amount, data) \
                     ({mint_call}), reached by CALL"
                ),
                callee_at(
                    "mint",
                    "mint",
                    &format!(
                        "pool: {}, recipient: {}, tickLower: {lower}, tickUpper: {upper}, \
                         amount: 1000",
                        u.pool.to_checksum(None),
                        u.me.to_checksum(None)
                    ),
                ),
            ],
        );
    }

    // A second initialize: the top frame is the pool.
    let tree = u.tree(&u.fail(u.pool, calldata("initialize(uint160)", &[w_u(PRICE_ONE)])));
    let at = require_of("AI", 0);
    check(
        "AI",
        &tree,
        &at,
        vec![format!(
            "at UniswapV3Pool.initialize(sqrtPriceX96: {}) ({at})",
            num(PRICE_ONE as i128)
        )],
    );

    // A zero amount, then a price limit on the wrong side of the price.
    let swap = |amount: u128, limit: u128| {
        calldata(
            "swapExact0For1(address,uint256,address,uint160)",
            &[w_addr(u.pool), w_u(amount), w_addr(u.me), w_u(limit)],
        )
    };
    for (reason, amount, limit) in [("AS", 0, MIN_SQRT_RATIO + 1), ("SPL", 1000, PRICE_ONE + 1)] {
        let tree = u.tree(&u.fail(u.callee, swap(amount, limit)));
        let at = require_of(reason, 0);
        check(
            reason,
            &tree,
            &at,
            vec![
                format!(
                    "at UniswapV3Pool.swap(recipient, zeroForOne, amountSpecified, \
                     sqrtPriceLimitX96, data) ({at}), reached by CALL"
                ),
                callee_at(
                    "swapExact0For1",
                    "swap",
                    &format!(
                        "pool: {}, amount0In: {}, recipient: {}, sqrtPriceLimitX96: {}",
                        u.pool.to_checksum(None),
                        num(amount as i128),
                        u.me.to_checksum(None),
                        num(limit as i128)
                    ),
                ),
            ],
        );
    }

    // The swap callback pays 1 of the 1000 asked: the first 'IIA' (zeroForOne).
    let data = calldata(
        "swap(address,address,bool,uint160,int256,uint256,uint256)",
        &[
            w_addr(u.pool),
            w_addr(u.me),
            w_u(1),
            w_u(MIN_SQRT_RATIO + 1),
            w_i(1000),
            w_u(1),
            w_u(0),
        ],
    );
    let tree = u.tree(&u.fail(u.swap_pay, data));
    let at = require_of("IIA", 0);
    check(
        "IIA",
        &tree,
        &at,
        vec![
            format!(
                "at UniswapV3Pool.swap(recipient, zeroForOne, amountSpecified, \
                 sqrtPriceLimitX96, data) ({at}), reached by CALL"
            ),
            format!(
                "at TestUniswapV3SwapPay.swap(pool: {}, recipient: {}, zeroForOne: true, \
                 sqrtPriceX96: {}, amountSpecified: 1000, pay0: 1, pay1: 0) ({})",
                u.pool.to_checksum(None),
                u.me.to_checksum(None),
                num((MIN_SQRT_RATIO + 1) as i128),
                call_in(SWAP_PAY, "function swap(", "IUniswapV3Pool(pool).swap(")
            ),
        ],
    );

    // A flash loan whose callback pays no fee.
    let data = calldata(
        "flash(address,address,uint256,uint256,uint256,uint256)",
        &[
            w_addr(u.pool),
            w_addr(u.me),
            w_u(1000),
            w_u(0),
            w_u(0),
            w_u(0),
        ],
    );
    let tree = u.tree(&u.fail(u.callee, data));
    let at = require_of("F0", 0);
    check(
        "F0",
        &tree,
        &at,
        vec![
            format!(
                "at UniswapV3Pool.flash(recipient, amount0, amount1, data) ({at}), reached by CALL"
            ),
            callee_at(
                "flash",
                "flash",
                &format!(
                    "pool: {}, recipient: {}, amount0: 1000, amount1: 0, pay0: 0, pay1: 0",
                    u.pool.to_checksum(None),
                    u.me.to_checksum(None)
                ),
            ),
        ],
    );

    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_map_that_does_not_fit_is_said_and_never_read() {
    let u = uniswap();
    let h = u.fail(u.callee, u.mint(60, 0));
    // The stand-in found where Foundry keeps compilers: the map is rebuilt, and the note says so.
    let r = u.run_in(&h, &u.home);
    assert!(
        r.stderr
            .contains("the source map of UniswapV3Pool does not fit its code")
            && r.stderr.contains("rebuilt with"),
        "{}",
        r.stderr
    );
    // No compiler anywhere (HOME empty, PATH without solc): said once, and no pool line shown.
    let bare = home(false);
    let abi = format!("{DIR}/solc-output.json");
    let r = run::cmd(&["tx", &h, "--rpc-url", u.anvil.url(), "--abi", &abi])
        .no_cache()
        .env("HOME", bare.to_str().unwrap())
        .env("XDG_CACHE_HOME", bare.join(".cache").to_str().unwrap())
        .env("PATH", "/nonexistent")
        .env_remove("CHAINTRACE_SOLC")
        .run();
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert_eq!(
        r.stderr
            .matches("no source locations in UniswapV3Pool")
            .count(),
        1,
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("no solc 0.7.6 was found"), "{}", r.stderr);
    assert!(
        !r.stdout.contains("UniswapV3Pool.sol:"),
        "a pool line was read from the map that does not fit:\n{}",
        r.stdout
    );
    // The callee's own map fits: its line is still shown.
    assert!(
        r.stdout.contains("TestUniswapV3Callee.sol:"),
        "{}",
        r.stdout
    );
}

/// `tx HASH --json --decode`'s `stateChanges` with `home` as HOME (a solc there or not), and its
/// stderr.
fn named_changes(u: &Uni, hash: &str, home: &Path) -> (Value, String) {
    let abi = format!("{DIR}/solc-output.json");
    let cache = home.join(".cache");
    let args = ["tx", hash, "--rpc-url", u.anvil.url(), "--abi", &abi];
    let r = run::cmd(&[&args[..], &["--json", "--decode"]].concat())
        .no_cache()
        .env("HOME", home.to_str().unwrap())
        .env("XDG_CACHE_HOME", cache.to_str().unwrap())
        .env_remove("CHAINTRACE_SOLC")
        .run();
    assert_eq!(r.code, 0, "chaintrace: {}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    (v["stateChanges"].clone(), r.stderr)
}

/// A swap and a mint through Uniswap's own callers, named by the pool's layout computed from the
/// build's AST (the committed build has no `storageLayout`; no solc at hand) and by the layout
/// compiled from its metadata with solc 0.7.6 where svm keeps it: the same changes, every name
/// and value read back from anvil — the packed `slot0`'s price and tick by the pool's `slot0()`
/// getter, the fee growth by `feeGrowthGlobal0X128()`, each token's `balanceOf[…]` by
/// `balanceOf`, the mint's `ticks[-1200]`, `positions[keccak256(owner, lower, upper)]` and
/// `liquidity` by their getters, and each variable's bytes by `eth_getStorageAt` of its slot.
#[test]
fn a_swaps_state_changes_are_named_by_the_pools_layout_from_its_ast() {
    let u = uniswap();
    let r = send(
        &u.anvil,
        u.callee,
        calldata(
            "swapExact0For1(address,uint256,address,uint160)",
            &[
                w_addr(u.pool),
                w_u(10u128.pow(15)),
                w_addr(u.me),
                w_u(MIN_SQRT_RATIO + 1),
            ],
        ),
    );
    let swap = r["transactionHash"].as_str().unwrap().to_string();
    let (computed, notes) = named_changes(&u, &swap, &home(false));
    assert!(
        notes.lines().any(|l| l.starts_with(
            "note: the build has no storageLayout for UniswapV3Pool, and none was compiled: no solc 0.7.6 was found"
        ) && l.ends_with("; computed from its AST by solc's rules")),
        "{notes}"
    );
    assert_eq!(
        notes.matches("storageLayout for TestERC20").count(),
        1,
        "{notes}"
    );
    let (compiled, notes) = named_changes(&u, &swap, &u.home);
    assert!(
        notes.contains(
            "the build has no storageLayout for UniswapV3Pool: compiled from its metadata with"
        ),
        "{notes}"
    );
    assert_eq!(computed, compiled);

    let slot0 = u.anvil.call(u.pool, &calldata("slot0()", &[]));
    assert_eq!(
        change_of(&computed, u.pool, "slot0.sqrtPriceX96")["after"],
        word(&slot0, 0).to_string()
    );
    // int24: the word's low 24 bits, sign-extended.
    let tick = ((word(&slot0, 1) & U256::from(0xff_ffffu32)).to::<u32>() as i32) << 8 >> 8;
    assert_eq!(
        change_of(&computed, u.pool, "slot0.tick")["after"],
        tick.to_string()
    );
    let fee = u
        .anvil
        .call(u.pool, &calldata("feeGrowthGlobal0X128()", &[]));
    assert_eq!(
        change_of(&computed, u.pool, "feeGrowthGlobal0X128")["after"],
        word(&fee, 0).to_string()
    );
    for token in u.tokens {
        for holder in [u.pool, u.me] {
            let name = format!("balanceOf[{}]", holder.to_checksum(None));
            let got = u
                .anvil
                .call(token, &calldata("balanceOf(address)", &[w_addr(holder)]));
            assert_eq!(
                change_of(&computed, token, &name)["after"],
                word(&got, 0).to_string(),
                "{name}"
            );
        }
    }
    let swap_read = read_back(&u.anvil, &computed);

    // A position between ticks -1200 and 1200, the price inside it.
    let amount = 10u128.pow(16);
    let r = send(
        &u.anvil,
        u.callee,
        calldata(
            "mint(address,address,int24,int24,uint128)",
            &[
                w_addr(u.pool),
                w_addr(u.me),
                w_i(-1200),
                w_i(1200),
                w_u(amount),
            ],
        ),
    );
    let mint = r["transactionHash"].as_str().unwrap().to_string();
    let (minted, _) = named_changes(&u, &mint, &home(false));
    let tick = u
        .anvil
        .call(u.pool, &calldata("ticks(int24)", &[w_i(-1200)]));
    assert_eq!(
        change_of(&minted, u.pool, "ticks[-1200].liquidityGross")["after"],
        word(&tick, 0).to_string()
    );
    assert_eq!(word(&tick, 0), U256::from(amount));
    assert_eq!(
        change_of(&minted, u.pool, "ticks[1200].initialized")["after"],
        "true"
    );
    // Position.get: keccak256(abi.encodePacked(owner, tickLower, tickUpper)).
    let mut packed = u.me.to_vec();
    packed.extend_from_slice(&(-1200i32).to_be_bytes()[1..]);
    packed.extend_from_slice(&1200i32.to_be_bytes()[1..]);
    let key = alloy_primitives::keccak256(&packed);
    let position = u
        .anvil
        .call(u.pool, &calldata("positions(bytes32)", &[key.0]));
    assert_eq!(
        change_of(&minted, u.pool, &format!("positions[{key}].liquidity"))["after"],
        word(&position, 0).to_string()
    );
    let liquidity = u.anvil.call(u.pool, &calldata("liquidity()", &[]));
    assert_eq!(
        change_of(&minted, u.pool, "liquidity")["after"],
        word(&liquidity, 0).to_string()
    );
    let mint_read = read_back(&u.anvil, &minted);
    let names = |l: &Value| -> Vec<String> {
        l.as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect()
    };
    eprintln!(
        "uniswap: the swap's {} changes ({:?}), {swap_read} read back by eth_getStorageAt; the \
         mint's {} ({:?}), {mint_read} read back",
        computed.as_array().unwrap().len(),
        names(&computed),
        minted.as_array().unwrap().len(),
        names(&minted),
    );
    assert!(swap_read >= 6 && mint_read >= 6, "{swap_read} {mint_read}");
}
