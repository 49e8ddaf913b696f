//! What a tracer's source text shows before it runs: how deep its brackets nest (boa's parser
//! recurses per level), whether it can loop, and whether its hooks can be called directly
//! (nothing in it can recurse). Textual checks, so they only err towards the safe side.

/// The source after the comments that precede the object literal (a library file's header).
/// Comments further in are kept: telling them from strings and regex literals needs a lexer.
pub fn skip_header_comments(mut s: &str) -> &str {
    loop {
        s = s.trim_start();
        if let Some(rest) = s.strip_prefix("//") {
            s = rest.split_once('\n').map_or("", |(_, r)| r);
        } else if let Some(rest) = s.strip_prefix("/*") {
            s = rest.split_once("*/").map_or("", |(_, r)| r);
        } else {
            return s;
        }
    }
}

/// Whether the script has no `for`, `while` or `do` past its header comments (strings and
/// comments included, which only errs towards the budgeted path).
pub fn loop_free(source: &str) -> bool {
    !words(source).any(|w| matches!(w, "for" | "while" | "do"))
}

fn words(source: &str) -> impl Iterator<Item = &str> {
    skip_header_comments(source)
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .filter(|w| !w.is_empty())
}

const HOOKS: [&str; 6] = ["step", "fault", "enter", "exit", "result", "setup"];

/// The deepest bracket nesting a script may have: boa's parser recurses once per level (some
/// 40 KB of stack each in a debug build), so deeper sources are refused before parsing.
pub const MAX_SOURCE_NESTING: usize = 64;

/// How deep the script's brackets (`(`, `[`, `{`) nest, outside strings and comments.
pub fn source_nesting(source: &str) -> usize {
    let b = source.as_bytes();
    let (mut depth, mut max, mut i) = (0usize, 0usize, 0usize);
    while i < b.len() {
        match b[i] {
            q @ (b'"' | b'\'' | b'`') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    max
}

/// Whether the script can run only its hooks, each once per call: no loops, and no way to
/// recurse — every `function` is a hook's own definition, no hook is reached by another
/// (`.step`, `.fault`, … appear nowhere else, nor calls through computed members), and nothing
/// else runs user code (`=>`, getters and setters, classes, `eval`, `Function`, `arguments`,
/// `Reflect`, `with`). Such a script's functions are
/// called directly, which costs half of a budgeted evaluation, and the deadline is checked
/// between calls; any other script runs under boa's budget, which also bounds deep or
/// exponential recursion by the timeout. Textual, so it only errs towards the budgeted path.
pub fn direct_safe(source: &str) -> bool {
    if !loop_free(source) {
        return false;
    }
    let body = skip_header_comments(source);
    // Arrows, and calls through a computed member (`o[name](…)`, which can name a hook).
    if body.contains("=>") || body.contains("](") {
        return false;
    }
    if words(source).any(|w| {
        matches!(
            w,
            "get"
                | "set"
                | "class"
                | "eval"
                | "Function"
                | "arguments"
                | "constructor"
                | "Reflect"
                | "with"
        )
    }) {
        return false;
    }
    // Each `function` keyword directly follows `<hook>:`.
    let b = body.as_bytes();
    let mut from = 0;
    while let Some(i) = body[from..].find("function") {
        let at = from + i;
        from = at + "function".len();
        let word_start = at == 0 || !(b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_');
        let word_end = b
            .get(from)
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || *c == b'_'));
        if !(word_start && word_end) {
            continue;
        }
        let before = body[..at].trim_end();
        let Some(before) = before.strip_suffix(':') else {
            return false;
        };
        let name = before
            .trim_end()
            .rsplit(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .next()
            .unwrap_or("");
        if !HOOKS.contains(&name) {
            return false;
        }
    }
    // No hook is referenced as a property (how one hook would call another).
    !HOOKS.iter().any(|h| {
        body.match_indices(h).any(|(i, _)| {
            let prev = body[..i].trim_end();
            prev.ends_with('.') || prev.ends_with('[')
        })
    })
}

#[cfg(test)]
mod tests {
    use super::{direct_safe, loop_free};

    #[test]
    fn only_scripts_that_cannot_recurse_are_called_directly() {
        assert!(direct_safe(
            "{n: 0, step: function(log) { this.n++; }, fault: function() {}, result: function() { return this.n; }}"
        ));
        assert!(direct_safe(
            "{c: {}, step: function(log) { var op = log.op.toString(); this.c[op] = (this.c[op] || 0) + log.getCost(); }, fault: function() {}, result: function() { return this.c; }}"
        ));
        // A helper function, arrows, getters, and hooks reaching each other can recurse.
        assert!(!direct_safe(
            "{fib: function(n) { return n < 2 ? n : this.fib(n - 1) + this.fib(n - 2); }, step: function() { this.fib(30); }, fault: function() {}, result: function() { return 1; }}"
        ));
        assert!(!direct_safe(
            "{step: function() { function f(n) { return n ? f(n - 1) : 0; } f(9); }, fault: function() {}, result: function() {}}"
        ));
        assert!(!direct_safe(
            "{step: function() { var f = (n) => n; }, fault: function() {}, result: function() {}}"
        ));
        assert!(!direct_safe("{get x() { return this.x; }, fault: function() {}, result: function() { return this.x; }}"));
        assert!(!direct_safe(
            "{step: function(log) { this.fault(30); }, fault: function(n) { if (n > 0) { this.fault(n - 1); this.fault(n - 1); } }, result: function() {}}"
        ));
        assert!(!direct_safe(
            "{step: function() { var s = this; s['fault'](3); }, fault: function() {}, result: function() {}}"
        ));
    }

    #[test]
    fn loop_keywords_select_the_budgeted_path() {
        assert!(loop_free(
            "{step: function(log) { this.n++; }, done: 1, format: 'x'}"
        ));
        assert!(!loop_free("{step: function() { while(1) {} }}"));
        assert!(!loop_free("{step: function() { for (;;) {} }}"));
        assert!(!loop_free("{step: function() { do {} while (0) }}"));
        assert!(loop_free(
            "// counts, for each opcode\n/* while */ {step: function() {}}"
        ));
        assert!(!loop_free(
            "// header\n{s: '//', step: function() { while(1) {} }}"
        ));
    }
}
