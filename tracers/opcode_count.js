// Opcode counter.
//
// What: how many times each opcode executed, over all frames.
// Output: {"<OPNAME>": count, ...}, e.g. {"PUSH1": 3, "MSTORE": 1, "STOP": 1}
// Example: chaintrace tx 0x5c50…e1 --json --tracer tracers/opcode_count.js
{
  counts: {},
  step: function (log, db) {
    var op = log.op.toString();
    this.counts[op] = (this.counts[op] || 0) + 1;
  },
  fault: function (log, db) {},
  result: function (ctx, db) { return this.counts; }
}
