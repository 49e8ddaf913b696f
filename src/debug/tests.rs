//! Each key's effect on the step model (step, pc, depth, source line), on the bundled fixture
//! (`fixtures/reverted-nested.json`: Hub.failNested → this.failInner → Reverter.failCustom,
//! which reverts) with its contracts' build beside it. Expected lines are found in the `.sol`
//! files, not taken from the model.

use revm::bytecode::opcode::{REVERT, SSTORE};

use super::model::Breakpoint;
use super::{panes, Session, Target};
use crate::names::Names;
use crate::replay::{fixture_env, fixture_snapshot, fixture_tx};
use crate::source::fixture::Fixture;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn session() -> Session {
    let fx = Fixture::load(&format!("{ROOT}/fixtures/reverted-nested.json")).unwrap();
    let build = format!("{ROOT}/fixtures/reverted-nested.build-info.json");
    let names = Names::load(&[build], &[], None).unwrap();
    let snapshot = fixture_snapshot(&fx);
    let target = Target {
        env: fixture_env(&fx, None),
        tx: fixture_tx(&fx).unwrap(),
        snapshot,
        pre: Default::default(),
        index: None,
    };
    let decoder = names.decoder();
    Session::open(target, names, decoder, "fixture".into()).unwrap()
}

/// The 1-based line of `file` (tests/contracts) holding `needle`.
fn line(file: &str, needle: &str) -> usize {
    let text = std::fs::read_to_string(format!("{ROOT}/tests/contracts/{file}")).unwrap();
    text.lines().position(|l| l.contains(needle)).unwrap() + 1
}

fn depth(s: &Session, i: usize) -> u16 {
    s.model.log.frames[s.model.log.frame(i) as usize].depth
}

fn at_line(s: &Session, file: &str, n: usize, frame: u32) -> usize {
    (0..s.model.len())
        .find(|&i| {
            s.model.log.frame(i) == frame && s.model.source_line(i) == Some((file.into(), n))
        })
        .unwrap_or_else(|| panic!("no step at {file}:{n} in frame {frame}"))
}

#[test]
fn the_failure_is_the_innermost_revert() {
    let s = session();
    let f = s.model.failure_step().unwrap();
    assert_eq!(s.model.log.op(f), REVERT);
    assert_eq!(depth(&s, f), 2);
    // The REVERT is the optimizer's revert tail, which the map gives to another `require`
    // (Helpers.sol:55); the source pane places it as `tx` does: at the `revert` that ran.
    let want = line("Helpers.sol", "revert Custom(code, msg.sender");
    let (title, lines) = panes::source(&s, &s.view(f).unwrap(), 9);
    assert!(
        title.starts_with(&format!("Helpers.sol:{want}:")),
        "{title}"
    );
    let shown = lines
        .iter()
        .map(|l| l.to_string())
        .find(|l| l.contains("revert Custom("));
    assert!(shown.unwrap().starts_with(&format!("{want:>5} │ ")));
    // The frame's last step, and its first.
    assert_eq!(s.model.frame_end(f), f);
    let start = s.model.frame_start(f);
    assert_eq!(s.model.log.pc(start), 0);
    assert_eq!(depth(&s, start), 2);
    assert_eq!(s.model.frame_end(start), f);
}

#[test]
fn opcode_keys_move_one_step() {
    let s = session();
    let last = s.model.len() - 1;
    assert_eq!(s.model.next_op(0), 1);
    assert_eq!(s.model.prev_op(1), 0);
    assert_eq!(s.model.prev_op(0), 0);
    assert_eq!(s.model.next_op(last), last);
    let f = s.model.failure_step().unwrap();
    // One step back from the REVERT: same frame, the pc before.
    let b = s.model.prev_op(f);
    assert_eq!(s.model.log.frame(b), s.model.log.frame(f));
    assert!(s.model.log.pc(b) < s.model.log.pc(f));
}

#[test]
fn line_keys_move_to_another_line_and_back() {
    let s = session();
    let call = line("Hub.sol", "this.failInner(code);");
    let i = at_line(&s, "Hub.sol", call, 0);
    let j = s.model.next_line(i);
    assert!(j > i);
    let moved = s.model.log.frame(j) != 0 || s.model.source_line(j) != s.model.source_line(i);
    assert!(moved, "next line stayed on Hub.sol:{call}");
    // Back to where the line began.
    let k = s.model.prev_line(j);
    assert_eq!(s.model.source_line(k), s.model.source_line(i));
    // Line by line from the call, the next frame entered is the callee's (depth 1).
    let mut x = i;
    while s.model.log.frame(x) == 0 {
        x = s.model.next_line(x);
    }
    assert_eq!(depth(&s, x), 1);
}

#[test]
fn step_over_runs_calls_through_and_step_out_returns_to_the_caller() {
    let s = session();
    let call = line("Hub.sol", "this.failInner(code);");
    let i = at_line(&s, "Hub.sol", call, 0);
    // Over the call: never in a deeper frame, whatever line comes next.
    let mut x = i;
    for _ in 0..4 {
        let y = s.model.step_over(x);
        assert_eq!(depth(&s, y), 0, "step over went into a call");
        if y == x {
            break;
        }
        x = y;
    }
    // Out of failCustom (depth 2): the caller's step after the call, at depth 1.
    let f = s.model.failure_step().unwrap();
    let out = s.model.step_out(f);
    assert_eq!(depth(&s, out), 1);
    let callee = &s.model.log.frames[s.model.log.frame(f) as usize];
    assert_eq!(out, callee.end_step as usize);
    // And out of failInner to failNested.
    assert_eq!(depth(&s, s.model.step_out(out)), 0);
}

#[test]
fn breakpoints_stop_at_their_line_and_function() {
    let mut s = session();
    let revert = line("Helpers.sol", "revert Custom(code, msg.sender");
    s.model.breakpoints = vec![Breakpoint::parse(&format!("Helpers.sol:{revert}")).unwrap()];
    let j = s.model.breakpoint(0, true).unwrap();
    assert_eq!(s.model.source_line(j), Some(("Helpers.sol".into(), revert)));
    assert_eq!(s.model.breakpoint(j, true), None);
    assert_eq!(s.model.breakpoint(s.model.len() - 1, false), Some(j));

    s.model.breakpoints = vec![Breakpoint::parse("Hub.failInner").unwrap()];
    let j = s.model.breakpoint(0, true).unwrap();
    assert_eq!(depth(&s, j), 1);
    let map = s.model.map(s.model.log.frame(j)).unwrap();
    let (_, f) = map.function_at_pc(s.model.log.pc(j)).unwrap();
    assert_eq!((f.contract.as_str(), f.name.as_str()), ("Hub", "failInner"));
    assert!(Breakpoint::parse("Hub.sol:x").is_err());
}

#[test]
fn search_finds_opcodes_and_addresses() {
    let s = session();
    let j = s.model.search(0, "sstore", true).unwrap().unwrap();
    assert_eq!(s.model.log.op(j), SSTORE);
    assert_eq!(s.model.search(j, "SSTORE", false).unwrap(), None);
    let reverter = s.model.log.frames[2].address;
    let k = s
        .model
        .search(0, &format!("{reverter:?}"), true)
        .unwrap()
        .unwrap();
    assert_eq!(k, s.model.log.frames[2].first_step as usize);
    assert!(s.model.search(0, "NOT_AN_OPCODE", true).is_err());
}

#[test]
fn the_view_at_the_revert_has_the_stack_of_tx_and_the_storage_written() {
    let s = session();
    let f = s.model.failure_step().unwrap();
    let v = s.view(f).unwrap();
    assert_eq!(v.step as usize, f);
    assert_eq!(v.op, REVERT);
    assert_eq!(v.open.len(), 3);
    let text: Vec<String> = panes::call_stack(&s, &v)
        .iter()
        .map(|l| l.to_string())
        .collect();
    let calls: Vec<&String> = text.iter().filter(|l| l.starts_with("at ")).collect();
    let at = |file: &str, needle: &str| format!("{file}:{}", line(file, needle));
    assert!(calls[0].starts_with("at Reverter.failCustom(code: 48879) (Helpers.sol:"));
    assert!(calls[0].contains(&at("Helpers.sol", "revert Custom(code, msg.sender")));
    assert!(calls[1].starts_with("at Hub.failInner(code: 48879) (Hub.sol:"));
    assert!(calls[2].starts_with("at Hub.failNested(code: 48879) (Hub.sol:"));
    assert!(calls[2].contains(&at("Hub.sol", "this.failInner(code);")));
    // `attempts += 1` read slot 0 and wrote 1 before the revert, in the current contract
    // (first); the Hub wrote its slot 1 (`counter`) before calling it. The fixture's build
    // has no storageLayout: the names come from its AST, laid out by solc's rules.
    let storage: Vec<String> = panes::storage(&s, &v)
        .iter()
        .map(|l| l.to_string())
        .collect();
    assert_eq!(
        storage,
        [
            "0x9fE4…a6e0",
            "  attempts: 0 → 1",
            "0xa513…C853",
            "  counter: 5 → 6"
        ]
    );
    // The REVERT's memory range is the custom error's encoding, returned as revert data.
    let (a, b) = panes::touched(&v).unwrap();
    assert_eq!(
        &v.memory[a..a + 4],
        &alloy_primitives::keccak256("Custom(uint256,address,string)")[..4]
    );
    assert!(b > a + 4);
}

#[test]
fn previous_lines_found_in_windows_are_those_of_a_whole_pass() {
    let s = session();
    for i in 0..s.model.len() {
        let whole = s.model.prev_line_within(i, usize::MAX);
        for width in [1, 2, 3, 7, 16] {
            assert_eq!(
                s.model.prev_line_within(i, width),
                whole,
                "step {i}, width {width}"
            );
        }
    }
}

#[test]
fn lines_walked_back_stop_where_lines_walked_forwards_did() {
    let s = session();
    let mut forward = vec![0];
    let mut i = 0;
    loop {
        let j = s.model.next_line(i);
        if j == i {
            break;
        }
        forward.push(j);
        i = j;
    }
    let mut backward = vec![i];
    while i > 0 {
        let j = s.model.prev_line(i);
        assert!(j < i, "back from {i} to {j}");
        backward.push(j);
        i = j;
    }
    backward.reverse();
    assert_eq!(backward, forward);
    // Inside a line, back is that line's first step.
    let (a, b) = (forward[1], forward[2]);
    if b > a + 1 {
        assert_eq!(s.model.prev_line(b - 1), a);
    }
}

#[test]
fn code_the_optimizer_shares_is_not_a_line_of_its_own() {
    let mut s = session();
    // failCustom's revert runs the revert tail the optimizer shares with failRequire's
    // `require` (the map gives that tail failRequire's line), which never ran here.
    let revert = line("Helpers.sol", "revert Custom(code, msg.sender");
    let require = line(
        "Helpers.sol",
        "require(x > 100, \"chaintrace: require failed\");",
    );
    let f = s.model.failure_step().unwrap();
    let frame = s.model.log.frame(f);
    assert_eq!(
        s.model.source_line(f),
        Some(("Helpers.sol".into(), require)),
        "the raw map's line of the tail"
    );
    let last_revert_line = (0..f)
        .rev()
        .find(|&j| {
            s.model.log.frame(j) == frame
                && s.model.source_line(j) == Some(("Helpers.sol".into(), revert))
        })
        .unwrap();
    // From the revert statement the next line is the caller's, not the tail's.
    let next = s.model.next_line(last_revert_line);
    assert_eq!(depth(&s, next), 1, "stopped in the shared tail");
    // Back from the caller: the revert statement's first step.
    let back = s.model.prev_line(next);
    assert_eq!(
        s.model.source_line(back),
        Some(("Helpers.sol".into(), revert))
    );
    // A breakpoint on the `require` that never ran never stops.
    s.model.breakpoints = vec![Breakpoint::parse(&format!("Helpers.sol:{require}")).unwrap()];
    assert_eq!(s.model.breakpoint(0, true), None);
}

/// Esc in the help overlay closes it and leaves the debugger open (issue 46: it quit).
#[test]
fn esc_closes_the_help_overlay_without_quitting() {
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let mut s = session();
    let mut app = super::ui::App::new();
    let press = |c| KeyEvent::new(c, KeyModifiers::NONE);
    app.key(&mut s, press(KeyCode::Char('?')));
    assert!(app.help);
    app.key(&mut s, press(KeyCode::Esc));
    assert!(!app.help && !app.quit);
    app.key(&mut s, press(KeyCode::Esc));
    assert!(app.quit);
}

/// A breakpoint nothing in the transaction reaches is said so when it is set (issue 46: it was
/// accepted silently); one that is reached is set plainly.
#[test]
fn a_breakpoint_nothing_reaches_is_said_so() {
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let mut s = session();
    let mut app = super::ui::App::new();
    let mut type_in = |app: &mut super::ui::App, text: &str| {
        app.key(
            &mut s,
            KeyEvent::new(KeyCode::Char('B'), KeyModifiers::NONE),
        );
        for c in text.chars() {
            app.key(&mut s, KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        app.key(&mut s, KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
        app.message.clone()
    };
    assert_eq!(
        type_in(&mut app, "noSuchFunction"),
        "breakpoint noSuchFunction() set, but no step of this transaction reaches it: check the \
         function name or FILE:LINE"
    );
    let line = line("Helpers.sol", "revert Custom(code, msg.sender");
    assert_eq!(
        type_in(&mut app, &format!("Helpers.sol:{line}")),
        format!("breakpoint Helpers.sol:{line} set")
    );
}

/// A successful call's output is not read as revert data (issue 46: a returned 0 showed as
/// `custom error 0x00000000`): A calls B, which returns 32 zero bytes; at A's next step the
/// return data pane says it came back from a call that succeeded.
#[test]
fn a_successful_calls_output_is_no_revert() {
    use crate::source::{AccountData, StateSnapshot};
    use alloy_primitives::{address, Bytes, U256};
    let (from, a, b) = (
        address!("00000000000000000000000000000000000000f0"),
        address!("00000000000000000000000000000000000000aa"),
        address!("00000000000000000000000000000000000000bb"),
    );
    let mut snapshot = StateSnapshot::complete();
    let account = |code: &str| AccountData {
        balance: U256::from(10u64.pow(18)),
        nonce: 1,
        code: alloy_primitives::hex::decode(code).unwrap().into(),
    };
    snapshot.insert_account(from, account(""));
    // CALL(gas, B, 0, 0, 0, 0, 32), POP, STOP.
    snapshot.insert_account(
        a,
        account(&format!(
            "602060006000600060007300{}5af15000",
            "0".repeat(36) + "bb"
        )),
    );
    // RETURN(0, 32): a uint256 0.
    snapshot.insert_account(b, account("60206000f3"));
    let fx = Fixture::load(&format!("{ROOT}/fixtures/reverted-nested.json")).unwrap();
    let target = Target {
        env: fixture_env(&fx, None).for_call(0),
        tx: crate::source::chain_data::ReplayTx::simulated(
            from,
            Some(a),
            Bytes::new(),
            U256::ZERO,
            100_000,
            0,
        ),
        snapshot,
        pre: Default::default(),
        index: None,
    };
    let names = Names::load(&[], &[], None).unwrap();
    let decoder = names.decoder();
    let s = Session::open(target, names, decoder, "call".into()).unwrap();
    let pop = (0..s.model.len())
        .find(|&i| s.model.log.op(i) == revm::bytecode::opcode::POP)
        .unwrap();
    let v = s.view(pop).unwrap();
    assert_eq!(v.return_data.len(), 32);
    let text: Vec<String> = panes::return_data(&s, &v)
        .iter()
        .map(|l| l.to_string())
        .collect();
    assert_eq!(
        text,
        [
            format!("32 bytes: 0x{}", "00".repeat(32)),
            "returned by the last call (it succeeded)".to_string()
        ]
    );
}

/// A view replayed from a checkpoint is the view replayed from the start, at every step: with a
/// checkpoint every 7 steps, some fall inside the nested calls (their memory, return data and
/// open internal functions restored), and the recording itself is the same as without them.
#[test]
fn views_from_checkpoints_are_views_from_the_start() {
    use crate::replay::checkpoint::Checkpoints;
    let s = session();
    let marks = Some(s.marks.clone());
    let (plain, none, outcome) = s
        .target
        .record(marks.clone(), Checkpoints::new(u32::MAX, usize::MAX))
        .unwrap();
    assert!(none.is_empty());
    let (stepped, cps, again) = s
        .target
        .record(marks.clone(), Checkpoints::new(7, usize::MAX).with_chunk(3))
        .unwrap();
    assert_eq!(format!("{:?}", stepped.log), format!("{:?}", plain.log));
    assert_eq!(format!("{again:?}"), format!("{outcome:?}"));
    let log = &s.model.log;
    assert_eq!(
        cps.len(),
        (log.len() - 1) / 7,
        "a checkpoint before every 7th step"
    );
    let deep = (0..log.len())
        .step_by(7)
        .skip(1)
        .filter(|&i| depth(&s, i) == 2)
        .count();
    assert!(deep > 3, "checkpoints inside the innermost call: {deep}");
    for i in 0..log.len() {
        let from_start = s.target.capture(i, marks.clone(), log, &none).unwrap();
        let resumed = s.target.capture(i, marks.clone(), log, &cps).unwrap();
        assert_eq!(
            format!("{resumed:?}"),
            format!("{from_start:?}"),
            "step {i}"
        );
    }
}

/// Checkpoints past their budget are thinned: every other one dropped, the spacing doubled,
/// until they fit.
#[test]
fn checkpoints_keep_to_their_budget() {
    use crate::replay::checkpoint::Checkpoints;
    let s = session();
    let marks = Some(s.marks.clone());
    let (_, all, _) = s
        .target
        .record(marks.clone(), Checkpoints::new(5, usize::MAX))
        .unwrap();
    let budget = all.heap_bytes() / 5;
    let (_, thin, _) = s
        .target
        .record(marks.clone(), Checkpoints::new(5, budget))
        .unwrap();
    assert!(
        thin.heap_bytes() <= budget,
        "{} > {budget}",
        thin.heap_bytes()
    );
    assert!(thin.spacing() >= 20, "spacing {}", thin.spacing());
    assert!(!thin.is_empty());
    let log = &s.model.log;
    let last = log.len() - 1;
    let a = s.target.capture(last, marks.clone(), log, &thin).unwrap();
    let b = s.target.capture(last, marks, log, &all).unwrap();
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
}
