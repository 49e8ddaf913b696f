// 4byteTracerLegacy — stands for geth's eth/tracers/js/internal/tracers/4byte_tracer_legacy.js.
// Counts "0x<selector>-<argument bytes>" of every CALL, CALLCODE, DELEGATECALL and STATICCALL
// opcode whose target is not a precompile and whose input has at least 4 bytes (read from the
// caller's memory before the call), plus the transaction's own input in `result`.
// chaintrace's own script, written to give geth's result on the same hooks.
{
    counts: {},
    // Stack position of the input offset for each call opcode (its size is one deeper).
    inputAt: { CALL: 3, CALLCODE: 3, DELEGATECALL: 2, STATICCALL: 2 },
    count: function (selector, size) {
        var key = toHex(selector) + '-' + size;
        this.counts[key] = (this.counts[key] || 0) + 1;
    },
    step: function (log) {
        var at = this.inputAt[log.op.toString()];
        if (at === undefined) {
            return;
        }
        if (isPrecompiled(toAddress(log.stack.peek(1).toString(16)))) {
            return;
        }
        var size = log.stack.peek(at + 1).valueOf();
        if (size < 4) {
            return;
        }
        var offset = log.stack.peek(at).valueOf();
        this.count(log.memory.slice(offset, offset + 4), size - 4);
    },
    fault: function () {},
    result: function (ctx) {
        if (ctx.input.length >= 4) {
            this.count(slice(ctx.input, 0, 4), ctx.input.length - 4);
        }
        return this.counts;
    }
}
