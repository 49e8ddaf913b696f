//! Constructors are frames of the Solidity stack trace (an inherited one folded into the
//! contract's, as EDR shows it): `tests/contracts/srcmap/Ctor.sol`'s
//! `Guarded` fails in an inherited constructor's internal function, in a modifier of its
//! constructor, in an internal function its constructor calls and in an external call its
//! constructor makes — each deployed by a transaction and by `new` from `Maker`. Expected
//! locations are found in the `.sol` text, argument values are the ones the transaction sent.

use crate::anvil::{calldata, hex0x, w_addr, w_u, with_ctor_args, Anvil, EXPLICIT_GAS};
use crate::sources_live::{at, code, failed_tree, frame_lines, output, stack};
use serde_json::json;

/// The stack of `Guarded`'s constructor failing with `x`, innermost first, down to the
/// constructor (without how its frame was reached).
fn constructor_stack(x: u64) -> Vec<String> {
    let c = |needle: &str| at("Ctor.sol", needle, None);
    let ctor = |needle: &str| format!("at Guarded.constructor ({})", c(needle));
    match x {
        // An inherited constructor is the contract's own, as EDR shows it: Origin's body is
        // `Guarded.constructor` there, its internal function named by Guarded.
        1 => vec![
            format!("at Guarded._checkOrigin(a: 1) ({})", c("require(a != 1")),
            ctor("_checkOrigin(a)"),
        ],
        2 => vec![
            format!("at Guarded.notTwo ({})", c("require(x != 2")),
            ctor("notTwo(x)"),
        ],
        3 => vec![
            format!("at Guarded._init(x: 3) ({})", c("require(x != 3")),
            ctor("_init(x)"),
        ],
        4 => vec![
            format!(
                "at Callee.poke(x: 4) ({}), reached by STATICCALL",
                c("require(x != 4")
            ),
            ctor("Callee(callee).poke(x)"),
        ],
        _ => unreachable!(),
    }
}

#[test]
fn a_failing_constructor_is_a_frame_of_the_stack_trace() {
    let anvil = Anvil::start();
    let out = output("solc-output.json");
    let callee = anvil.deploy(&code(&out, "Ctor.sol", "Callee"));
    let maker = anvil.deploy(&code(&out, "Ctor.sol", "Maker"));
    let guarded = code(&out, "Ctor.sol", "Guarded");
    let reasons = [
        "origin: one",
        "guarded: two",
        "guarded: three",
        "callee: four",
    ];
    for x in 1..=4u64 {
        let reason = reasons[x as usize - 1];
        let expected = constructor_stack(x);

        // Deployed by a transaction: the constructor is the outermost frame.
        let init = with_ctor_args(&guarded, &[w_u(x as u128), w_addr(callee)]);
        let tree = failed_tree(
            &anvil,
            json!({"data": format!("0x{}", init.trim_start_matches("0x")),
                   "gas": format!("{EXPLICIT_GAS:#x}")}),
        );
        assert!(tree.contains(&format!("Error(\"{reason}\")")), "{tree}");
        assert_eq!(stack(&tree), expected, "x = {x}\n{tree}");
        // The deployment is named by the artifact its init code starts with, its constructor's
        // arguments decoded from what follows.
        let created = format!("new Guarded(x: {x}, callee: {callee})");
        assert!(tree.lines().next().unwrap().contains(&created), "{tree}");
        // The tree's CREATE line is at the same place as the stack's innermost entry of it.
        let (line, _, _) = frame_lines(&tree, "CREATE ");
        let innermost = if x == 4 {
            c_at(&expected[1])
        } else {
            c_at(&expected[0])
        };
        assert!(
            line.ends_with(&format!(" at {innermost}")),
            "x = {x}\n{tree}"
        );

        // By `new` from Maker: the constructor reached by CREATE, under Maker.make.
        let data = calldata("make(uint256,address)", &[w_u(x as u128), w_addr(callee)]);
        let tree = failed_tree(
            &anvil,
            json!({"to": maker, "data": hex0x(&data), "gas": format!("{EXPLICIT_GAS:#x}")}),
        );
        let mut want = expected.clone();
        if let Some(last) = want.last_mut() {
            last.push_str(", reached by CREATE");
        }
        want.push(format!(
            "at Maker.make(x: {x}, callee: {callee}) ({})",
            at("Ctor.sol", "new Guarded(x, callee)", None)
        ));
        assert_eq!(stack(&tree), want, "x = {x}\n{tree}");
        let (line, _, _) = frame_lines(&tree, "CREATE ");
        assert!(
            line.contains(&format!("Maker → (no address) {created}")),
            "{tree}"
        );
    }
}

/// The `file:line:column` of a stack line `at F (file:line:column)[, reached by …]`.
fn c_at(entry: &str) -> String {
    let open = entry.find(" (").expect("a location");
    let rest = &entry[open + 2..];
    rest[..rest.find(')').expect("closed")].to_string()
}
