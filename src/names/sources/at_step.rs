//! A frame's place in its source at any step, not only at a failure: what a step debugger
//! (`chaintrace debug`) shows, through the same placement as the failure's stack.

use std::sync::Arc;

use super::{frame_levels, CodeMap, FnSpan, SourceFile};
use crate::render::source::{Location, StackEntry};
use crate::trace::call::FrameSteps;

impl CodeMap {
    /// The user's function (or modifier) whose body holds the user-written span at `pc`.
    pub fn function_at_pc(&self, pc: u32) -> Option<(&Arc<SourceFile>, &FnSpan)> {
        let (file, e) = self.user_span(pc)?;
        Some((file, file.function_at(e.start as usize)?))
    }

    /// The file of this map's compilation the compiler named `path`.
    pub fn file(&self, path: &str) -> Option<&Arc<SourceFile>> {
        self.unit.files.values().find(|f| f.path == path)
    }

    /// The Solidity stack of a frame at `pc`, innermost function first, as [`stack_by_frame`]
    /// gives it for a failure: `steps` are the frame's so far (`at`: for a frame that is
    /// calling another, its CALL's pc and JUMP count then), `input` its call data (`None` for
    /// a create).
    pub fn stack_at(
        &self,
        steps: &FrameSteps,
        at: Option<(u32, usize)>,
        input: Option<&[u8]>,
    ) -> Vec<StackEntry> {
        let levels = frame_levels(self, steps, at);
        let recent: Vec<u32> = steps.recent().collect();
        let entries = self.functions(&levels, &recent, steps);
        match input {
            Some(input) => self.with_inlined(entries, input),
            None => entries,
        }
    }

    /// Where a frame is at `pc`, as the failure's location is found: the innermost level in
    /// code the user wrote.
    pub fn location_at(&self, steps: &FrameSteps, at: Option<(u32, usize)>) -> Option<Location> {
        let levels = frame_levels(self, steps, at);
        let recent: Vec<u32> = steps.recent().collect();
        self.location(&levels, &recent)
    }
}
