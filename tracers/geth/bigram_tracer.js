// bigramTracer — stands for geth's eth/tracers/js/internal/tracers/bigram_tracer.js.
// Counts pairs of consecutive opcodes run at the same call depth, keyed "PREV-OP". A step at
// another depth than the one before it is not counted (so neither is the transaction's first
// step: depth 1 after the initial 0), but it becomes the previous opcode all the same.
// chaintrace's own script, written to give geth's result on the same hooks.
{
    pairs: {},
    prev: '',
    prevDepth: 0,
    step: function (log) {
        var name = log.op.toString();
        var depth = log.getDepth();
        if (depth == this.prevDepth) {
            var key = this.prev + '-' + name;
            this.pairs[key] = (this.pairs[key] || 0) + 1;
        }
        this.prev = name;
        this.prevDepth = depth;
    },
    fault: function () {},
    result: function () { return this.pairs; }
}
