//! The terminal: keys to [`App`] actions, panes drawn with ratatui over crossterm.

use std::time::Duration;

use ratatui::crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

use super::model::Breakpoint;
use super::{panes, Session};
use crate::trace::steps::StepView;

/// The keys, as the footer and the help list them.
pub const KEYS: &[(&str, &str)] = &[
    ("j/↓ k/↑", "next/previous opcode"),
    ("n N", "next/previous source line"),
    ("o", "step over (calls, functions)"),
    ("u", "step out (function, then call)"),
    ("r", "jump to the revert / first failure"),
    ("g G", "start/end of the frame"),
    ("b", "breakpoint on the current line"),
    ("B", "breakpoint on FILE:LINE or a function"),
    ("c C", "next/previous breakpoint"),
    ("/", "search an opcode or an address"),
    ("] [", "next/previous match"),
    ("Tab", "focus the next scrolling pane"),
    ("PgDn PgUp", "scroll the focused pane"),
    ("?", "help"),
    ("q", "quit"),
];

/// The keys in one line, at the foot of the screen.
pub const FOOTER: &str = "j/k op  n/N line  o over  u out  r revert  g/G frame  b/B break  \
                          c/C continue  / search  ]/[ match  Tab pane  PgDn/PgUp scroll  \
                          ? help  q quit";

/// The panes that scroll, in the order Tab focuses them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    CallStack,
    Variables,
    Stack,
    Storage,
    ReturnData,
}

const FOCUSABLE: [Focus; 5] = [
    Focus::CallStack,
    Focus::Variables,
    Focus::Stack,
    Focus::Storage,
    Focus::ReturnData,
];

/// Lines a PgDn or PgUp moves.
const PAGE: u16 = 5;

/// What a text prompt is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prompt {
    Search,
    Breakpoint,
}

/// The debugger's state besides the session: the step shown, the prompt, the last message.
pub struct App {
    pub step: usize,
    pub prompt: Option<(Prompt, String)>,
    pub message: String,
    pub search: Option<String>,
    pub help: bool,
    pub quit: bool,
    /// The file and line the source pane shows (what `b` breaks on).
    pub here: Option<(String, usize)>,
    /// The pane PgDn/PgUp scroll (an index into [`FOCUSABLE`]), and each pane's first line.
    pub focus: usize,
    pub scroll: [u16; FOCUSABLE.len()],
}

impl App {
    pub fn new() -> App {
        App {
            step: 0,
            prompt: None,
            message: "? for help".into(),
            search: None,
            help: false,
            quit: false,
            here: None,
            focus: 0,
            scroll: [0; FOCUSABLE.len()],
        }
    }

    /// How far `pane` is scrolled, and whether it has the focus.
    fn scrolled(&self, pane: Focus) -> (u16, bool) {
        let k = FOCUSABLE.iter().position(|p| *p == pane).unwrap_or(0);
        (self.scroll[k], self.focus == k)
    }

    /// Applies one key to the state.
    pub fn key(&mut self, s: &mut Session, key: KeyEvent) {
        if key.kind == KeyEventKind::Release {
            return;
        }
        if let Some((kind, text)) = &mut self.prompt {
            match key.code {
                KeyCode::Esc => self.prompt = None,
                KeyCode::Backspace => {
                    text.pop();
                }
                KeyCode::Enter => {
                    let (kind, text) = (*kind, std::mem::take(text));
                    self.prompt = None;
                    self.submit(s, kind, &text);
                }
                KeyCode::Char(c) => text.push(c),
                _ => {}
            }
            return;
        }
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            self.quit = true;
            return;
        }
        let m = &s.model;
        let i = self.step;
        self.message.clear();
        let helping = std::mem::take(&mut self.help);
        self.step = match key.code {
            // Esc closes the help overlay; only q (or Esc with nothing open) quits.
            KeyCode::Esc if helping => i,
            KeyCode::Char('q') | KeyCode::Esc => {
                self.quit = true;
                i
            }
            KeyCode::Char('j') | KeyCode::Down => m.next_op(i),
            KeyCode::Char('k') | KeyCode::Up => m.prev_op(i),
            KeyCode::Char('n') | KeyCode::Right => m.next_line(i),
            KeyCode::Char('N') | KeyCode::Left => m.prev_line(i),
            KeyCode::Char('o') => m.step_over(i),
            KeyCode::Char('u') => m.step_out(i),
            KeyCode::Char('g') | KeyCode::Home => m.frame_start(i),
            KeyCode::Char('G') | KeyCode::End => m.frame_end(i),
            KeyCode::Char('r') => match m.failure_step() {
                Some(f) => f,
                None => {
                    self.message = "nothing failed in this transaction".into();
                    i
                }
            },
            KeyCode::Char('b') => {
                match self.here.clone().or_else(|| m.source_line(i)) {
                    Some((file, line)) => {
                        let b = Breakpoint::Line { file, line };
                        self.toggle(s, b);
                    }
                    None => self.message = "no source line here to break on".into(),
                }
                i
            }
            KeyCode::Char('B') => {
                self.prompt = Some((Prompt::Breakpoint, String::new()));
                i
            }
            KeyCode::Char('/') => {
                self.prompt = Some((Prompt::Search, String::new()));
                i
            }
            KeyCode::Char('c') => self.goto_breakpoint(s, i, true),
            KeyCode::Char('C') => self.goto_breakpoint(s, i, false),
            KeyCode::Char(']') => self.again(s, i, true),
            KeyCode::Char('[') => self.again(s, i, false),
            KeyCode::Char('?') => {
                self.help = true;
                i
            }
            KeyCode::Tab => {
                self.focus = (self.focus + 1) % FOCUSABLE.len();
                i
            }
            KeyCode::BackTab => {
                self.focus = (self.focus + FOCUSABLE.len() - 1) % FOCUSABLE.len();
                i
            }
            KeyCode::PageDown => {
                let k = self.focus;
                self.scroll[k] = self.scroll[k].saturating_add(PAGE);
                i
            }
            KeyCode::PageUp => {
                let k = self.focus;
                self.scroll[k] = self.scroll[k].saturating_sub(PAGE);
                i
            }
            _ => i,
        };
    }

    fn toggle(&mut self, s: &mut Session, b: Breakpoint) {
        if let Some(k) = s.model.breakpoints.iter().position(|x| *x == b) {
            s.model.breakpoints.remove(k);
            self.message = format!("breakpoint {b} removed");
        } else if s.model.reaches(&b) {
            self.message = format!("breakpoint {b} set");
            s.model.breakpoints.push(b);
        } else {
            // Kept (the user may mean it), but never silently: nothing here reaches it.
            self.message = format!(
                "breakpoint {b} set, but no step of this transaction reaches it: check the \
                 function name or FILE:LINE"
            );
            s.model.breakpoints.push(b);
        }
    }

    fn goto_breakpoint(&mut self, s: &Session, i: usize, forward: bool) -> usize {
        if s.model.breakpoints.is_empty() {
            self.message =
                "no breakpoints: b sets one on this line, B on FILE:LINE or a function".into();
            return i;
        }
        match s.model.breakpoint(i, forward) {
            Some(j) => j,
            None => {
                self.message = format!(
                    "no breakpoint hit {} this step",
                    if forward { "after" } else { "before" }
                );
                i
            }
        }
    }

    fn again(&mut self, s: &Session, i: usize, forward: bool) -> usize {
        let Some(q) = self.search.clone() else {
            self.message = "no search yet: / starts one".into();
            return i;
        };
        self.find(s, i, &q, forward)
    }

    fn find(&mut self, s: &Session, i: usize, q: &str, forward: bool) -> usize {
        match s.model.search(i, q, forward) {
            Ok(Some(j)) => j,
            Ok(None) => {
                self.message = format!("{q}: no more matches");
                i
            }
            Err(e) => {
                self.message = e;
                i
            }
        }
    }

    fn submit(&mut self, s: &mut Session, kind: Prompt, text: &str) {
        match kind {
            Prompt::Search => {
                self.search = Some(text.to_string());
                self.step = self.find(s, self.step, text, true);
            }
            Prompt::Breakpoint => match Breakpoint::parse(text) {
                Ok(b) => self.toggle(s, b),
                Err(e) => self.message = e,
            },
        }
    }
}

impl Default for App {
    fn default() -> Self {
        App::new()
    }
}

/// Draws every pane of step `v`.
pub fn draw(f: &mut Frame, s: &Session, app: &App, v: &StepView) {
    let rows = Layout::default()
        .direction(Direction::Vertical)
        .constraints([
            Constraint::Length(2),
            Constraint::Percentage(58),
            Constraint::Min(6),
            Constraint::Length(1),
        ])
        .split(f.area());
    let head = vec![
        Line::styled(
            panes::header(s, v),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Line::from(match &app.prompt {
            Some((Prompt::Search, t)) => format!("search (opcode or address): {t}▏"),
            Some((Prompt::Breakpoint, t)) => format!("breakpoint (FILE:LINE or function): {t}▏"),
            // At the failure, what failed, first (the header may be cut on a narrow terminal).
            None => match s.model.failure_step().filter(|&f| f == v.step as usize) {
                Some(_) => {
                    let why = s.failure_text().unwrap_or_else(|| "failed".into());
                    match app.message.as_str() {
                        "" | "? for help" => format!("failed here: {why}"),
                        m => format!("failed here: {why} │ {m}"),
                    }
                }
                None => app.message.clone(),
            },
        }),
    ];
    f.render_widget(Paragraph::new(head), rows[0]);
    let top = Layout::default()
        .direction(Direction::Horizontal)
        .constraints([Constraint::Percentage(58), Constraint::Percentage(42)])
        .split(rows[1]);
    let (title, lines) = panes::source(s, v, inner_height(top[0]));
    pane(f, top[0], &format!("Source {title}"), lines, false);
    let right = Layout::default()
        .direction(Direction::Vertical)
        .constraints([
            Constraint::Percentage(40),
            Constraint::Percentage(25),
            Constraint::Percentage(35),
        ])
        .split(top[1]);
    let call_stack = panes::call_stack(s, v);
    scrolled(
        f,
        right[0],
        "Call stack",
        call_stack,
        true,
        app.scrolled(Focus::CallStack),
    );
    let vars = panes::variables(s, v);
    scrolled(
        f,
        right[1],
        "Variables",
        vars,
        true,
        app.scrolled(Focus::Variables),
    );
    let stack = panes::stack(v);
    scrolled(
        f,
        right[2],
        "Stack (top first)",
        stack,
        false,
        app.scrolled(Focus::Stack),
    );
    let bottom = Layout::default()
        .direction(Direction::Horizontal)
        .constraints([
            Constraint::Percentage(24),
            Constraint::Percentage(46),
            Constraint::Percentage(30),
        ])
        .split(rows[2]);
    pane(
        f,
        bottom[0],
        "Opcodes",
        panes::opcodes(s, v, inner_height(bottom[0])),
        false,
    );
    let touched = match panes::touched(v) {
        Some((a, b)) => format!("Memory (touched {a:#x}..{b:#x})"),
        None => "Memory".to_string(),
    };
    pane(
        f,
        bottom[1],
        &touched,
        panes::memory(v, inner_height(bottom[1])),
        false,
    );
    let side = Layout::default()
        .direction(Direction::Vertical)
        .constraints([Constraint::Percentage(60), Constraint::Percentage(40)])
        .split(bottom[2]);
    let storage = panes::storage(s, v);
    scrolled(
        f,
        side[0],
        "Storage",
        storage,
        true,
        app.scrolled(Focus::Storage),
    );
    let returned = panes::return_data(s, v);
    scrolled(
        f,
        side[1],
        "Return data",
        returned,
        true,
        app.scrolled(Focus::ReturnData),
    );
    let mut footer = FOOTER.to_string();
    if !s.model.breakpoints.is_empty() {
        let bps: Vec<String> = s.model.breakpoints.iter().map(|b| b.to_string()).collect();
        footer.push_str(&format!(" │ breakpoints: {}", bps.join(" ")));
    }
    f.render_widget(Paragraph::new(footer), rows[3]);
    if app.help {
        let area = centered(f.area(), 60, (KEYS.len() + 2) as u16);
        let lines: Vec<Line> = KEYS
            .iter()
            .map(|(k, what)| Line::from(format!("{k:<10} {what}")))
            .collect();
        f.render_widget(Clear, area);
        pane(f, area, "Keys", lines, false);
    }
}

fn inner_height(r: Rect) -> usize {
    r.height.saturating_sub(2) as usize
}

fn centered(r: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(r.width);
    let h = h.min(r.height);
    Rect::new(r.x + (r.width - w) / 2, r.y + (r.height - h) / 2, w, h)
}

/// A pane that scrolls: `(first, focused)` from [`App::scrolled`]; the first line shown is
/// kept within the pane's lines, and the title says where the focus is and how far it scrolled.
fn scrolled(
    f: &mut Frame,
    area: Rect,
    title: &str,
    lines: Vec<Line<'static>>,
    wrap: bool,
    (first, focused): (u16, bool),
) {
    let first = first.min(u16::try_from(lines.len().saturating_sub(1)).unwrap_or(u16::MAX));
    let mut title = title.to_string();
    if first > 0 {
        title.push_str(&format!(" ↓{first}"));
    }
    if focused {
        title = format!("▸ {title}");
    }
    let block = Block::default()
        .borders(Borders::ALL)
        .title(format!(" {title} "));
    let mut p = Paragraph::new(lines).block(block).scroll((first, 0));
    if wrap {
        p = p.wrap(Wrap { trim: false });
    }
    f.render_widget(p, area);
}

fn pane(f: &mut Frame, area: Rect, title: &str, lines: Vec<Line<'static>>, wrap: bool) {
    scrolled(f, area, title, lines, wrap, (0, false));
}

/// Runs the debugger on the terminal until `q`, starting at `start`.
pub fn run(s: &mut Session, start: usize) -> std::io::Result<()> {
    let mut app = App::new();
    app.step = start;
    // A what-if session says first what it replaced.
    if !s.notes.is_empty() {
        app.message = format!("{} │ ? for help", s.notes.join(" │ "));
    }
    let mut terminal = ratatui::init();
    let result = (|| -> std::io::Result<()> {
        let mut shown: Option<StepView> = None;
        loop {
            if shown.as_ref().is_none_or(|v| v.step as usize != app.step) {
                match s.view(app.step) {
                    Ok(v) => {
                        app.here = panes::here(s, &v);
                        shown = Some(v);
                    }
                    Err(e) => {
                        app.message = format!("error: {e}");
                    }
                }
            }
            if let Some(v) = &shown {
                terminal.draw(|f| draw(f, s, &app, v))?;
            }
            // Every key already typed is applied before the next replay.
            let mut pending = vec![event::read()?];
            while event::poll(Duration::ZERO)? {
                pending.push(event::read()?);
            }
            for e in pending {
                if let Event::Key(k) = e {
                    app.key(s, k);
                }
            }
            if app.quit {
                return Ok(());
            }
        }
    })();
    ratatui::restore();
    result
}
