// evmdisTracer — stands for geth's eth/tracers/js/internal/tracers/evmdis_tracer.js.
// A disassembly of what ran, as nested frames. The result is the top frame's list of
// operations; each is {op, depth, result, ...}:
// - `op` is the opcode's number (for DELEGATECALL and STATICCALL its name instead, as geth's
//   script does); `result` the stack words the operation pushed, as hex without 0x, read at
//   the next step of the same frame, for the opcodes geth's script knows the push counts of;
// - a PUSHn has `len` (its opcode minus 0x5e), a JUMPDEST its `pc`;
// - CALL and CALLCODE add {gas, to, value, input, error, return, ops}, DELEGATECALL and
//   STATICCALL {gas, to, input, error, return, ops}, and become the frame the callee's
//   operations go into; RETURN and REVERT set the frame's `return` to the returned memory,
//   STOP and SELFDESTRUCT to an empty buffer; an opcode that fails sets the frame's `error`.
// - The first step after a frame ends (back at a shallower depth) only closes frames: it is
//   not listed, as in geth's script.
// chaintrace's own script, written to give geth's result on the same hooks.
{
    frames: [{ops: []}],
    // Stack words pushed, by opcode, for the opcodes geth's script lists (others: none read).
    pushes: (function () {
        var t = {};
        function set(list, n) { for (var i = 0; i < list.length; i++) t[list[i]] = n; }
        function range(a, b) { var r = []; for (var i = a; i <= b; i++) r.push(i); return r; }
        set([0, 55, 57, 60, 80, 82, 83, 85, 86, 87, 91, 160, 161, 162, 163, 164, 243, 244, 255], 0);
        set(range(1, 11).concat(range(16, 26), [32], range(48, 54), [56, 58, 59],
            range(64, 69), [81, 84, 88, 89, 90], range(96, 127), [240, 241, 242]), 1);
        for (var d = 0; d < 16; d++) { t[128 + d] = d + 2; t[144 + d] = d + 2; }
        return t;
    })(),
    step: function (log) {
        var frame = this.frames[this.frames.length - 1];
        var error = log.getError();
        if (error) {
            frame.error = error;
            return;
        }
        var depth = log.getDepth();
        if (depth != this.frames.length) {
            this.frames = this.frames.slice(0, depth);
            return;
        }
        var entry = {op: log.op.toNumber(), depth: depth, result: []};
        if (frame.ops.length > 0) {
            var prev = frame.ops[frame.ops.length - 1];
            for (var k = 0; k < this.pushes[prev.op]; k++) {
                prev.result.push(log.stack.peek(k).toString(16));
            }
        }
        var name = log.op.toString();
        if (name == 'CALL' || name == 'CALLCODE' || name == 'DELEGATECALL' || name == 'STATICCALL') {
            var valued = name == 'CALL' || name == 'CALLCODE';
            var at = valued ? 3 : 2;
            var start = log.stack.peek(at).valueOf();
            var size = log.stack.peek(at + 1).valueOf();
            if (!valued) {
                entry.op = name;
            }
            entry.gas = log.stack.peek(0).valueOf();
            entry.to = log.stack.peek(1).toString(16);
            if (valued) {
                entry.value = log.stack.peek(2).toString();
            }
            entry.input = log.memory.slice(start, start + size);
            entry.error = null;
            entry['return'] = null;
            entry.ops = [];
            this.frames.push(entry);
        } else if (name == 'RETURN' || name == 'REVERT') {
            var off = log.stack.peek(0).valueOf();
            frame['return'] = log.memory.slice(off, off + log.stack.peek(1).valueOf());
        } else if (name == 'STOP' || name == 'SELFDESTRUCT') {
            frame['return'] = log.memory.slice(0, 0);
        } else if (name == 'JUMPDEST') {
            entry.pc = log.getPC();
        }
        if (log.op.isPush()) {
            entry.len = log.op.toNumber() - 0x5e;
        }
        frame.ops.push(entry);
    },
    fault: function () {},
    result: function () { return this.frames[0].ops; }
}
