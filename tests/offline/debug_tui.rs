//! `chaintrace debug` in a real terminal (Debian's tmux) on the bundled fixture: jump to the
//! revert, step back, and read the screen; and its refusal without a terminal.

use std::path::Path;

use crate::run;
use crate::tmux::Tmux;

const FIXTURE: &str = "fixtures/reverted-nested.json";

/// The header's `step N/M`.
fn step_of(screen: &str) -> (usize, usize) {
    let at = screen.find("step ").expect("a header with the step");
    let rest = &screen[at + 5..];
    let end = rest.find(' ').unwrap();
    let (n, m) = rest[..end].split_once('/').unwrap();
    (n.parse().unwrap(), m.parse().unwrap())
}

#[test]
fn jumping_to_the_revert_and_stepping_back_shows_the_failing_line_and_the_stack() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // What `tx` says of the same fixture: its Solidity stack trace.
    let r = run::cmd(&["tx", "--fixture", FIXTURE]).dir(root).run();
    let stack: Vec<String> = r
        .stdout
        .lines()
        .skip_while(|l| *l != "Solidity stack trace:")
        .skip(1)
        .map(|l| l.trim().to_string())
        .collect();
    assert_eq!(stack.len(), 3, "{}", r.stdout);

    let t = Tmux::start(root, &["debug", "--fixture", FIXTURE], &[]);
    let first = t.wait_for("step 1/", 120);
    let (_, total) = step_of(&first);
    t.keys(&["r"]);
    let at_revert = t.wait_for(" REVERT ", 30);
    let (revert, _) = step_of(&at_revert);
    assert!(revert > 1 && revert <= total, "{at_revert}");
    t.keys(&["k"]);
    let back = t.wait_for(&format!("step {}/{total}", revert - 1), 30);

    // The failing line, as the contract's source has it, is on screen and highlighted.
    let sol = std::fs::read_to_string(root.join("tests/contracts/Helpers.sol")).unwrap();
    let failing = sol
        .lines()
        .find(|l| l.contains("revert Custom(code, msg.sender, \"custom error\");"))
        .unwrap()
        .trim();
    let rows = t.screen();
    assert!(
        rows.iter().any(|row| row.highlights(failing)),
        "{failing:?} is not highlighted:\n{back}"
    );
    // Every function of `tx`'s stack trace is in the call stack pane, innermost first.
    let mut from = 0;
    for entry in &stack {
        let at = back[from..]
            .find(entry.as_str())
            .unwrap_or_else(|| panic!("{entry:?} not on screen (in order):\n{back}"));
        from += at + entry.len();
    }
    // The Variables pane: the failing function's argument, the value `tx`'s stack shows
    // (`failCustom(code: 48879)`) and the adapter's Arguments scope gives.
    let innermost = &stack[0];
    assert!(innermost.contains("failCustom(code: 48879)"), "{innermost}");
    assert!(back.contains(" Variables "), "{back}");
    assert!(back.contains("Reverter.failCustom arguments"), "{back}");
    assert!(back.contains("code = 48879"), "{back}");
    // The storage pane: the current account (Reverter, its slot 0 written) first, then the
    // Hub that called it (slot 1 written before the call).
    let row_of = |needle: &str| {
        back.lines()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle:?} not on screen:\n{back}"))
    };
    assert!(
        row_of("0x9fE4…a6e0 Reverter") < row_of("0xa513…C853 Hub"),
        "{back}"
    );
    // Panes scroll: Tab to the storage pane (call stack, variables, stack, storage), PgDn
    // moves its first line down (no further than its last), PgUp back.
    t.keys(&["Tab", "Tab", "Tab"]);
    t.wait_for("▸ Storage", 30);
    assert!(t.text().contains("attempts: 0 → 1"));
    t.keys(&["PageDown"]);
    let down = t.wait_for("▸ Storage ↓3", 30);
    assert!(!down.contains("attempts: 0 → 1"), "{down}");
    assert!(down.contains("counter: 5 → 6"), "{down}");
    t.keys(&["PageUp"]);
    t.wait_for("attempts: 0 → 1", 30);
    // A breakpoint on the line shown, from the frame's start: `c` stops on it.
    let line = sol
        .lines()
        .position(|l| l.trim() == failing)
        .map(|n| n + 1)
        .unwrap();
    t.keys(&["b"]);
    t.wait_for(&format!("breakpoint Helpers.sol:{line} set"), 30);
    t.keys(&["g"]);
    t.wait_for(" pc 0 ", 30);
    t.keys(&["c"]);
    let stopped = t.wait_for(&format!("Source Helpers.sol:{line}:"), 30);
    let (at, _) = step_of(&stopped);
    assert!(at < revert, "{stopped}");
    t.keys(&["q"]);
    t.wait_for("[exited 0]", 30);
}

#[test]
fn without_a_terminal_it_exits_1_naming_tx() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let r = run::cmd(&["debug", "--fixture", FIXTURE]).dir(root).run();
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.is_empty());
    assert!(
        r.stderr
            .contains("chaintrace debug is interactive and needs a terminal on stdout")
            && r.stderr.contains("`chaintrace tx`"),
        "{}",
        r.stderr
    );
}

/// On an 80x24 terminal: the header keeps the step, pc, opcode and gas first, and at the
/// failure the line under it says what failed, as `tx` decodes it; the storage pane lists every
/// account the transaction read or wrote so far, the current one first.
#[test]
fn a_small_terminal_shows_where_the_step_is_and_what_failed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let r = run::cmd(&["tx", "--fixture", FIXTURE]).dir(root).run();
    let reason = r
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("reverted: "))
        .expect("tx says why it reverted");
    let t = Tmux::start_sized(root, &["debug", "--fixture", FIXTURE], &[], (80, 24));
    t.wait_for("step 1/", 120);
    t.keys(&["r"]);
    let screen = t.wait_for("failed here: reverted: ", 30);
    let rows: Vec<&str> = screen.lines().collect();
    assert!(rows[0].starts_with("step "), "{screen}");
    assert!(rows[0].contains(" REVERT │ gas "), "{screen}");
    // The reason as `tx` gives it, as far as 80 columns show it.
    let shown = rows[1]
        .trim_end()
        .strip_prefix("failed here: reverted: ")
        .unwrap();
    assert!(
        !shown.is_empty() && reason.starts_with(shown),
        "{shown:?} vs {reason:?}"
    );
    t.keys(&["q"]);
    t.wait_for("[exited 0]", 30);
}
