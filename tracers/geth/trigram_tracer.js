// trigramTracer — stands for geth's eth/tracers/js/internal/tracers/trigram_tracer.js.
// Counts runs of three opcodes at one call depth, keyed "A-B-C". A step at a depth other than
// the last one seen counts nothing and starts the window again with two empty names, so a
// frame's first counted keys are "--OP" and "-OP1-OP2".
// chaintrace's own script, written to give geth's result on the same hooks.
{
    triples: {},
    window: ['', ''],
    depth: 0,
    step: function (log) {
        var d = log.getDepth();
        if (d != this.depth) {
            this.window = ['', ''];
            this.depth = d;
            return;
        }
        var name = log.op.toString();
        var key = this.window[0] + '-' + this.window[1] + '-' + name;
        this.triples[key] = (this.triples[key] || 0) + 1;
        this.window = [this.window[1], name];
    },
    fault: function () {},
    result: function () { return this.triples; }
}
