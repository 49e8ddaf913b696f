// Call tree with depth and gas.
//
// What: one line per call frame in execution order, with its depth (0 = the transaction's own
// call), type, target, the gas it was given and used, and its error if it failed.
// Output: [{"depth": 0, "type": "CALL", "to": "0x…", "gas": n, "gasUsed": n, "error"?: "…"}, ...]
// Example: chaintrace tx 0x5c50…e1 --json --tracer tracers/call_tree.js
{
  calls: [],
  open: [],
  enter: function (frame) {
    var c = { depth: this.open.length + 1, type: frame.getType(), to: toHex(frame.getTo()), gas: frame.getGas() };
    this.calls.push(c);
    this.open.push(c);
  },
  exit: function (res) {
    var c = this.open.pop();
    c.gasUsed = res.getGasUsed();
    var err = res.getError();
    if (err !== undefined) { c.error = err; }
  },
  fault: function (log, db) {},
  result: function (ctx, db) {
    var top = { depth: 0, type: ctx.type, to: toHex(ctx.to), gas: ctx.gas, gasUsed: ctx.gasUsed };
    if (ctx.error !== undefined) { top.error = ctx.error; }
    return [top].concat(this.calls);
  }
}
