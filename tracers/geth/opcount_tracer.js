// opcountTracer — stands for geth's eth/tracers/js/internal/tracers/opcount_tracer.js.
// The number of opcodes executed (a JSON number).
// chaintrace's own script, written to give geth's result on the same hooks.
{
    n: 0,
    step: function () { this.n += 1; },
    fault: function () {},
    result: function () { return this.n; }
}
