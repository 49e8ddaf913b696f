// 4-byte selector counts.
//
// What: how often each function selector (first 4 bytes of call data) was called, per target:
// the transaction's own call and every sub-call with at least 4 bytes of input.
// Output: {"0x<target>": {"0x<selector>": count}}
// Example: chaintrace tx 0x5c50…e1 --json --tracer tracers/selector_counts.js
{
  counts: {},
  add: function (to, input) {
    if (input.length < 4) { return; }
    var t = toHex(to), sel = toHex(slice(input, 0, 4));
    var e = this.counts[t] || (this.counts[t] = {});
    e[sel] = (e[sel] || 0) + 1;
  },
  enter: function (frame) {
    var type = frame.getType();
    if (type === "CREATE" || type === "CREATE2" || type === "SELFDESTRUCT") { return; }
    this.add(frame.getTo(), frame.getInput());
  },
  exit: function (res) {},
  fault: function (log, db) {},
  result: function (ctx, db) {
    if (ctx.type === "CALL") { this.add(ctx.to, ctx.input); }
    return this.counts;
  }
}
