// unigramTracer — stands for geth's eth/tracers/js/internal/tracers/unigram_tracer.js.
// Counts each executed opcode by name: {"PUSH1": 3, "STOP": 1, ...}.
// chaintrace's own script, written to give geth's result on the same hooks.
{
    counts: {},
    step: function (log) {
        var name = log.op.toString();
        this.counts[name] = (this.counts[name] || 0) + 1;
    },
    fault: function () {},
    result: function () { return this.counts; }
}
